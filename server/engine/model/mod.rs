//! The data model shared by every part of fleetglass: kinds, slim objects, durations.

mod duration;
mod kind;
mod labels;
mod object;
mod parse;
mod schema;

pub use duration::{DurationError, format_go_duration, human, parse_go_duration, serde_go};
pub use kind::{
    CONTROLLER_NAMES, Kind, UnknownKind, controller_of_deployment, controller_shard_of_deployment,
};
pub use labels::Labels;
pub use object::*;
pub use parse::{Skip, parse_object};
pub use schema::GoDuration;

#[cfg(test)]
mod parse_tests;
