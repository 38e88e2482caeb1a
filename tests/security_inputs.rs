//! Bad input through the in-process router: arbitrary query parameters on the objects list,
//! the wait gate and the owner lookup never produce a 5xx, and every 4xx is JSON
//! `{"error": …}`; NUL and other control characters in paths, queries and bodies are a 400
//! that says so, never "the database is not answering". (Config and evaluate input:
//! tests/fuzz_inputs.rs.)

use crate::common;

use axum::http::StatusCode;
use chrono::TimeDelta;
use common::web::{demo_app, get};
use fleetglass::model::parse_go_duration;
use proptest::prelude::*;
use sha2::Digest;
use std::sync::OnceLock;

/// One router over the demo fleet for every case (building it per case would dominate).
fn runtime_and_app() -> &'static (tokio::runtime::Runtime, axum::Router) {
    static SHARED: OnceLock<(tokio::runtime::Runtime, axum::Router)> = OnceLock::new();
    SHARED.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        let (app, _store) = runtime.block_on(demo_app());
        (runtime, app)
    })
}

fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Values that are sometimes plausible, sometimes hostile.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-z0-9-]{1,12}",
        "-?[0-9]{1,20}",
        "[a-z]{1,6}=[a-z0-9]{0,6}",
        "[0-9]{1,4}(ns|us|ms|s|m|h|d|x)",
        any::<String>(),
        Just("' OR 1=1 --".to_string()),
        Just("%".to_string()),
        Just("\u{0}".to_string()),
        Just("9".repeat(40)),
    ]
}

fn object_key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("cluster"),
        Just("kind"),
        Just("namespace"),
        Just("state"),
        Just("domain"),
        Just("q"),
        Just("label"),
        Just("limit"),
        Just("offset"),
        Just("name"),
        Just("version"),
        Just("timeout"),
        Just("junk"),
    ]
    .prop_map(String::from)
}

