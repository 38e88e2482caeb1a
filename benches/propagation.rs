//! Against real API servers (the test bed): how long a status write takes to show in
//! `/api/v1` (propagation, p50/p99), and how fast fleetglass answers "is domain D at version V
//! healthy on every cluster?" compared with listing the objects live from each API server, as
//! live tools do (side by side, at 3 and 10 clusters).
//!
//!   DATABASE_URL=$(scripts/pg url) cargo bench --bench propagation
//!
//! Full: 3 clusters × 2,000 Kustomizations and their Deployments, 200 propagation samples;
//! side by side at 3 clusters on the same bed and at 10 clusters × 500. Quick (`cargo test`):
//! 1 cluster × 20 objects, 4 samples, side by side at 1 cluster.

#[path = "../tests/common/mod.rs"]
mod common;
mod support;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::collector::{bed_time, config, kustomization_status};
use common::eventually;
use common::testbed::{Testbed, manifest};
use fleetglass::app::{Collector, Source};
use fleetglass::config::Config;
use fleetglass::ingest::{RoundLog, RoundRecord};
use fleetglass::objects::{
    self, Artifact, GitRepository, Kustomization, KustomizationStatus, Meta, Ref, SourceStatus,
    Storage, Truth, Workload,
};
use fleetglass::store::Store;
use fleetglass::web::{self, AppState, Site};
use http_body_util::BodyExt;
use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tower::ServiceExt;

const NAMESPACE: &str = "bench";
const DOMAIN: &str = "shop";
const REVISION: &str = "v1.4.2@sha256:0123456789abcdef";
const LOAD_DEADLINE: Duration = Duration::from_secs(600);

fn main() {
    support::run_async(bench());
}

async fn bench() {
    let full = support::full();
    let objects = support::size(2_000, 20);
    let clusters = support::size(3, 1);
    let bed = TakenDownAfter::up(&format!("bench-{clusters}"), clusters);
    let (store, collector, app) = collect(&bed, objects).await;
    propagation(&bed, &app, &collector.rounds, support::size(200, 4)).await;
    side_by_side(&bed, &app, support::size(20, 2)).await;
    collector.stop().await;
    drop(store);
    // Down before the ten clusters come up: the three would load the machine beside them.
    drop(bed);
    if full {
        let bed = TakenDownAfter::up("bench-10", 10);
        let (_store, collector, app) = collect(&bed, 500).await;
        side_by_side(&bed, &app, 20).await;
        collector.stop().await;
    }
}

/// A test bed the bench brings up and takes down when done with it, also when it fails: left
/// running, its API servers and etcd would load the machine under every bench run after it.
struct TakenDownAfter(Testbed);

impl TakenDownAfter {
    fn up(name: &str, clusters: usize) -> TakenDownAfter {
        TakenDownAfter(Testbed::up(name, clusters))
    }
}

impl std::ops::Deref for TakenDownAfter {
    type Target = Testbed;

    fn deref(&self) -> &Testbed {
        &self.0
    }
}

impl Drop for TakenDownAfter {
    fn drop(&mut self) {
        self.0.down();
    }
}

