//! Shared by the alerts tests: a local HTTP receiver standing in for Slack and webhooks (it
//! records every request and can be told to fail, hang or rate-limit), a Block Kit validator,
//! and helpers to build evaluations and run the evaluator and the worker.
#![allow(dead_code)] // each alerts test binary uses a different part

use axum::Router;
use axum::body::Bytes;
use axum::extract::State as AxumState;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use chrono::Utc;
use fleetglass::alerts::rules::Policy;
use fleetglass::alerts::{Dispatcher, Route};
use fleetglass::config::AlertsConfig;
use fleetglass::health::{DomainVerdict, Evaluation, RootCause, State, Verdict};
use fleetglass::model::{Kind, ObjectId};
use fleetglass::store::Store;
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How the receiver answers the next request.
#[derive(Debug, Clone)]
pub enum Reply {
    Ok,
    Status(u16),
    /// Never answers (the client's timeout must fire).
    Hang,
    /// 429 with `Retry-After: secs`.
    RetryAfter(u64),
    /// 307 to this address (which a client following redirects would post the alert to).
    Redirect(String),
    /// Takes the message (it counts as delivered, and a Slack post is in the channel's
    /// history) but never answers: the sender cannot know it went out.
    AcceptThenHang,
    /// Takes the message at once and answers success only once the test releases it, so a
    /// test can break something between the send and the sender's record of it.
    OkWhenReleased(Arc<tokio::sync::Notify>),
}

#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    pub body: Value,
    pub authorization: Option<String>,
    pub idempotency_key: Option<String>,
    pub at: Instant,
    /// What the receiver answered.
    pub answered_ok: bool,
}

#[derive(Default)]
struct Inner {
    script: VecDeque<Reply>,
    requests: Vec<Request>,
    next_ts: u64,
}

#[derive(Clone, Default)]
pub struct Receiver {
    inner: Arc<Mutex<Inner>>,
    pub base: String,
}

impl Receiver {
    /// Starts on 127.0.0.1:0; answers Slack Web API calls like Slack (`ok`, `channel`, `ts`).
    pub async fn start() -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut receiver = Receiver {
            base: format!("http://{}", listener.local_addr().unwrap()),
            ..Receiver::default()
        };
        let app = Router::new()
            .route("/{*path}", post(record))
            .with_state(receiver.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        receiver.base = receiver.base.clone();
        receiver
    }

    /// The next requests get these answers, in order; after that, success.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.inner.lock().unwrap().script.extend(replies);
    }

    pub fn requests(&self) -> Vec<Request> {
        self.inner.lock().unwrap().requests.clone()
    }

    /// Requests that were answered with success (or taken, for `AcceptThenHang`), Slack's
    /// read methods aside.
    pub fn accepted(&self) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| r.answered_ok && !r.path.contains("/conversations."))
            .collect()
    }

    /// Gives a taken message its ts, as Slack does; a post's ts goes into its recorded body.
    fn remember_post(&self, request: &mut Request) -> String {
        let mut inner = self.inner.lock().unwrap();
        inner.next_ts += 1;
        let ts = format!("1700000000.{:06}", inner.next_ts);
        if let Value::Object(body) = &mut request.body
            && request.path.ends_with("/chat.postMessage")
        {
            body.insert("ts".into(), Value::String(ts.clone()));
        }
        ts
    }

    /// What `conversations.history` (or `.replies`, with `ts`) shows: the posts taken in the
    /// channel (in that thread), with their metadata.
    fn posted(&self, query: &Value) -> Vec<Value> {
        let channel = query["channel"].as_str().unwrap_or_default();
        let thread = query["ts"].as_str();
        self.requests()
            .iter()
            .filter(|r| r.answered_ok && r.path.ends_with("/chat.postMessage"))
            .filter(|r| r.body["channel"] == channel)
            .filter(|r| thread.is_none_or(|ts| r.body["thread_ts"] == ts))
            .map(|r| json!({"ts": r.body["ts"], "text": r.body["text"], "metadata": r.body["metadata"]}))
            .collect()
    }
}

