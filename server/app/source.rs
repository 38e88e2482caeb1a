//! Which source feeds a collector: the kube watchers on the configured clusters, or the demo
//! fleet. Both are run the same way: told which clusters to collect, sending events.

use crate::config::Config;
use crate::sources::{Collect, EventSender, demo, kube};
use tokio::task::JoinHandle;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Watch the clusters in the config.
    Kube,
    /// Simulate the demo fleet.
    Demo,
}

impl Source {
    /// The clusters this source can collect: the ones the collectors lease.
    pub fn clusters(self, config: &Config) -> Vec<String> {
        match self {
            Source::Kube => config.clusters.iter().map(|c| c.name.clone()).collect(),
            Source::Demo => demo::DEMO_CLUSTERS
                .iter()
                .map(|c| c.name.to_string())
                .collect(),
        }
    }

    /// Starts collecting the clusters in `collect` into `events`; aborting the task stops
    /// the whole source (and so drops its event senders).
    pub fn spawn(self, config: &Config, collect: Collect, events: EventSender) -> JoinHandle<()> {
        match self {
            Source::Kube => tokio::spawn(kube::run(
                config.clusters.clone(),
                collect,
                events,
                kube::KubeSettings::from_config(&config.collector),
            )),
            Source::Demo => tokio::spawn(demo::run(collect, events)),
        }
    }
}
