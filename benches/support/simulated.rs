//! A simulated fleet fed as source events into a real `ingest::Runner` writing to Postgres:
//! per cluster, Kustomizations (each with its Deployment) and one GitRepository; each round
//! flips some Kustomizations' Ready condition and evaluates and writes, leaving the write
//! running beside the next round as the collector's loop does. The growth bench measures it;
//! the web bench runs it as the ingest going on while the pages are under load.

use chrono::{DateTime, Utc};
use fleetglass::ingest::{RoundLog, Runner, RunnerSettings};
use fleetglass::model::{Object, parse_object};
use fleetglass::objects::{
    GitRepository, Kustomization, KustomizationStatus, Meta, Ref, SourceStatus, Truth, Workload,
    condition,
};
use fleetglass::sources::SourceEvent;
use fleetglass::store::Store;
use serde_json::Value;

/// Kustomizations per simulated cluster; each has a Deployment, so twice as many objects.
pub const APPS_PER_CLUSTER: usize = 100;
/// The one revision every source offers and every Kustomization applied.
const REVISION: &str = "main@sha1:1111111";

#[allow(dead_code)] // the collectors bench runs its own collectors instead
pub struct SimulatedFleet {
    runner: Runner,
    /// What the runner was loaded with, in order: the apps (Kustomization at 2 × app, its
    /// Deployment next), then one GitRepository per cluster.
    pub objects: Vec<Object>,
    /// Whether each app's Kustomization is Ready now. The flips are not copied into `objects`:
    /// keeping the API server's copy is not the collector's work, so the bench does not time it.
    ready: Vec<bool>,
    clusters: Vec<String>,
}

#[allow(dead_code)]
impl SimulatedFleet {
    /// `clusters` clusters named `{prefix}-{n}`, all healthy, loaded and written once.
    pub async fn load(store: Store, prefix: &str, clusters: usize) -> SimulatedFleet {
        let clusters: Vec<String> = (0..clusters).map(|c| format!("{prefix}-{c}")).collect();
        let settings = RunnerSettings {
            cluster_labels: clusters
                .iter()
                .map(|c| (c.clone(), Default::default()))
                .collect(),
            ..RunnerSettings::default()
        };
        let (runner, _latest) = Runner::new(settings, store);
        let mut objects = Vec::with_capacity(clusters.len() * (APPS_PER_CLUSTER * 2 + 1));
        for cluster in &clusters {
            objects.extend(apps_of(cluster));
        }
        for cluster in &clusters {
            objects.push(parse(cluster, &repository(cluster)));
        }
        let mut fleet = SimulatedFleet {
            runner,
            objects,
            ready: vec![true; clusters.len() * APPS_PER_CLUSTER],
            clusters,
        };
        let now = Utc::now();
        fleet.alive(now);
        for object in &fleet.objects {
            fleet
                .runner
                .apply(SourceEvent::Apply(Box::new(object.clone())));
        }
        fleet.runner.run_round(now).await;
        fleet
    }

    pub fn apps(&self) -> usize {
        self.clusters.len() * APPS_PER_CLUSTER
    }

    /// What the runner's rounds did (each logged once its write ended).
    pub fn rounds(&self) -> tokio::sync::watch::Receiver<RoundLog> {
        self.runner.rounds()
    }

    /// One round: flips the Ready condition of `changes` Kustomizations spread over the
    /// fleet (failing ones recover, ready ones fail), then evaluates and starts its write
    /// (after the previous round's). Returns how many were flipped.
    pub async fn round(&mut self, changes: usize) -> usize {
        let changes = changes.min(self.apps());
        let now = Utc::now();
        self.alive(now);
        for k in 0..changes {
            let app = k * self.apps() / changes;
            let cluster = &self.clusters[app / APPS_PER_CLUSTER];
            self.ready[app] = !self.ready[app];
            let flipped = app_kustomization(cluster, app % APPS_PER_CLUSTER, self.ready[app]);
            self.runner.apply(SourceEvent::Apply(Box::new(flipped)));
        }
        self.runner.start_round(now).await;
        changes
    }

    /// Waits for the last round's write.
    pub async fn flush(&mut self) {
        self.runner.finish_write().await;
    }

    fn alive(&mut self, at: DateTime<Utc>) {
        for cluster in &self.clusters {
            self.runner.apply(SourceEvent::ClusterAlive {
                cluster: cluster.clone(),
                at,
            });
        }
    }
}

/// One cluster's objects as its source lists them, all healthy: each app's Kustomization
/// and Deployment, then the GitRepository they apply from.
#[allow(dead_code)] // the collectors bench's source; the others hold the fleet in one runner
pub fn cluster_objects(cluster: &str) -> Vec<Object> {
    let mut objects = apps_of(cluster);
    objects.push(parse(cluster, &repository(cluster)));
    objects
}

/// Each app's Kustomization (healthy) followed by its Deployment.
fn apps_of(cluster: &str) -> Vec<Object> {
    (0..APPS_PER_CLUSTER)
        .flat_map(|app| {
            [
                app_kustomization(cluster, app, true),
                parse(cluster, &deployment(app)),
            ]
        })
        .collect()
}

/// App `app`'s Kustomization on `cluster`, Ready or failing its build.
pub fn app_kustomization(cluster: &str, app: usize, ready: bool) -> Object {
    parse(cluster, &kustomization(cluster, app, ready))
}

fn parse(cluster: &str, value: &Value) -> Object {
    parse_object(cluster, value).expect("simulated object parses")
}

/// When the simulated objects were created and their conditions last changed.
fn long_ago() -> DateTime<Utc> {
    "2026-01-01T00:00:00Z".parse().expect("a valid time")
}

fn ready_condition(ready: bool, message: &str) -> Value {
    let (status, reason) = if ready {
        (Truth::True, "ReconciliationSucceeded")
    } else {
        (Truth::False, "BuildFailed")
    };
    condition("Ready", status, reason, message, long_ago(), None)
}

fn kustomization(cluster: &str, app: usize, ready: bool) -> Value {
    let meta = Meta::new("flux-system", &format!("app-{app}"), long_ago())
        .label("domain", &format!("domain-{}", app % 10));
    let source = Ref::to("GitRepository", &format!("repo-{cluster}"));
    let mut kustomization = Kustomization::new(meta, source, "./deploy", "10m");
    kustomization.status = Some(KustomizationStatus {
        observed_generation: 1,
        last_applied_revision: Some(REVISION.into()),
        conditions: vec![ready_condition(ready, "bench")],
        ..KustomizationStatus::default()
    });
    kustomization.to_json()
}

fn repository(cluster: &str) -> Value {
    let meta = Meta::new("flux-system", &format!("repo-{cluster}"), long_ago());
    GitRepository {
        status: Some(SourceStatus::serving(REVISION, long_ago())),
        ..GitRepository::on_main(meta, "https://example.invalid/r.git")
    }
    .to_json()
}

fn deployment(app: usize) -> Value {
    let name = format!("app-{app}");
    let meta = Meta::new("apps", &name, long_ago()).applied_by_kustomization("flux-system", &name);
    Workload::deployment(meta, "a", "app", "registry.example/app:1.4.2").to_json()
}
