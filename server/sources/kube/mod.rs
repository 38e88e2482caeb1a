//! The real source: kube-rs watchers on every cluster this process collects. Each cluster runs
//! in its own task (with its own client, probe, discovery and one watch per kind), so one
//! cluster's bad credentials, TLS errors or timeouts never affect another.

mod actions;
mod cluster;
mod connect;
mod context;
mod discovery;
mod errors;
mod local;
mod logs;
mod merge;
mod pods;
mod probe;
mod warnings;
mod watch;

pub use actions::patch_object;
pub use local::{
    ContextChoice, IN_CLUSTER_NAME, SERVICE_ACCOUNT_TOKEN, cluster_name, default_clusters,
};
pub use logs::previous_log;

use crate::config::{ClusterConfig, CollectorSettings};
use crate::sources::{Collect, EventSender};
use std::collections::HashMap;
use std::time::Duration;
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
/// per-cluster tasks as it changes; runs until `collect`'s sender is gone. Aborting this task
/// stops every cluster too, so the event sender is gone with it.
pub async fn run(
    targets: Vec<ClusterConfig>,
    mut collect: Collect,
    events: EventSender,
    settings: KubeSettings,
) {
    let mut running = ClusterTasks::default();
    loop {
        let wanted = collect.borrow_and_update().clone();
        running.0.retain(|name, task| {
            let keep = wanted.contains(name);
            if !keep {
                tracing::info!(cluster = %name, "stopping collection");
                task.abort();
            }
            keep
        });
        for target in targets.iter().filter(|t| wanted.contains(&t.name)) {
            running.0.entry(target.name.clone()).or_insert_with(|| {
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
}

/// Each collected cluster's task, aborted when dropped: a dropped `JoinHandle` would leave the
/// task running (and sending).
#[derive(Default)]
struct ClusterTasks(HashMap<String, JoinHandle<()>>);

impl Drop for ClusterTasks {
    fn drop(&mut self) {
        for task in self.0.values() {
            task.abort();
        }
    }
}
