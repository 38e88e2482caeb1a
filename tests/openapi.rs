//! The OpenAPI document against the server's real answers: the demo fleet evaluated by the real
//! engine on real Postgres, served in tokens mode, with an open alert and a silence. The
//! document is valid OpenAPI 3.1 whose schemas are valid JSON Schema, names exactly the routes
//! the router serves, and every answer (every GET with each filter, the silence written, and
//! the errors: unknown paths, 400, 401, 403, 404, 405, 413, 414, 415, 421, 422, and 503 and 500
//! from a database that is down or failing) validates against the schema the document gives
//! for its status, with `unevaluatedProperties: false` imposed on every object so a field the
//! document does not describe fails.

use crate::common;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use chrono::{TimeDelta, Utc};
use http_body_util::BodyExt;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use tower::ServiceExt;

const TOKEN: &str = "fg-openapi-token";

/// The demo fleet in tokens mode, with one open alert (and its pending Slack delivery).
async fn served_fleet() -> (axum::Router, Value) {
    let (app, document, _) = served_fleet_and_store().await;
    (app, document)
}

async fn served_fleet_and_store() -> (axum::Router, Value, fleetglass::store::Store) {
    let (_, store) = common::web::demo_app().await;
    common::alerts::raise_tofu_controller_alert(&store).await;
    let app = common::web::tokens_app(store.clone(), TOKEN);
    let (status, _, document) = call(&app, Method::GET, "/api/v1/openapi.json", None).await;
    assert_eq!(status, StatusCode::OK, "{document}");
    (app, document, store)
}

/// Sends a request with the bearer token (or `token`'s override) and parses the JSON answer.
async fn call(
    app: &axum::Router,
    method: Method,
    uri: &str,
    body: Option<(&str, String)>,
) -> (StatusCode, Option<String>, Value) {
    call_as(app, method, uri, body, Some(TOKEN)).await
}

async fn call_as(
    app: &axum::Router,
    method: Method,
    uri: &str,
    body: Option<(&str, String)>,
    token: Option<&str>,
) -> (StatusCode, Option<String>, Value) {
    call_with(app, method, uri, body, token, &[]).await
}

/// `call_as` with extra request headers.
async fn call_with(
    app: &axum::Router,
    method: Method,
    uri: &str,
    body: Option<(&str, String)>,
    token: Option<&str>,
    headers: &[(&str, &str)],
) -> (StatusCode, Option<String>, Value) {
    let mut request = Request::builder().method(method).uri(uri);
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = match body {
        Some((content_type, body)) => request
            .header(header::CONTENT_TYPE, content_type)
            .body(Body::from(body)),
        None => request.body(Body::empty()),
    }
    .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap().to_string());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let value = serde_json::from_slice(&bytes).unwrap_or_else(|e| {
        panic!(
            "{uri}: {status} is not JSON ({e}): {}",
            String::from_utf8_lossy(&bytes)
        )
    });
    (status, content_type, value)
}

/// The document's schemas made strict: every object schema gets `unevaluatedProperties:
/// false`. A flattened struct is an `allOf` of a referenced part and the rest; the whole is
/// made strict and the part is referenced in its original, open form (`#/open/…`), since a
/// strict part would refuse the fields of the rest.
fn strict_schemas(document: &Value) -> Value {
    let schemas = document["components"]["schemas"].as_object().unwrap();
    let strict: Map<String, Value> = schemas
        .iter()
        .map(|(name, schema)| (name.clone(), strict(schema)))
        .collect();
    let open: Map<String, Value> = schemas
        .iter()
        .map(|(name, schema)| (name.clone(), open_part(schema)))
        .collect();
    json!({"strict": strict, "open": open})
}

fn strict(schema: &Value) -> Value {
    let Some(object) = schema.as_object() else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in object {
        let value = match key.as_str() {
            "$ref" => json!(strict_ref(value.as_str().unwrap())),
            "allOf" => Value::Array(
                value
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|part| match part.get("$ref").and_then(Value::as_str) {
                        Some(reference) => json!({"$ref": open_ref(reference)}),
                        None => open_part(part),
                    })
                    .collect(),
            ),
            "properties" => Value::Object(
                value
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(name, property)| (name.clone(), strict(property)))
                    .collect(),
            ),
            "items" | "additionalProperties" => strict(value),
            "oneOf" | "anyOf" => {
                Value::Array(value.as_array().unwrap().iter().map(strict).collect())
            }
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    if object.contains_key("properties") || object.contains_key("allOf") {
        out.insert("unevaluatedProperties".into(), json!(false));
    }
    Value::Object(out)
}

