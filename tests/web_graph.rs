//! The pages read the graph the engine walked, stored with the verdicts: Flux controllers
//! installed outside flux-system are found on the cluster page, an object's "waits on" and
//! "waited on by" agree hop by hop with the chains on /problems, and the edges are read from
//! Postgres (a web restarted over the same database, with the stored bodies blanked, still
//! shows them). Real engine, real runner, real Postgres.

use crate::common;

use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use common::web::{app, get, get_json};
use fleetglass::health::testkit::{self, SHA, in_namespace, with_conditions, with_source};
use fleetglass::ingest::{Runner, RunnerSettings};
use fleetglass::model::parse_object;
use fleetglass::objects::{Meta, Truth, Workload, condition};
use fleetglass::sources::SourceEvent;
use fleetglass::store::Store;
use serde_json::Value;

const CLUSTER: &str = "c1";
/// Flux installed where nothing may assume it: not flux-system.
const FLUX: &str = "gitops";

/// When the objects were created: before every condition.
fn created() -> DateTime<Utc> {
    "2025-12-01T00:00:00Z".parse().expect("a valid time")
}

fn controller(name: &str) -> Value {
    let meta = Meta::new(FLUX, name, created()).label("app.kubernetes.io/part-of", "flux");
    Workload::deployment(
        meta,
        name,
        "manager",
        &format!("ghcr.io/fluxcd/{name}:v1.4.0"),
    )
    .to_json()
}

fn ready(status: Truth, reason: &str, message: &str) -> Vec<Value> {
    let since = "2026-01-01T00:00:00Z".parse().expect("a valid time");
    vec![condition("Ready", status, reason, message, since, Some(1))]
}

fn git_repository(name: &str, ready_now: bool) -> Value {
    let conditions = if ready_now {
        ready(
            Truth::True,
            "Succeeded",
            &format!("stored artifact for revision '{SHA}'"),
        )
    } else {
        ready(
            Truth::False,
            "GitOperationFailed",
            "authentication required",
        )
    };
    with_conditions(
        in_namespace(testkit::git_repository(name, SHA), FLUX),
        conditions,
    )
}

/// The engine's Kustomization, in `gitops`, from its own GitRepository.
fn kustomization(name: &str, source: &str, depends_on: &[&str], conditions: Vec<Value>) -> Value {
    let moved = in_namespace(testkit::kustomization(name, depends_on), FLUX);
    with_conditions(with_source(moved, source), conditions)
}

fn id(kind: &str, name: &str) -> String {
    format!("{CLUSTER}/{kind}/{FLUX}/{name}")
}

/// apps depends on infra, whose source cannot be fetched: the chain from apps to the root
/// cause runs apps → infra → GitRepository infra (apps has a healthy source of its own).
async fn fleet_with_flux_outside_flux_system() -> (Store, String) {
    let url = common::fresh_database_url().await;
    let store = Store::connect(&url).await.expect("connect");
    store.migrate().await.expect("migrate");
    let config = common::one_cluster_config(CLUSTER);
    let (mut runner, _latest) = Runner::new(RunnerSettings::from_config(&config), store.clone());
    runner.apply(SourceEvent::ClusterAlive {
        cluster: CLUSTER.into(),
        at: Utc::now(),
    });
    let waiting = |on: &str| ready(Truth::False, "DependencyNotReady", on);
    for value in [
        controller("source-controller"),
        controller("kustomize-controller"),
        controller("helm-controller"),
        git_repository("infra", false),
        git_repository("apps", true),
        kustomization(
            "infra",
            "infra",
            &[],
            ready(Truth::False, "ArtifactFailed", "Source artifact not found"),
        ),
        kustomization(
            "apps",
            "apps",
            &["infra"],
            waiting("dependency 'gitops/infra' is not ready"),
        ),
    ] {
        let object = parse_object(CLUSTER, &value).expect("a valid object");
        runner.apply(SourceEvent::Apply(Box::new(object)));
    }
    runner.run_round(Utc::now()).await;
    (store, url)
}

fn web(store: &Store) -> axum::Router {
    app(store.clone(), &common::one_cluster_config(CLUSTER))
}

async fn object(app: &axum::Router, id: &str) -> Value {
    let path = format!("/api/v1/objects/{id}");
    let (status, body) = get_json(app, &path).await;
    assert_eq!(status, StatusCode::OK, "{path}: {body}");
    body
}

/// Ids the object page says it waits on: its prerequisites, what it applied, its controller.
fn waits_on(object: &Value) -> Vec<String> {
    let mut ids = ids_of(&object["upstream"], "id");
    ids.extend(ids_of(&object["applied"], "id"));
    ids.extend(
        object["reconciled_by"]["deployment_id"]
            .as_str()
            .map(String::from),
    );
    ids
}

