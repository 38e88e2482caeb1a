//! Access control, walked over every route the router declares (`API_PATHS`, `PAGE_PATHS`):
//! with tokens configured nothing but the probes, metrics and static assets answers an
//! anonymous or wrongly-authenticated request; the proxy header counts only from the proxy;
//! without authentication every write is refused; silence forms need the CSRF cookie and field
//! and writes must come from this site; a loopback instance answers only to its own names;
//! every response carries the security headers.

use crate::common;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Method, Request, StatusCode};
use common::web::{app, demo_app, demo_config, fresh_store, send};
use fleetglass::web::{API_PATHS, AppState, PAGE_PATHS, Site};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::net::SocketAddr;
use tower::ServiceExt;

const TOKEN: &str = "fg-access-test-token-7d1c";

/// Routes served besides the declared pages and API, and the only ones open by design.
const OPEN: [&str; 3] = ["/healthz", "/readyz", "/static/style.css"];
/// Served besides the declared pages and API, behind authentication like them.
const METRICS: &str = "/metrics";

fn sha256_hex(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A route pattern with each `{param}` filled with a plausible value.
fn concrete(pattern: &str) -> String {
    pattern
        .split('/')
        .map(|segment| match segment {
            "{name}" => "payments",
            "{cluster}" => "prod-eu-1",
            "{kind}" => "Kustomization",
            "{namespace}" => "flux-system",
            "{id}" => "1",
            other if other.starts_with('{') => "x",
            other => other,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Every request the router can answer: GET on each route, POST on the form targets.
fn every_request() -> Vec<(Method, String)> {
    let mut requests: Vec<(Method, String)> = PAGE_PATHS
        .iter()
        .chain(API_PATHS.iter())
        .map(|p| {
            let method = if p.starts_with("/alerts/silences") {
                Method::POST
            } else {
                Method::GET
            };
            (method, concrete(p))
        })
        .collect();
    requests.push((Method::POST, "/api/v1/silences".to_string()));
    requests.extend(OPEN.iter().map(|p| (Method::GET, p.to_string())));
    requests.push((Method::GET, METRICS.to_string()));
    requests
}

fn request(method: &Method, uri: &str, bearer: Option<&str>) -> Request<Body> {
    let mut builder = Request::builder().method(method.clone()).uri(uri);
    if let Some(token) = bearer {
        builder = builder.header("authorization", format!("Bearer {token}"));
    }
    if *method == Method::POST {
        builder = builder.header("content-type", "application/x-www-form-urlencoded");
    }
    builder.body(Body::empty()).unwrap()
}

async fn tokens_app() -> axum::Router {
    let (_, store) = demo_app().await;
    let mut config = demo_config();
    config.web = fleetglass::yaml::from_str(&format!(
        "auth: {{mode: tokens, tokens: [{{name: ci, sha256: {}}}]}}",
        sha256_hex(TOKEN)
    ))
    .unwrap();
    app(store, &config)
}

#[tokio::test(flavor = "multi_thread")]
async fn with_tokens_only_probes_and_assets_answer_strangers() {
    let app = tokens_app().await;
    assert!(PAGE_PATHS.contains(&"/") && API_PATHS.contains(&"/api/v1/fleet"));
    for bearer in [None, Some("wrong-token"), Some(&sha256_hex(TOKEN)[..])] {
        let mut open = BTreeSet::new();
        for (method, uri) in every_request() {
            let (status, body) = send(&app, request(&method, &uri, bearer)).await;
            if status == StatusCode::UNAUTHORIZED {
                if uri.starts_with("/api/") {
                    let json: serde_json::Value = serde_json::from_str(&body)
                        .unwrap_or_else(|e| panic!("{uri}: 401 not JSON ({e}): {body}"));
                    assert!(json["error"].is_string(), "{uri}: {body}");
                }
            } else {
                open.insert(uri);
            }
        }
        let expected: BTreeSet<String> = OPEN.iter().map(|p| p.to_string()).collect();
        assert_eq!(open, expected, "bearer {bearer:?}: open routes");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_right_token_opens_every_route() {
    let app = tokens_app().await;
    for (method, uri) in every_request() {
        let (status, body) = send(&app, request(&method, &uri, Some(TOKEN))).await;
        assert!(
            status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN,
            "{method} {uri}: {status} {body}"
        );
        assert!(!status.is_server_error(), "{method} {uri}: {status} {body}");
        // The scheme name is case-insensitive (RFC 9110 §11.1).
        let mut lower = request(&method, &uri, None);
        lower
            .headers_mut()
            .insert("authorization", format!("bearer {TOKEN}").parse().unwrap());
        let (status, body) = send(&app, lower).await;
        assert!(
            status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN,
            "{method} {uri}: {status} {body}"
        );
        assert!(!status.is_server_error(), "{method} {uri}: {status} {body}");
    }
}

#[test]
fn the_config_holds_hashes_never_tokens() {
    let raw: Result<fleetglass::config::WebConfig, _> = fleetglass::yaml::from_str(&format!(
        "auth: {{mode: tokens, tokens: [{{name: ci, token: {TOKEN}}}]}}"
    ));
    assert!(raw.is_err(), "a plain token field must be refused");
    let not_a_hash: Result<fleetglass::config::WebConfig, _> = fleetglass::yaml::from_str(
        &format!("auth: {{mode: tokens, tokens: [{{name: ci, sha256: {TOKEN}}}]}}"),
    );
    let error = not_a_hash.unwrap_err().to_string();
    assert!(error.contains("64 hex digits"), "{error}");
    assert!(
        !error.contains(TOKEN),
        "the refused value is not echoed: {error}"
    );
    let hashed: fleetglass::config::WebConfig = fleetglass::yaml::from_str(&format!(
        "auth: {{mode: tokens, tokens: [{{name: ci, sha256: {}}}]}}",
        sha256_hex(TOKEN)
    ))
    .unwrap();
    assert!(!format!("{hashed:?}").contains(&sha256_hex(TOKEN)[..16]));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_proxy_header_counts_only_from_the_proxy_on_every_route() {
    let store = fresh_store().await;
    let mut config = demo_config();
    config.web = fleetglass::yaml::from_str(
        "auth: {mode: proxy, proxy: {user_header: X-Forwarded-User, trusted_proxies: [10.0.0.0/8]}}",
    )
    .unwrap();
    let app = app(store, &config);
    for (method, uri) in every_request() {
        if OPEN.contains(&uri.as_str()) {
            continue;
        }
        for peer in ["127.0.0.1:4000", "192.168.1.9:4000", "[::1]:4000"] {
            let mut request = request(&method, &uri, None);
            request
                .headers_mut()
                .insert("x-forwarded-user", "mallory".parse().unwrap());
            request
                .extensions_mut()
                .insert(ConnectInfo(peer.parse::<SocketAddr>().unwrap()));
            let (status, body) = send(&app, request).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{uri} from {peer}: {body}");
        }
        let (status, _) = send(&app, request(&method, &uri, None)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{uri} with no peer info");
    }
}

/// Proxy mode with the proxy on loopback: requests as it forwards them for a user.
async fn proxy_app() -> (axum::Router, fleetglass::store::Store) {
    let store = fresh_store().await;
    let mut config = demo_config();
    config.web = fleetglass::yaml::from_str(
        "auth: {mode: proxy, proxy: {user_header: X-Forwarded-User, trusted_proxies: [127.0.0.0/8]}}",
    )
    .unwrap();
    (app(store.clone(), &config), store)
}

fn from_proxy(mut request: Request<Body>, user: &str) -> Request<Body> {
    request
        .headers_mut()
        .insert("x-forwarded-user", user.parse().unwrap());
    request
        .extensions_mut()
        .insert(ConnectInfo("127.0.0.1:4000".parse::<SocketAddr>().unwrap()));
    request
}

#[tokio::test(flavor = "multi_thread")]
async fn silence_forms_refuse_posts_without_the_csrf_pair() {
    let (app, store) = proxy_app().await;
    let form = "root_cause=prod-eu-1%2FDeployment%2Fflux-system%2Ftofu-controller&domain=&cluster=&duration=2h&comment=x";
    let cookie = format!("fleetglass_session={}", "a1".repeat(16));
    let attempts = [
        ("/alerts/silences", None, form.to_string()),
        (
            "/alerts/silences",
            None,
            format!("csrf={}&{form}", "a1".repeat(32)),
        ),
        ("/alerts/silences", Some(cookie.clone()), form.to_string()),
        (
            "/alerts/silences",
            Some(cookie.clone()),
            format!("csrf={}&{form}", "b2".repeat(32)),
        ),
        ("/alerts/silences/1/expire", None, String::new()),
        (
            "/alerts/silences/1/expire",
            Some(cookie.clone()),
            format!("csrf={}", "b2".repeat(32)),
        ),
    ];
    for (uri, cookie, body) in attempts {
        let mut builder =
            Request::post(uri).header("content-type", "application/x-www-form-urlencoded");
        if let Some(cookie) = &cookie {
            builder = builder.header("cookie", cookie);
        }
        let request = builder.body(Body::from(body.clone())).unwrap();
        let (status, text) = send(&app, from_proxy(request, "ana")).await;
        // A missing field is axum's form rejection (422); a present but unmatched one is ours (403).
        let expected = if body.contains("csrf=") {
            StatusCode::FORBIDDEN
        } else {
            StatusCode::UNPROCESSABLE_ENTITY
        };
        assert_eq!(status, expected, "{uri} {cookie:?} {body}: {text}");
        assert!(text.contains("<h1>"), "an HTML error page: {text}");
        // The same post from another site is refused before its token is even looked at.
        let mut cross = Request::post(uri)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("origin", "https://evil.example")
            .body(Body::from(body))
            .unwrap();
        cross
            .headers_mut()
            .insert("host", "127.0.0.1:8080".parse().unwrap());
        let (status, text) = send(&app, from_proxy(cross, "ana")).await;
        assert_eq!(
            status,
            StatusCode::FORBIDDEN,
            "{uri} from evil.example: {text}"
        );
    }
    let silences: i64 = sqlx::query_scalar!(r#"SELECT count(*) AS "count!" FROM silences"#)
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(silences, 0, "no refused form created a silence");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_authentication_every_write_is_refused_with_a_reason() {
    let (app, store) = demo_app().await;
    let writes: Vec<(Method, String)> = every_request()
        .into_iter()
        .filter(|(method, _)| *method == Method::POST)
        .collect();
    assert!(writes.len() >= 3, "{writes:?}");
    // Methods the route lacks are 405 (nothing would run), whoever asks.
    for method in [Method::PUT, Method::PATCH, Method::DELETE] {
        let response = app
            .clone()
            .oneshot(request(&method, "/api/v1/silences", None))
            .await
            .unwrap();
        assert_eq!(
            response.status(),
            StatusCode::METHOD_NOT_ALLOWED,
            "{method}"
        );
        assert_eq!(response.headers()["allow"], "GET, HEAD, POST");
    }
    for (method, uri) in writes {
        let mut request = request(&method, &uri, None);
        // What a proxy in front of an unauthenticated instance might add: not believed.
        request
            .headers_mut()
            .insert("x-forwarded-user", "admin".parse().unwrap());
        let (status, body) = send(&app, request).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{method} {uri}: {body}");
        let json: serde_json::Value = serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("{method} {uri}: not JSON ({e}): {body}"));
        let reason = json["error"].as_str().unwrap();
        assert!(
            reason.contains("read-only") && reason.contains("authentication"),
            "{reason}"
        );
    }
    let silences: i64 = sqlx::query_scalar!(r#"SELECT count(*) AS "count!" FROM silences"#)
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(silences, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_loopback_instance_answers_only_to_its_own_names() {
    let store = fresh_store().await;
    let site = Site::from_config(&demo_config()).listening_on("127.0.0.1:8080".parse().unwrap());
    let app = fleetglass::web::router(AppState::new(store, site));
    let with_host = |path: &str, host: &str| {
        Request::get(path)
            .header("host", host)
            .body(Body::empty())
            .unwrap()
    };
    // DNS rebinding: evil.example resolves to 127.0.0.1, and the browser says so in Host.
    for host in ["evil.example:8080", "127.0.0.1.nip.io:8080"] {
        let (status, body) = send(&app, with_host("/api/v1/fleet", host)).await;
        assert_eq!(status, StatusCode::MISDIRECTED_REQUEST, "{host}: {body}");
        assert!(body.contains("\"error\""), "{body}");
        assert_eq!(
            send(&app, with_host("/", host)).await.0,
            StatusCode::MISDIRECTED_REQUEST
        );
        assert_eq!(
            send(&app, with_host("/healthz", host)).await.0,
            StatusCode::OK,
            "probes answer any name"
        );
        assert_eq!(
            send(&app, with_host("/metrics", host)).await.0,
            StatusCode::MISDIRECTED_REQUEST,
            "metrics name clusters and domains: not for another site"
        );
    }
    for host in [
        "127.0.0.1:8080",
        "localhost:8080",
        "[::1]:8080",
        "10.1.2.3:8080",
    ] {
        let (status, body) = send(&app, with_host("/api/v1/fleet", host)).await;
        assert_eq!(status, StatusCode::OK, "{host}: {body}");
        let (status, body) = send(&app, with_host("/metrics", host)).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "a scrape by address: {host}: {body}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_response_carries_the_security_headers() {
    let app = tokens_app().await;
    let mut requests: Vec<(Method, String, Option<&str>)> = every_request()
        .into_iter()
        .flat_map(|(m, u)| [(m.clone(), u.clone(), None), (m, u, Some(TOKEN))])
        .collect();
    requests.push((Method::GET, "/no/such/page".into(), Some(TOKEN)));
    requests.push((
        Method::GET,
        "/api/v1/objects?state=bogus".into(),
        Some(TOKEN),
    ));
    requests.push((Method::DELETE, "/api/v1/fleet".into(), Some(TOKEN)));
    for (method, uri, bearer) in requests {
        let response = app
            .clone()
            .oneshot(request(&method, &uri, bearer))
            .await
            .unwrap();
        let headers = response.headers();
        let csp = headers
            .get("content-security-policy")
            .unwrap_or_else(|| panic!("{method} {uri}: no CSP"))
            .to_str()
            .unwrap();
        assert!(
            csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"),
            "{csp}"
        );
        assert!(
            !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"),
            "{csp}"
        );
        assert_eq!(headers["x-content-type-options"], "nosniff", "{uri}");
        assert_eq!(headers["x-frame-options"], "DENY", "{uri}");
        assert_eq!(headers["referrer-policy"], "same-origin", "{uri}");
    }
}

/// Whoever copies an example hash into a config must not get a token anyone can guess.
#[test]
fn no_documented_token_hash_is_the_digest_of_a_guessable_word() {
    let guessable = [
        "",
        "password",
        "secret",
        "token",
        "admin",
        "changeme",
        "test",
        "ci",
        "fleetglass",
        "example",
        "letmein",
        "123456",
        "12345678",
        "qwerty",
        "hunter2",
        "root",
        "demo",
        "mytoken",
        "my-token",
        "ci-token",
        "passw0rd",
        "s3cret",
        "default",
    ];
    let digests: BTreeSet<String> = guessable
        .iter()
        .flat_map(|w| [w.to_string(), w.to_uppercase(), format!("{w}\n")])
        .map(|w| sha256_hex(&w))
        .collect();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![
        root.join("README.md"),
        root.join("docker-compose.yml"),
        root.join("helm/fleetglass/values.yaml"),
    ];
    files.extend(
        std::fs::read_dir(root.join("docs"))
            .unwrap()
            .map(|entry| entry.unwrap().path()),
    );
    let mut hashes = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for (at, _) in text.match_indices("sha256: ") {
            let hash: String = text[at + 8..].chars().take(64).collect();
            if hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                hashes += 1;
                assert!(
                    !digests.contains(&hash.to_lowercase()),
                    "{}: {hash} is the sha256 of a guessable word",
                    file.display()
                );
            }
        }
    }
    assert!(hashes > 0, "the README shows an example token hash");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_method_a_route_lacks_is_405_for_everyone_it_would_let_in() {
    let (app, _) = demo_app().await;
    for (method, uri) in [
        (Method::DELETE, "/api/v1/fleet"),
        (Method::PUT, "/api/v1/silences"),
        (Method::DELETE, "/problems"),
    ] {
        let (status, body) = send(&app, request(&method, uri, None)).await;
        assert_eq!(
            status,
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {uri}: {body}"
        );
    }
    let tokens = tokens_app().await;
    let (status, _) = send(&tokens, request(&Method::DELETE, "/api/v1/fleet", None)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "who asks comes first");
    let (status, _) = send(
        &tokens,
        request(&Method::DELETE, "/api/v1/fleet", Some(TOKEN)),
    )
    .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
}
