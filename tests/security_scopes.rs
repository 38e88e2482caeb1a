//! Who sees what (`web.scopes`), on the demo fleet evaluated by the real engine: a team
//! scoped to the `networking` namespace on the eu clusters and the `networking` domain walks
//! every route. The routes that filter by scope show nothing outside it — no object, cluster or
//! domain of another, in pages, JSON, counts or errors — with the team's own totals; every
//! other route is 403; an object or domain outside the scope is "not found" in the words of one
//! that does not exist; the CI gate refuses to judge a domain on clusters the team cannot see.

use crate::common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::web::{app, demo_app, demo_config};
use fleetglass::web::{API_PATHS, PAGE_PATHS, SCOPED_PATHS};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

const TEAM: &str = "team-token-networking";
const ADMIN: &str = "admin-token";
const NOBODY: &str = "nobody-token";
const EU_WHOLE: &str = "eu-token";
const FLUX_SYSTEM: &str = "flux-system-token";
const EU: [&str; 4] = ["dev-1", "staging-1", "prod-eu-1", "prod-eu-2"];

fn sha256_hex(token: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

async fn scoped_app() -> axum::Router {
    scoped_app_with_store().await.0
}

async fn scoped_app_with_store() -> (axum::Router, fleetglass::store::Store) {
    // The demo evaluated once: its first round records the rollouts the rollout and
    // delivery pages show.
    let (_, store) = demo_app().await;
    let mut config = demo_config();
    let web = format!(
        "auth: {{mode: tokens, tokens: [{{name: team, sha256: {}}}, {{name: admin, sha256: {}}}, {{name: nobody, sha256: {}}}, {{name: eu, sha256: {}}}, {{name: fs, sha256: {}}}]}}
scopes:
  admins: {{tokens: [admin]}}
  teams:
    - name: net-eu
      members: {{tokens: [team]}}
      domains: [networking]
      clusters: {{region: eu}}
      namespaces: [networking]
    - name: eu-platform
      members: {{tokens: [eu]}}
      clusters: {{region: eu}}
    - name: eu-flux-system
      members: {{tokens: [fs]}}
      clusters: {{region: eu}}
      namespaces: [flux-system]",
        sha256_hex(TEAM),
        sha256_hex(ADMIN),
        sha256_hex(NOBODY),
        sha256_hex(EU_WHOLE),
        sha256_hex(FLUX_SYSTEM)
    );
    config.web = fleetglass::yaml::from_str(&web).unwrap();
    let domains: Vec<&str> = config.domains.iter().map(|d| d.name.as_str()).collect();
    let scopes = config.web.scopes.as_ref().unwrap();
    assert_eq!(scopes.problem(true, &domains), None);
    (app(store.clone(), &config), store)
}

async fn get(app: &axum::Router, uri: &str, token: &str) -> (StatusCode, String) {
    let request = Request::builder()
        .uri(uri)
        .header("authorization", format!("Bearer {token}"))
        .header("accept", "text/html")
        .body(Body::empty())
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

async fn json(app: &axum::Router, uri: &str, token: &str) -> Value {
    let (status, body) = get(app, uri, token).await;
    assert_eq!(status, StatusCode::OK, "{uri}: {body}");
    serde_json::from_str(&body).unwrap()
}

/// Every object id of the fleet, as an admin sees it.
async fn every_id(app: &axum::Router) -> Vec<(String, String, String, String)> {
    let page = json(app, "/api/v1/objects?limit=1000", ADMIN).await;
    assert!(
        page["total"].as_i64().unwrap() < 1000,
        "one page holds the demo"
    );
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let text = |k: &str| o[k].as_str().unwrap().to_string();
            (
                text("cluster"),
                text("kind"),
                text("namespace"),
                text("name"),
            )
        })
        .collect()
}

fn in_scope(cluster: &str, namespace: &str) -> bool {
    EU.contains(&cluster) && namespace == "networking"
}

