//! `/alerts`, `/api/v1/alerts` and the silences API and form, driven in process against real
//! Postgres: who set a silence comes only from authentication (the trusted proxy's user or
//! the token's name), form tokens are bound to the session and the user, and without
//! authentication nothing can be written and no form is shown.

use crate::common;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode, header};
use chrono::{DateTime, TimeDelta, Utc};
use fleetglass::config::Config;
use fleetglass::store::Store;
use fleetglass::web::{self, AppState, Site};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::net::SocketAddr;
use tower::ServiceExt;

const TOKEN: &str = "fg-alerts-web-token";

/// Proxy mode, the proxy on loopback, and one token named `ci`.
fn proxy_site_config() -> Config {
    let hash: String = Sha256::digest(TOKEN.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Config {
        web: fleetglass::yaml::from_str(&format!(
            "auth: {{mode: proxy, tokens: [{{name: ci, sha256: {hash}}}], proxy: {{trusted_proxies: [127.0.0.1/32]}}}}"
        ))
        .unwrap(),
        ..Config::default()
    }
}

fn proxy_site() -> Site {
    Site::from_config(&proxy_site_config())
}

/// The request as the proxy on loopback forwards it for `user`.
fn as_user(mut request: Request<Body>, user: &str) -> Request<Body> {
    request
        .headers_mut()
        .insert("x-forwarded-user", user.parse().unwrap());
    request.extensions_mut().insert(ConnectInfo(
        "127.0.0.1:40000".parse::<SocketAddr>().unwrap(),
    ));
    request
}

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

/// The CSRF session cookie a page set and the form token it shows.
fn csrf_pair(headers: &axum::http::HeaderMap, page: &str) -> (String, String) {
    let cookie = headers[header::SET_COOKIE].to_str().unwrap();
    let cookie = cookie.split(';').next().unwrap().to_string();
    let token = page
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .to_string();
    (cookie, token)
}

async fn app_with_an_open_alert(site: Site) -> (axum::Router, Store) {
    let store = common::fresh_store().await;
    common::alerts::raise_tofu_controller_alert(&store).await;
    let app = web::router(AppState::new(store.clone(), site));
    (app, store)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_api_lists_alerts_with_delivery_status_and_manages_silences() {
    let (app, _store) = app_with_an_open_alert(proxy_site()).await;
    let (status, _, body) = send(
        &app,
        as_user(
            Request::get("/api/v1/alerts").body(Body::empty()).unwrap(),
            "alice@example.com",
        ),
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
    let post = |body: &Value| {
        Request::post("/api/v1/silences")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .unwrap()
    };
    let (status, _, body) = send(&app, as_user(post(&new), "alice@example.com")).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let created: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(created["created_by"], "alice@example.com");

    // A token names its holder; a user header beside it is not believed.
    let mut scripted = post(&new);
    scripted.headers_mut().insert(
        header::AUTHORIZATION,
        format!("bearer {TOKEN}").parse().unwrap(),
    );
    scripted
        .headers_mut()
        .insert("x-forwarded-user", "mallory".parse().unwrap());
    let (status, _, body) = send(&app, scripted).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let created: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(created["created_by"], "token ci");

    let bad = json!({"domain": " ", "until": until});
    let (status, _, body) = send(&app, as_user(post(&bad), "alice@example.com")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("at least one of"), "{body}");

    let (_, _, body) = send(
        &app,
        as_user(
            Request::get("/api/v1/silences")
                .body(Body::empty())
                .unwrap(),
            "alice@example.com",
        ),
    )
    .await;
    let silences: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(silences.as_array().unwrap().len(), 2);
    assert_eq!(silences[0]["comment"], "image mirror down");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_authentication_nothing_is_written_and_no_form_is_shown() {
    let (app, store) = app_with_an_open_alert(Site::default()).await;
    let until = (Utc::now() + TimeDelta::days(3650)).to_rfc3339();
    let mute = json!({"cluster": "prod-eu-1", "until": until, "comment": "ten years"});
    let (status, headers, body) = send(
        &app,
        Request::post("/api/v1/silences")
            .header(header::CONTENT_TYPE, "application/json")
            .header("x-forwarded-user", "alice@example.com")
            .body(Body::from(mute.to_string()))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(headers[header::CONTENT_TYPE], "application/json");
    let error: Value = serde_json::from_str(&body).unwrap();
    assert!(
        error["error"].as_str().unwrap().contains("read-only"),
        "{body}"
    );
    let (status, _, body) = send(
        &app,
        Request::post("/alerts/silences")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from("csrf=x&cluster=prod-eu-1&duration=87600h"))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let silences: i64 = sqlx::query_scalar!(r#"SELECT count(*) AS "count!" FROM silences"#)
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(silences, 0);

    let (status, headers, page) =
        send(&app, Request::get("/alerts").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert!(!page.contains("<form method=\"post\""), "{page}");
    assert!(page.contains("read-only"), "{page}");
    assert!(headers.get(header::SET_COOKIE).is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_page_shows_alerts_and_its_forms_need_the_csrf_cookie() {
    let (app, store) = app_with_an_open_alert(proxy_site()).await;
    let alice = |request| as_user(request, "alice@example.com");
    let (status, headers, page) = send(
        &app,
        alice(Request::get("/alerts").body(Body::empty()).unwrap()),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("prod-eu-1/Deployment/flux-system/tofu-controller"));
    assert!(
        page.contains("ImagePullBackOff") && page.contains("slack firing: queued"),
        "{page}"
    );
    let set_cookie = headers[header::SET_COOKIE].to_str().unwrap();
    assert!(set_cookie.contains("SameSite=Strict") && set_cookie.contains("HttpOnly"));
    let (cookie, token) = csrf_pair(&headers, &page);
    let session = cookie.split_once('=').unwrap().1.to_string();
    assert_ne!(
        token, session,
        "the token is derived, not the cookie itself"
    );

    let form = |csrf: &str| {
        format!(
            "csrf={csrf}&root_cause=prod-eu-1%2FDeployment%2Fflux-system%2Ftofu-controller&domain=&cluster=&duration=2h&comment=mirror"
        )
    };
    let post = |uri: String, cookie: Option<&str>, body: String| {
        let mut request =
            Request::post(uri).header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
        if let Some(cookie) = cookie {
            request = request.header(header::COOKIE, cookie);
        }
        request.body(Body::from(body)).unwrap()
    };
    // A cross-site form has no cookie (and cannot guess it); a planted cookie with its own
    // token does not pass for another user; the right pair from another site is refused.
    let silences = "/alerts/silences".to_string();
    let (status, _, _) = send(&app, alice(post(silences.clone(), None, form(&token)))).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let bob = as_user(
        post(silences.clone(), Some(&cookie), form(&token)),
        "bob@example.com",
    );
    assert_eq!(send(&app, bob).await.0, StatusCode::FORBIDDEN);
    let mut cross_site = alice(post(silences.clone(), Some(&cookie), form(&token)));
    cross_site
        .headers_mut()
        .insert("sec-fetch-site", "same-site".parse().unwrap());
    assert_eq!(send(&app, cross_site).await.0, StatusCode::FORBIDDEN);
    let count = || async {
        sqlx::query_scalar!(r#"SELECT count(*) AS "count!" FROM silences"#)
            .fetch_one(store.pool())
            .await
            .unwrap()
    };
    assert_eq!(count().await, 0);

    let (status, headers, _) = send(&app, alice(post(silences, Some(&cookie), form(&token)))).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(headers[header::LOCATION], "/alerts");
    let by: String = sqlx::query_scalar!("SELECT created_by FROM silences")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(by, "alice@example.com");

    let (_, _, page) = send(
        &app,
        alice(
            Request::get("/alerts")
                .header(header::COOKIE, &cookie)
                .body(Body::empty())
                .unwrap(),
        ),
    )
    .await;
    assert!(
        page.contains("root cause prod-eu-1/Deployment/flux-system/tofu-controller"),
        "{page}"
    );
    let id: i64 = sqlx::query_scalar!("SELECT id FROM silences")
        .fetch_one(store.pool())
        .await
        .unwrap();
    let expire = post(
        format!("/alerts/silences/{id}/expire"),
        Some(&cookie),
        format!("csrf={token}"),
    );
    let (status, _, _) = send(&app, alice(expire)).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let active: i64 =
        sqlx::query_scalar!(r#"SELECT count(*) AS "count!" FROM silences WHERE until > now()"#)
            .fetch_one(store.pool())
            .await
            .unwrap();
    assert_eq!(active, 0);
}

/// Issue 47: the Warning events of the cause (and its pods) travel with the firing alert, in
/// the notice queued for the sink (read back through the outbox, as the sender reads it).
#[tokio::test(flavor = "multi_thread")]
async fn a_firing_alert_carries_its_warning_events_as_evidence() {
    use fleetglass::alerts::tables::outbox;
    use fleetglass::model::{ObjectId, Warning};
    use fleetglass::store::write_warnings;
    let store = common::fresh_store().await;
    let warning = Warning {
        regarding: "prod-eu-1/Deployment/flux-system/tofu-controller"
            .parse::<ObjectId>()
            .unwrap(),
        uid: "u-1".into(),
        reason: "Failed".into(),
        note: "Failed to pull image \"ghcr.io/flux-iac/tofu-controller:v0.16.0-rc.5\"".into(),
        count: 5,
        last_seen: Utc::now(),
        reporter: "kubelet".into(),
    };
    let mut conn = store.pool().acquire().await.unwrap();
    write_warnings(&mut conn, &[warning]).await.unwrap();
    drop(conn);
    common::alerts::raise_tofu_controller_alert(&store).await;
    let claimed = outbox::claim(store.pool(), "slack", std::time::Duration::from_secs(30))
        .await
        .unwrap()
        .expect("a notice queued for Slack");
    assert_eq!(
        claimed.payload["evidence"],
        json!([
            "Failed (5×, kubelet): Failed to pull image \"ghcr.io/flux-iac/tofu-controller:v0.16.0-rc.5\""
        ]),
        "{}",
        claimed.payload
    );
}

/// Issue 47: an incident on two clusters is silenced everywhere with one action, one silence
/// per cluster; a bad id among them sets none.
#[tokio::test(flavor = "multi_thread")]
async fn one_action_silences_an_incident_on_all_its_clusters() {
    let store = common::fresh_store().await;
    common::alerts::raise_tofu_controller_alert_on(&store, &["prod-eu-1", "prod-eu-2"]).await;
    let app = web::router(AppState::new(store.clone(), proxy_site()));
    let alice = |request| as_user(request, "alice@example.com");
    let (_, headers, page) = send(
        &app,
        alice(Request::get("/alerts").body(Body::empty()).unwrap()),
    )
    .await;
    assert!(
        page.contains("silence this incident on all 2 clusters 2h"),
        "{page}"
    );
    assert!(
        page.contains(r#"<th scope="col">root cause</th>"#),
        "header scopes"
    );
    let (cookie, token) = csrf_pair(&headers, &page);
    let ids = "prod-eu-1/Deployment/flux-system/tofu-controller prod-eu-2/Deployment/flux-system/tofu-controller";
    let post = |root_causes: &str| {
        let body = format!(
            "csrf={token}&root_causes={}&duration=2h&comment=mirror",
            root_causes.replace('/', "%2F").replace(' ', "+")
        );
        alice(
            Request::post("/alerts/silences")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .header(header::COOKIE, &cookie)
                .body(Body::from(body))
                .unwrap(),
        )
    };
    let count = || async {
        sqlx::query_scalar!(r#"SELECT count(*) AS "count!" FROM silences"#)
            .fetch_one(store.pool())
            .await
            .unwrap()
    };
    let (status, _, _) = send(&app, post(&format!("{ids} not-an-id"))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(count().await, 0, "a bad id among them sets none");
    let (status, _, _) = send(&app, post(ids)).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let silenced: Vec<String> = sqlx::query_scalar!(
        r#"SELECT root_cause AS "root_cause!" FROM silences ORDER BY root_cause"#
    )
    .fetch_all(store.pool())
    .await
    .unwrap();
    assert_eq!(
        silenced,
        [
            "prod-eu-1/Deployment/flux-system/tofu-controller",
            "prod-eu-2/Deployment/flux-system/tofu-controller"
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn silences_last_at_most_ninety_days_and_the_proxy_names_one_user_in_any_script() {
    let (app, store) = app_with_an_open_alert(proxy_site()).await;
    let post = |until: DateTime<Utc>| {
        let body = json!({"cluster": "prod-eu-1", "until": until.to_rfc3339()});
        Request::post("/api/v1/silences")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .unwrap()
    };
    for days in [91, 3650, 106_000] {
        let (status, _, body) = send(
            &app,
            as_user(post(Utc::now() + TimeDelta::days(days)), "alice"),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{days} days: {body}");
        assert!(body.contains("at most 90 days"), "{body}");
    }
    let almost = Utc::now() + TimeDelta::days(90) - TimeDelta::minutes(1);
    let (status, _, body) = send(&app, as_user(post(almost), "Zoë Ødegård 李")).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let created: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(created["created_by"], "Zoë Ødegård 李");

    // Two user headers: which one the proxy set cannot be told.
    let mut twice = as_user(post(almost), "alice");
    twice
        .headers_mut()
        .append("x-forwarded-user", "mallory".parse().unwrap());
    let (status, _, body) = send(&app, twice).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.contains("more than once"), "{body}");

    // The form: a duration past any date is a 400 saying so, not a reset connection.
    let (_, headers, page) = send(
        &app,
        as_user(
            Request::get("/alerts").body(Body::empty()).unwrap(),
            "alice",
        ),
    )
    .await;
    let (cookie, token) = csrf_pair(&headers, &page);
    for duration in ["99999999d", "91d", "2400h"] {
        let form = Request::post("/alerts/silences")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::COOKIE, &cookie)
            .body(Body::from(format!(
                "csrf={token}&cluster=prod-eu-1&duration={duration}"
            )))
            .unwrap();
        let (status, _, body) = send(&app, as_user(form, "alice")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{duration}: {body}");
        assert!(body.contains("at most 90 days"), "{duration}: {body}");
    }
    let stored: i64 = sqlx::query_scalar!(r#"SELECT count(*) AS "count!" FROM silences"#)
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(stored, 1, "only the one within 90 days");
}

/// With no sink configured the page says nobody is told; with sinks it names them.
#[tokio::test(flavor = "multi_thread")]
async fn the_alerts_page_says_where_notifications_go_or_that_they_go_nowhere() {
    let (app, _store) = app_with_an_open_alert(proxy_site()).await;
    let alerts = || {
        as_user(
            Request::get("/alerts").body(Body::empty()).unwrap(),
            "alice",
        )
    };
    let (_, _, page) = send(&app, alerts()).await;
    assert!(
        page.contains("No notification sink is configured (alerts.slack, alerts.webhooks)"),
        "{page}"
    );
    let mut config = proxy_site_config();
    config.alerts = fleetglass::yaml::from_str(
        "{slack: {webhook_url_file: /run/slack}, webhooks: [{name: pager, url_file: /run/pager}]}",
    )
    .unwrap();
    let (app, _store) = app_with_an_open_alert(Site::from_config(&config)).await;
    let (_, _, page) = send(&app, alerts()).await;
    assert!(
        page.contains("Notifications go to Slack, webhook pager."),
        "{page}"
    );
    assert!(!page.contains("No notification sink"), "{page}");
}