/// Loads `objects` Kustomizations (and a Deployment each) on every cluster of the bed, starts
/// a collector and waits until it has written them all.
async fn collect(bed: &Testbed, objects: usize) -> (Store, Collector, axum::Router) {
    let started = Instant::now();
    std::thread::scope(|scope| {
        for cluster in &bed.clusters {
            scope.spawn(move || load(bed, cluster, objects));
        }
    });
    println!(
        "loaded {} clusters × {objects} Kustomizations + {objects} Deployments in {:.1}s",
        bed.clusters.len(),
        started.elapsed().as_secs_f64()
    );
    let names: Vec<&str> = bed.clusters.iter().map(String::as_str).collect();
    let mut config = config(&bed.kubeconfig, &names);
    config.domains = fleetglass::config::from_yaml_str(&format!(
        "domains:\n  - name: {DOMAIN}\n    select: {{labels: {{domain: {DOMAIN}}}}}\n    version: {{from: source_revision, kind: GitRepository, namespace: {NAMESPACE}, name: repo}}\n"
    ))
    .expect("domain config")
    .domains;
    let store = common::fresh_store().await;
    let started = Instant::now();
    let collector = Collector::start(&config, store.clone(), Source::Kube, "bench".into());
    let expected = bed.clusters.len() * (2 * objects + 1);
    eventually("every object written", LOAD_DEADLINE, || async {
        let count: i64 = sqlx::query_scalar!(
            r#"SELECT count(*) AS "count!" FROM objects WHERE namespace = $1"#,
            NAMESPACE
        )
        .fetch_one(store.pool())
        .await
        .ok()?;
        (count as usize >= expected).then_some(())
    })
    .await;
    println!(
        "collector wrote {expected} objects in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    let app = router(&store, &config);
    (store, collector, app)
}

fn router(store: &Store, config: &Config) -> axum::Router {
    web::router(AppState::new(store.clone(), Site::from_config(config)))
}

/// A Kustomization status that has applied the source's revision, so fleetglass and the live
/// listing judge the same evidence.
fn applied_status(ready: bool) -> KustomizationStatus {
    KustomizationStatus {
        last_attempted_revision: Some(REVISION.into()),
        last_applied_revision: Some(REVISION.into()),
        ..kustomization_status(ready)
    }
}

/// The source, and per app a Kustomization and the Deployment it applied, each with its status.
fn objects_of_the_bed(objects: usize) -> Vec<serde_json::Value> {
    let meta = |name: &str| Meta::new(NAMESPACE, name, bed_time());
    let artifact = Artifact {
        storage: Some(Storage {
            path: "p".into(),
            url: "u".into(),
            digest: "sha256:0".into(),
        }),
        ..Artifact::new(REVISION, bed_time())
    };
    let ready = objects::condition("Ready", Truth::True, "Succeeded", "ok", bed_time(), None);
    let repository = GitRepository {
        status: Some(SourceStatus {
            observed_generation: 1,
            artifact: Some(artifact),
            conditions: vec![ready],
        }),
        ..GitRepository::on_main(meta("repo"), "https://example.invalid/repo.git")
    };
    let mut all = vec![repository.to_json()];
    for i in 0..objects {
        let name = format!("app-{i}");
        let source = Ref::to("GitRepository", "repo");
        let meta_of_app = meta(&name).label("domain", DOMAIN);
        let mut kustomization = Kustomization::new(meta_of_app, source, "./deploy", "10m");
        kustomization.status = Some(applied_status(true));
        let deployment = Workload::deployment(
            meta(&name).applied_by_kustomization(NAMESPACE, &name),
            &name,
            "app",
            "registry.example/app:1.4.2",
        );
        all.extend([kustomization.to_json(), deployment.to_json()]);
    }
    all
}

/// Creates the objects with one `kubectl create` (which leaves their status out), then sets
/// their status with one `kubectl replace --subresource=status` (the bed runs no controllers).
fn load(bed: &Testbed, cluster: &str, objects: usize) {
    let all = objects_of_the_bed(objects);
    let status = manifest(&all);
    let namespace = objects::namespace(&Meta::new("", NAMESPACE, bed_time()));
    let yaml = manifest(&[vec![namespace], all].concat());
    let created = bed.kubectl_output(cluster, &["create", "-f", "-"], Some(&yaml));
    let stderr = String::from_utf8_lossy(&created.stderr);
    assert!(
        created.status.success() || stderr.contains("AlreadyExists"),
        "kubectl create on {cluster}: {stderr}"
    );
    let replaced = bed.kubectl_output(
        cluster,
        &["replace", "--subresource=status", "-f", "-"],
        Some(&status),
    );
    assert!(
        replaced.status.success(),
        "kubectl replace --subresource=status on {cluster}: {}",
        String::from_utf8_lossy(&replaced.stderr)
    );
}

async fn get(app: &axum::Router, uri: &str) -> Value {
    let response = app
        .clone()
        .oneshot(Request::get(uri).body(Body::empty()).expect("request"))
        .await
        .expect("response");
    assert_eq!(response.status(), StatusCode::OK, "{uri}");
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    serde_json::from_slice(&body).expect("JSON")
}

/// Sets one Kustomization's Ready condition per sample (round-robin over clusters) and polls
/// `/api/v1/objects/…` every 5 ms until the new state shows; then splits each sample's time into
/// its stages from the runner's round log.
async fn propagation(
    bed: &Testbed,
    app: &axum::Router,
    rounds: &watch::Receiver<RoundLog>,
    samples: usize,
) {
    let mut from_start = Vec::with_capacity(samples);
    let mut from_ack = Vec::with_capacity(samples);
    let mut stages = Stages::default();
    for sample in 0..samples {
        // Each object fails, then recovers, so the domain is healthy again afterwards.
        let (object, ready) = (sample / 2, sample % 2 == 1);
        let cluster = &bed.clusters[object % bed.clusters.len()];
        let name = format!("app-{}", object / bed.clusters.len());
        let uri = format!("/api/v1/objects/{cluster}/Kustomization/{NAMESPACE}/{name}");
        let before = get(app, &uri).await["state"].clone();
        let rounds_before = rounds.borrow().total();
        let begun = Instant::now();
        common::collector::set_status(
            bed,
            cluster,
            &format!("kustomization/{name}"),
            NAMESPACE,
            &applied_status(ready).to_json().to_string(),
        );
        let acknowledged = Instant::now();
        loop {
            let state = get(app, &uri).await["state"].clone();
            if state != before {
                break;
            }
            assert!(
                begun.elapsed() < Duration::from_secs(60),
                "{uri} still {state} a minute after the write"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let visible = Instant::now();
        from_start.push(visible - begun);
        from_ack.push(visible - acknowledged);
        let log = rounds.borrow();
        let round = log
            .since(rounds_before)
            .find(|r| r.objects > 0 && r.first_event.is_some_and(|at| at >= begun));
        stages.add(round, [begun, acknowledged, visible]);
    }
    let [p50, p99, max] = support::percentiles(&mut from_ack);
    let [s50, s99, smax] = support::percentiles(&mut from_start);
    println!(
        "propagation ({samples} samples): from the write acknowledged to visible in /api/v1: p50 {p50:.0} ms, p99 {p99:.0} ms, max {max:.0} ms"
    );
    println!(
        "propagation including kubectl patch itself: p50 {s50:.0} ms, p99 {s99:.0} ms, max {smax:.0} ms"
    );
    stages.print();
}

/// Where each sample's time went, stage by stage, from the round that wrote its change.
#[derive(Default)]
struct Stages {
    /// Per stage: its name and every sample's time in it.
    times: Vec<(&'static str, Vec<Duration>)>,
    /// Samples whose round was not found in the log (it rolled over, or nothing was written).
    unmatched: usize,
}

impl Stages {
    fn add(&mut self, round: Option<&RoundRecord>, [begun, acknowledged, visible]: [Instant; 3]) {
        let Some((event, started, committed)) =
            round.and_then(|r| Some((r.first_event?, r.started?, r.committed?)))
        else {
            self.unmatched += 1;
            return;
        };
        let times = round.map(|r| r.times).unwrap_or_default();
        let stages = [
            (
                "kubectl started → event taken up by the runner",
                event - begun,
            ),
            (
                "write acknowledged → event taken up (0 if before)",
                event.saturating_duration_since(acknowledged),
            ),
            ("event → round start", started - event),
            ("round start → write committed", committed - started),
            ("  of which evaluate", times.evaluate),
            ("  of which rows, roll-ups, publishing", times.changes),
            ("  of which the transaction", times.write),
            ("write committed → visible in /api/v1", visible - committed),
        ];
        for (n, (name, time)) in stages.into_iter().enumerate() {
            match self.times.get_mut(n) {
                Some((_, times)) => times.push(time),
                None => self.times.push((name, vec![time])),
            }
        }
    }

    fn print(mut self) {
        println!(
            "propagation stages ({} samples matched to their round, {} not):",
            self.times.first().map_or(0, |(_, t)| t.len()),
            self.unmatched
        );
        for (name, times) in &mut self.times {
            let [p50, p99, max] = support::percentiles(times);
            println!("  {name:<52} p50 {p50:>6.1} ms  p99 {p99:>6.1} ms  max {max:>6.1} ms");
        }
    }
}

/// One answer through fleetglass's API against the same answer computed from live lists
/// (`kubectl get … -A -o json` per cluster, all clusters at once).
async fn side_by_side(bed: &Testbed, app: &axum::Router, rounds: usize) {
    let version = REVISION.split('@').next().unwrap_or(REVISION);
    let (mut ours, mut live) = (Vec::new(), Vec::new());
    let (mut our_answer, mut live_answer) = (false, false);
    for _ in 0..rounds {
        let begun = Instant::now();
        let detail = get(app, &format!("/api/v1/domains/{DOMAIN}")).await;
        our_answer = detail["clusters"].as_array().is_some_and(|clusters| {
            clusters.len() == bed.clusters.len()
                && clusters
                    .iter()
                    .all(|c| c["version"] == version && c["fully_healthy"] == true)
        });
        ours.push(begun.elapsed());
        let begun = Instant::now();
        live_answer = live_answer_of(bed);
        live.push(begun.elapsed());
    }
    let [o50, o99, _] = support::percentiles(&mut ours);
    let [l50, l99, _] = support::percentiles(&mut live);
    println!(
        "side by side at {} clusters ({rounds} rounds): fleetglass /api/v1/domains/{DOMAIN} p50 {o50:.1} ms p99 {o99:.1} ms (answer {our_answer}); live kubectl lists p50 {l50:.0} ms p99 {l99:.0} ms (answer {live_answer}); ratio at p50 {:.0}×",
        bed.clusters.len(),
        l50 / o50
    );
}

/// Lists the domain's objects from every cluster in parallel and decides: every labelled
/// Kustomization Ready and its source at the version.
fn live_answer_of(bed: &Testbed) -> bool {
    let children: Vec<_> = bed
        .clusters
        .iter()
        .map(|cluster| {
            Command::new(bed.bin.join("kubectl"))
                .env("KUBECONFIG", &bed.kubeconfig)
                .args(["--context", cluster, "get"])
                .arg("kustomizations,helmreleases,gitrepositories,ocirepositories,helmcharts,deployments,statefulsets,daemonsets")
                .args(["-A", "-o", "json"])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .expect("kubectl get")
        })
        .collect();
    children.into_iter().all(|child| {
        let output = child.wait_with_output().expect("kubectl output");
        let list: Value = serde_json::from_slice(&output.stdout).unwrap_or_default();
        let items = list["items"].as_array().cloned().unwrap_or_default();
        let ready = |item: &Value| {
            item["status"]["conditions"].as_array().is_some_and(|c| {
                c.iter()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True")
            })
        };
        let at_version = items.iter().any(|item| {
            item["kind"] == "GitRepository"
                && item["status"]["artifact"]["revision"] == REVISION
                && ready(item)
        });
        let domain: Vec<&Value> = items
            .iter()
            .filter(|item| item["metadata"]["labels"]["domain"] == DOMAIN)
            .collect();
        at_version && !domain.is_empty() && domain.iter().all(|item| ready(item))
    })
}