/// A part of an `allOf`: its own properties stay open (the whole is strict), what they hold is
/// strict.
fn open_part(part: &Value) -> Value {
    let mut part = strict(part);
    part.as_object_mut()
        .unwrap()
        .remove("unevaluatedProperties");
    part
}

fn strict_ref(reference: &str) -> String {
    reference.replace("#/components/schemas/", "#/strict/")
}

fn open_ref(reference: &str) -> String {
    reference.replace("#/components/schemas/", "#/open/")
}

/// Checks `answer` against the schema the document gives `path`'s `method` for `status` (or
/// its `default`), made strict.
fn assert_matches(document: &Value, path: &str, method: &str, status: StatusCode, answer: &Value) {
    let errors = mismatches(document, path, method, status, answer);
    assert!(
        errors.is_empty(),
        "{method} {path} {status}: the answer does not match the document:\n{}\n{answer:#}",
        errors.join("\n")
    );
}

/// What in `answer` the strict schema refuses.
fn mismatches(
    document: &Value,
    path: &str,
    method: &str,
    status: StatusCode,
    answer: &Value,
) -> Vec<String> {
    let responses = &document["paths"][path][method]["responses"];
    let response = responses
        .get(status.as_str())
        .or_else(|| responses.get("default"))
        .unwrap_or_else(|| panic!("{method} {path}: {status} is not documented"));
    let schema = &response["content"]["application/json"]["schema"];
    schema_mismatches(
        document,
        schema,
        answer,
        &format!("{method} {path} {status}"),
    )
}

