//! Which source feeds a collector: the kube watchers on the configured clusters, the demo
//! fleet, or a feed the embedding program provides (the benchmarks' simulated fleets). All are
//! run the same way: told which clusters to collect, sending events.

use crate::config::Config;
use crate::sources::{Collect, EventSender, demo, kube};
use futures::future::BoxFuture;
use std::sync::Arc;
use tokio::task::JoinHandle;

#[derive(Clone)]
pub enum Source {
    /// Watch the clusters in the config.
    Kube,
    /// Simulate the demo fleet.
    Demo,
    /// Events from the embedding program for the clusters in the config: the same collector
    /// (leases, runner, retention, shutdown) over clusters that need no API server.
    Feed(Feed),
}

/// How to run a [`Source::Feed`]: given the clusters to collect and where to send events, a
/// future that sends them until either side is gone.
#[derive(Clone)]
pub struct Feed(Arc<dyn Fn(Collect, EventSender) -> BoxFuture<'static, ()> + Send + Sync>);

impl Feed {
    pub fn new(
        run: impl Fn(Collect, EventSender) -> BoxFuture<'static, ()> + Send + Sync + 'static,
    ) -> Feed {
        Feed(Arc::new(run))
    }
}

impl Source {
    /// The clusters this source can collect: the ones the collectors lease.
    pub fn clusters(&self, config: &Config) -> Vec<String> {
        match self {
            Source::Kube | Source::Feed(_) => {
                config.clusters.iter().map(|c| c.name.clone()).collect()
            }
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
            Source::Feed(Feed(run)) => tokio::spawn(run(collect, events)),
        }
    }
}