fn query(pairs: &[(String, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", percent_encode(k), percent_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// A wait timeout that cannot hold a test case for long: long valid ones become 1s.
fn short_timeout(value: String) -> String {
    match parse_go_duration(&value) {
        Ok(delta) if delta > TimeDelta::seconds(1) => "1s".to_string(),
        _ => value,
    }
}

fn check(uri: &str) -> Result<(), TestCaseError> {
    let (runtime, app) = runtime_and_app();
    let (status, body) = runtime.block_on(get(app, uri));
    prop_assert!(!status.is_server_error(), "{uri}: {status} {body}");
    if status.is_client_error() && status != StatusCode::URI_TOO_LONG {
        let json: serde_json::Value = serde_json::from_str(&body)
            .map_err(|e| TestCaseError::fail(format!("{uri}: {status} not JSON ({e}): {body}")))?;
        prop_assert!(json["error"].is_string(), "{uri}: {body}");
    }
    Ok(())
}

#[test]
fn control_characters_in_paths_and_queries_are_400s_saying_so() {
    let (runtime, app) = runtime_and_app();
    for uri in [
        "/api/v1/objects/prod-eu-1/Kustomization/flux-system/a%00b",
        "/api/v1/objects/prod-eu-1/Kustomization/%00/x",
        "/api/v1/domains/gate%00way",
        "/api/v1/domains/gateway/wait?version=1%00&timeout=1s",
        "/api/v1/clusters/prod%01eu",
        "/api/v1/objects?q=%1b%5b2J",
        "/api/v1/owner?cluster=prod-eu-1&kind=Deployment&namespace=a%7f&name=b",
        "/api/v1/no%00such",
    ] {
        let (status, body) = runtime.block_on(get(app, uri));
        assert_eq!(status, StatusCode::BAD_REQUEST, "{uri}: {body}");
        let json: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert!(
            json["error"]
                .as_str()
                .unwrap()
                .contains("control character"),
            "{uri}: {body}"
        );
    }
    for uri in ["/clusters/prod%00eu", "/objects?q=%00"] {
        let (status, body) = runtime.block_on(get(app, uri));
        assert_eq!(status, StatusCode::BAD_REQUEST, "{uri}: {body}");
        assert!(body.contains("<h1>400</h1>"), "a page for people: {body}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn control_characters_and_broken_json_in_bodies_are_400s() {
    let store = common::web::fresh_store().await;
    let mut config = common::web::demo_config();
    let hash: String = sha2::Sha256::digest(b"fg-inputs-token")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    config.web =
        fleetglass::yaml::from_str(&format!("auth: {{tokens: [{{name: ci, sha256: {hash}}}]}}"))
            .unwrap();
    let app = common::web::app(store.clone(), &config);
    let until = (chrono::Utc::now() + TimeDelta::hours(1)).to_rfc3339();
    let bodies = [
        format!(r#"{{"domain": "gate\u0000way", "until": "{until}"}}"#),
        format!(r#"{{"cluster": "prod-eu-1", "until": "{until}", "comment": "\u001b[2J"}}"#),
        // A raw NUL inside a JSON string is not JSON at all.
        format!("{{\"domain\": \"a{}b\", \"until\": \"{until}\"}}", '\0'),
        r#"{"domain": "gateway", "until": "#.to_string(),
        r#"{"domain": 7, "until": "soon"}"#.to_string(),
    ];
    for body in bodies {
        let request = axum::http::Request::post("/api/v1/silences")
            .header("content-type", "application/json")
            .header("authorization", "Bearer fg-inputs-token")
            .body(axum::body::Body::from(body.clone()))
            .unwrap();
        let (status, answer) = common::web::send(&app, request).await;
        assert!(status.is_client_error(), "{body}: {status} {answer}");
        let json: serde_json::Value = serde_json::from_str(&answer)
            .unwrap_or_else(|e| panic!("{body}: not JSON ({e}): {answer}"));
        assert!(json["error"].is_string(), "{answer}");
    }
    let form = axum::http::Request::post("/alerts/silences")
        .header("content-type", "application/x-www-form-urlencoded")
        .header("authorization", "Bearer fg-inputs-token")
        .body(axum::body::Body::from("csrf=x&domain=%00&duration=1h"))
        .unwrap();
    let (status, _) = common::web::send(&app, form).await;
    assert!(status.is_client_error(), "{status}");
    let silences: i64 = sqlx::query_scalar!(r#"SELECT count(*) AS "count!" FROM silences"#)
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(silences, 0);
}

#[test]
fn malformed_query_strings_are_json_400s() {
    for uri in [
        "/api/v1/objects?limit=%ZZ",
        "/api/v1/objects?%",
        "/api/v1/objects?limit=1&limit=2",
        "/api/v1/owner?cluster=%C0%AF",
        "/api/v1/domains/payments/wait?version=v1&timeout=%FF",
    ] {
        check(uri).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn objects_list_filters(pairs in prop::collection::vec((object_key(), value()), 0..6)) {
        check(&format!("/api/v1/objects?{}", query(&pairs)))?;
    }

    #[test]
    fn wait_version_and_timeout(
        domain in "[a-z-]{1,10}",
        version in prop::option::of(value()),
        timeout in prop::option::of(value().prop_map(short_timeout)),
    ) {
        let mut pairs = Vec::new();
        if let Some(v) = version { pairs.push(("version".to_string(), v)); }
        if let Some(t) = timeout { pairs.push(("timeout".to_string(), t)); }
        check(&format!("/api/v1/domains/{domain}/wait?{}", query(&pairs)))?;
    }

    #[test]
    fn owner_params(pairs in prop::collection::vec((object_key(), value()), 0..6)) {
        check(&format!("/api/v1/owner?{}", query(&pairs)))?;
    }

    #[test]
    fn domain_label_and_object_path(label in value(), kind in value(), name in value()) {
        // An empty segment is another route (and a plain 404), not bad input to this one.
        let (kind, name) = (format!("k{kind}"), format!("n{name}"));
        check(&format!("/api/v1/domains/payments?label={}", percent_encode(&label)))?;
        let path = format!(
            "/api/v1/objects/prod-eu-1/{}/flux-system/{}",
            percent_encode(&kind),
            percent_encode(&name)
        );
        check(&path)?;
    }
}
