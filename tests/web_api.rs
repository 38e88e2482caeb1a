//! The JSON API against the demo fleet evaluated by the real engine on real Postgres:
//! filters reject bad input with clear messages and unknown names are 404s (tests/openapi.rs
//! checks every answer against the OpenAPI document).

use crate::common;

use axum::http::StatusCode;
use common::web::{demo_app, get, get_json};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread")]
async fn objects_are_filtered_paginated_and_carry_the_verdict_fields() {
    let (app, _store) = demo_app().await;
    let (status, all) = get_json(&app, "/api/v1/objects?limit=5").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(all["limit"], 5);
    assert_eq!(all["offset"], 0);
    let total = all["total"].as_i64().unwrap();
    assert!(total > 50, "the demo fleet has many objects: {total}");
    let item = &all["items"][0];
    for field in [
        "id",
        "cluster",
        "kind",
        "namespace",
        "name",
        "state",
        "since",
        "reason",
        "message",
        "root_causes",
    ] {
        assert!(item.get(field).is_some(), "{field} missing from {item}");
    }
    let (_, next) = get_json(&app, "/api/v1/objects?limit=5&offset=5").await;
    assert_ne!(
        all["items"][0]["id"], next["items"][0]["id"],
        "offset moves the page"
    );
    assert_eq!(next["total"], all["total"]);

    let (_, failed) = get_json(&app, "/api/v1/objects?state=failed&limit=1000").await;
    let items = failed["items"].as_array().unwrap();
    assert!(!items.is_empty(), "the demo has failures");
    assert!(items.iter().all(|o| o["state"] == "failed"));

    let (_, kinds) = get_json(&app, "/api/v1/objects?kind=helmrelease&cluster=prod-eu-1").await;
    let items = kinds["items"].as_array().unwrap();
    assert!(!items.is_empty());
    assert!(
        items
            .iter()
            .all(|o| o["kind"] == "HelmRelease" && o["cluster"] == "prod-eu-1")
    );

    let (_, networking) = get_json(&app, "/api/v1/objects?domain=networking&limit=1000").await;
    let items = networking["items"].as_array().unwrap();
    assert!(!items.is_empty(), "domain membership is stored");
    assert!(items.iter().all(|o| {
        o["domains"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d == "networking")
    }));
    assert!(networking["total"].as_i64().unwrap() < total);

    let (_, prod) = get_json(&app, "/api/v1/objects?label=ring%3Dprod&limit=1000").await;
    let items = prod["items"].as_array().unwrap();
    assert!(!items.is_empty());
    assert!(
        items
            .iter()
            .all(|o| o["cluster"].as_str().unwrap().starts_with("prod-"))
    );

    let (_, named) = get_json(&app, "/api/v1/objects?q=TOFU").await;
    let items = named["items"].as_array().unwrap();
    assert!(!items.is_empty());
    assert!(
        items
            .iter()
            .all(|o| o["name"].as_str().unwrap().contains("tofu"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_filters_are_400s_that_say_what_is_wrong() {
    let (app, _store) = demo_app().await;
    let cases = [
        (
            "/api/v1/objects?state=green",
            "unknown state \"green\" (one of: failed,",
        ),
        ("/api/v1/objects?kind=Gizmo", "unknown kind \"Gizmo\""),
        (
            "/api/v1/objects?limit=abc",
            "limit must be a whole number from 1 to 1000, not \"abc\"",
        ),
        (
            "/api/v1/objects?limit=5000",
            "limit must be a whole number from 1 to 1000",
        ),
        ("/api/v1/objects?offset=-1", "offset must be a whole number"),
        ("/api/v1/objects?domain=nope", "unknown domain \"nope\""),
        (
            "/api/v1/objects?cluster=nope",
            "unknown cluster \"nope\" (one of: ",
        ),
        ("/api/v1/objects?label=prod", "must be written key=value"),
        ("/api/v1/objects/dev-1/Gizmo/x/y", "unknown kind \"Gizmo\""),
        ("/api/v1/owner?cluster=dev-1", "kind is required"),
        ("/api/v1/domains/gateway/wait", "version is required"),
        (
            "/api/v1/domains/gateway/wait?version=1&timeout=2h",
            "between 0s and 1h",
        ),
        (
            "/api/v1/domains/gateway/wait?version=1&timeout=soon",
            "invalid duration",
        ),
        // A misspelt filter is not "no filter": every object would answer.
        (
            "/api/v1/objects?stat=failed",
            "unknown query parameter(s) stat: this path takes ",
        ),
        (
            "/api/v1/objects?stat=failed&kind=Kustomization&colour=red",
            "colour, stat",
        ),
        (
            "/api/v1/clusters?verbose=1",
            "unknown query parameter(s) verbose: this path takes no query parameters",
        ),
        ("/api/v1/domains/gateway/wait?version=1&timout=5m", "timout"),
    ];
    for (uri, message) in cases {
        let (status, body) = get_json(&app, uri).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{uri}: {body}");
        let error = body["error"].as_str().unwrap();
        assert!(
            error.contains(message),
            "{uri}: {error:?} should say {message:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_names_are_404s_with_json_errors() {
    let (app, _store) = demo_app().await;
    for uri in [
        "/api/v1/domains/nope",
        "/api/v1/domains/nope/wait?version=1&timeout=0s",
        "/api/v1/clusters/nope",
        "/api/v1/objects/dev-1/Kustomization/flux-system/nope",
        "/api/v1/owner?cluster=dev-1&kind=Deployment&namespace=x&name=nope",
        "/api/v1/nope",
        "/api/v2/fleet/nope",
    ] {
        let (status, body) = get_json(&app, uri).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{uri}: {body}");
        assert!(
            body["error"].as_str().unwrap().contains("nope"),
            "{uri}: {body}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn problems_name_the_root_and_the_chain_from_each_affected_object() {
    let (app, _store) = demo_app().await;
    let (_, problems) = get_json(&app, "/api/v1/problems").await;
    let list = problems["problems"].as_array().unwrap();
    assert!(!list.is_empty(), "the demo has incidents");
    let ranks: Vec<usize> = list
        .iter()
        .map(|p| {
            let state: fleetglass::health::State = p["state"].as_str().unwrap().parse().unwrap();
            state.severity_rank()
        })
        .collect();
    assert!(
        ranks.windows(2).all(|w| w[0] <= w[1]),
        "worst first: {ranks:?}"
    );
    let tofu = list
        .iter()
        .find(|p| p["id"] == "prod-eu-1/Deployment/flux-system/tofu-controller")
        .expect("the tofu-controller outage is a root cause on prod-eu-1");
    assert!(
        tofu["reason"]
            .as_str()
            .unwrap()
            .contains("ImagePullBackOff")
    );
    let affected = tofu["affected"].as_array().unwrap();
    assert_eq!(
        tofu["affected_count"].as_u64().unwrap() as usize,
        affected.len()
    );
    let infra = affected
        .iter()
        .find(|a| a["id"] == "prod-eu-1/Kustomization/flux-system/infra-network")
        .expect("infra-network waits on the controller");
    let chain: Vec<&str> = infra["chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        chain.first(),
        Some(&"prod-eu-1/Kustomization/flux-system/infra-network")
    );
    assert_eq!(
        chain.last(),
        Some(&"prod-eu-1/Deployment/flux-system/tofu-controller")
    );
    assert!(
        chain.len() >= 3,
        "the chain goes through the Terraform object: {chain:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_object_has_its_history_and_its_owner_is_found_from_flux_labels() {
    let (app, _store) = demo_app().await;
    let (status, object) = get_json(
        &app,
        "/api/v1/objects/prod-eu-1/kustomization/flux-system/infra-network",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{object}");
    assert_eq!(object["kind"], "Kustomization", "the kind is normalised");
    let history = object["history"].as_array().unwrap();
    assert!(!history.is_empty(), "the first sighting is a transition");
    assert_eq!(history[0]["to"], object["state"]);
    assert_eq!(
        object["reconciled_by"]["controller"],
        "kustomize-controller"
    );
    assert!(
        object["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "Ready")
    );
    assert!(
        object["upstream"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["relation"] == "health check")
    );

    let (_, applied) = get_json(
        &app,
        "/api/v1/objects?cluster=prod-eu-1&kind=Deployment&namespace=flux-system&q=tofu-controller",
    )
    .await;
    let deployment = &applied["items"][0];
    let uri = format!(
        "/api/v1/owner?cluster=prod-eu-1&kind=Deployment&namespace=flux-system&name={}",
        deployment["name"].as_str().unwrap()
    );
    let (status, owner) = get_json(&app, &uri).await;
    assert_eq!(status, StatusCode::OK, "{owner}");
    assert_eq!(owner["applied_by"]["kind"], "HelmRelease", "{owner}");
    assert_eq!(owner["applied_by"]["name"], "tofu-controller");
    assert_eq!(owner["reconciled_by"]["controller"], "helm-controller");
    assert!(
        owner["source"]["kind"].is_string(),
        "the release's chart source: {owner}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn domains_report_rollout_progress_per_cluster() {
    let (app, _store) = demo_app().await;
    let (_, domains) = get_json(&app, "/api/v1/domains").await;
    let names: Vec<&str> = domains["domains"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["gateway", "networking", "observability", "tenants"]);
    let (_, gateway) = get_json(&app, "/api/v1/domains/gateway").await;
    assert_eq!(gateway["clusters"].as_array().unwrap().len(), 5);
    let newest = gateway["newest_version"].as_str().unwrap();
    assert!(
        gateway["summary"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{newest} fully healthy on ")),
        "{gateway}"
    );
    let (_, prod) = get_json(&app, "/api/v1/domains/gateway?label=ring%3Dprod").await;
    let clusters = prod["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 3, "only the prod ring: {prod}");
    assert!(clusters.iter().all(|c| c["group"] == "prod"));
}

#[tokio::test(flavor = "multi_thread")]
async fn long_query_strings_are_refused() {
    let (app, _store) = demo_app().await;
    let uri = format!("/api/v1/objects?q={}", "a".repeat(3000));
    let (status, body) = get(&app, &uri).await;
    assert_eq!(status, StatusCode::URI_TOO_LONG);
    assert!(body.contains("at most 2048"), "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn repeated_states_are_any_of_them_and_not_healthy_is_every_other_state() {
    let (app, _store) = demo_app().await;
    let count = |uri: &'static str| {
        let app = app.clone();
        async move {
            let (status, body) = get_json(&app, uri).await;
            assert_eq!(status, StatusCode::OK, "{uri}: {body}");
            let states: Vec<String> = body["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o["state"].as_str().unwrap().to_string())
                .collect();
            (body["total"].as_i64().unwrap(), states)
        }
    };
    let (failed, _) = count("/api/v1/objects?state=failed&limit=1000").await;
    let (blocked, _) = count("/api/v1/objects?state=blocked&limit=1000").await;
    let (either, states) = count("/api/v1/objects?state=failed&state=blocked&limit=1000").await;
    assert!(failed > 0 && blocked > 0, "the demo has both");
    assert_eq!(either, failed + blocked, "OR'd, not the last one only");
    assert!(states.iter().all(|s| s == "failed" || s == "blocked"));

    let (all, _) = count("/api/v1/objects?limit=1000").await;
    let (healthy, _) = count("/api/v1/objects?state=healthy&limit=1000").await;
    let (not_healthy, states) = count("/api/v1/objects?state=not-healthy&limit=1000").await;
    assert_eq!(not_healthy, all - healthy);
    assert!(!states.is_empty() && states.iter().all(|s| s != "healthy"));
}

#[tokio::test(flavor = "multi_thread")]
async fn refused_bodies_are_json_errors_too() {
    use axum::body::Body;
    use axum::http::Request;
    let (_, store) = demo_app().await;
    let app = common::web::tokens_app(store, "api-errors-token");
    let post = |content_type: &str, body: &'static str| {
        Request::post("/api/v1/silences")
            .header("authorization", "Bearer api-errors-token")
            .header("content-type", content_type)
            .body(Body::from(body))
            .unwrap()
    };
    for (request, expected) in [
        (
            post("text/plain", "silence it"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ),
        (
            post("application/json", "{\"until\": \"soon\"}"),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            post("application/json", "{not json"),
            StatusCode::BAD_REQUEST,
        ),
    ] {
        let (status, body) = common::web::send(&app, request).await;
        assert_eq!(status, expected, "{body}");
        let json: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
        assert!(
            json["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{body}"
        );
    }
}

/// A stored cluster row as a collector that stopped `minutes` ago left it.
async fn stop_collecting(store: &fleetglass::store::Store, cluster: &str, minutes: i64) {
    let clusters = store.clusters().await.unwrap();
    let mut row = clusters
        .into_iter()
        .find(|c| c.name == cluster)
        .expect("a stored cluster");
    row.last_good = Some(chrono::Utc::now() - chrono::TimeDelta::minutes(minutes));
    let mut tx = store.pool().begin().await.unwrap();
    fleetglass::store::upsert_clusters(&mut tx, &[row])
        .await
        .unwrap();
    tx.commit().await.unwrap();
}

/// A domain fully healthy on `cluster`, with its version there (the demo has several).
async fn healthy_domain_on(app: &axum::Router, cluster: &str) -> (String, String) {
    let (_, fleet) = get_json(app, "/api/v1/fleet").await;
    fleet["domains"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|d| {
            let cell = d["clusters"]
                .as_array()?
                .iter()
                .find(|c| c["cluster"] == cluster && c["fully_healthy"] == true)?;
            Some((
                d["name"].as_str()?.to_string(),
                cell["version"].as_str()?.to_string(),
            ))
        })
        .expect("a domain fully healthy on the cluster")
}

/// Issue 43 (1): the collector stopped, its last rows were green. Every reader judges the
/// cluster's freshness when it reads: counts, cells, objects, filters, root causes and the CI
/// gate all say unverifiable, the cluster the one root cause.
#[tokio::test(flavor = "multi_thread")]
async fn a_stopped_collectors_last_green_reads_unverifiable_on_every_reader() {
    let (app, store) = demo_app().await;
    let cluster = "prod-eu-1";
    let (domain, version) = healthy_domain_on(&app, cluster).await;
    let (_, healthy_before) = get_json(
        &app,
        &format!("/api/v1/objects?cluster={cluster}&state=healthy"),
    )
    .await;
    assert!(healthy_before["total"].as_i64().unwrap() > 0, "the control");

    stop_collecting(&store, cluster, 5).await;

    let (_, fleet) = get_json(&app, "/api/v1/fleet").await;
    let row = fleet["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == cluster)
        .unwrap();
    assert_eq!(row["fresh"], false);
    assert_eq!(row["unverifiable"], "data is 5m old (freshness limit 2m)");
    let counts = row["state_counts"].as_object().unwrap();
    assert_eq!(
        counts.keys().collect::<Vec<_>>(),
        vec!["unverifiable"],
        "{row}"
    );
    let cells = fleet["domains"].as_array().unwrap().iter().flat_map(|d| {
        d["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["cluster"] == cluster)
    });
    for cell in cells {
        assert_eq!(cell["state"], "unverifiable", "{cell}");
        assert_eq!(cell["fully_healthy"], false, "{cell}");
    }
    let causes = fleet["root_causes"].as_array().unwrap();
    let stale = causes
        .iter()
        .find(|c| c["id"] == format!("{cluster}/Cluster//{cluster}"))
        .expect("the cluster is a root cause");
    assert_eq!(
        stale["affected"].as_array().unwrap().len() as i64,
        counts["unverifiable"].as_i64().unwrap()
    );
    assert!(
        causes
            .iter()
            .all(|c| c["id"] == stale["id"] || c["cluster"] != cluster)
    );

    let (_, healthy) = get_json(
        &app,
        &format!("/api/v1/objects?cluster={cluster}&state=healthy"),
    )
    .await;
    assert_eq!(healthy["total"], 0, "{healthy}");
    let (_, unverifiable) = get_json(
        &app,
        &format!("/api/v1/objects?cluster={cluster}&state=unverifiable&limit=1000"),
    )
    .await;
    assert_eq!(unverifiable["total"], counts["unverifiable"]);
    let one = unverifiable["items"][0]["id"].as_str().unwrap().to_string();
    let (_, object) = get_json(&app, &format!("/api/v1/objects/{one}")).await;
    assert_eq!(object["state"], "unverifiable", "{object}");
    assert_eq!(
        object["root_causes"],
        serde_json::json!([format!("{cluster}/Cluster//{cluster}")])
    );

    let (_, detail) = get_json(&app, &format!("/api/v1/clusters/{cluster}")).await;
    assert_eq!(detail["fresh"], false, "{detail}");
    let counts = detail["state_counts"].as_object().unwrap();
    assert_eq!(
        counts.keys().collect::<Vec<_>>(),
        vec!["unverifiable"],
        "{detail}"
    );
    let (_, page) = get_json(&app, &format!("/api/v1/domains/{domain}")).await;
    let there = page["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["cluster"] == cluster)
        .unwrap();
    assert_eq!(there["state"], "unverifiable", "{there}");
    assert_eq!(there["fully_healthy"], false, "{there}");
    assert_eq!(there["blockers"][0]["reason"], stale["reason"], "{there}");
    let (_, problems) = get_json(&app, "/api/v1/problems").await;
    let on_cluster: Vec<&Value> = problems["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["cluster"] == cluster)
        .collect();
    assert_eq!(
        on_cluster.len(),
        1,
        "one cause on the stale cluster: {on_cluster:?}"
    );
    assert_eq!(on_cluster[0]["id"], stale["id"]);
    let (_, html) = get(&app, "/").await;
    assert!(
        html.contains(&format!("{cluster}</strong></a>: data is 5m old")),
        "the fleet page says why"
    );

    let (status, gate) = get_json(
        &app,
        &format!("/api/v1/domains/{domain}/wait?version={version}&timeout=0s&label=ring%3Dprod"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{gate}");
    assert_eq!(gate["healthy"], false, "{gate}");
    let cell = gate["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["cluster"] == cluster)
        .unwrap();
    assert_eq!(cell["state"], "unverifiable", "{gate}");
}

/// Issue 43 (2): a configured cluster the collector never reached exists from the moment it
/// is configured: a row, a cell in every domain that selects it, a root cause, and no gate
/// passes without it.
#[tokio::test(flavor = "multi_thread")]
async fn a_configured_cluster_never_reached_is_unverifiable_everywhere_it_belongs() {
    let (app, store) = demo_app().await;
    let (domain, version) = healthy_domain_on(&app, "prod-eu-1").await;
    let mut config = common::web::demo_config();
    let mut extra = config.clusters[0].clone();
    extra.name = "prod-ap-1".into();
    extra.labels = [("ring".to_string(), "prod".to_string())].into();
    config.clusters.push(extra);
    let app = common::web::app(store, &config);

    let (_, fleet) = get_json(&app, "/api/v1/fleet").await;
    let row = fleet["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "prod-ap-1")
        .expect("the configured cluster is listed");
    assert_eq!(row["fresh"], false);
    let cell = fleet["domains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == domain.as_str())
        .and_then(|d| {
            d["clusters"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["cluster"] == "prod-ap-1")
        })
        .expect("a cell in the domain's prod ring");
    assert_eq!(cell["state"], "unverifiable");
    assert!(
        fleet["root_causes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == "prod-ap-1/Cluster//prod-ap-1")
    );
    let (_, gate) = get_json(
        &app,
        &format!("/api/v1/domains/{domain}/wait?version={version}&timeout=0s&label=ring%3Dprod"),
    )
    .await;
    assert_eq!(gate["healthy"], false, "{gate}");
}

/// Issue 43 (4): absence is never an answer. A cluster or stack that does not exist is a 404
/// from `impact`, and a `wait` whose label selects no cluster fails at once.
#[tokio::test(flavor = "multi_thread")]
async fn what_does_not_exist_is_an_error_never_a_safe_answer() {
    let (app, _store) = demo_app().await;
    let (status, body) = get_json(
        &app,
        "/api/v1/impact?cluster=nope&kind=HelmRelease&namespace=gateway-system&name=gateway",
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(body.to_string().contains("no cluster named"), "{body}");
    let (status, body) = get_json(
        &app,
        "/api/v1/impact?cluster=dev-1&kind=HelmRelease&namespace=gateway-system&name=gatewy",
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, _) = get(&app, "/impact/dev-1/HelmRelease/gateway-system/gatewy").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, body) = get_json(
        &app,
        "/api/v1/domains/gateway/wait?version=1.0.0&timeout=10m&label=ring%3Dnope",
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.to_string().contains("ring=nope"), "{body}");
}

/// An answer polled again costs a few bytes while nothing in it changed, and travels gzip'd to
/// whoever accepts it. (Pages and `/api/v1/fleet` carry the time they were made, so every
/// answer of theirs is new.)
#[tokio::test(flavor = "multi_thread")]
async fn unchanged_answers_are_304_and_big_ones_travel_gzipped() {
    use axum::body::Body;
    use axum::http::Request;
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let (app, _store) = demo_app().await;
    for uri in [
        "/api/v1/objects?limit=5",
        "/api/v1/openapi.json",
        "/api/v1/clusters",
    ] {
        let first = app
            .clone()
            .oneshot(Request::get(uri).body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(first.status(), StatusCode::OK, "{uri}");
        let tag = first.headers()["etag"].clone();
        assert!(tag.to_str().unwrap().starts_with("W/\""), "{uri}: {tag:?}");
        let again = app
            .clone()
            .oneshot(
                Request::get(uri)
                    .header("if-none-match", tag.clone())
                    .body(Body::empty())
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED, "{uri}");
        assert_eq!(again.headers()["etag"], tag);
        let body = again.into_body().collect().await.unwrap().to_bytes();
        assert!(body.is_empty(), "{uri}: a 304 has no body");
        let other = app
            .clone()
            .oneshot(
                Request::get(uri)
                    .header("if-none-match", "W/\"something-else\"")
                    .body(Body::empty())
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(other.status(), StatusCode::OK, "{uri}: another tag");
    }
    let zipped = app
        .clone()
        .oneshot(
            Request::get("/problems")
                .header("accept-encoding", "gzip")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(zipped.headers()["content-encoding"], "gzip");
    let (_, plain) = get(&app, "/problems").await;
    let zipped = zipped.into_body().collect().await.unwrap().to_bytes();
    assert!(
        zipped.len() * 3 < plain.len(),
        "{} bytes gzip'd against {}",
        zipped.len(),
        plain.len()
    );
}