/// What must never show to the team: the other objects (by id and by page link), the
/// cluster it does not see, the other domains.
fn forbidden(ids: &[(String, String, String, String)]) -> Vec<String> {
    let mut marks = vec![
        "prod-us-1".to_string(),
        "\"gateway\"".to_string(),
        "\"observability\"".to_string(),
        "\"tenants\"".to_string(),
        "/domains/gateway".to_string(),
        "/domains/observability".to_string(),
        "/domains/tenants".to_string(),
    ];
    for (cluster, kind, namespace, name) in ids {
        if in_scope(cluster, namespace) {
            continue;
        }
        let ns = if namespace.is_empty() { "_" } else { namespace };
        marks.push(format!("{cluster}/{kind}/{namespace}/{name}"));
        marks.push(format!("/objects/{cluster}/{kind}/{ns}/{name}\""));
    }
    marks
}

/// A version the demo's history rolled out (read from the admin's view in the test).
fn newest_version() -> String {
    NEWEST.get().cloned().unwrap_or_else(|| "v1".into())
}

static NEWEST: std::sync::OnceLock<String> = std::sync::OnceLock::new();

fn concrete(pattern: &str, object: &(String, String, String, String)) -> String {
    let (cluster, kind, namespace, name) = object;
    pattern
        .replace("{cluster}", cluster)
        .replace("{kind}", kind)
        .replace("{namespace}", namespace)
        .replace(
            "{name}",
            if pattern.contains("/domains/") {
                "networking"
            } else {
                name
            },
        )
        .replace("{version}", &newest_version())
        .replace("{action}", "reconcile")
        .replace("{pod}", name)
        .replace("{container}", "app")
        .replace("{id}", "1")
        .replace("{*path}", "app.css")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_team_sees_its_own_and_nothing_else_on_every_route() {
    let app = scoped_app().await;
    let ids = every_id(&app).await;
    let mine: Vec<_> = ids
        .iter()
        .filter(|(c, _, n, _)| in_scope(c, n))
        .cloned()
        .collect();
    assert!(
        !mine.is_empty() && mine.len() < ids.len(),
        "the demo has both"
    );
    let example = mine
        .iter()
        .find(|(_, kind, _, _)| kind == "HelmRelease")
        .unwrap_or(&mine[0])
        .clone();
    let marks = forbidden(&ids);
    // What a team must be able to read (the rest of the list may grow; never shrink these).
    for route in [
        "/",
        "/domains/{name}",
        "/objects",
        "/alerts",
        "/api/v1/fleet",
        "/api/v1/domains/{name}/wait",
        "/api/v1/objects",
        "/api/v1/problems",
        "/api/v1/impact",
    ] {
        assert!(SCOPED_PATHS.contains(&route), "{route} is open to teams");
    }
    let rollouts = json(&app, "/api/v1/domains/networking/rollouts", ADMIN).await;
    let version = rollouts["rollouts"][0]["version"]
        .as_str()
        .expect("a rollout recorded");
    let _ = NEWEST.set(version.to_string());
    let admin_page = get(&app, "/domains/networking/rollouts", ADMIN).await.1;
    assert!(
        admin_page.contains("prod-us-1"),
        "the admin's rollout shows every cluster"
    );
    for pattern in PAGE_PATHS.iter().chain(API_PATHS.iter()) {
        let uri = concrete(pattern, &example);
        let (cluster, kind, namespace, name) = &example;
        let uri = match *pattern {
            "/api/v1/domains/{name}/wait" => format!("{uri}?version=v1&timeout=0s&label=region=eu"),
            "/api/v1/owner" | "/api/v1/impact" => {
                format!("{uri}?cluster={cluster}&kind={kind}&namespace={namespace}&name={name}")
            }
            _ => uri,
        };
        let (status, body) = get(&app, &uri, TEAM).await;
        if !SCOPED_PATHS.contains(pattern) {
            assert_eq!(
                status,
                StatusCode::FORBIDDEN,
                "{uri} is closed to teams: {body}"
            );
            continue;
        }
        assert!(!status.is_server_error(), "{uri}: {status} {body}");
        for mark in &marks {
            assert!(
                !body.contains(mark.as_str()),
                "{uri} shows {mark:?} outside the scope"
            );
        }
    }

    // The team's own totals: its objects, counted.
    let fleet = json(&app, "/api/v1/fleet", TEAM).await;
    let counted: u64 = fleet["counts"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(
        counted as usize,
        mine.len(),
        "fleet totals are the team's own"
    );
    let clusters: Vec<&str> = fleet["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(clusters, EU);
    let listed = json(&app, "/api/v1/objects?limit=1000", TEAM).await;
    assert_eq!(listed["total"].as_i64().unwrap() as usize, mine.len());
    let not_healthy = json(&app, "/api/v1/objects?state=not-healthy&limit=1000", TEAM).await;
    let admin_not_healthy = json(&app, "/api/v1/objects?state=not-healthy&limit=1000", ADMIN).await;
    let expected = admin_not_healthy["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| {
            in_scope(
                o["cluster"].as_str().unwrap(),
                o["namespace"].as_str().unwrap(),
            )
        })
        .count();
    assert_eq!(not_healthy["total"].as_i64().unwrap() as usize, expected);
    let domains = json(&app, "/api/v1/domains", TEAM).await;
    let names: Vec<&str> = domains["domains"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["networking"]);
    let summary = domains["domains"][0]["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("in your scope: "),
        "seen on 4 of 5 clusters: {summary}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn outside_the_scope_is_not_found_as_if_it_did_not_exist() {
    let app = scoped_app().await;
    let ids = every_id(&app).await;
    let theirs = ids
        .iter()
        .find(|(c, _, n, _)| !in_scope(c, n) && n == "flux-system")
        .unwrap();
    let (cluster, kind, namespace, name) = theirs;
    let real = format!("/api/v1/objects/{cluster}/{kind}/{namespace}/{name}");
    let made_up = format!("/api/v1/objects/{cluster}/{kind}/{namespace}/no-such-{name}");
    let (status, body) = get(&app, &real, TEAM).await;
    let (made_up_status, made_up_body) = get(&app, &made_up, TEAM).await;
    assert_eq!(
        (status, made_up_status),
        (StatusCode::NOT_FOUND, StatusCode::NOT_FOUND)
    );
    assert_eq!(
        body.replace(name.as_str(), "X"),
        made_up_body.replace(&format!("no-such-{name}"), "X"),
        "the same words for hidden and missing"
    );
    assert_eq!(get(&app, &real, ADMIN).await.0, StatusCode::OK);
    let (status, body) = get(&app, "/api/v1/domains/gateway", TEAM).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("no domain named \\\"gateway\\\""), "{body}");
    let (status, hidden) = get(&app, "/api/v1/clusters/prod-us-1", TEAM).await;
    let (_, unknown) = get(&app, "/api/v1/clusters/prod-zz-9", TEAM).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        hidden.replace("prod-us-1", "X"),
        unknown.replace("prod-zz-9", "X")
    );
    let page = format!("/objects/prod-us-1/{kind}/networking/x");
    assert_eq!(get(&app, &page, TEAM).await.0, StatusCode::NOT_FOUND);
    // A filter naming what it does not see lists what it does, never the rest.
    let (status, body) = get(&app, "/api/v1/objects?cluster=prod-us-1", TEAM).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body.contains("prod-eu-1") && !body.contains("\"prod-us-1\" (one of: prod-us"),
        "{body}"
    );
    let (status, body) = get(&app, "/api/v1/objects?domain=gateway", TEAM).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("(one of: networking)"), "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_gate_refuses_a_domain_on_clusters_out_of_sight_and_nobody_sees_anything() {
    let app = scoped_app().await;
    let (status, body) = get(
        &app,
        "/api/v1/domains/networking/wait?version=v1&timeout=0s",
        TEAM,
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body.contains("1 cluster(s) outside your scope"), "{body}");
    let (status, _) = get(
        &app,
        "/api/v1/domains/networking/wait?version=v1&timeout=0s&label=region=eu",
        TEAM,
    )
    .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "all of the eu clusters are in sight"
    );
    // The fleet at a past time counts whole clusters: refused to a namespace scope.
    let (status, _) = get(&app, "/api/v1/fleet?at=2026-01-01T00:00:00Z", TEAM).await;
    assert!(status == StatusCode::FORBIDDEN || status == StatusCode::BAD_REQUEST);
    // On no team and no admin: nothing at all, with totals of nothing.
    let fleet = json(&app, "/api/v1/fleet", NOBODY).await;
    assert_eq!(fleet["clusters"], serde_json::json!([]));
    assert_eq!(fleet["counts"], serde_json::json!({}));
    assert_eq!(json(&app, "/api/v1/objects", NOBODY).await["total"], 0);
    assert_eq!(get(&app, "/audit", NOBODY).await.0, StatusCode::FORBIDDEN);
    assert_eq!(get(&app, "/audit", ADMIN).await.0, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_alert_shows_only_where_its_root_cause_is_in_sight() {
    let (app, store) = scoped_app_with_store().await;
    // First on prod-us-1, then on prod-eu-1 too: the alert is named by prod-us-1's cause.
    common::alerts::raise_tofu_controller_alert_on(&store, &["prod-us-1"]).await;
    common::alerts::raise_tofu_controller_alert_on(&store, &["prod-us-1", "prod-eu-1"]).await;
    let everything = json(&app, "/api/v1/alerts", ADMIN).await;
    assert_eq!(
        everything["open"].as_array().unwrap().len(),
        1,
        "{everything}"
    );
    let alert = &everything["open"][0];
    assert_eq!(
        alert["root_cause"],
        "prod-us-1/Deployment/flux-system/tofu-controller"
    );
    assert_eq!(
        alert["clusters"],
        serde_json::json!(["prod-us-1", "prod-eu-1"])
    );
    // flux-system is outside the networking team's namespaces: no alert at all.
    let team = json(&app, "/api/v1/alerts", TEAM).await;
    assert_eq!(team["open"], serde_json::json!([]));
    let (_, page) = get(&app, "/alerts", TEAM).await;
    assert!(
        !page.contains("tofu-controller") && page.contains("0 open"),
        "{page}"
    );
    // The eu platform team sees it on its cluster only, named by that cluster's root cause.
    let eu = json(&app, "/api/v1/alerts", EU_WHOLE).await;
    let alert = &eu["open"][0];
    assert_eq!(alert["clusters"], serde_json::json!(["prod-eu-1"]));
    assert_eq!(
        alert["root_cause"],
        "prod-eu-1/Deployment/flux-system/tofu-controller"
    );
    assert!(!eu.to_string().contains("prod-us-1"), "{eu}");
    // Silencing stays with admins while scopes are in force.
    let request = Request::builder()
        .method("POST")
        .uri("/api/v1/silences")
        .header("authorization", format!("Bearer {EU_WHOLE}"))
        .header("content-type", "application/json")
        .body(Body::from(
            r#"{"cluster": "prod-eu-1", "until": "2099-01-01T00:00:00Z"}"#,
        ))
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let (_, page) = get(&app, "/alerts", EU_WHOLE).await;
    assert!(!page.contains("prod-us-1") && !page.contains("action=\"/alerts/silences\""));
}

/// A stack's impact is the admin's when every consumer is in the team's scope, and refused
/// (never a shorter "nothing depends on it") when one is not.
#[tokio::test(flavor = "multi_thread")]
async fn impact_is_told_whole_or_not_at_all() {
    let app = scoped_app().await;
    let ids = every_id(&app).await;
    let mut told = 0;
    for (cluster, kind, namespace, name) in &ids {
        let stack = kind == "Kustomization" || kind == "HelmRelease";
        if !stack {
            continue;
        }
        let uri = format!(
            "/api/v1/impact?cluster={cluster}&kind={kind}&namespace={namespace}&name={name}"
        );
        let admin = json(&app, &uri, ADMIN).await;
        let (status, body) = get(&app, &uri, TEAM).await;
        if !in_scope(cluster, namespace) {
            assert_eq!(status, StatusCode::NOT_FOUND, "{uri}: {body}");
            continue;
        }
        let consumers: Vec<&str> = admin["clusters"][0]["provides"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| p["consumers"].as_array().unwrap())
            .map(|c| c["namespace"].as_str().unwrap())
            .collect();
        if consumers.iter().all(|ns| *ns == "networking") {
            assert_eq!(status, StatusCode::OK, "{uri}: {body}");
            let team: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(team["consumers_total"], admin["consumers_total"]);
            told += 1;
        } else {
            assert_eq!(status, StatusCode::FORBIDDEN, "{uri}: {body}");
            assert!(
                body.contains("used by objects outside your scope"),
                "{body}"
            );
        }
    }
    assert!(
        told > 0,
        "some networking stack's impact is the team's to see"
    );
}
