//! Incidents on real Postgres: the same cause on several clusters is one incident on `/`,
//! `/problems` and both APIs; a different reason is another; incidents are ordered by ring
//! (`group_order`); both APIs count affected objects alike; a cleared cause is listed as
//! recently resolved; a cause that keeps failing says it flaps; clusters unreachable for the
//! same reason are one incident; and a domain's "healthy n/m" counts exactly the objects listed
//! for it.

use crate::common;

use chrono::{TimeDelta, Utc};
use common::web::{
    app, cause_row, cluster_row, demo_app, domain_row, fresh_store, get, get_json, seed_rollups,
};
use fleetglass::config::{Config, from_yaml_str};
use fleetglass::health::{Cause, CauseCode, State, Untrusted};
use fleetglass::store::{ClusterRow, RootCauseRow, Store};
use serde_json::Value;
use std::collections::BTreeSet;

const TOFU: &str = "Deployment/flux-system/tofu-controller";

fn tofu_id(cluster: &str) -> String {
    format!("{cluster}/{TOFU}")
}

/// The reason the engine gives a controller whose only pod cannot pull its image: the pod's
/// name (its ReplicaSet hash and random suffix) differs on every cluster.
fn pull_failure(pod: &str) -> String {
    format!("1/1 pods failing: pod {pod}: ImagePullBackOff: Back-off pulling image")
}

/// The cause the engine names for a container whose pod has `reason` (`ImagePullBackOff`).
fn waiting(reason: &str) -> Cause {
    Cause::new(CauseCode::ContainerWaiting)
        .with("container", "manager")
        .with("reason", reason)
}

/// tofu-controller's pod `pod` unable to pull its image, as its root-cause row reads.
fn pulling(id: &str, pod: &str, affected: &[&str]) -> RootCauseRow {
    RootCauseRow {
        cause: waiting("ImagePullBackOff"),
        ..cause_row(id, &pull_failure(pod), affected)
    }
}

fn config(group_order: &str) -> Config {
    from_yaml_str(&format!(
        "group_order: {group_order}
domains:
  - {{name: networking, select: {{labels: {{d: n}}}}, version: {{from: chart_version, namespace: n, name: n}},
     owner: team-net, runbook: 'https://runbooks.example.com/networking', slack_channel: '#net'}}
  - {{name: tenants, select: {{labels: {{d: t}}}}, version: {{from: chart_version, namespace: t, name: t}}}}"
    ))
    .unwrap()
}

fn clusters() -> Vec<ClusterRow> {
    let now = Utc::now();
    vec![
        cluster_row("dev-1", "dev", now),
        cluster_row("prod-eu-1", "prod", now),
        cluster_row("prod-eu-2", "prod", now),
    ]
}

/// tofu-controller failing the same way on both prod clusters, and on dev-1 a bigger problem
/// (more objects, more domains) with another cause.
async fn seed_fleet(store: &Store) {
    let clusters = clusters();
    for (cluster, pod) in [
        ("prod-eu-1", "tofu-controller-7d9f8b6c5-x2k4q"),
        ("prod-eu-2", "tofu-controller-5c8dd4f7b9-mz9wd"),
    ] {
        let id = tofu_id(cluster);
        let terraform = format!("{cluster}/Terraform/flux-system/nlb");
        let cause = pulling(&id, pod, &[id.as_str(), terraform.as_str()]);
        let blocked = domain_row("networking", cluster, "2.13.0", false, &[id.as_str()]);
        seed_rollups(store, &clusters, cluster, &[cause], &[blocked]).await;
    }
    let dev = "dev-1/Kustomization/flux-system/apps";
    let affected = [
        dev,
        "dev-1/a/b/1",
        "dev-1/a/b/2",
        "dev-1/a/b/3",
        "dev-1/a/b/4",
    ];
    let cause = cause_row(dev, "RBAC Forbidden", &affected);
    let domains = [
        domain_row("networking", "dev-1", "2.14.0", false, &[dev]),
        domain_row("tenants", "dev-1", "3.2.0", false, &[dev]),
    ];
    seed_rollups(store, &clusters, "dev-1", &[cause], &domains).await;
}