/// Ids the object page says wait on it: its dependents and its applier.
fn waited_on_by(object: &Value) -> Vec<String> {
    let mut ids = ids_of(&object["downstream"], "id");
    ids.extend(object["applied_by"]["id"].as_str().map(String::from));
    ids
}

fn ids_of(list: &Value, field: &str) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v[field].as_str().map(String::from))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flux_controllers_outside_flux_system_are_found_on_the_cluster_page() {
    let (store, _) = fleet_with_flux_outside_flux_system().await;
    let app = web(&store);
    let (status, cluster) = get_json(&app, &format!("/api/v1/clusters/{CLUSTER}")).await;
    assert_eq!(status, StatusCode::OK, "{cluster}");
    for name in [
        "source-controller",
        "kustomize-controller",
        "helm-controller",
    ] {
        let found = cluster["controllers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["controller"] == name)
            .unwrap_or_else(|| panic!("{name} listed: {cluster}"));
        assert_eq!(found["object"]["namespace"], FLUX, "{name} found: {found}");
        assert_eq!(found["ready"], "1/1 ready");
    }
    let (_, page) = get(&app, &format!("/clusters/{CLUSTER}")).await;
    assert!(
        page.contains(&format!(
            "/objects/{CLUSTER}/Deployment/{FLUX}/kustomize-controller"
        )),
        "the page links the controller where it runs"
    );
    assert!(
        !page.contains("not found"),
        "no controller reported missing"
    );
    let (_, tree) = get_json(&app, &format!("/api/v1/clusters/{CLUSTER}")).await;
    let depths: Vec<(String, u64)> = tree["tree"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["object"]["name"].as_str().unwrap().to_string(),
                n["depth"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        depths,
        [("infra".to_string(), 0), ("apps".to_string(), 1)],
        "the dependsOn tree from the engine's edges"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waits_on_and_waited_on_by_agree_with_the_chains_on_problems() {
    let (store, _) = fleet_with_flux_outside_flux_system().await;
    let app = web(&store);
    let (status, problems) = get_json(&app, "/api/v1/problems").await;
    assert_eq!(status, StatusCode::OK, "{problems}");
    let cause = problems["problems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == id("GitRepository", "infra"))
        .unwrap_or_else(|| panic!("the failing source is a root cause: {problems}"));
    let affected = &cause["affected"];
    let apps = affected
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == id("Kustomization", "apps"))
        .unwrap_or_else(|| panic!("apps is affected: {affected}"));
    let chain: Vec<String> = serde_json::from_value(apps["chain"].clone()).unwrap();
    assert_eq!(
        chain,
        [
            id("Kustomization", "apps"),
            id("Kustomization", "infra"),
            id("GitRepository", "infra")
        ]
    );
    for hop in chain.windows(2) {
        let (from, to) = (&hop[0], &hop[1]);
        let from_page = object(&app, from).await;
        let to_page = object(&app, to).await;
        assert!(
            waits_on(&from_page).contains(to),
            "{from} waits on {to}: {:?}",
            waits_on(&from_page)
        );
        assert!(
            waited_on_by(&to_page).contains(from),
            "{to} is waited on by {from}: {:?}",
            waited_on_by(&to_page)
        );
    }
    let (_, page) = get(&app, "/objects/c1/Kustomization/gitops/infra").await;
    assert!(
        page.contains("depended on by <a href=\"/objects/c1/Kustomization/gitops/apps\""),
        "the page shows who waits on it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edges_are_read_from_the_store_after_a_restart() {
    let (store, url) = fleet_with_flux_outside_flux_system().await;
    // What the web could re-derive edges from is gone; only the stored edges remain.
    sqlx::query!("UPDATE objects SET body = '{}'")
        .execute(store.pool())
        .await
        .unwrap();
    drop(store);
    let restarted = Store::connect(&url).await.unwrap();
    let app = web(&restarted);
    let apps = object(&app, &id("Kustomization", "apps")).await;
    assert_eq!(
        ids_of(&apps["upstream"], "id"),
        [id("Kustomization", "infra"), id("GitRepository", "apps")],
        "{apps}"
    );
    assert_eq!(
        apps["reconciled_by"]["deployment_id"],
        id("Deployment", "kustomize-controller")
    );
    assert_eq!(apps["reconciled_by"]["state"], "healthy");
    let infra = object(&app, &id("GitRepository", "infra")).await;
    assert_eq!(
        ids_of(&infra["downstream"], "id"),
        [id("Kustomization", "infra")]
    );
}
