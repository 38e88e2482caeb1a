//! Signing in from a browser in tokens mode: the token is checked once and a signed session
//! cookie (HttpOnly, SameSite=Strict, `__Host-` and Secure under https) stands in for it; a
//! wrong token sets nothing; the cookie is refused once tampered with; forms still need
//! their CSRF pair, writes from other sites are still refused, and the JSON API's writes
//! still need a bearer token.

use crate::common;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode};
use common::web::{app, demo_app, demo_config};
use fleetglass::store::Store;
use fleetglass::web::{AppState, CsrfKey, Site, router};
use http_body_util::BodyExt;
use sha2::{Digest, Sha256};
use std::net::SocketAddr;
use tower::ServiceExt;

const TOKEN: &str = "fg-signin-test-token-52a9";
const HOST: &str = "fleet.example.com";

fn sha256_hex(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The demo fleet in tokens mode, reached at https://fleet.example.com.
async fn https_app() -> axum::Router {
    let (_, store) = demo_app().await;
    let mut config = demo_config();
    config.public_url = Some(format!("https://{HOST}"));
    config.web = fleetglass::yaml::from_str(&format!(
        "auth: {{mode: tokens, tokens: [{{name: ana, sha256: {}}}]}}",
        sha256_hex(TOKEN)
    ))
    .unwrap();
    app(store, &config)
}

fn request(method: &str, uri: &str) -> axum::http::request::Builder {
    Request::builder()
        .method(method)
        .uri(uri)
        .header("host", HOST)
        .header("sec-fetch-site", "same-origin")
        .header("origin", format!("https://{HOST}"))
}

fn form(uri: &str, body: String, cookies: &str) -> Request<Body> {
    let mut builder =
        request("POST", uri).header("content-type", "application/x-www-form-urlencoded");
    if !cookies.is_empty() {
        builder = builder.header("cookie", cookies);
    }
    builder.body(Body::from(body)).unwrap()
}

/// Status, `Set-Cookie` values and body.
async fn call(app: &axum::Router, request: Request<Body>) -> (StatusCode, Vec<String>, String) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let cookies = response
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, cookies, String::from_utf8_lossy(&body).into_owned())
}

