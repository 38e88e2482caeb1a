//! fleetglass-engine: the data model and the pure health engine, with no I/O, so they build and
//! test on their own (seconds, not the whole server) and every other part of fleetglass
//! depends on them, never the other way round.
#![forbid(unsafe_code)]

pub mod health;
pub mod model;
