//! fleetglass: a truthful status board for Flux fleets.
//!
//! Data flows one way: `sources` produce object events, `ingest` keeps them in a snapshot and
//! runs rounds of the pure `health` engine over it, `store` keeps state and history in Postgres,
//! `incidents` groups the fleet's root causes (pure too), and `web` and `alerts` tell people and
//! scripts. `app` is the composition root above them all: the only module that connects a
//! source to the runner, the leases and retention. `offline` runs the same engine on files
//! (`fleetglass evaluate`). `model`, `health` and `objects` (the object builders) are the
//! fleetglass-engine crate (server/engine), below everything here.
#![forbid(unsafe_code)]

pub mod alerts;
pub mod app;
pub mod cli;
pub mod config;
pub mod incidents;
pub mod ingest;
pub mod metrics;
pub mod offline;
pub mod sources;
pub mod store;
pub mod web;

// The engine is its own crate (server/engine); `crate::health`, `crate::model` and
// `crate::objects` stay its paths.
pub use fleetglass_engine::{health, model, objects};
