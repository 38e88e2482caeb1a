//! The real source: kube-rs watchers on every cluster this process collects. Each cluster runs
//! in its own task (with its own client, probe, discovery and one watch per kind), so one
//! cluster's bad credentials, TLS errors or timeouts never affect another.

mod cluster;
mod collector;
mod connect;
mod context;
mod discovery;
mod errors;
mod local;
mod merge;
mod pods;
mod probe;
mod watch;

pub use collector::Collector;
pub use local::{
    ContextChoice, IN_CLUSTER_NAME, SERVICE_ACCOUNT_TOKEN, cluster_name, default_clusters,
};

use crate::config::{ClusterConfig, CollectorSettings};
use crate::ingest::ClusterSet;
use crate::sources::EventSender;
use std::collections::HashMap;
use std::time::Duration;
use tokio::sync::watch as channel;
use tokio::task::JoinHandle;

#[derive(Debug, Clone)]
pub struct KubeSettings {
    pub probe_interval: Duration,
    pub rediscover: Duration,
}

impl KubeSettings {
    pub fn from_config(settings: &CollectorSettings) -> KubeSettings {
        let std = |d: chrono::TimeDelta| d.to_std().unwrap_or(Duration::from_secs(10));
        KubeSettings {
            probe_interval: std(settings.probe_interval),
            rediscover: std(settings.rediscover),
        }
    }
}

/// Collects exactly the clusters in `collect` (the runner's adopted set), starting and stopping
/// per-cluster tasks as it changes; runs until `collect`'s sender is gone.
pub async fn run(
    targets: Vec<ClusterConfig>,
    mut collect: channel::Receiver<ClusterSet>,
    events: EventSender,
    settings: KubeSettings,
) {
    let mut running: HashMap<String, JoinHandle<()>> = HashMap::new();
    loop {
        let wanted = collect.borrow_and_update().clone();
        running.retain(|name, task| {
            let keep = wanted.contains(name);
            if !keep {
                tracing::info!(cluster = %name, "stopping collection");
                task.abort();
            }
            keep
        });
        for target in targets.iter().filter(|t| wanted.contains(&t.name)) {
            running.entry(target.name.clone()).or_insert_with(|| {
                tracing::info!(cluster = %target.name, "starting collection");
                tokio::spawn(cluster::run(
                    target.clone(),
                    events.clone(),
                    settings.clone(),
                ))
            });
        }
        if collect.changed().await.is_err() {
            break;
        }
    }
    for task in running.values() {
        task.abort();
    }
}
