//! How fast the fleet page and the domain JSON answer for a 100,000-object fleet: seeds a
//! fresh database (objects, clusters, root causes, domain verdicts) through the store, then
//! drives the router in process and prints p50/p99 per endpoint; then times the fleet page in
//! process again while a simulated fleet's ingest writes at a steady rate. Then the same database
//! under load: `wrk` against a real `fleetglass serve` while a simulated fleet's ingest writes
//! into it as fast as it can.
//!
//!     DATABASE_URL=$(scripts/pg url) cargo bench --bench web

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/simulated.rs"]
mod simulated;
#[path = "support/steady_ingest.rs"]
mod steady_ingest;
mod support;
#[path = "support/under_load.rs"]
mod under_load;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use chrono::{TimeDelta, Utc};
use fleetglass::config::Config;
use fleetglass::health::{Dependency, State, StateCounts};
use fleetglass::model::{Kind, ObjectId};
use fleetglass::store::{
    ChangeSet, ClusterRow, DomainRow, JsonText, ObjectKey, ObjectRow, ObjectVerdict, RootCauseRow,
    Store, TransitionRow, replace_dependencies, replace_rollups, upsert_clusters, write_changes,
};
use fleetglass::web::{self, AppState, Site};
use http_body_util::BodyExt;
use serde_json::json;
use std::time::{Duration, Instant};
use steady_ingest::SteadyIngest;
use tower::ServiceExt;

const CLUSTERS: usize = 50;
const DOMAINS: usize = 20;
const CAUSES_PER_CLUSTER: usize = 4;
/// 100,000 objects under `cargo bench`; a few hundred under `cargo test`.
fn objects_per_cluster() -> usize {
    support::size(2_000, 10)
}

fn requests() -> usize {
    support::size(200, 5)
}

/// The steady ingest beside the fleet page: as many simulated clusters as the load below uses
/// (the same names, so the database it leaves is the same), 2,000 changes a second.
fn steady_clusters() -> usize {
    support::size(10, 1)
}

fn steady_rate() -> usize {
    support::size(2_000, 200)
}

const KINDS: [Kind; 5] = [
    Kind::Kustomization,
    Kind::HelmRelease,
    Kind::GitRepository,
    Kind::Deployment,
    Kind::Pod,
];

fn main() {
    support::run_async(bench());
}

async fn bench() {
    let store = common::fresh_store().await;
    let started = Instant::now();
    let config_yaml = seed(&store).await;
    let config: Config = fleetglass::config::from_yaml_str(&config_yaml).unwrap();
    println!(
        "seeded {} objects on {CLUSTERS} clusters, {DOMAINS} domains, {} root causes in {:.1}s",
        CLUSTERS * objects_per_cluster(),
        CLUSTERS * CAUSES_PER_CLUSTER,
        started.elapsed().as_secs_f64()
    );
    let app = web::router(AppState::new(store.clone(), Site::from_config(&config)));
    println!(
        "{:<44} {:>9} {:>9} {:>9}",
        "endpoint", "p50 ms", "p99 ms", "max ms"
    );
    for uri in [
        "/",
        "/api/v1/fleet",
        "/api/v1/domains/domain-7",
        "/api/v1/domains",
        "/api/v1/objects?state=failed&limit=100",
        "/api/v1/objects?domain=domain-7&limit=100",
        "/problems",
        "/api/v1/impact?cluster=cluster-7&kind=Kustomization&namespace=ns-0&name=object-0",
    ] {
        let requests = requests();
        let mut times = time_requests(&app, uri, requests, Duration::ZERO).await;
        times.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "{uri:<44} {:>9.2} {:>9.2} {:>9.2}",
            ms(times[requests / 2]),
            ms(times[requests * 99 / 100]),
            ms(times[requests - 1])
        );
    }
    fleet_page_under_steady_ingest(&store, &app).await;
    let database: String = sqlx::query_scalar!(r#"SELECT current_database() AS "database!""#)
        .fetch_one(store.pool())
        .await
        .unwrap();
    let url = common::with_database(&std::env::var("DATABASE_URL").unwrap(), &database);
    under_load::measure(
        &store,
        &url,
        &config_yaml,
        &["/", "/api/v1/domains/domain-7"],
        support::size(10, 1) as u64,
    )
    .await;
}

