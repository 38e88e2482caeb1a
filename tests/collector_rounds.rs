//! The collector's rounds against real Postgres: a round re-evaluates only the clusters whose
//! objects changed or whose evaluation fell due; a round with nothing new writes nothing and
//! publishes nothing; and the event-driven loop evaluates a change as it arrives, that
//! cluster alone.

use crate::common;

use chrono::{DateTime, TimeDelta, Utc};
use common::web::fresh_store;
use fleetglass::config::{ClusterConfig, Config};
use fleetglass::health::State;
use fleetglass::ingest::{Latest, Runner, RunnerSettings};
use fleetglass::model::parse_object;
use fleetglass::objects::{
    GitRepository, Kustomization, KustomizationStatus, Meta, Ref, SourceStatus, Truth, condition,
};
use fleetglass::sources::SourceEvent;
use fleetglass::store::Store;
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::Duration;

fn config(clusters: &[&str]) -> Config {
    Config {
        clusters: clusters
            .iter()
            .map(|name| ClusterConfig {
                name: name.to_string(),
                kubeconfig: None,
                context: None,
                in_cluster: false,
                labels: Default::default(),
            })
            .collect(),
        ..Default::default()
    }
}

fn t0() -> DateTime<Utc> {
    "2026-12-01T12:00:00Z".parse().unwrap()
}

/// When the objects were created: before anything the tests look at.
fn created() -> DateTime<Utc> {
    "2026-01-01T00:00:00Z".parse().unwrap()
}

/// A Kustomization whose Ready condition is `status`/`reason` since `since`; with a 1m interval
/// its stuck threshold is the 15m default (twice its 30s timeout is less).
fn kustomization(name: &str, status: Truth, reason: &str, since: DateTime<Utc>) -> Value {
    let meta = Meta::new("flux-system", name, created());
    let mut kustomization = Kustomization::new(meta, Ref::to("GitRepository", "repo"), "./", "1m");
    kustomization.status = Some(KustomizationStatus {
        observed_generation: 1,
        last_applied_revision: Some(REVISION.into()),
        last_attempted_revision: Some(REVISION.into()),
        conditions: vec![condition("Ready", status, reason, "m", since, None)],
        inventory: None,
    });
    kustomization.to_json()
}

const REVISION: &str = "main@sha1:0123";

fn repository() -> Value {
    let meta = Meta::new("flux-system", "repo", created());
    GitRepository {
        status: Some(SourceStatus::serving(REVISION, created())),
        ..GitRepository::on_main(meta, "https://example.invalid/r.git")
    }
    .to_json()
}

fn event(cluster: &str, value: &Value) -> SourceEvent {
    SourceEvent::Apply(Box::new(parse_object(cluster, value).unwrap()))
}

/// What a source says once the cluster's first full list is complete: until then nothing of
/// it is evaluated as evidence, nor written.
fn listed(cluster: &str, at: DateTime<Utc>) -> SourceEvent {
    SourceEvent::ClusterAlive {
        cluster: cluster.to_string(),
        at,
    }
}

/// Every row the collector wrote for `cluster` (all clusters: None), with the transaction that
/// wrote it: equal before and after exactly when nothing of it was written in between.
async fn written_rows(store: &Store, cluster: Option<&str>) -> Vec<String> {
    let mut rows = Vec::new();
    for (table, column) in [
        ("clusters", "name"),
        ("objects", "cluster"),
        ("transitions", "cluster"),
        ("root_causes", "cluster"),
        ("domain_verdicts", "cluster"),
    ] {
        let query = format!(
            "SELECT '{table} ' || xmin::text || ' ' || ctid::text FROM {table}
             WHERE $1::text IS NULL OR {column} = $1"
        );
        // Table and column names come from the list above, never from input.
        let mut some: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(query))
            .bind(cluster)
            .fetch_all(store.pool())
            .await
            .unwrap();
        some.sort();
        rows.extend(some);
    }
    rows
}

async fn state_of(store: &Store, cluster: &str, name: &str) -> String {
    sqlx::query_scalar!(
        "SELECT state FROM objects WHERE cluster = $1 AND kind = 'Kustomization' AND name = $2",
        cluster,
        name,
    )
    .fetch_one(store.pool())
    .await
    .unwrap()
}

fn reevaluated(latest: &Latest) -> BTreeSet<String> {
    latest.borrow().reevaluated.clone()
}

fn set(clusters: &[&str]) -> BTreeSet<String> {
    clusters.iter().map(|c| c.to_string()).collect()
}

