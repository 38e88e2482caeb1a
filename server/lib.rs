//! fleetglass: a truthful status board for Flux fleets.
//!
//! Data flows one way: `sources` produce object events, the `fleet` snapshot holds them, the pure
//! `health` engine turns them into verdicts, `store` keeps state and history in Postgres, and
//! `web` and `alerts` tell people and scripts.
#![forbid(unsafe_code)]

pub mod alerts;
pub mod cli;
pub mod config;
pub mod evaluate;
pub mod fleet;
pub mod health;
pub mod metrics;
pub mod model;
pub mod sources;
pub mod store;
pub mod web;
