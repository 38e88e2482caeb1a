//! What the web tests share: a router over a real Postgres seeded by the demo fleet through
//! the runner (the real engine), or by roll-up rows written through the store, and requests
//! driven in process.
#![allow(dead_code)] // each web test binary uses a different part of this module

use axum::body::Body;
use axum::http::{Request, StatusCode};
use chrono::{DateTime, TimeDelta, Utc};
use fleetglass::config::Config;
use fleetglass::health::{State, StateCounts};
use fleetglass::ingest::{Runner, RunnerSettings};
use fleetglass::model::ObjectId;
use fleetglass::sources::demo::{WorldDiff, apply_to_config};
use fleetglass::store::{
    ClusterRow, DomainRow, ObjectVerdict, RootCauseRow, Store, replace_rollups, upsert_clusters,
};
use fleetglass::web::{self, AppState, Site};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tower::ServiceExt;

pub use super::fresh_store;

pub fn demo_config() -> Config {
    let mut config = Config::default();
    apply_to_config(&mut config);
    config
}

/// The demo fleet evaluated once by the real engine and written to a fresh database.
pub async fn demo_app() -> (axum::Router, Store) {
    let store = fresh_store().await;
    let config = demo_config();
    let (mut runner, _latest) = Runner::new(RunnerSettings::from_config(&config), store.clone());
    let now = Utc::now();
    let mut world = WorldDiff::default();
    for event in world.step(now - TimeDelta::minutes(1), now) {
        runner.apply(event);
    }
    runner.run_round(now).await;
    (app(store.clone(), &config), store)
}

pub fn app(store: Store, config: &Config) -> axum::Router {
    web::router(AppState::new(store, Site::from_config(config)))
}

/// The demo fleet's site in tokens mode: every request needs `Authorization: Bearer {token}`
/// (the token named `ci`).
pub fn tokens_app(store: Store, token: &str) -> axum::Router {
    let hash: String = Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let mut config = demo_config();
    config.web = fleetglass::yaml::from_str(&format!(
        "auth: {{mode: tokens, tokens: [{{name: ci, sha256: {hash}}}]}}"
    ))
    .unwrap();
    app(store, &config)
}

/// `/api/v1/audit`'s events as (actor, action, detail), newest first.
pub fn audit_events(body: &Value) -> Vec<(String, String, String)> {
    body["events"]
        .as_array()
        .expect("an audit page")
        .iter()
        .map(|e| {
            let text = |k: &str| e[k].as_str().unwrap_or_default().to_string();
            (text("actor"), text("action"), text("detail"))
        })
        .collect()
}

pub async fn send(app: &axum::Router, request: Request<Body>) -> (StatusCode, String) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

pub async fn get(app: &axum::Router, uri: &str) -> (StatusCode, String) {
    send(app, Request::get(uri).body(Body::empty()).unwrap()).await
}

/// GET that must answer JSON; returns the status and the parsed body.
pub async fn get_json(app: &axum::Router, uri: &str) -> (StatusCode, Value) {
    let (status, body) = get(app, uri).await;
    let value =
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{uri}: not JSON ({e}): {body}"));
    (status, value)
}

pub fn cluster_row(name: &str, ring: &str, now: DateTime<Utc>) -> ClusterRow {
    ClusterRow {
        name: name.to_string(),
        labels: json!({"ring": ring}),
        last_good: Some(now),
        error: None,
        kind_errors: json!({}),
        state_counts: StateCounts::of([State::Healthy; 3]),
        controllers: json!([]),
        updated_at: now,
    }
}

pub fn domain_row(
    domain: &str,
    cluster: &str,
    version: &str,
    healthy: bool,
    blockers: &[&str],
) -> DomainRow {
    DomainRow {
        domain: domain.to_string(),
        cluster: cluster.to_string(),
        version: Some(version.to_string()),
        offered: None,
        state: if healthy {
            State::Healthy
        } else {
            State::Failed
        },
        fully_healthy: healthy,
        objects: 3,
        healthy: if healthy { 3 } else { 2 },
        blockers: blockers.iter().map(|b| b.to_string()).collect(),
    }
}

/// The cause the engine names for a Flux failure its classifier has no rule for: the
/// controller's reason (tests give a distinct reason for a distinct cause).
pub fn flux_failure(reason: &str) -> fleetglass::health::Cause {
    fleetglass::health::Cause::new(fleetglass::health::CauseCode::FluxFailure)
        .with("reason", reason)
}

pub fn cause_row(id: &str, reason: &str, affected: &[&str]) -> RootCauseRow {
    RootCauseRow {
        verdict: ObjectVerdict::new(
            id.parse::<ObjectId>().unwrap(),
            State::Failed,
            Some(Utc::now() - TimeDelta::minutes(38)),
            reason.to_string(),
            format!("{reason}: details"),
        ),
        cause: flux_failure(reason),
        affected: affected.iter().map(|a| a.to_string()).collect(),
    }
}

/// Writes clusters and replaces the roll-ups of `cluster` with the given rows.
pub async fn seed_rollups(
    store: &Store,
    clusters: &[ClusterRow],
    cluster: &str,
    causes: &[RootCauseRow],
    domains: &[DomainRow],
) {
    let mut tx = store.pool().begin().await.unwrap();
    upsert_clusters(&mut tx, clusters).await.unwrap();
    replace_rollups(&mut tx, &[cluster.to_string()], causes, domains, Utc::now())
        .await
        .unwrap();
    tx.commit().await.unwrap();
}