/// `requests` GETs of `uri`, one at a time, `pause` apart; each one's time to the whole body.
async fn time_requests(
    app: &axum::Router,
    uri: &str,
    requests: usize,
    pause: Duration,
) -> Vec<Duration> {
    let mut times = Vec::with_capacity(requests);
    for _ in 0..requests {
        let begun = Instant::now();
        let response = app
            .clone()
            .oneshot(Request::get(uri).body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{uri}");
        response.into_body().collect().await.unwrap();
        times.push(begun.elapsed());
        tokio::time::sleep(pause).await;
    }
    times
}

/// The fleet page in process (server time, no network) while ingest writes the roll-ups,
/// clusters and transitions it reads at a steady rate: requests 10 ms apart, a user's pace
/// rather than a flood, so the figure is the page's latency beside ingest, not queueing.
async fn fleet_page_under_steady_ingest(store: &Store, app: &axum::Router) {
    let ingest = SteadyIngest::start(store, "ingest", steady_clusters(), steady_rate()).await;
    let requests = support::size(500, 5);
    let mut times = time_requests(app, "/", requests, Duration::from_millis(10)).await;
    let (changes, elapsed) = ingest.stop().await;
    let [p50, p99, max] = support::percentiles(&mut times);
    println!(
        "fleet page / in process while ingest writes (goal {} changes/s on {} simulated clusters): {requests} requests, p50 {p50:.2} ms, p99 {p99:.2} ms, max {max:.2} ms; ingest wrote {changes} changes in {:.1}s = {:.0} changes/s",
        steady_rate(),
        steady_clusters(),
        elapsed.as_secs_f64(),
        changes as f64 / elapsed.as_secs_f64()
    );
}

/// Seeds the database; returns the configuration (clusters and domains) as YAML.
async fn seed(store: &Store) -> String {
    let now = Utc::now();
    let mut domains_yaml = String::from("domains:\n");
    for d in 0..DOMAINS {
        domains_yaml.push_str(&format!(
            "  - name: domain-{d}\n    select: {{labels: {{domain: d{d}}}}}\n    version: {{from: chart_version, namespace: ns-{d}, name: app}}\n"
        ));
    }
    let mut clusters_yaml = String::from("clusters:\n");
    for c in 0..CLUSTERS {
        let ring = ["dev", "staging", "prod"][c.min(2)];
        clusters_yaml.push_str(&format!(
            "  - name: cluster-{c}\n    labels: {{ring: {ring}}}\n"
        ));
    }
    for c in 0..CLUSTERS {
        let cluster = format!("cluster-{c}");
        let mut changes = ChangeSet::default();
        for i in 0..objects_per_cluster() {
            let kind = KINDS[i % KINDS.len()];
            let failed = i % 97 == 0;
            let domain = format!("domain-{}", i % DOMAINS);
            let key = ObjectKey {
                cluster: cluster.clone(),
                kind,
                namespace: format!("ns-{}", i % DOMAINS),
                name: format!("object-{i}"),
            };
            let state = if failed {
                State::Failed
            } else {
                State::Healthy
            };
            let since = now - TimeDelta::minutes(i as i64 % 600);
            // The history a collector leaves: each object's first sighting.
            changes.transitions.push(TransitionRow {
                key: key.clone(),
                from: None,
                to: state,
                reason: String::new(),
                message: String::new(),
                at: since,
            });
            changes.upserts.push(ObjectRow {
                key,
                state,
                since: Some(since),
                reason: if failed { "install failed".into() } else { String::new() },
                message: String::new(),
                root_causes: Vec::new(),
                domains: vec![domain],
                body: JsonText::of(&json!({"labels": {"domain": format!("d{}", i % DOMAINS)}, "spec": {}, "status": {}})),
                edges: Vec::new(),
            });
        }
        let causes: Vec<RootCauseRow> = (0..CAUSES_PER_CLUSTER)
            .map(|k| {
                let id = format!("{cluster}/Kustomization/ns-{k}/object-{}", k * 5)
                    .parse::<ObjectId>()
                    .unwrap();
                RootCauseRow {
                    affected: (0..50)
                        .map(|a| format!("{cluster}/Pod/ns-{k}/object-{}", a * 5 + 4))
                        .collect(),
                    verdict: ObjectVerdict::new(
                        id,
                        State::Failed,
                        Some(now - TimeDelta::hours(2)),
                        "install failed".into(),
                        "the chart's hook timed out".into(),
                    ),
                    cause: Default::default(),
                }
            })
            .collect();
        let domains: Vec<DomainRow> = (0..DOMAINS)
            .map(|d| DomainRow {
                domain: format!("domain-{d}"),
                cluster: cluster.clone(),
                version: Some(if c < 10 { "1.5.0" } else { "1.4.2" }.into()),
                offered: None,
                state: if d % 5 == 0 {
                    State::Failed
                } else {
                    State::Healthy
                },
                fully_healthy: d % 5 != 0,
                objects: (objects_per_cluster() / DOMAINS) as i32,
                healthy: (objects_per_cluster() / DOMAINS) as i32 - 1,
                blockers: if d % 5 == 0 {
                    vec![causes[0].verdict.id.to_string()]
                } else {
                    Vec::new()
                },
            })
            .collect();
        let ring = ["dev", "staging", "prod"][c.min(2)];
        let row = ClusterRow {
            name: cluster.clone(),
            labels: json!({"ring": ring}),
            last_good: Some(now),
            error: None,
            kind_errors: json!({}),
            state_counts: StateCounts(std::collections::BTreeMap::from([
                (
                    State::Healthy,
                    objects_per_cluster().saturating_sub(21) as u64,
                ),
                (State::Failed, 21),
            ])),
            controllers: json!([]),
            updated_at: now,
        };
        let mut tx = store.pool().begin().await.unwrap();
        write_changes(&mut tx, &changes, now).await.unwrap();
        replace_rollups(
            &mut tx,
            std::slice::from_ref(&cluster),
            &causes,
            &domains,
            now,
        )
        .await
        .unwrap();
        upsert_clusters(&mut tx, &[row]).await.unwrap();
        // object-0 (a Kustomization) provides a CRD that the next objects consume.
        let id = |i: usize| {
            let kind = KINDS[i % KINDS.len()];
            format!("{cluster}/{kind}/ns-{}/object-{i}", i % DOMAINS)
                .parse::<ObjectId>()
                .unwrap()
        };
        let edges: Vec<Dependency> = (1..=20.min(objects_per_cluster() - 1))
            .map(|i| Dependency {
                cluster: cluster.clone(),
                provider: id(0),
                consumer: id(i),
                object: "CustomResourceDefinition.apiextensions.k8s.io/widgets.example.com".into(),
            })
            .collect();
        replace_dependencies(&mut tx, std::slice::from_ref(&cluster), &edges, &[])
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }
    sqlx::query!("ANALYZE").execute(store.pool()).await.unwrap();
    format!("{clusters_yaml}{domains_yaml}")
}