fn incidents(body: &Value) -> &Vec<Value> {
    body["incidents"].as_array().expect("an incidents list")
}

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_cause_on_two_clusters_is_one_incident_in_both_apis() {
    let store = fresh_store().await;
    seed_fleet(&store).await;
    let app = app(store, &config("[prod, staging, dev]"));
    for uri in ["/api/v1/fleet", "/api/v1/problems"] {
        let (_, body) = get_json(&app, uri).await;
        let list = incidents(&body);
        assert_eq!(list.len(), 2, "{uri}: {list:?}");
        let tofu = &list[0];
        let fields: BTreeSet<&str> = tofu
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            fields,
            BTreeSet::from([
                "key",
                "state",
                "reason",
                "kind",
                "namespace",
                "name",
                "clusters",
                "root_causes",
                "affected_total",
                "since",
                "domains",
                // Issue 49: the version behind it, or null.
                "version_split"
            ]),
            "{uri}: exactly the incident fields"
        );
        // Both EU clusters run networking 2.13.0 and have the outage; dev-1 (2.14.0) has not.
        assert_eq!(
            tofu["version_split"],
            serde_json::json!({"domain": "networking", "version": "2.13.0", "with_version": 2, "without_version": 1})
        );
        assert_eq!(strings(&tofu["clusters"]), ["prod-eu-1", "prod-eu-2"]);
        assert_eq!(
            strings(&tofu["root_causes"]),
            [tofu_id("prod-eu-1"), tofu_id("prod-eu-2")]
        );
        assert_eq!(tofu["name"], "tofu-controller");
        assert_eq!(tofu["affected_total"], 4);
        assert_eq!(
            tofu["domains"],
            serde_json::json!([{"domain": "networking", "version": "2.13.0", "offered": null}])
        );
        assert!(
            chrono::DateTime::parse_from_rfc3339(tofu["since"].as_str().unwrap()).is_ok(),
            "since is RFC 3339"
        );
        assert!(tofu["key"].as_str().unwrap().starts_with(TOFU));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn clusters_unreachable_for_the_same_reason_are_one_incident() {
    let store = fresh_store().await;
    let clusters = clusters();
    for cluster in ["dev-1", "prod-eu-1", "prod-eu-2"] {
        // The engine's root cause for stale data: the cluster itself (health/clusters.rs).
        let id = format!("{cluster}/Cluster//{cluster}");
        let why = Untrusted::Unreachable("connection refused".into());
        let mut cause = cause_row(&id, &why.reason(cluster), &[id.as_str()]);
        cause.cause = why.cause();
        cause.verdict.state = State::Stale;
        seed_rollups(&store, &clusters, cluster, &[cause], &[]).await;
    }
    let app = app(store, &config("[prod, staging, dev]"));
    let (_, body) = get_json(&app, "/api/v1/problems").await;
    let list = incidents(&body);
    assert_eq!(list.len(), 1, "{list:#?}");
    assert_eq!(
        strings(&list[0]["clusters"]),
        ["prod-eu-1", "prod-eu-2", "dev-1"]
    );
    assert_eq!(list[0]["state"], "stale");
    let (_, page) = get(&app, "/problems").await;
    assert!(
        page.contains(
            "<strong>3 clusters</strong></a> <span class=\"reason\">unreachable: connection refused</span> <small class=\"where\">(prod-eu-1, prod-eu-2, dev-1)</small>"
        ),
        "{page}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_different_reason_on_the_other_cluster_is_a_second_incident() {
    let store = fresh_store().await;
    let clusters = clusters();
    let oom = "1/1 pods failing: pod tofu-controller-5c8dd4f7b9-mz9wd: OOMKilled";
    for cluster in ["prod-eu-1", "prod-eu-2"] {
        let id = tofu_id(cluster);
        let row = match cluster {
            "prod-eu-1" => pulling(&id, "tofu-controller-7d9f8b6c5-x2k4q", &[id.as_str()]),
            _ => RootCauseRow {
                cause: waiting("CrashLoopBackOff"),
                ..cause_row(&id, oom, &[id.as_str()])
            },
        };
        seed_rollups(&store, &clusters, cluster, &[row], &[]).await;
    }
    let (_, body) = get_json(&app(store, &config("[prod]")), "/api/v1/fleet").await;
    let list = incidents(&body);
    assert_eq!(list.len(), 2, "{list:?}");
    for incident in list {
        assert_eq!(incident["clusters"].as_array().unwrap().len(), 1);
        assert_eq!(incident["name"], "tofu-controller");
    }
    assert_ne!(list[0]["key"], list[1]["key"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn incidents_are_ordered_by_the_configured_ring_order_first() {
    let store = fresh_store().await;
    seed_fleet(&store).await;
    let first_name = |config: Config| {
        let app = app(store.clone(), &config);
        async move {
            let (_, body) = get_json(&app, "/api/v1/problems").await;
            incidents(&body)
                .iter()
                .map(|i| i["name"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        }
    };
    // prod first, although the dev incident blocks more domains and affects more objects.
    assert_eq!(
        first_name(config("[prod, staging, dev]")).await,
        ["tofu-controller", "apps"]
    );
    assert_eq!(
        first_name(config("[dev, staging, prod]")).await,
        ["apps", "tofu-controller"]
    );
    // Without an order, the rest decides: domains blocked first.
    assert_eq!(first_name(config("[]")).await, ["apps", "tofu-controller"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn one_row_per_incident_on_both_pages_with_clusters_severity_and_contacts() {
    let store = fresh_store().await;
    seed_fleet(&store).await;
    let app = app(store, &config("[prod, staging, dev]"));
    for uri in ["/", "/problems"] {
        let (_, html) = get(&app, uri).await;
        assert_eq!(
            html.matches(r#"<li class="incident""#).count(),
            2,
            "{uri}: one row per incident"
        );
        let tofu = html.split(r#"<li class="incident""#).nth(1).unwrap();
        for expected in [
            // Issue 47: the headline links to the cause itself.
            r#"<a class="cause" href="/objects/prod-eu-1/Deployment/flux-system/tofu-controller"><strong>tofu-controller</strong></a>: "#,
            "on 2 clusters (prod-eu-1, prod-eu-2)",
            "</svg> failed",
            "blocks <span class=\"blocks\">networking 2.13.0</span>",
            // The default rules page at once for a Flux controller that is down.
            "severity <strong class=\"severity critical\">critical</strong>",
            "owner <strong>team-net</strong>",
            "<details data-key=",
            "2 root causes: Deployment flux-system/tofu-controller",
            "/objects/prod-eu-1/Deployment/flux-system/tofu-controller",
            "/objects/prod-eu-2/Deployment/flux-system/tofu-controller",
        ] {
            assert!(tofu.contains(expected), "{uri}: {expected:?} in {tofu}");
        }
        // Issue 47: the row counts what the causes hold up, as their cards do (4 affected in
        // all, the 2 causes among them).
        assert!(tofu.contains("affects 2 other objects"), "{uri}: {tofu}");
        assert!(
            tofu.contains(
                "failed on 2/2 clusters that applied networking 2.13.0, 0/1 that did not"
            ),
            "{uri}: {tofu}"
        );
        assert_eq!(
            tofu.matches(r#"title="objects affected, and the chains">→ 1<"#)
                .count(),
            2,
            "{tofu}"
        );
        // The failing component (a controller in flux-system, in no domain) has no owner:
        // said first, before the owners of the domains it blocks.
        let missing = tofu
            .find("no owner configured</span> for Deployment tofu-controller")
            .unwrap_or_else(|| panic!("{uri}: no missing-owner line in {tofu}"));
        assert!(missing < tofu.find("owner <strong>team-net</strong>").unwrap());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn affected_total_is_the_same_in_both_apis_on_the_demo_fleet() {
    let (app, _store) = demo_app().await;
    let (_, fleet) = get_json(&app, "/api/v1/fleet").await;
    let (_, problems) = get_json(&app, "/api/v1/problems").await;
    let distinct: BTreeSet<&str> = fleet["root_causes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| strings(&c["affected"]))
        .collect();
    assert!(!distinct.is_empty());
    assert_eq!(fleet["affected_total"], distinct.len());
    assert_eq!(fleet["affected_total"], problems["affected_total"]);
    assert_eq!(fleet["incidents"], problems["incidents"]);
    // The demo's tofu-controller outage on both EU prod clusters is one incident.
    let tofu = incidents(&fleet)
        .iter()
        .find(|i| i["name"] == "tofu-controller")
        .expect("the tofu-controller incident");
    assert_eq!(strings(&tofu["clusters"]), ["prod-eu-1", "prod-eu-2"]);
    assert!(
        tofu["reason"]
            .as_str()
            .unwrap()
            .contains("ImagePullBackOff")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cause_that_clears_is_listed_as_recently_resolved() {
    let store = fresh_store().await;
    seed_fleet(&store).await;
    let app = app(store.clone(), &config("[prod]"));
    let (_, before) = get_json(&app, "/api/v1/problems").await;
    assert_eq!(before["recently_resolved"], serde_json::json!([]));

    // Both prod clusters recover.
    for cluster in ["prod-eu-1", "prod-eu-2"] {
        seed_rollups(&store, &clusters(), cluster, &[], &[]).await;
    }
    let (_, after) = get_json(&app, "/api/v1/problems").await;
    let names: Vec<&str> = incidents(&after)
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["apps"]);
    let resolved = after["recently_resolved"].as_array().unwrap();
    assert_eq!(resolved.len(), 1, "{resolved:?}");
    assert_eq!(resolved[0]["name"], "tofu-controller");
    assert_eq!(
        strings(&resolved[0]["clusters"]),
        ["prod-eu-1", "prod-eu-2"]
    );
    let (_, html) = get(&app, "/problems").await;
    let section = html.split(r#"<section class="resolved">"#).nth(1).unwrap();
    assert!(section.contains("recently resolved <small>(last 24 h)</small>"));
    assert!(
        section.contains("<strong>tofu-controller</strong>"),
        "{section}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cause_that_keeps_failing_says_it_flaps() {
    let store = fresh_store().await;
    seed_fleet(&store).await;
    let now = Utc::now();
    // Five entries into failed in 16 minutes, each after a recovery.
    for minutes in [36, 32, 28, 24, 20] {
        sqlx::query!(
            "INSERT INTO transitions (cluster, kind, namespace, name, from_state, to_state, reason, message, at)
             VALUES ('prod-eu-2', 'Deployment', 'flux-system', 'tofu-controller', 'healthy', 'failed', 'x', '', $1)",
            now - TimeDelta::minutes(minutes),
        )
        .execute(store.pool())
        .await
        .unwrap();
    }
    let (_, html) = get(&app(store, &config("[prod]")), "/").await;
    assert!(html.contains("flapping: failed 5 times in 16m"), "{html}");
    assert_eq!(
        html.matches("flapping:").count(),
        1,
        "only the cause that flaps"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_domain_pages_healthy_counts_are_over_the_objects_it_lists() {
    let (app, _store) = demo_app().await;
    let mut cells = 0;
    for domain in ["gateway", "networking", "observability", "tenants"] {
        let (_, detail) = get_json(&app, &format!("/api/v1/domains/{domain}")).await;
        for cell in detail["clusters"].as_array().unwrap() {
            let cluster = cell["cluster"].as_str().unwrap();
            let uri = format!("/api/v1/objects?domain={domain}&cluster={cluster}&limit=1000");
            let (_, listed) = get_json(&app, &uri).await;
            let items = listed["items"].as_array().unwrap();
            assert_eq!(
                listed["total"],
                items.len(),
                "{uri}: one page holds them all"
            );
            assert_eq!(
                cell["objects"],
                items.len(),
                "{domain} on {cluster}: n/m counts what {uri} lists"
            );
            let healthy = items.iter().filter(|i| i["state"] == "healthy").count();
            assert_eq!(cell["healthy"], healthy, "{domain} on {cluster}");
            cells += 1;
        }
        let (_, html) = get(&app, &format!("/domains/{domain}")).await;
        assert!(
            html.contains(&format!("/objects?domain={domain}&amp;cluster=")),
            "the count links to its objects"
        );
    }
    assert!(cells >= 10, "the demo has a cell per domain and cluster");
}
