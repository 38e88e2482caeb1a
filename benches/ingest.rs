//! Collector ingest benchmark: memory per tracked object (RSS delta over the snapshot holding
//! slim objects parsed from full API objects, managedFields included) and batched write
//! throughput to Postgres at several batch sizes.
//!
//!   DATABASE_URL=$(scripts/pg url) cargo bench --bench ingest
//!
//! Prints one line per measurement. Run on an otherwise idle machine for stable numbers.

mod support;

use chrono::Utc;
use fleetglass::health::State;
use fleetglass::ingest::Snapshot;
use fleetglass::model::{Kind, parse_object};
use fleetglass::objects::{Meta, Truth, Workload, WorkloadKind, WorkloadStatus, condition};
use fleetglass::sources::SourceEvent;
use fleetglass::store::{
    ChangeSet, JsonText, ObjectKey, ObjectRow, Store, TransitionRow, write_changes,
};
use serde_json::{Value, json};
use sqlx::Connection;
use std::time::Instant;

fn rss_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// A Deployment as the API server sends it, managedFields and all: what the engine reads from
/// the object builder, the bulk it does not read added as the API server writes it.
fn deployment(i: usize) -> Value {
    let name = format!("app-{i}");
    let namespace = format!("team-{}", i % 200);
    let since = "2026-01-01T00:00:00Z".parse().expect("a valid time");
    let meta = Meta::new(&namespace, &name, since)
        .generation(3)
        .label("app", &name)
        .applied_by_kustomization("flux-system", "apps");
    let available = condition(
        "Available",
        Truth::True,
        "MinimumReplicasAvailable",
        "ok",
        since,
        None,
    );
    let mut deployment = Workload {
        kind: WorkloadKind::Deployment,
        meta,
        app: name,
        container: "app".into(),
        image: format!("registry.example/app:{i}"),
        replicas: 2,
        status: Some(WorkloadStatus {
            observed_generation: 3,
            replicas: 2,
            ready: 2,
            available: 2,
            updated: 2,
            revisions: None,
            conditions: vec![available],
        }),
    }
    .to_json();
    let metadata = &mut deployment["metadata"];
    metadata["resourceVersion"] = json!("123456");
    metadata["uid"] = json!("0b6f0e7e-1b2c-4c8e-9a57-2f6c4a1d9e01");
    metadata["annotations"] = json!({"deployment.kubernetes.io/revision": "3"});
    metadata["managedFields"] = (0..4)
        .map(|m| {
            json!({"manager": format!("kustomize-controller-{m}"),
        "operation": "Apply", "apiVersion": "apps/v1", "time": "2026-01-01T00:00:00Z",
        "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}},
        "f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {}}}}}})
        })
        .collect();
    let container = &mut deployment["spec"]["template"]["spec"]["containers"][0];
    container["env"] = json!([{"name": "A", "value": "x"}]);
    container["resources"] = json!({"limits": {"cpu": "1"}});
    deployment
}

fn memory_per_object() {
    let count = support::size(50_000, 500);
    let objects: Vec<Value> = (0..count).map(deployment).collect();
    fleetglass_allocator::settle();
    let before = rss_bytes();
    let mut snapshot = Snapshot::default();
    for (i, value) in objects.iter().enumerate() {
        let slim = parse_object("bench", value).expect("parse");
        snapshot.apply(SourceEvent::Apply(Box::new(slim)));
        // The runner takes the touched ids every round; a round per 1,000 arrivals here.
        if i % 1_000 == 999 {
            snapshot.take_touched();
        }
    }
    fleetglass_allocator::settle();
    let after = rss_bytes();
    let per_object = after.saturating_sub(before) / count;
    println!(
        "memory: {count} Deployments in the snapshot: RSS +{} MiB, {per_object} bytes per object",
        (after - before) / (1024 * 1024)
    );
    drop(objects);
    std::hint::black_box(&snapshot);
}

fn changes(batch: usize, round: usize) -> ChangeSet {
    let now = Utc::now();
    let mut set = ChangeSet::default();
    for i in 0..batch {
        let key = ObjectKey {
            cluster: "bench".into(),
            kind: Kind::Deployment,
            namespace: format!("team-{}", i % 200),
            name: format!("app-{i}"),
        };
        let state = if round.is_multiple_of(2) {
            State::Healthy
        } else {
            State::Degraded
        };
        set.upserts.push(ObjectRow {
            key: key.clone(),
            state,
            since: Some(now),
            reason: "Available".into(),
            message: format!("round {round}"),
            root_causes: vec![],
            domains: vec![],
            body: JsonText::of(&json!({"status": {"workload": {"ready": round}}})),
            edges: Vec::new(),
        });
        set.transitions.push(TransitionRow {
            key,
            from: None,
            to: state,
            reason: "Available".into(),
            message: String::new(),
            at: now,
        });
    }
    set
}

async fn write_throughput() {
    let Ok(url) = std::env::var("DATABASE_URL") else {
        println!("writes: skipped (set DATABASE_URL to measure batched writes)");
        return;
    };
    let name = format!("fg_bench_{}", std::process::id());
    let mut admin = sqlx::PgConnection::connect(&url).await.expect("connect");
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut admin)
        .await
        .expect("create database");
    let base = url.rsplit_once('/').map_or(url.as_str(), |(b, _)| b);
    let store = Store::connect(&format!("{base}/{name}"))
        .await
        .expect("connect bench db");
    store.migrate().await.expect("migrate");
    for batch in [100, 1_000, 5_000] {
        let rounds = support::size((20_000 / batch).max(4), 1);
        let started = Instant::now();
        for round in 0..rounds {
            let set = changes(batch, round);
            let mut tx = store.pool().begin().await.expect("begin");
            write_changes(&mut tx, &set, Utc::now())
                .await
                .expect("write");
            tx.commit().await.expect("commit");
        }
        let seconds = started.elapsed().as_secs_f64();
        println!(
            "writes: batches of {batch:>5}: {:>8.0} changes/s ({rounds} batches, {:.1} ms per batch)",
            (batch * rounds) as f64 / seconds,
            seconds * 1000.0 / rounds as f64
        );
    }
    store.pool().close().await;
    let _ = sqlx::query(sqlx::AssertSqlSafe(format!("DROP DATABASE {name}")))
        .execute(&mut admin)
        .await;
}

fn main() {
    fleetglass_allocator::configure();
    memory_per_object();
    tokio::runtime::Runtime::new()
        .expect("runtime")
        .block_on(write_throughput());
}