async fn record(
    AxumState(receiver): AxumState<Receiver>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let path = uri.path().to_string();
    let form =
        header("content-type").is_some_and(|t| t.starts_with("application/x-www-form-urlencoded"));
    let body: Value = if form {
        // Slack's read methods take form fields.
        let fields: Vec<(String, String)> = body
            .split(|b| *b == b'&')
            .filter_map(|pair| {
                let pair = std::str::from_utf8(pair).ok()?;
                let (k, v) = pair.split_once('=')?;
                Some((k.to_string(), v.to_string()))
            })
            .collect();
        Value::Object(
            fields
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect(),
        )
    } else {
        serde_json::from_slice(&body).unwrap_or(Value::Null)
    };
    let mut request = Request {
        path: path.clone(),
        body: body.clone(),
        authorization: header("authorization"),
        idempotency_key: header("idempotency-key"),
        at: Instant::now(),
        answered_ok: false,
    };
    if path.ends_with("/conversations.history") || path.ends_with("/conversations.replies") {
        request.answered_ok = true;
        let messages = receiver.posted(&body);
        receiver.inner.lock().unwrap().requests.push(request);
        return axum::Json(json!({"ok": true, "messages": messages})).into_response();
    }
    let reply = receiver.inner.lock().unwrap().script.pop_front();
    let reply = reply.unwrap_or(Reply::Ok);
    let response = match reply {
        Reply::Hang => {
            receiver.inner.lock().unwrap().requests.push(request);
            tokio::time::sleep(Duration::from_secs(3600)).await;
            return StatusCode::OK.into_response();
        }
        Reply::AcceptThenHang => {
            request.answered_ok = true;
            receiver.remember_post(&mut request);
            receiver.inner.lock().unwrap().requests.push(request);
            tokio::time::sleep(Duration::from_secs(3600)).await;
            return StatusCode::OK.into_response();
        }
        Reply::Status(code) => StatusCode::from_u16(code).unwrap().into_response(),
        Reply::Redirect(to) => (StatusCode::TEMPORARY_REDIRECT, [("location", to)]).into_response(),
        Reply::RetryAfter(secs) => (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", secs.to_string())],
        )
            .into_response(),
        Reply::Ok => {
            request.answered_ok = true;
            let ts = receiver.remember_post(&mut request);
            let channel = body["channel"].as_str().unwrap_or("C0").to_string();
            axum::Json(json!({"ok": true, "channel": channel, "ts": ts})).into_response()
        }
        Reply::OkWhenReleased(release) => {
            request.answered_ok = true;
            let ts = receiver.remember_post(&mut request);
            receiver.inner.lock().unwrap().requests.push(request);
            release.notified().await;
            let channel = body["channel"].as_str().unwrap_or("C0").to_string();
            return axum::Json(json!({"ok": true, "channel": channel, "ts": ts})).into_response();
        }
    };
    receiver.inner.lock().unwrap().requests.push(request);
    response
}

/// Checks a Slack message against the shape Slack documents for Block Kit messages; returns
/// what is wrong.
pub fn block_kit_problems(message: &Value) -> Vec<String> {
    const BLOCK_TYPES: [&str; 10] = [
        "actions",
        "context",
        "divider",
        "file",
        "header",
        "image",
        "input",
        "rich_text",
        "section",
        "video",
    ];
    let mut problems = Vec::new();
    match message["text"].as_str() {
        Some(text) if !text.trim().is_empty() => {}
        _ => problems.push("no top-level text fallback".to_string()),
    }
    let Some(blocks) = message["blocks"].as_array() else {
        problems.push("blocks is not an array".to_string());
        return problems;
    };
    if blocks.is_empty() || blocks.len() > 50 {
        problems.push(format!("{} blocks (1 to 50 allowed)", blocks.len()));
    }
    let text_object = |value: &Value, types: &[&str], max: usize, at: &str| -> Vec<String> {
        let mut p = Vec::new();
        let kind = value["type"].as_str().unwrap_or("");
        if !types.contains(&kind) {
            p.push(format!("{at}: text type {kind:?} not in {types:?}"));
        }
        match value["text"].as_str() {
            None => p.push(format!("{at}: text missing")),
            Some(t) if t.is_empty() || t.chars().count() > max => p.push(format!(
                "{at}: text length {} (1 to {max})",
                t.chars().count()
            )),
            Some(_) => {}
        }
        p
    };
    for (i, block) in blocks.iter().enumerate() {
        let at = format!("blocks[{i}]");
        let Some(kind) = block["type"].as_str() else {
            problems.push(format!("{at}: no type"));
            continue;
        };
        if !BLOCK_TYPES.contains(&kind) {
            problems.push(format!("{at}: unknown block type {kind:?}"));
        }
        match kind {
            "header" => problems.extend(text_object(&block["text"], &["plain_text"], 150, &at)),
            "section" => {
                let fields = block["fields"].as_array();
                if block.get("text").is_none() && fields.is_none() {
                    problems.push(format!("{at}: section needs text or fields"));
                }
                if block.get("text").is_some() {
                    problems.extend(text_object(
                        &block["text"],
                        &["mrkdwn", "plain_text"],
                        3000,
                        &at,
                    ));
                }
                for field in fields.into_iter().flatten() {
                    problems.extend(text_object(field, &["mrkdwn", "plain_text"], 2000, &at));
                }
            }
            "context" => match block["elements"].as_array() {
                Some(elements) if !elements.is_empty() && elements.len() <= 10 => {
                    for element in elements {
                        problems.extend(text_object(element, &["mrkdwn", "plain_text"], 3000, &at));
                    }
                }
                _ => problems.push(format!("{at}: context needs 1 to 10 elements")),
            },
            _ => {}
        }
    }
    problems
}

