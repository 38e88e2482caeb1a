//! End to end without a cluster: the demo fleet → the runner → real Postgres → the web router.

use crate::common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use chrono::{TimeDelta, Utc};
use common::eventually;
use fleetglass::app::{Collector, Source};
use fleetglass::config::Config;
use fleetglass::ingest::{Runner, RunnerSettings};
use fleetglass::sources::demo::{DEMO_CLUSTERS, WorldDiff, apply_to_config};
use fleetglass::web::{self, AppState, Site};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

async fn get(app: &axum::Router, uri: &str) -> (StatusCode, String) {
    let response = app
        .clone()
        .oneshot(Request::get(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_demo_fleet_reaches_the_api_with_its_incidents() {
    let store = common::fresh_store().await;
    let mut config = Config::default();
    apply_to_config(&mut config);
    let (mut runner, _latest) = Runner::new(RunnerSettings::from_config(&config), store.clone());
    let started = Utc::now() - TimeDelta::minutes(1);
    let mut world = WorldDiff::default();
    for event in world.step(started, Utc::now()) {
        runner.apply(event);
    }
    runner.run_round(Utc::now()).await;

    let app = web::router(AppState::new(store, Site::from_config(&config)));
    let (status, body) = get(&app, "/api/v1/fleet").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let fleet: Value = serde_json::from_str(&body).unwrap();
    assert!(fleet["clusters"].as_array().unwrap().len() >= 3, "{fleet}");
    let domains = fleet["domains"].as_array().unwrap();
    assert!(domains.len() >= 4, "{fleet}");
    let states: Vec<&str> = domains
        .iter()
        .flat_map(|d| d["clusters"].as_array().unwrap())
        .map(|cell| cell["state"].as_str().unwrap())
        .collect();
    assert!(
        states.iter().any(|s| *s != "healthy"),
        "some domain must show an incident: {states:?}"
    );
    assert!(
        !fleet["root_causes"].as_array().unwrap().is_empty(),
        "{fleet}"
    );

    let (status, page) = get(&app, "/").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains("problem"),
        "the fleet page names the problems"
    );
    for domain in domains {
        assert!(page.contains(domain["name"].as_str().unwrap()));
    }
    let (status, fragment) = get(&app, "/fragments/fleet").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        !fragment.contains("<html"),
        "the fragment is only the live part"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn probes_and_assets_and_headers() {
    let store = common::fresh_store().await;
    let app = web::router(AppState::new(store, Site::default()));
    assert_eq!(get(&app, "/healthz").await.0, StatusCode::OK);
    assert_eq!(
        get(&app, "/readyz").await,
        (StatusCode::OK, "ready".to_string())
    );
    let (status, js) = get(&app, "/static/vendor/htmx.min.js").await;
    assert_eq!(status, StatusCode::OK);
    assert!(js.contains("htmx"));
    assert_eq!(get(&app, "/static/nope.js").await.0, StatusCode::NOT_FOUND);
    let response = app
        .clone()
        .oneshot(Request::get("/").body(Body::empty()).unwrap())
        .await
        .unwrap();
    let csp = response.headers()["content-security-policy"]
        .to_str()
        .unwrap();
    assert!(csp.contains("frame-ancestors 'none'") && !csp.contains("unsafe-inline"));
    assert_eq!(response.headers()["x-content-type-options"], "nosniff");
}

#[tokio::test(flavor = "multi_thread")]
async fn readyz_fails_when_the_database_is_gone() {
    let store = common::fresh_store().await;
    store.pool().close().await;
    let app = web::router(AppState::new(store, Site::default()));
    assert_eq!(
        get(&app, "/readyz").await.0,
        StatusCode::SERVICE_UNAVAILABLE
    );
}

/// The demo goes through the same composition root as real clusters: two demo collectors on
/// one database split its clusters by leases, and when one stops (its last round written, its
/// leases released) the other takes its clusters over and every cluster's objects are there.
#[tokio::test(flavor = "multi_thread")]
async fn demo_collectors_share_the_clusters_through_leases_like_real_ones() {
    const DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);
    let store = common::fresh_store().await;
    let config = common::web::demo_config();
    let a = Collector::start(&config, store.clone(), Source::Demo, "demo-a".into());
    let b = Collector::start(&config, store.clone(), Source::Demo, "demo-b".into());
    let demo_clusters = DEMO_CLUSTERS.len();
    eventually(
        "the demo clusters split between the two",
        DEADLINE,
        || async {
            let (held_a, held_b) = (a.held.borrow().clone(), b.held.borrow().clone());
            (!held_a.is_empty()
                && !held_b.is_empty()
                && held_a.is_disjoint(&held_b)
                && held_a.len() + held_b.len() == demo_clusters)
                .then_some(())
        },
    )
    .await;

    a.stop().await;
    let leases_of_a: i64 = sqlx::query_scalar!(
        r#"SELECT count(*) AS "leases!" FROM collector_leases WHERE holder = 'demo-a'"#
    )
    .fetch_one(store.pool())
    .await
    .unwrap();
    assert_eq!(leases_of_a, 0, "a stopped collector releases its leases");
    eventually("b takes every demo cluster over", DEADLINE, || async {
        (b.held.borrow().len() == demo_clusters).then_some(())
    })
    .await;
    eventually("every demo cluster's objects written", DEADLINE, || async {
        let clusters: Vec<String> =
            sqlx::query_scalar!("SELECT DISTINCT cluster FROM objects ORDER BY cluster")
                .fetch_all(store.pool())
                .await
                .ok()?;
        (clusters.len() == demo_clusters).then_some(())
    })
    .await;
    b.stop().await;
}
