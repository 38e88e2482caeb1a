//! `/alerts`, `/api/v1/alerts` and the silences API and form, driven in process against real
//! Postgres.

mod alerts_support;
mod common;

use alerts_support::{cause, evaluation};
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use chrono::{TimeDelta, Utc};
use fleetglass::alerts::rules::Policy;
use fleetglass::alerts::{Dispatcher, Route};
use fleetglass::config::AlertsConfig;
use fleetglass::health::State;
use fleetglass::store::Store;
use fleetglass::web::{self, AppState, Site};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use tower::ServiceExt;

async fn send(
    app: &axum::Router,
    request: Request<Body>,
) -> (StatusCode, axum::http::HeaderMap, String) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        headers,
        String::from_utf8_lossy(&bytes).into_owned(),
    )
}

async fn app_with_an_open_alert() -> (axum::Router, Store) {
    let store = common::fresh_store().await;
    let evaluator = Dispatcher::new(
        store.clone(),
        Policy::from_config(&AlertsConfig::default()),
        vec![Route {
            sink: "slack".into(),
            updates: false,
        }],
        BTreeMap::new(),
        None,
    );
    let id = "prod-eu-1/Deployment/flux-system/tofu-controller";
    let eval = evaluation(
        &["prod-eu-1"],
        vec![cause(id, State::Failed, "ImagePullBackOff", 4, 48)],
    );
    evaluator.round(&eval, Utc::now()).await.unwrap();
    let app = web::router(AppState {
        store: store.clone(),
        site: Arc::new(Site::default()),
    });
    (app, store)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_api_lists_alerts_with_delivery_status_and_manages_silences() {
    let (app, _store) = app_with_an_open_alert().await;
    let (status, _, body) = send(
        &app,
        Request::get("/api/v1/alerts").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let alerts: Value = serde_json::from_str(&body).unwrap();
    let open = &alerts["open"][0];
    assert_eq!(
        open["root_cause"],
        "prod-eu-1/Deployment/flux-system/tofu-controller"
    );
    assert_eq!(open["rule"], "controller-unavailable");
    assert_eq!(open["severity"], "critical");
    assert_eq!(open["affected_count"], 5);
    assert_eq!(open["deliveries"][0]["status"], "pending");
    assert_eq!(open["deliveries"][0]["sink"], "slack");

    let until = (Utc::now() + TimeDelta::hours(2)).to_rfc3339();
    let new = json!({"domain": "gateway", "cluster": "prod-eu-1", "until": until, "comment": "image mirror down"});
    let (status, _, body) = send(
        &app,
        Request::post("/api/v1/silences")
            .header(header::CONTENT_TYPE, "application/json")
            .header("x-forwarded-user", "alice@example.com")
            .body(Body::from(new.to_string()))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let created: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(created["created_by"], "alice@example.com");

    let bad = json!({"domain": " ", "until": until});
    let (status, _, body) = send(
        &app,
        Request::post("/api/v1/silences")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(bad.to_string()))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("at least one of"), "{body}");

    let (_, _, body) = send(
        &app,
        Request::get("/api/v1/silences")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    let silences: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(silences.as_array().unwrap().len(), 1);
    assert_eq!(silences[0]["comment"], "image mirror down");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_page_shows_alerts_and_its_forms_need_the_csrf_cookie() {
    let (app, store) = app_with_an_open_alert().await;
    let (status, headers, page) =
        send(&app, Request::get("/alerts").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("prod-eu-1/Deployment/flux-system/tofu-controller"));
    assert!(
        page.contains("ImagePullBackOff") && page.contains("slack firing: queued"),
        "{page}"
    );
    let cookie = headers[header::SET_COOKIE].to_str().unwrap();
    assert!(cookie.contains("SameSite=Strict") && cookie.contains("HttpOnly"));
    let cookie = cookie.split(';').next().unwrap().to_string();
    let token = cookie.split_once('=').unwrap().1.to_string();
    assert!(page.contains(&format!("value=\"{token}\"")));

    let form = |csrf: &str| {
        format!(
            "csrf={csrf}&root_cause=prod-eu-1%2FDeployment%2Fflux-system%2Ftofu-controller&domain=&cluster=&duration=2h&comment=mirror"
        )
    };
    // A cross-site form has no cookie (and cannot guess it).
    let (status, _, _) = send(
        &app,
        Request::post("/alerts/silences")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(form(&token)))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let count = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM silences")
            .fetch_one(store.pool())
            .await
            .unwrap()
    };
    assert_eq!(count().await, 0);

    let (status, headers, _) = send(
        &app,
        Request::post("/alerts/silences")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::COOKIE, &cookie)
            .body(Body::from(form(&token)))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(headers[header::LOCATION], "/alerts");
    let by: String = sqlx::query_scalar("SELECT created_by FROM silences")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(by, "anonymous");

    let (_, _, page) = send(
        &app,
        Request::get("/alerts")
            .header(header::COOKIE, &cookie)
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert!(
        page.contains("root cause prod-eu-1/Deployment/flux-system/tofu-controller"),
        "{page}"
    );
    let id: i64 = sqlx::query_scalar("SELECT id FROM silences")
        .fetch_one(store.pool())
        .await
        .unwrap();
    let (status, _, _) = send(
        &app,
        Request::post(format!("/alerts/silences/{id}/expire"))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::COOKIE, &cookie)
            .body(Body::from(format!("csrf={token}")))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let active: i64 = sqlx::query_scalar("SELECT count(*) FROM silences WHERE until > now()")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(active, 0);
}