fn pair(set_cookie: &str) -> String {
    set_cookie.split(';').next().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_signs_a_browser_in_with_a_strict_cookie() {
    let app = https_app().await;
    let (status, cookies, _) = call(
        &app,
        form("/sign-in", format!("token={TOKEN}&next=%2Falerts"), ""),
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let cookie = cookies
        .iter()
        .find(|c| c.starts_with("__Host-fleetglass_signin="))
        .expect("a __Host- sign-in cookie under https");
    for flag in ["HttpOnly", "SameSite=Strict", "Secure", "Path=/"] {
        assert!(cookie.contains(flag), "{flag} in {cookie}");
    }
    assert!(
        !cookie.contains(TOKEN),
        "the token itself is never stored: {cookie}"
    );
    assert!(!cookie.contains("Domain"), "{cookie}");
    let signed_in = pair(cookie);

    // The cookie opens the pages, and the silence forms are shown to the signed-in user.
    let (status, cookies, page) = call(
        &app,
        request("GET", "/alerts")
            .header("cookie", &signed_in)
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(
        page.contains("action=\"/alerts/silences\""),
        "forms for a signed-in user"
    );
    let session = pair(
        cookies
            .iter()
            .find(|c| c.contains("fleetglass_session"))
            .unwrap(),
    );
    let csrf = page
        .split("action=\"/alerts/silences\"")
        .nth(1)
        .and_then(|form| form.split("name=\"csrf\" value=\"").nth(1))
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .to_string();

    // CSRF still holds: the sign-in cookie alone does not make a form post valid.
    let silence =
        "root_cause=prod-eu-1%2FDeployment%2Fflux-system%2Ftofu-controller&duration=2h&comment=x";
    let both = format!("{signed_in}; {session}");
    let (status, _, body) = call(
        &app,
        form(
            "/alerts/silences",
            format!("csrf={}&{silence}", "b2".repeat(32)),
            &both,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a wrong CSRF token: {body}");
    let (status, _, body) = call(
        &app,
        form(
            "/alerts/silences",
            format!("csrf={csrf}&{silence}"),
            &signed_in,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "no CSRF session: {body}");
    let mut cross = form("/alerts/silences", format!("csrf={csrf}&{silence}"), &both);
    cross
        .headers_mut()
        .insert("sec-fetch-site", "cross-site".parse().unwrap());
    assert_eq!(
        call(&app, cross).await.0,
        StatusCode::FORBIDDEN,
        "from another site"
    );
    let (status, _, body) = call(
        &app,
        form("/alerts/silences", format!("csrf={csrf}&{silence}"), &both),
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER, "the right pair: {body}");

    // The JSON API's writes need a bearer token, whatever cookie rides along.
    let api_write = request("POST", "/api/v1/silences")
        .header("cookie", &both)
        .header("content-type", "application/json")
        .body(Body::from(
            r#"{"cluster": "prod-eu-1", "until": "2099-01-01T00:00:00Z"}"#,
        ))
        .unwrap();
    let (status, _, body) = call(&app, api_write).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");

    // Every page's header offers signing out, with a token bound to this sign-in; without
    // it, or with another, nothing changes: the sign-in still opens the pages.
    let sign_out_token = sign_out_token_on(&app, "/problems", &signed_in).await;
    assert_eq!(
        sign_out_token_on(&app, "/objects", &signed_in).await,
        sign_out_token
    );
    for refused in [String::new(), format!("csrf={}", "c3".repeat(32))] {
        let (status, cookies, body) = call(&app, form("/sign-out", refused, &signed_in)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert!(cookies.is_empty(), "nothing changed: {cookies:?}");
    }
    let still = request("GET", "/alerts")
        .header("cookie", &signed_in)
        .body(Body::empty())
        .unwrap();
    assert_eq!(call(&app, still).await.0, StatusCode::OK);
    let mut cross = form("/sign-out", format!("csrf={sign_out_token}"), &signed_in);
    cross
        .headers_mut()
        .insert("sec-fetch-site", "cross-site".parse().unwrap());
    assert_eq!(call(&app, cross).await.0, StatusCode::FORBIDDEN);

    // With its token, signing out clears the cookie.
    let (status, cookies, _) = call(
        &app,
        form("/sign-out", format!("csrf={sign_out_token}"), &signed_in),
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert!(
        cookies
            .iter()
            .any(|c| c.starts_with("__Host-fleetglass_signin=;") && c.contains("Max-Age=0"))
    );
    // A copy of the cookie (stolen before the sign-out) no longer counts either.
    let stolen = request("GET", "/api/v1/fleet")
        .header("cookie", &signed_in)
        .body(Body::empty())
        .unwrap();
    assert_eq!(call(&app, stolen).await.0, StatusCode::UNAUTHORIZED);
}

/// The demo fleet in tokens mode with the token `ana` = `token`, signed with a fixed key (as
/// replicas sharing `web.secret_file` are, or one process across a restart).
fn keyed_app(store: Store, token: &str) -> axum::Router {
    let mut config = demo_config();
    config.public_url = Some(format!("https://{HOST}"));
    config.web = fleetglass::yaml::from_str(&format!(
        "auth: {{mode: tokens, tokens: [{{name: ana, sha256: {}}}]}}",
        sha256_hex(token)
    ))
    .unwrap();
    let key = CsrfKey::from_secret(b"a shared secret of thirty-two bytes or more").unwrap();
    router(AppState::new(store, Site::from_config(&config)).with_csrf_key(key))
}

async fn sign_in_cookie(app: &axum::Router, token: &str) -> String {
    let (status, cookies, body) =
        call(app, form("/sign-in", format!("token={token}&next=%2F"), "")).await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{body}");
    pair(&cookies[0])
}

async fn fleet_with(app: &axum::Router, cookie: &str) -> StatusCode {
    let request = request("GET", "/api/v1/fleet")
        .header("cookie", cookie)
        .body(Body::empty())
        .unwrap();
    call(app, request).await.0
}

#[tokio::test(flavor = "multi_thread")]
async fn rotating_a_token_ends_the_sign_ins_made_with_it() {
    let (_, store) = demo_app().await;
    let before = keyed_app(store.clone(), TOKEN);
    let cookie = sign_in_cookie(&before, TOKEN).await;
    assert_eq!(fleet_with(&before, &cookie).await, StatusCode::OK);
    let restarted = keyed_app(store.clone(), TOKEN);
    assert_eq!(
        fleet_with(&restarted, &cookie).await,
        StatusCode::OK,
        "same key, same token: the sign-in holds"
    );
    let rotated = keyed_app(store.clone(), "fg-signin-rotated-token-77e0");
    assert_eq!(
        fleet_with(&rotated, &cookie).await,
        StatusCode::UNAUTHORIZED,
        "same name, new hash: the old sign-in is over"
    );
    let renewed = sign_in_cookie(&rotated, "fg-signin-rotated-token-77e0").await;
    assert_eq!(fleet_with(&rotated, &renewed).await, StatusCode::OK);
}

fn from_peer(mut request: Request<Body>, peer: &str) -> Request<Body> {
    request
        .extensions_mut()
        .insert(ConnectInfo(peer.parse::<SocketAddr>().unwrap()));
    request
}

#[tokio::test(flavor = "multi_thread")]
async fn guessing_is_throttled_per_client_and_sign_ins_per_token() {
    let (_, store) = demo_app().await;
    let app = keyed_app(store, TOKEN);
    let guesser = "198.51.100.7:40000";
    for guess in 0..10 {
        let attempt = form("/sign-in", format!("token=guess-{guess}"), "");
        let (status, _, _) = call(&app, from_peer(attempt, guesser)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "guess {guess}");
    }
    let response = app
        .clone()
        .oneshot(from_peer(
            form("/sign-in", format!("token={TOKEN}"), ""),
            guesser,
        ))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=300).contains(&retry), "{retry}");
    assert!(
        response.headers().get("set-cookie").is_none(),
        "not signed in"
    );

    // Another client is not held back by the guesser; one token mints only so many sessions.
    let mut signed_in = 0;
    for attempt in 0..40 {
        let peer = format!("203.0.113.{}:40000", attempt % 200 + 1);
        let (status, _, _) = call(
            &app,
            from_peer(form("/sign-in", format!("token={TOKEN}"), ""), &peer),
        )
        .await;
        match status {
            StatusCode::SEE_OTHER => signed_in += 1,
            StatusCode::TOO_MANY_REQUESTS => break,
            other => panic!("attempt {attempt}: {other}"),
        }
    }
    assert_eq!(signed_in, 30, "sign-ins per token in the window");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_target_with_control_characters_stays_on_this_site() {
    let (_, store) = demo_app().await;
    let app = keyed_app(store, TOKEN);
    for next in [
        "%2F%09%2Fevil.example",
        "%2F%0A%2Fevil.example",
        "%2F%0D%0ASet-Cookie:x=y",
    ] {
        let response = app
            .clone()
            .oneshot(form("/sign-in", format!("token={TOKEN}&next={next}"), ""))
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::SEE_OTHER, "{next}");
        assert_eq!(response.headers()["location"], "/", "{next}");
        let (status, _, page) = call(
            &app,
            request("GET", &format!("/sign-in?next={next}"))
                .body(Body::empty())
                .unwrap(),
        )
        .await;
        assert_eq!(
            status,
            StatusCode::BAD_REQUEST,
            "a control character in a query: {page}"
        );
        assert!(
            !page.contains("evil.example") && !page.contains("Set-Cookie"),
            "{page}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sign_in_form_larger_than_four_kib_is_refused() {
    let (_, store) = demo_app().await;
    let app = keyed_app(store, TOKEN);
    let padding = "x".repeat(5 * 1024);
    let (status, cookies, _) = call(
        &app,
        form("/sign-in", format!("token={TOKEN}&next=%2F{padding}"), ""),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(cookies.is_empty());
}

/// The token of the sign-out form in the header of `page`, shown to this sign-in.
async fn sign_out_token_on(app: &axum::Router, page: &str, signed_in: &str) -> String {
    let (status, _, body) = call(
        app,
        request("GET", page)
            .header("cookie", signed_in)
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body.split("action=\"/sign-out\"")
        .nth(1)
        .and_then(|form| form.split("name=\"csrf\" value=\"").nth(1))
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no sign-out form on {page}: {body}"))
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bearer_token_gets_no_sign_out_button() {
    let app = https_app().await;
    let (status, _, page) = call(
        &app,
        request("GET", "/problems")
            .header("authorization", format!("Bearer {TOKEN}"))
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(!page.contains("/sign-out"), "{page}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_token_or_a_tampered_cookie_signs_nobody_in() {
    let app = https_app().await;
    let (status, cookies, page) =
        call(&app, form("/sign-in", "token=guess&next=%2F".into(), "")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(cookies.iter().all(|c| !c.contains("signin")), "{cookies:?}");
    assert!(page.contains("not valid"), "{page}");

    let (_, cookies, _) = call(&app, form("/sign-in", format!("token={TOKEN}"), "")).await;
    let good = pair(&cookies[0]);
    let (name, rest) = good.split_once('=').unwrap();
    let mut parts: Vec<String> = rest.split('.').map(str::to_string).collect();
    // Another name ("bob" in hex) with ana's signature, and a later expiry.
    let tampered_name = format!("{name}=626f62.{}.{}", parts[1], parts[2]);
    parts[1] = (parts[1].parse::<i64>().unwrap() + 86_400).to_string();
    let tampered_expiry = format!("{name}={}", parts.join("."));
    for cookie in [
        tampered_name,
        tampered_expiry,
        good.replacen("__Host-", "", 1),
    ] {
        let (status, _, _) = call(
            &app,
            request("GET", "/api/v1/fleet")
                .header("cookie", &cookie)
                .body(Body::empty())
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{cookie}");
    }
    let (status, _, _) = call(
        &app,
        request("GET", "/api/v1/fleet")
            .header("cookie", &good)
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "the untouched cookie works");
}

#[tokio::test(flavor = "multi_thread")]
async fn signing_in_is_refused_from_another_site_and_never_redirects_away() {
    let app = https_app().await;
    let mut cross = form("/sign-in", format!("token={TOKEN}"), "");
    cross
        .headers_mut()
        .insert("sec-fetch-site", "cross-site".parse().unwrap());
    let (status, cookies, _) = call(&app, cross).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(cookies.is_empty());
    let (status, _, _) = call(
        &app,
        form(
            "/sign-in",
            format!("token={TOKEN}&next=https%3A%2F%2Fevil.example"),
            "",
        ),
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let response = app
        .clone()
        .oneshot(form(
            "/sign-in",
            format!("token={TOKEN}&next=%2F%2Fevil.example"),
            "",
        ))
        .await
        .unwrap();
    assert_eq!(response.headers()["location"], "/");
}

/// The audit API's events, newest first, as (actor, action, subject, source).
async fn audit_trail(app: &axum::Router) -> Vec<(String, String, String, String)> {
    let (status, _, body) = call(
        app,
        request("GET", "/api/v1/audit")
            .header("authorization", format!("Bearer {TOKEN}"))
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let trail: serde_json::Value = serde_json::from_str(&body).unwrap();
    trail["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let text = |k: &str| e[k].as_str().unwrap().to_string();
            (
                text("actor"),
                text("action"),
                text("subject"),
                text("source"),
            )
        })
        .collect()
}

/// Issue 48: every write is in the audit trail with who, what, on what and from where — a
/// refused sign-in, the sign-in, a silence set and expired through the forms, the sign-out —
/// and the page shows it.
#[tokio::test(flavor = "multi_thread")]
async fn sign_ins_silences_and_sign_outs_are_in_the_audit_trail() {
    let app = https_app().await;
    let from = ConnectInfo(SocketAddr::from(([203, 0, 113, 7], 50_000)));
    let mut wrong = form("/sign-in", "token=not-it&next=%2F".into(), "");
    wrong.extensions_mut().insert(from);
    assert_eq!(call(&app, wrong).await.0, StatusCode::UNAUTHORIZED);
    let mut right = form("/sign-in", format!("token={TOKEN}&next=%2Falerts"), "");
    right.extensions_mut().insert(from);
    let (status, cookies, _) = call(&app, right).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let signed_in = pair(
        cookies
            .iter()
            .find(|c| c.contains("fleetglass_signin"))
            .unwrap(),
    );

    let page_of = |cookie: String| {
        request("GET", "/alerts")
            .header("cookie", cookie)
            .body(Body::empty())
            .unwrap()
    };
    let (_, cookies, page) = call(&app, page_of(signed_in.clone())).await;
    let session = pair(
        cookies
            .iter()
            .find(|c| c.contains("fleetglass_session"))
            .unwrap(),
    );
    let both = format!("{signed_in}; {session}");
    let csrf_in = |page: &str, action: &str| {
        page.split(&format!("action=\"{action}"))
            .nth(1)
            .and_then(|form| form.split("name=\"csrf\" value=\"").nth(1))
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_else(|| panic!("no {action} form: {page}"))
            .to_string()
    };
    let csrf = csrf_in(&page, "/alerts/silences\"");
    let silence = "root_cause=prod-eu-1%2FDeployment%2Fflux-system%2Ftofu-controller&duration=2h&comment=mirror+down";
    let (status, _, body) = call(
        &app,
        form("/alerts/silences", format!("csrf={csrf}&{silence}"), &both),
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{body}");
    let (_, _, page) = call(&app, page_of(both.clone())).await;
    let id = page
        .split("action=\"/alerts/silences/")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap()
        .to_string();
    let csrf = csrf_in(&page, &format!("/alerts/silences/{id}/expire\""));
    let expire = form(
        &format!("/alerts/silences/{id}/expire"),
        format!("csrf={csrf}"),
        &both,
    );
    assert_eq!(call(&app, expire).await.0, StatusCode::SEE_OTHER);
    let sign_out_token = sign_out_token_on(&app, "/problems", &signed_in).await;
    let (status, _, _) = call(
        &app,
        form("/sign-out", format!("csrf={sign_out_token}"), &signed_in),
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);

    let trail = audit_trail(&app).await;
    let seen: Vec<(&str, &str, &str, &str)> = trail
        .iter()
        .map(|(a, b, c, d)| (a.as_str(), b.as_str(), c.as_str(), d.as_str()))
        .collect();
    let cause = "root cause prod-eu-1/Deployment/flux-system/tofu-controller";
    assert_eq!(
        seen,
        vec![
            ("token ana", "sign-out", "ana", "in-process"),
            (
                "token ana",
                "silence-expired",
                &*format!("silence {id}"),
                "in-process"
            ),
            (
                "token ana",
                "silence-added",
                &*format!("silence {id}: {cause}"),
                "in-process"
            ),
            ("token ana", "sign-in", "ana", "203.0.113.7"),
            ("unknown", "sign-in-refused", "", "203.0.113.7"),
        ]
    );
    let (status, _, page) = call(
        &app,
        request("GET", "/audit")
            .header("authorization", format!("Bearer {TOKEN}"))
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(
        page.contains("silence-expired") && page.contains("203.0.113.7"),
        "{page}"
    );
}

/// Issue 48: the access policy is recorded when a start applies a new one (without a secret),
/// once however many times the same one starts.
#[tokio::test]
async fn a_changed_access_policy_is_recorded_once() {
    let store = common::fresh_store().await;
    let site_with = |tokens: &str| {
        let mut config = demo_config();
        config.web =
            fleetglass::yaml::from_str(&format!("auth: {{mode: tokens, tokens: [{tokens}]}}"))
                .unwrap();
        Site::from_config(&config)
    };
    let one = site_with(&format!("{{name: ana, sha256: {}}}", sha256_hex(TOKEN)));
    let two = site_with(&format!(
        "{{name: ana, sha256: {}}}, {{name: ci, sha256: {}}}",
        sha256_hex(TOKEN),
        sha256_hex("another")
    ));
    assert!(fleetglass::web::record_policy(&store, &one).await.unwrap());
    assert!(
        !fleetglass::web::record_policy(&store, &one).await.unwrap(),
        "unchanged"
    );
    assert!(fleetglass::web::record_policy(&store, &two).await.unwrap());
    let events = store.audit_events(10, None).await.unwrap();
    let details: Vec<(&str, &str)> = events
        .iter()
        .map(|e| (e.action.as_str(), e.detail.as_str()))
        .collect();
    assert_eq!(
        details,
        vec![
            ("policy-changed", "mode tokens; tokens: ana, ci"),
            ("policy-changed", "mode tokens; tokens: ana"),
        ]
    );
    assert!(
        events
            .iter()
            .all(|e| !e.detail.contains(&sha256_hex(TOKEN)))
    );
}
