//! Ingest end to end and how it grows with the fleet: simulated clusters feed source events
//! into a real `fleet::Runner` writing to Postgres (events → evaluation → batched write), at
//! 10, 100 and 1,000 clusters. Prints sustained status changes per second, where a round's
//! time goes (the engine or the write, so the bottleneck is named), the engine's cost per
//! object and the round's cost per change at each size, and an estimate of the largest fleet
//! one instance holds with propagation p99 under 2 s.
//!
//!   DATABASE_URL=$(scripts/pg url) cargo bench --bench growth

#[path = "../tests/common/mod.rs"]
mod common;
mod support;

use chrono::{DateTime, Utc};
use fleetglass::fleet::{FleetSettings, Runner};
use fleetglass::health::{Input, Thresholds, evaluate};
use fleetglass::model::{Object, parse_object};
use fleetglass::sources::SourceEvent;
use serde_json::{Value, json};
use std::time::Instant;

/// Kustomizations per simulated cluster; each has a Deployment, so twice as many objects.
const APPS_PER_CLUSTER: usize = 100;
/// The runner's evaluation tick: a change waits up to this long before its round starts.
const TICK_SECONDS: f64 = 0.2;

struct Measured {
    clusters: usize,
    objects: usize,
    engine_ns_per_object: f64,
    write_us_per_change: f64,
}

fn main() {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(run());
}

async fn run() {
    let sizes: Vec<usize> = if support::full() {
        vec![10, 100, 1_000]
    } else {
        vec![2]
    };
    let changes_per_round = support::size(2_000, 10);
    let rounds = support::size(5, 2);
    println!(
        "{:>8} {:>8} {:>10} {:>10} {:>10} {:>11} {:>12} {:>13}  bottleneck",
        "clusters",
        "objects",
        "changes/s",
        "round ms",
        "engine ms",
        "write ms",
        "engine ns/obj",
        "round µs/chg"
    );
    let mut measured = Vec::new();
    for clusters in sizes {
        measured.push(fleet(clusters, changes_per_round, rounds).await);
    }
    growth(&measured);
}

fn kustomization(cluster: usize, app: usize, ready: bool) -> Value {
    let (status, reason) = if ready {
        ("True", "ReconciliationSucceeded")
    } else {
        ("False", "BuildFailed")
    };
    json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
        "metadata": {"name": format!("app-{app}"), "namespace": "flux-system", "generation": 1,
                     "labels": {"domain": format!("domain-{}", app % 10)}},
        "spec": {"interval": "10m", "path": "./deploy", "prune": true,
                 "sourceRef": {"kind": "GitRepository", "name": format!("repo-{cluster}")}},
        "status": {"observedGeneration": 1, "lastAppliedRevision": "main@sha1:1111111",
                   "conditions": [{"type": "Ready", "status": status, "reason": reason,
                                   "message": "bench", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    })
}

fn repository(cluster: usize) -> Value {
    json!({
        "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
        "metadata": {"name": format!("repo-{cluster}"), "namespace": "flux-system", "generation": 1},
        "spec": {"interval": "5m", "url": "https://example.invalid/r.git"},
        "status": {"observedGeneration": 1, "artifact": {"revision": "main@sha1:1111111"},
                   "conditions": [{"type": "Ready", "status": "True", "reason": "Succeeded",
                                   "message": "ok", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    })
}

fn deployment(app: usize) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": format!("app-{app}"), "namespace": "apps", "generation": 1,
                     "labels": {"kustomize.toolkit.fluxcd.io/name": format!("app-{app}"),
                                "kustomize.toolkit.fluxcd.io/namespace": "flux-system"}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}},
                 "template": {"spec": {"containers": [{"name": "app", "image": "registry.example/app:1.4.2"}]}}},
        "status": {"observedGeneration": 1, "replicas": 1, "readyReplicas": 1,
                   "availableReplicas": 1, "updatedReplicas": 1}
    })
}

fn object(cluster: usize, value: &Value) -> Object {
    parse_object(&format!("cluster-{cluster}"), value).expect("bench object parses")
}

async fn transitions(store: &fleetglass::store::Store) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM transitions")
        .fetch_one(store.pool())
        .await
        .expect("count transitions")
}

