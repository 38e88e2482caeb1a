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

// Declared bottom first, one group each so rustfmt keeps the order: each module uses only
// those above it (and the engine crate below them all). tests/architecture.rs holds the code
// and this list to that order.

/// Reading YAML: one crate, one set of options.
pub mod yaml;

/// Postgres: every query, typed rows.
pub mod store;

/// The typed configuration.
pub mod config;

/// Root causes grouped across clusters (pure).
pub mod incidents;

/// Rollouts, ETAs and DORA figures from the delivery history (pure).
pub mod delivery;

/// The Prometheus registry.
pub mod metrics;

/// `fleetglass evaluate`: the engine over files.
pub mod offline;

/// Kube watchers and the demo fleet: object events out.
pub mod sources;

/// Snapshot, rounds of the engine, writes, leases, retention.
pub mod ingest;

/// Alert lifecycle and delivery.
pub mod alerts;

/// Pages and the API.
pub mod web;

/// The composition root.
pub mod app;

/// The commands.
pub mod cli;

// The engine is its own crate (server/engine); `crate::health`, `crate::model` and
// `crate::objects` stay its paths.
pub use fleetglass_engine::{health, model, objects};
