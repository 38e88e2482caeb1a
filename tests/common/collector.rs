//! Running real collectors against the test bed in process, and polling what they wrote.

use super::testbed::{Testbed, manifest};
use chrono::{DateTime, Utc};
use fleetglass::config::{ClusterConfig, Config, from_yaml_str};
use fleetglass::objects::{
    self, GitRepository, Kustomization, KustomizationStatus, Meta, Ref, Truth, condition,
};
use fleetglass::store::{ClusterRow, ObjectFilter, ObjectRecord, Store};
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

/// A config for the given clusters with short freshness, probe and lease periods.
pub fn config(kubeconfig: &Path, clusters: &[&str]) -> Config {
    let mut config = from_yaml_str(
        "thresholds: {freshness: 5s}\ncollector: {lease: 3s, probe_interval: 1s, rediscover: 10s}\n",
    )
    .expect("test config");
    config.clusters = clusters
        .iter()
        .map(|name| ClusterConfig {
            name: name.to_string(),
            kubeconfig: Some(kubeconfig.to_path_buf()),
            context: Some(name.to_string()),
            in_cluster: false,
            labels: Default::default(),
        })
        .collect();
    config
}

pub async fn objects_in(store: &Store, cluster: &str, namespace: &str) -> Vec<ObjectRecord> {
    store
        .objects(&ObjectFilter {
            cluster: Some(cluster.to_string()),
            namespace: Some(namespace.to_string()),
            limit: 1000,
            ..ObjectFilter::default()
        })
        .await
        .expect("read objects")
        .items
}

pub async fn cluster_row(store: &Store, cluster: &str) -> Option<ClusterRow> {
    store
        .clusters()
        .await
        .expect("read clusters")
        .into_iter()
        .find(|c| c.name == cluster)
}

/// The Ready condition status ("True"/"False") of a stored object's body.
pub fn ready_of(record: &ObjectRecord) -> Option<String> {
    record.body["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")
        .and_then(|c| c["status"].as_str())
        .map(str::to_string)
}

/// A GitRepository `repo` and a Kustomization `app` using it, in `namespace` (created too).
pub fn flux_pair(namespace: &str) -> String {
    let meta = |name: &str| Meta::new(namespace, name, bed_time());
    let repository = GitRepository::on_main(meta("repo"), "https://example.invalid/repo.git");
    let source = Ref::to("GitRepository", "repo");
    manifest(&[
        objects::namespace(&Meta::new("", namespace, bed_time())),
        repository.to_json(),
        Kustomization::new(meta("app"), source, "./deploy", "10m").to_json(),
    ])
}

/// When the objects written to the test bed say they were created and last changed.
pub fn bed_time() -> DateTime<Utc> {
    "2026-01-01T00:00:00Z".parse().expect("a valid time")
}

/// A Kustomization's status: Ready, or failing to build.
pub fn kustomization_status(ready: bool) -> KustomizationStatus {
    let (status, reason) = if ready {
        (Truth::True, "ReconciliationSucceeded")
    } else {
        (Truth::False, "BuildFailed")
    };
    KustomizationStatus {
        observed_generation: 1,
        conditions: vec![condition("Ready", status, reason, "test", bed_time(), None)],
        ..KustomizationStatus::default()
    }
}

/// [`kustomization_status`] as the JSON [`set_status`] writes.
pub fn ready_status(ready: bool) -> String {
    kustomization_status(ready).to_json().to_string()
}

/// The test bed the collector tests share (its own state dir). They stop its API servers,
/// delete CRDs and change RBAC, so they take turns: the bed is theirs until the turn is dropped
/// (one test binary runs them all, two at a time).
pub fn bed() -> BedTurn {
    static TURN: Mutex<()> = Mutex::new(());
    // A test that failed holding the turn poisons it; the bed itself is still fine.
    let turn = TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    BedTurn {
        bed: Testbed::up("collector", 2),
        _turn: turn,
    }
}

/// The collector bed, held by one test at a time ([`bed`]).
pub struct BedTurn {
    bed: Testbed,
    _turn: MutexGuard<'static, ()>,
}

impl std::ops::Deref for BedTurn {
    type Target = Testbed;

    fn deref(&self) -> &Testbed {
        &self.bed
    }
}

pub fn apply(bed: &Testbed, cluster: &str, yaml: &str) {
    let output = bed.kubectl_output(cluster, &["apply", "-f", "-"], Some(yaml));
    assert!(
        output.status.success(),
        "kubectl apply on {cluster} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Sets an object's status through the status subresource (the bed runs no controllers).
pub fn set_status(bed: &Testbed, cluster: &str, resource: &str, namespace: &str, status: &str) {
    let patch = format!("{{\"status\": {status}}}");
    bed.kubectl(
        cluster,
        &[
            "patch",
            resource,
            "-n",
            namespace,
            "--subresource=status",
            "--type=merge",
            "-p",
            &patch,
        ],
    );
}

/// A namespace name unique to this test run.
pub fn unique_namespace(prefix: &str) -> String {
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        chrono::Utc::now().timestamp_millis() % 1_000_000
    )
}
