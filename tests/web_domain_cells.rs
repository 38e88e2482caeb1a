//! A domain cell is green only when fully healthy: with a blocker in another domain, the fleet
//! page, `/api/v1/fleet`, `/api/v1/domains/{name}` and the wait endpoint all say the cell is not
//! healthy, and state, `fully_healthy` and blockers agree (real engine, real Postgres).

use crate::common;

use chrono::Utc;
use common::web::{app, fresh_store, get, get_json};
use fleetglass::config::from_yaml_str;
use fleetglass::health::testkit::{self, SHA, with_conditions, with_label};
use fleetglass::ingest::{Runner, RunnerSettings};
use fleetglass::model::parse_object;
use fleetglass::objects::{Truth, condition};
use fleetglass::sources::SourceEvent;
use serde_json::Value;

const CLUSTER: &str = "prod-eu-1";

const CONFIG: &str = "
clusters:
  - {name: prod-eu-1, labels: {ring: prod}}
group_by: ring
domains:
  - name: apps
    select: {labels: {domain: apps}}
    version: {from: source_revision, kind: GitRepository, namespace: flux-system, name: flux-system}
  - name: infra
    select: {labels: {domain: infra}}
    version: {from: source_revision, kind: GitRepository, namespace: flux-system, name: flux-system}
";

/// The engine's Kustomization in the domain, with one Ready condition.
fn kustomization(name: &str, domain: &str, depends_on: &[&str], ready: Value) -> Value {
    let labelled = with_label(testkit::kustomization(name, depends_on), "domain", domain);
    with_conditions(labelled, vec![ready])
}

fn ready(status: Truth, reason: &str, message: &str) -> Value {
    let since = "2026-11-30T10:00:00Z".parse().expect("a valid time");
    condition("Ready", status, reason, message, since, Some(1))
}

fn git_repository() -> Value {
    testkit::git_repository("flux-system", SHA)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cell_blocked_from_another_domain_is_never_shown_healthy() {
    let store = fresh_store().await;
    let config = from_yaml_str(CONFIG).expect("valid config");
    let (mut runner, _latest) = Runner::new(RunnerSettings::from_config(&config), store.clone());
    let objects = [
        git_repository(),
        kustomization(
            "infra",
            "infra",
            &[],
            ready(
                Truth::False,
                "BuildFailed",
                "kustomize build failed: accumulating resources from './infra'",
            ),
        ),
        // Applied the current revision long ago: Ready itself, held only by infra.
        kustomization(
            "apps",
            "apps",
            &["infra"],
            ready(
                Truth::True,
                "ReconciliationSucceeded",
                &format!("Applied revision: {SHA}"),
            ),
        ),
    ];
    for value in &objects {
        let object = parse_object(CLUSTER, value).expect("valid object");
        runner.apply(SourceEvent::Apply(Box::new(object)));
    }
    let now = Utc::now();
    runner.apply(SourceEvent::ClusterAlive {
        cluster: CLUSTER.into(),
        at: now,
    });
    runner.run_round(now).await;
    let app = app(store.clone(), &config);
    let infra = format!("{CLUSTER}/Kustomization/flux-system/infra");

    let (_, apps) = get_json(&app, "/api/v1/domains/apps").await;
    let cell = &apps["clusters"][0];
    assert_eq!(cell["cluster"], CLUSTER, "{apps}");
    assert_eq!(cell["state"], "blocked", "{apps}");
    assert_eq!(cell["fully_healthy"], false);
    assert_eq!(cell["blockers"][0]["id"], infra.as_str(), "{apps}");
    let version = cell["version"].as_str().expect("version read").to_string();

    let (_, fleet) = get_json(&app, "/api/v1/fleet").await;
    let domains = fleet["domains"].as_array().unwrap();
    for domain in domains {
        for cell in domain["clusters"].as_array().unwrap() {
            assert_eq!(
                cell["state"] == "healthy",
                cell["fully_healthy"] == true,
                "{domain}"
            );
            assert!(
                cell["blockers"].as_array().unwrap().is_empty() || cell["fully_healthy"] == false
            );
        }
        for group in domain["groups"].as_array().unwrap() {
            assert_ne!(group["state"], "healthy", "{domain}");
            assert_eq!(group["fully_healthy_clusters"], 0);
        }
    }

    let (_, html) = get(&app, "/").await;
    let row = html
        .split("<tr>")
        .find(|row| row.contains("href=\"/domains/apps\""))
        .expect("a row for apps");
    assert!(!row.contains("state healthy"), "{row}");
    assert!(row.contains("class=\"state blocked\""), "{row}");
    assert!(row.contains("(0/1 fully healthy)"), "{row}");

    let (_, wait) = get_json(
        &app,
        &format!("/api/v1/domains/apps/wait?version={version}&timeout=0s"),
    )
    .await;
    assert_eq!(wait["healthy"], false, "{wait}");
    assert_eq!(wait["clusters"][0]["state"], "blocked");
    assert_eq!(wait["clusters"][0]["blockers"][0]["id"], infra.as_str());
}
