//! Offline evaluation behind `fleetglass evaluate` (argument parsing and exit codes stay with
//! the caller): read Kubernetes objects from files or stdin, evaluate them, print the JSON report.

mod blocks;
mod depth;
mod json_cut;
mod parallel_json;
mod parallel_yaml;
mod read;
mod report;
mod stream;
mod yaml_cut;

pub use read::{Ignored, InputError, Inputs, LOCAL_CLUSTER, Skipped, read_inputs};
pub use report::{evaluate_inputs, write_report};

#[cfg(test)]
mod tests;