/// A root cause with `affected` symptoms (plus itself) on its cluster.
pub fn cause(id: &str, state: State, reason: &str, affected: usize, since_hours: i64) -> RootCause {
    let cluster = id.split('/').next().unwrap();
    let oid = id.parse::<ObjectId>().unwrap();
    let mut all = vec![oid.clone()];
    all.extend((0..affected).map(|i| {
        ObjectId::new(
            cluster,
            Kind::Kustomization,
            "apps",
            &format!("symptom-{i}"),
        )
    }));
    RootCause {
        id: oid,
        state,
        since: Some(chrono::Utc::now() - chrono::TimeDelta::hours(since_hours)),
        cause: super::web::flux_failure(reason),
        reason: reason.to_string(),
        message: format!("{reason}: details"),
        affected: all,
    }
}

/// An evaluation with these root causes, covering these clusters (one healthy object each, so
/// a cluster with no cause is still covered) and a domain blocked by each cause.
pub fn evaluation(clusters: &[&str], causes: Vec<RootCause>) -> Evaluation {
    let objects = clusters
        .iter()
        .map(|c| Verdict {
            id: ObjectId::new(c, Kind::Kustomization, "flux-system", "flux-system"),
            cluster: (*c).into(),
            kind: Kind::Kustomization,
            namespace: "flux-system".into(),
            name: "flux-system".into(),
            state: State::Healthy,
            since: None,
            cause: Default::default(),
            reason: String::new(),
            message: String::new(),
            root_causes: Vec::new(),
            domains: Vec::new(),
            edges: Vec::new(),
        })
        .collect();
    let domains = causes
        .iter()
        .map(|c| DomainVerdict {
            domain: "gateway".into(),
            cluster: c.id.as_str().split('/').next().unwrap().into(),
            version: Some("1.0".into()),
            offered: None,
            state: c.state,
            fully_healthy: false,
            objects: 3,
            healthy: 1,
            blockers: vec![c.id.clone()],
        })
        .collect();
    Evaluation {
        objects,
        root_causes: causes,
        domains,
        ..Evaluation::default()
    }
}

/// Runs one alert round over prod-eu-1's tofu-controller in ImagePullBackOff (seed 000,
/// incident 4), routed to Slack without updates: the store then holds one open alert with a
/// pending delivery.
pub async fn raise_tofu_controller_alert(store: &Store) {
    raise_tofu_controller_alert_on(store, &["prod-eu-1"]).await;
}

/// The same outage on each of `clusters`: one alert (one incident).
pub async fn raise_tofu_controller_alert_on(store: &Store, clusters: &[&str]) {
    let slack = vec![Route {
        sink: "slack".into(),
        updates: false,
    }];
    raise_on(store, clusters, slack).await;
}

/// The outage on prod-eu-1, its notification queued for `routes`.
pub async fn raise_tofu_controller_alert_routed(store: &Store, routes: Vec<Route>) {
    raise_on(store, &["prod-eu-1"], routes).await;
}

async fn raise_on(store: &Store, clusters: &[&str], routes: Vec<Route>) {
    let dispatcher = Dispatcher::new(
        store.clone(),
        Policy::from_config(&AlertsConfig::default()),
        routes,
        BTreeMap::new(),
        None,
    );
    let causes = clusters
        .iter()
        .map(|c| {
            let id = format!("{c}/Deployment/flux-system/tofu-controller");
            cause(&id, State::Failed, "ImagePullBackOff", 4, 48)
        })
        .collect();
    dispatcher
        .round(&evaluation(clusters, causes), Utc::now())
        .await
        .unwrap();
}