/// What in `value` the document's `schema` (made strict) refuses.
fn schema_mismatches(document: &Value, schema: &Value, value: &Value, what: &str) -> Vec<String> {
    assert!(schema.is_object(), "{what}: no JSON schema");
    let mut root = strict_schemas(document);
    root["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
    for (key, value) in strict(schema).as_object().unwrap() {
        root[key] = value.clone();
    }
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&root)
        .unwrap_or_else(|e| panic!("{what}: the schema does not compile: {e}"));
    validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

fn references_in<'a>(value: &'a Value, found: &mut Vec<&'a str>) {
    match value {
        Value::Object(object) => {
            if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
                found.push(reference);
            }
            object.values().for_each(|v| references_in(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| references_in(v, found)),
        _ => {}
    }
}

/// The path template a concrete URI was made from.
fn template_of<'a>(document: &'a Value, uri: &str) -> &'a str {
    let path = uri.split('?').next().unwrap();
    let segments: Vec<&str> = path.split('/').collect();
    document["paths"]
        .as_object()
        .unwrap()
        .keys()
        .find(|template| {
            let parts: Vec<&str> = template.split('/').collect();
            parts.len() == segments.len()
                && parts
                    .iter()
                    .zip(&segments)
                    .all(|(t, s)| t == s || t.starts_with('{'))
        })
        .unwrap_or_else(|| panic!("{uri} matches no documented path"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_document_is_openapi_3_1_and_names_exactly_the_served_routes() {
    let (_, document) = served_fleet().await;
    assert_eq!(document["openapi"], "3.1.0");
    let documented: BTreeSet<&str> = document["paths"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let served: BTreeSet<&str> = fleetglass::web::API_PATHS.into_iter().collect();
    assert_eq!(documented, served);

    let mut references = Vec::new();
    references_in(&document, &mut references);
    assert!(!references.is_empty());
    for reference in references {
        let pointer = reference.strip_prefix('#').unwrap();
        assert!(
            document.pointer(pointer).is_some(),
            "{reference} names no schema in the document"
        );
    }
    let schemas = document["components"]["schemas"].as_object().unwrap();
    for (name, schema) in schemas {
        if let Err(e) = jsonschema::meta::validate(schema) {
            panic!("{name} is not a valid JSON Schema: {e}\n{schema:#}");
        }
    }
    let mut operation_ids = BTreeSet::new();
    for (path, operations) in document["paths"].as_object().unwrap() {
        for (method, operation) in operations.as_object().unwrap() {
            let id = operation["operationId"].as_str().unwrap();
            assert!(operation_ids.insert(id), "{id} is used twice");
            for (status, response) in operation["responses"].as_object().unwrap() {
                assert!(
                    response["description"].is_string(),
                    "{method} {path} {status} has no description (OpenAPI requires one)"
                );
                assert!(
                    response["content"]["application/json"]["schema"].is_object(),
                    "{method} {path} {status} has no JSON schema"
                );
            }
        }
    }
    // A reply never leaves a field out (None is null), so every property of a reply is required.
    for (name, schema) in schemas.iter().filter(|(name, _)| *name != "NewSilence") {
        let parts = match schema.get("allOf") {
            Some(parts) => parts.as_array().unwrap().clone(),
            None => vec![schema.clone()],
        };
        for part in parts.iter().filter(|p| p.get("properties").is_some()) {
            let properties: BTreeSet<&String> =
                part["properties"].as_object().unwrap().keys().collect();
            let required: BTreeSet<&String> = part["required"]
                .as_array()
                .map(|r| r.iter().map(|v| v.as_str().unwrap()).collect::<Vec<_>>())
                .unwrap_or_default()
                .into_iter()
                .map(|r| properties.iter().copied().find(|p| *p == r).unwrap())
                .collect();
            assert_eq!(properties, required, "{name}: every field is required");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_get_answer_matches_the_document() {
    let (app, document) = served_fleet().await;
    let (_, _, page) = call(
        &app,
        Method::GET,
        "/api/v1/objects?kind=Kustomization&limit=1",
        None,
    )
    .await;
    let kustomization = &page["items"][0];
    let id = |object: &Value| {
        let namespace = object["namespace"].as_str().unwrap();
        format!(
            "{}/{}/{}/{}",
            object["cluster"].as_str().unwrap(),
            object["kind"].as_str().unwrap(),
            if namespace.is_empty() { "_" } else { namespace },
            object["name"].as_str().unwrap()
        )
    };
    let (_, _, namespaces) = call(
        &app,
        Method::GET,
        "/api/v1/objects?kind=Namespace&limit=1",
        None,
    )
    .await;
    let namespace = &namespaces["items"][0];
    let (_, _, gateway) = call(&app, Method::GET, "/api/v1/domains/gateway", None).await;
    let version = gateway["newest_version"].as_str().unwrap();
    let owner = |o: &Value| {
        format!(
            "cluster={}&kind={}&namespace={}&name={}",
            o["cluster"].as_str().unwrap(),
            o["kind"].as_str().unwrap(),
            o["namespace"].as_str().unwrap(),
            o["name"].as_str().unwrap()
        )
    };
    let (_, _, rollouts) = call(&app, Method::GET, "/api/v1/domains/gateway/rollouts", None).await;
    let rolled = rollouts["rollouts"][0]["version"]
        .as_str()
        .unwrap_or_else(|| panic!("the demo's rounds recorded a rollout: {rollouts}"))
        .to_string();
    let a_minute_ago =
        (Utc::now() - TimeDelta::minutes(1)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let until = (Utc::now() + TimeDelta::hours(1)).to_rfc3339();
    let silence = json!({"domain": "gateway", "cluster": "prod-eu-1", "until": until, "comment": "mirror down"});
    let (status, _, created) = call(
        &app,
        Method::POST,
        "/api/v1/silences",
        Some(("application/json", silence.to_string())),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_matches(&document, "/api/v1/silences", "post", status, &created);

    let uris = [
        "/api/v1/fleet".to_string(),
        "/api/v1/domains".into(),
        "/api/v1/domains/gateway".into(),
        "/api/v1/domains/gateway?label=ring%3Dprod".into(),
        format!("/api/v1/domains/gateway/wait?version={version}&timeout=0s"),
        "/api/v1/domains/gateway/wait?version=v0.0.0-never&timeout=0s&label=ring%3Dprod".into(),
        "/api/v1/domains/gateway/rollouts?limit=3".into(),
        format!("/api/v1/domains/gateway/rollouts/{rolled}"),
        "/api/v1/domains/gateway/delivery?ring=prod&window=90d".into(),
        "/api/v1/domains/gateway/delivery".into(),
        format!("/api/v1/fleet?at={a_minute_ago}"),
        "/api/v1/clusters".into(),
        "/api/v1/clusters/prod-eu-1".into(),
        "/api/v1/objects".into(),
        "/api/v1/objects?state=not-healthy&limit=1000".into(),
        "/api/v1/objects?state=failed&state=blocked&state=stuck".into(),
        "/api/v1/objects?cluster=prod-eu-1&kind=helmrelease&namespace=flux-system".into(),
        "/api/v1/objects?domain=networking&label=ring%3Dprod".into(),
        "/api/v1/objects?q=tofu&limit=5&offset=1".into(),
        format!("/api/v1/objects/{}", id(kustomization)),
        format!("/api/v1/objects/{}", id(namespace)),
        "/api/v1/objects/prod-eu-1/Deployment/flux-system/tofu-controller".into(),
        "/api/v1/problems".into(),
        format!("/api/v1/owner?{}", owner(kustomization)),
        "/api/v1/owner?cluster=prod-eu-1&kind=Deployment&namespace=flux-system&name=tofu-controller".into(),
        format!("/api/v1/impact?{}", owner(kustomization)),
        format!(
            "/api/v1/impact?domain=gateway&kind={}&namespace={}&name={}",
            kustomization["kind"].as_str().unwrap(),
            kustomization["namespace"].as_str().unwrap(),
            kustomization["name"].as_str().unwrap()
        ),
        "/api/v1/alerts".into(),
        "/api/v1/silences".into(),
        "/api/v1/openapi.json".into(),
        "/api/v1/audit?limit=5".into(),
    ];
    let mut fetched = BTreeSet::new();
    for uri in &uris {
        let (status, content_type, answer) = call(&app, Method::GET, uri, None).await;
        assert_eq!(status, StatusCode::OK, "{uri}: {answer}");
        assert_eq!(content_type.as_deref(), Some("application/json"), "{uri}");
        let path = template_of(&document, uri);
        fetched.insert(path);
        assert_matches(&document, path, "get", status, &answer);
    }
    let gets: BTreeSet<&str> = document["paths"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, operations)| operations.get("get").is_some())
        .map(|(path, _)| path.as_str())
        .collect();
    assert_eq!(fetched, gets, "every GET in the document is fetched");

    // The answers above are not vacuous: the lists the schemas describe have entries.
    let (_, _, alerts) = call(&app, Method::GET, "/api/v1/alerts", None).await;
    assert_eq!(alerts["open"][0]["deliveries"][0]["sink"], "slack");
    let (_, _, silences) = call(&app, Method::GET, "/api/v1/silences", None).await;
    assert_eq!(silences[0]["comment"], "mirror down");
}

/// Asserts an answer has the expected status, is JSON, and matches what the document gives
/// `path`'s `method` for that status.
fn check_error(
    document: &Value,
    path: &str,
    method: &Method,
    expected: StatusCode,
    answer: (StatusCode, Option<String>, Value),
) {
    let (status, content_type, body) = answer;
    assert_eq!(status, expected, "{method} {path}: {body}");
    assert_eq!(
        content_type.as_deref(),
        Some("application/json"),
        "{method} {path}"
    );
    assert_matches(
        document,
        path,
        &method.as_str().to_lowercase(),
        status,
        &body,
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_are_json_error_bodies_the_document_describes() {
    let (app, document) = served_fleet().await;
    let check = |path: &str, method: &Method, expected, answer| {
        check_error(&document, path, method, expected, answer)
    };
    let gets = [
        ("/api/v1/domains/nope", StatusCode::NOT_FOUND),
        ("/api/v1/clusters/nope", StatusCode::NOT_FOUND),
        (
            "/api/v1/objects/prod-eu-1/Kustomization/flux-system/nope",
            StatusCode::NOT_FOUND,
        ),
        ("/api/v1/objects?state=green", StatusCode::BAD_REQUEST),
        (
            "/api/v1/objects/prod-eu-1/Gizmo/x/y",
            StatusCode::BAD_REQUEST,
        ),
        ("/api/v1/owner?cluster=prod-eu-1", StatusCode::BAD_REQUEST),
        (
            "/api/v1/impact?kind=Kustomization&name=x",
            StatusCode::BAD_REQUEST,
        ),
        (
            "/api/v1/impact?domain=nope&kind=Kustomization&name=x",
            StatusCode::NOT_FOUND,
        ),
        (
            "/api/v1/domains/gateway?label=prod",
            StatusCode::BAD_REQUEST,
        ),
        ("/api/v1/domains/gateway/wait", StatusCode::BAD_REQUEST),
        (
            "/api/v1/domains/nope/wait?version=1&timeout=0s",
            StatusCode::NOT_FOUND,
        ),
    ];
    for (uri, expected) in gets {
        let answer = call(&app, Method::GET, uri, None).await;
        check(template_of(&document, uri), &Method::GET, expected, answer);
    }
    // Paths and methods the router does not serve answer with the same ErrorBody, as do
    // requests without a valid token; they are held to the fleet's `default` answer.
    for uri in ["/api/v1/nope", "/api/v1/fleet/nope", "/api/v2/fleet"] {
        let answer = call(&app, Method::GET, uri, None).await;
        check("/api/v1/fleet", &Method::GET, StatusCode::NOT_FOUND, answer);
    }
    let answer = call(&app, Method::DELETE, "/api/v1/fleet", None).await;
    check(
        "/api/v1/fleet",
        &Method::GET,
        StatusCode::METHOD_NOT_ALLOWED,
        answer,
    );
    for token in [None, Some("wrong-token")] {
        let answer = call_as(&app, Method::GET, "/api/v1/fleet", None, token).await;
        check(
            "/api/v1/fleet",
            &Method::GET,
            StatusCode::UNAUTHORIZED,
            answer,
        );
    }

    let until = (Utc::now() + TimeDelta::hours(1)).to_rfc3339();
    let posts = [
        (
            "text/plain",
            "silence it".to_string(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ),
        (
            "application/json",
            json!({"until": "soon", "domain": "gateway"}).to_string(),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            "application/json",
            json!({"until": until, "domain": "gateway", "extra": 1}).to_string(),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            "application/json",
            "{not json".to_string(),
            StatusCode::BAD_REQUEST,
        ),
        (
            "application/json",
            json!({"until": until}).to_string(),
            StatusCode::BAD_REQUEST,
        ),
    ];
    for (content_type, body, expected) in posts {
        let answer = call(
            &app,
            Method::POST,
            "/api/v1/silences",
            Some((content_type, body)),
        )
        .await;
        check("/api/v1/silences", &Method::POST, expected, answer);
    }
}

/// The refusals that come before any handler (a write from another site, a query or a body
/// too long, a Host this server is not) and a database that is down or failing answer with
/// the same documented error body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_and_outages_are_error_bodies_the_document_describes() {
    let (app, document, store) = served_fleet_and_store().await;
    let (get, post) = (Method::GET, Method::POST);
    let until = (Utc::now() + TimeDelta::hours(1)).to_rfc3339();
    let silence = json!({"domain": "gateway", "until": until}).to_string();
    let cross_site = call_with(
        &app,
        post.clone(),
        "/api/v1/silences",
        Some(("application/json", silence.clone())),
        Some(TOKEN),
        &[("sec-fetch-site", "cross-site")],
    )
    .await;
    check_error(
        &document,
        "/api/v1/silences",
        &post,
        StatusCode::FORBIDDEN,
        cross_site,
    );
    let huge = json!({"domain": "gateway", "until": until, "comment": "x".repeat(70_000)});
    let too_large = call(
        &app,
        post.clone(),
        "/api/v1/silences",
        Some(("application/json", huge.to_string())),
    )
    .await;
    check_error(
        &document,
        "/api/v1/silences",
        &post,
        StatusCode::PAYLOAD_TOO_LARGE,
        too_large,
    );
    let long_query = format!("/api/v1/objects?q={}", "a".repeat(3000));
    let too_long = call(&app, get.clone(), &long_query, None).await;
    check_error(
        &document,
        "/api/v1/objects",
        &get,
        StatusCode::URI_TOO_LONG,
        too_long,
    );
    // Served as https://fleet.example.com only: another Host is a 421.
    let mut config = common::web::demo_config();
    config.public_url = Some("https://fleet.example.com".into());
    let site = common::web::app(store.clone(), &config);
    let elsewhere = call_with(
        &site,
        get.clone(),
        "/api/v1/fleet",
        None,
        None,
        &[("host", "fleet.evil.example")],
    )
    .await;
    check_error(
        &document,
        "/api/v1/fleet",
        &get,
        StatusCode::MISDIRECTED_REQUEST,
        elsewhere,
    );

    let database = store
        .pool()
        .connect_options()
        .get_database()
        .expect("the test database has a name")
        .to_string();
    common::set_database_outage(&database, true).await;
    for uri in ["/api/v1/fleet", "/api/v1/alerts", "/api/v1/objects"] {
        let down = call(&app, get.clone(), uri, None).await;
        let path = template_of(&document, uri);
        check_error(&document, path, &get, StatusCode::SERVICE_UNAVAILABLE, down);
    }
    common::set_database_outage(&database, false).await;
    // A schema the queries do not expect: the database answers, the query fails.
    sqlx::query!("ALTER TABLE silences RENAME COLUMN comment TO comment_renamed")
        .execute(store.pool())
        .await
        .unwrap();
    let failing = call(&app, get.clone(), "/api/v1/silences", None).await;
    check_error(
        &document,
        "/api/v1/silences",
        &get,
        StatusCode::INTERNAL_SERVER_ERROR,
        failing,
    );
}

/// The strictness is real: a field the document does not describe fails, at the top of a
/// flattened reply, inside a nested object and in a flattened list item; so does a missing one.
#[tokio::test(flavor = "multi_thread")]
async fn an_undocumented_or_missing_field_fails_validation() {
    let (app, document) = served_fleet().await;
    let uri = "/api/v1/objects/prod-eu-1/Kustomization/flux-system/infra-network";
    let (status, _, object) = call(&app, Method::GET, uri, None).await;
    assert_eq!(status, StatusCode::OK, "{object}");
    let path = template_of(&document, uri);
    assert!(mismatches(&document, path, "get", status, &object).is_empty());
    let mut top = object.clone();
    top["surprise"] = json!(1);
    let mut nested = object.clone();
    nested["revisions"]["surprise"] = json!(1);
    let mut missing = object.clone();
    missing.as_object_mut().unwrap().remove("since");
    let mut cases = vec![("top", top), ("nested", nested), ("missing", missing)];
    if object["applied"].as_array().is_some_and(|a| !a.is_empty()) {
        let mut item = object.clone();
        item["applied"][0]["surprise"] = json!(1);
        cases.push(("flattened item", item));
    }
    for (case, answer) in cases {
        assert!(
            !mismatches(&document, path, "get", status, &answer).is_empty(),
            "{case}: accepted"
        );
    }
}

/// What a generic webhook receives is the document's `webhooks.alert` body, version 1: a real
/// notification, delivered by the worker to a local receiver, validates against it (strict:
/// no field the document does not describe), and a body without `version` does not.
#[tokio::test(flavor = "multi_thread")]
async fn a_delivered_webhook_body_is_the_documented_version_1() {
    use common::alerts::Receiver;
    use fleetglass::alerts::{DeliverySettings, Sinks, Worker};
    use fleetglass::config::{Secret, WebhookTarget};
    use std::sync::Arc;
    use std::time::Duration;

    let store = common::fresh_store().await;
    let app = common::web::tokens_app(store.clone(), TOKEN);
    let (status, _, document) = call(&app, Method::GET, "/api/v1/openapi.json", None).await;
    assert_eq!(status, StatusCode::OK, "{document}");
    let schema = &document["webhooks"]["alert"]["post"]["requestBody"]["content"]["application/json"]
        ["schema"];
    let receiver = Receiver::start().await;
    let pager = WebhookTarget {
        name: "pager".into(),
        url: Secret::new(format!("{}/pager", receiver.base)),
    };
    let sinks = Arc::new(Sinks::new(None, vec![pager], Duration::from_secs(10)).unwrap());
    common::alerts::raise_tofu_controller_alert_routed(&store, sinks.routes()).await;
    let settings = DeliverySettings {
        backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(200),
        poll: Duration::from_millis(20),
        claim: Duration::from_secs(1),
    };
    let worker = tokio::spawn(Worker::new(store.clone(), sinks, settings).run());
    let body = common::eventually(
        "the webhook got the alert",
        Duration::from_secs(20),
        async || {
            receiver
                .accepted()
                .first()
                .map(|request| request.body.clone())
        },
    )
    .await;
    worker.abort();
    assert_eq!(body["version"], 1, "{body:#}");
    assert_eq!(body["alert"]["kind"], "Deployment", "{body:#}");
    let problems = schema_mismatches(&document, schema, &body, "the webhook body");
    assert!(problems.is_empty(), "{}\n{body:#}", problems.join("\n"));
    let mut unversioned = body.clone();
    unversioned.as_object_mut().unwrap().remove("version");
    assert!(!schema_mismatches(&document, schema, &unversioned, "unversioned").is_empty());
}