/// Cluster `a` holds work in progress for 14m30s (stuck past 15m); `b` is all healthy.
async fn two_clusters() -> (Runner, Latest, Store) {
    let store = fresh_store().await;
    let (mut runner, latest) = Runner::new(
        RunnerSettings::from_config(&config(&["a", "b"])),
        store.clone(),
    );
    let started = t0() - TimeDelta::seconds(14 * 60 + 30);
    for cluster in ["a", "b"] {
        runner.apply(event(cluster, &repository()));
        runner.apply(listed(cluster, t0()));
    }
    runner.apply(event(
        "a",
        &kustomization("app", Truth::Unknown, "Progressing", started),
    ));
    runner.apply(event(
        "b",
        &kustomization("app", Truth::True, "ReconciliationSucceeded", started),
    ));
    runner.run_round(t0()).await;
    (runner, latest, store)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_with_nothing_new_writes_nothing_and_publishes_nothing() {
    let (mut runner, mut latest, store) = two_clusters().await;
    assert_eq!(reevaluated(&latest), set(&["a", "b"]));
    latest.borrow_and_update();
    let before = written_rows(&store, None).await;
    assert!(!before.is_empty());
    // An object sent again unchanged is no change either.
    runner.apply(event("b", &repository()));
    runner.run_round(t0() + TimeDelta::seconds(10)).await;
    assert!(
        !latest.has_changed().unwrap(),
        "an unchanged evaluation is not published again"
    );
    assert_eq!(
        written_rows(&store, None).await,
        before,
        "nothing was written"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_threshold_passing_re_evaluates_that_cluster_alone() {
    let (mut runner, latest, store) = two_clusters().await;
    assert_eq!(state_of(&store, "a", "app").await, "progressing");
    // a's work was first seen in progress in the first round, which the engine reads: a is
    // evaluated once more, with the same outcome.
    runner.run_round(t0() + TimeDelta::seconds(10)).await;
    assert_eq!(state_of(&store, "a", "app").await, "progressing");
    let (a_before, b_before) = (
        written_rows(&store, Some("a")).await,
        written_rows(&store, Some("b")).await,
    );
    // 45s later a's work has been in progress for 15m15s: past its threshold.
    runner.run_round(t0() + TimeDelta::seconds(45)).await;
    assert_eq!(reevaluated(&latest), set(&["a"]));
    assert_eq!(state_of(&store, "a", "app").await, "stuck");
    let verdict = latest
        .borrow()
        .fleet
        .merged()
        .objects
        .iter()
        .find(|v| v.cluster == "a" && v.name == "app")
        .map(|v| (v.state, v.reason.clone()))
        .unwrap();
    assert_eq!(verdict.0, State::Stuck);
    assert!(verdict.1.starts_with("stuck for 15m"), "{}", verdict.1);
    assert_ne!(written_rows(&store, Some("a")).await, a_before);
    assert_eq!(
        written_rows(&store, Some("b")).await,
        b_before,
        "nothing of b was written"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loop_evaluates_a_change_as_it_arrives_and_that_cluster_alone() {
    let store = fresh_store().await;
    let (runner, mut latest) = Runner::new(
        RunnerSettings::from_config(&config(&["a", "b"])),
        store.clone(),
    );
    let (events, receiver) = tokio::sync::mpsc::channel(64);
    let running = tokio::spawn(runner.run(receiver));
    let since = Utc::now() - TimeDelta::hours(1);
    for cluster in ["a", "b"] {
        events.send(event(cluster, &repository())).await.unwrap();
        let ok = kustomization("app", Truth::True, "ReconciliationSucceeded", since);
        events.send(event(cluster, &ok)).await.unwrap();
        events.send(listed(cluster, Utc::now())).await.unwrap();
    }
    let deadline = Duration::from_secs(30);
    common::eventually("both clusters evaluated", deadline, async || {
        let evaluated = latest.borrow_and_update().clone();
        (evaluated.fleet.merged().objects.len() == 4).then_some(())
    })
    .await;
    let failed = kustomization("app", Truth::False, "BuildFailed", Utc::now());
    events.send(event("b", &failed)).await.unwrap();
    let redone = common::eventually("b's change evaluated", deadline, async || {
        let evaluated = latest.borrow_and_update().clone();
        let failed = evaluated
            .fleet
            .merged()
            .objects
            .iter()
            .any(|v| v.cluster == "b" && v.name == "app" && v.state == State::Failed);
        failed.then(|| evaluated.reevaluated.clone())
    })
    .await;
    assert_eq!(redone, set(&["b"]));
    drop(events);
    running.await.unwrap();
    assert_eq!(state_of(&store, "b", "app").await, "failed");
}

/// Each root cause's row with the transaction that last wrote it.
async fn root_cause_rows(store: &Store, cluster: &str) -> Vec<(String, String, String)> {
    sqlx::query!(
        r#"SELECT id, reason, xmin::text AS "xmin!" FROM root_causes WHERE cluster = $1 ORDER BY id"#,
        cluster,
    )
    .fetch_all(store.pool())
    .await
    .unwrap()
    .into_iter()
    .map(|row| (row.id, row.reason, row.xmin))
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_writes_only_the_roll_up_rows_that_changed_and_resolves_the_cause_that_went() {
    let store = fresh_store().await;
    let (mut runner, _latest) =
        Runner::new(RunnerSettings::from_config(&config(&["a"])), store.clone());
    runner.apply(event("a", &repository()));
    runner.apply(listed("a", t0()));
    for name in ["one", "two"] {
        let failed = kustomization(name, Truth::False, "BuildFailed", created());
        runner.apply(event("a", &failed));
    }
    runner.run_round(t0()).await;
    let before = root_cause_rows(&store, "a").await;
    assert_eq!(before.len(), 2, "{before:?}");
    let ok = kustomization("one", Truth::True, "ReconciliationSucceeded", t0());
    runner.apply(event("a", &ok));
    runner.run_round(t0() + TimeDelta::seconds(1)).await;
    assert_eq!(
        root_cause_rows(&store, "a").await,
        before[1..],
        "two's row is left as it was (same transaction), one's is gone"
    );
    let resolved = store.resolved_since(t0()).await.unwrap();
    assert_eq!(
        resolved
            .iter()
            .map(|r| r.root_cause.as_str())
            .collect::<Vec<_>>(),
        vec!["a/Kustomization/flux-system/one"]
    );
}
