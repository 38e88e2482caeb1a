//! The models pages and the API share: each view is loaded once and either rendered by a
//! template or serialised as JSON, so the two can never disagree.

pub mod cluster;
pub mod cluster_index;
pub mod commits;
pub mod contacts;
pub mod delivery;
pub mod domain;
pub mod domain_hint;
pub mod domain_index;
pub mod filters;
pub mod flux_commands;
pub mod gate;
pub mod icons;
pub mod impact;
pub mod incidents;
pub mod object;
pub mod owner;
pub mod present;
pub mod problems;
pub mod timeline;
pub mod warnings;