/// One fleet: loads it, then runs `rounds` rounds each flipping `changes` Kustomizations'
/// Ready condition, timing the runner's evaluate-and-write and, separately, the engine alone.
async fn fleet(clusters: usize, changes: usize, rounds: usize) -> Measured {
    let store = common::fresh_store().await;
    let settings = FleetSettings {
        cluster_labels: (0..clusters)
            .map(|c| (format!("cluster-{c}"), Default::default()))
            .collect(),
        ..FleetSettings::default()
    };
    let (mut runner, _latest) = Runner::new(settings, store.clone());
    let mut objects = Vec::with_capacity(clusters * APPS_PER_CLUSTER * 2);
    for c in 0..clusters {
        for a in 0..APPS_PER_CLUSTER {
            objects.push(object(c, &kustomization(c, a, true)));
            objects.push(object(c, &deployment(a)));
        }
    }
    // After the apps, so an app's Kustomization stays at index 2 × app.
    for c in 0..clusters {
        objects.push(object(c, &repository(c)));
    }
    let alive = |now: DateTime<Utc>, runner: &mut Runner| {
        for c in 0..clusters {
            runner.apply(SourceEvent::ClusterAlive {
                cluster: format!("cluster-{c}"),
                at: now,
            });
        }
    };
    let loaded = Instant::now();
    alive(Utc::now(), &mut runner);
    for o in &objects {
        runner.apply(SourceEvent::Apply(Box::new(o.clone())));
    }
    runner.evaluate_and_write(Utc::now()).await;
    let load_seconds = loaded.elapsed().as_secs_f64();
    let before = transitions(&store).await;

    let total_apps = clusters * APPS_PER_CLUSTER;
    let changes = changes.min(total_apps);
    let (mut round_s, mut engine_s) = (0.0, 0.0);
    for round in 0..rounds {
        let now = Utc::now();
        let started = Instant::now();
        alive(now, &mut runner);
        for k in 0..changes {
            // Spread over the fleet; the same apps each round, failing and recovering in turn.
            let app = k * total_apps / changes;
            let (c, a) = (app / APPS_PER_CLUSTER, app % APPS_PER_CLUSTER);
            let flipped = object(c, &kustomization(c, a, round % 2 == 1));
            objects[2 * app] = flipped.clone();
            runner.apply(SourceEvent::Apply(Box::new(flipped)));
        }
        runner.evaluate_and_write(now).await;
        round_s += started.elapsed().as_secs_f64();
        let thresholds = Thresholds::default();
        let engine = Instant::now();
        std::hint::black_box(evaluate(&Input {
            objects: &objects,
            clusters: &[],
            domains: &[],
            thresholds: &thresholds,
            now,
            seen_in_progress: &Default::default(),
        }));
        engine_s += engine.elapsed().as_secs_f64();
    }
    let written = transitions(&store).await - before;
    // Each flip changes the Kustomization's state; its Deployment follows its owner or not,
    // so at least one transition per change must have reached Postgres.
    assert!(
        written >= (changes * rounds) as i64,
        "only {written} transitions written for {} changes (states: {:?})",
        changes * rounds,
        sqlx::query_as::<_, (String, String, i64)>(
            "SELECT kind, state, count(*) FROM objects GROUP BY 1, 2"
        )
        .fetch_all(store.pool())
        .await
    );
    let (round_ms, engine_ms) = (
        round_s * 1e3 / rounds as f64,
        engine_s * 1e3 / rounds as f64,
    );
    let write_ms = (round_ms - engine_ms).max(0.0);
    let bottleneck = if engine_ms > write_ms {
        "engine (evaluates the whole fleet each round)"
    } else {
        "write (Postgres upserts + transitions)"
    };
    println!(
        "{clusters:>8} {:>8} {:>10.0} {round_ms:>10.1} {engine_ms:>10.1} {write_ms:>11.1} {:>12.0} {:>13.1}  {bottleneck}; initial load {load_seconds:.1}s, {written} transitions",
        objects.len(),
        changes as f64 / (round_ms / 1e3),
        engine_ms * 1e6 / objects.len() as f64,
        round_ms * 1e3 / changes as f64,
    );
    store.pool().close().await;
    Measured {
        clusters,
        objects: objects.len(),
        engine_ns_per_object: engine_ms * 1e6 / objects.len() as f64,
        write_us_per_change: write_ms * 1e3 / changes as f64,
    }
}

/// Says whether costs grew linearly, and estimates the largest fleet under a 2 s p99.
fn growth(measured: &[Measured]) {
    let (Some(small), Some(large)) = (measured.first(), measured.last()) else {
        return;
    };
    let growth = large.engine_ns_per_object / small.engine_ns_per_object;
    let write_growth = large.write_us_per_change / small.write_us_per_change;
    println!(
        "growth {}→{} clusters: engine per object ×{growth:.2}, write per change ×{write_growth:.2} ({})",
        small.clusters,
        large.clusters,
        if growth < 1.5 && write_growth < 1.5 {
            "linear: per-item costs stay flat"
        } else {
            "worse than linear"
        }
    );
    // ESTIMATE. A change waits for the next tick (≤ 200 ms), then a whole round: the engine
    // over every object plus the write of that round's changes. Assume a steady 1% of objects
    // change per round and 2× headroom for p99 over the mean on 2 shared cores.
    let per_object_s = large.engine_ns_per_object * 1e-9 + 0.01 * large.write_us_per_change * 1e-6;
    let budget_s = (2.0 - TICK_SECONDS) / 2.0;
    let max_objects = budget_s / per_object_s;
    let per_cluster = large.objects / large.clusters;
    println!(
        "ESTIMATE largest fleet with propagation p99 < 2 s: (2 s − {TICK_SECONDS} s tick) / 2 headroom = {budget_s:.2} s per round; per object {:.0} ns engine + 1% × {:.1} µs write = {:.0} ns; {budget_s:.2} s / {:.0} ns ≈ {max_objects:.0} objects ≈ {:.0} clusters of {per_cluster} objects",
        large.engine_ns_per_object,
        large.write_us_per_change,
        per_object_s * 1e9,
        per_object_s * 1e9,
        max_objects / per_cluster as f64,
    );
}
