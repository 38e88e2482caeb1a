//! The data model shared by every part of fleetglass: kinds, slim objects, durations.

mod duration;
mod kind;
mod labels;
mod lenient;
mod object;
mod parse;
mod raw;
mod schema;
mod shared;
mod sparse;
mod warning;

pub use duration::{DurationError, format_go_duration, human, parse_go_duration, serde_go};
pub use kind::{
    CONTROLLER_NAMES, Kind, UnknownKind, controller_of_deployment, controller_shard_of_deployment,
};
pub use labels::Labels;
pub use lenient::KeyInto;
pub use object::*;
pub use parse::{Skip, object_from_raw, parse_object};
pub use raw::RawObject;
pub use schema::GoDuration;
pub use shared::{Interner, SharedStr, shared};
pub use sparse::{Empty, Sparse};
pub use warning::Warning;

#[cfg(test)]
mod parse_tests;
