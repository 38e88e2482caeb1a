//! fleetglass-engine: the data model, the pure health engine and the builders of the
//! Kubernetes objects they read, with no I/O, so they build and test on their own (seconds,
//! not the whole server) and every other part of fleetglass depends on them, never the other
//! way round.
#![forbid(unsafe_code)]

pub mod health;
pub mod model;
pub mod objects;
