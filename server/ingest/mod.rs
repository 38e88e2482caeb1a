//! Ingest: the in-memory snapshot the sources feed, the runner that evaluates it, and the
//! change tracking that writes only differences to the store.

mod changes;
#[cfg(test)]
mod changes_tests;
mod crd_history;
mod evaluations;
#[cfg(test)]
mod evaluations_tests;
mod free_aside;
mod leases;
mod ownership;
pub mod retention;
mod rollups;
mod round_log;
mod round_phases;
mod runner;
mod schedule;
mod sightings;
mod snapshot;
mod write_behind;

pub use evaluations::{Evaluations, Redone, Round};
pub use leases::LeaseKeeper;
pub use ownership::ClusterSet;
pub use round_log::{RoundLog, RoundRecord};
pub use runner::{Evaluated, Latest, RoundTimes, Runner};
pub use snapshot::Snapshot;

use crate::config::Config;
use crate::health::{ClusterInfo, DomainSpec, Thresholds};
use std::collections::BTreeMap;

/// What the runner needs from the configuration.
#[derive(Debug, Clone, Default)]
pub struct RunnerSettings {
    pub cluster_labels: BTreeMap<String, BTreeMap<String, String>>,
    pub domains: Vec<DomainSpec>,
    pub thresholds: Thresholds,
}

impl RunnerSettings {
    pub fn from_config(config: &Config) -> RunnerSettings {
        RunnerSettings {
            cluster_labels: config
                .clusters
                .iter()
                .map(|c| (c.name.clone(), c.labels.clone()))
                .collect(),
            domains: config.domains.clone(),
            thresholds: config.thresholds.clone(),
        }
    }

    fn cluster_infos(&self) -> Vec<ClusterInfo> {
        self.cluster_labels
            .iter()
            .map(|(name, labels)| ClusterInfo {
                name: name.clone(),
                labels: labels.clone(),
                ..ClusterInfo::default()
            })
            .collect()
    }
}
