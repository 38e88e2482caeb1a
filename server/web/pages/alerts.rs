//! `/alerts`: open, silenced and resolved alerts with where their notifications stand, the
//! silences in force, and forms to add or end a silence (CSRF-checked).

use super::render;
use crate::alerts::silences::{MAX_SILENCE, NewSilence, Silence};
use crate::alerts::tables::silences;
use crate::alerts::{AlertView, Delivery};
use crate::model::{human, parse_go_duration};
use crate::store::audit::{self, NewAuditEvent};
use crate::web::AppState;
use crate::web::api::alerts::{AlertsReply, add_silence};
use crate::web::audit::Source;
use crate::web::auth::Identity;
use crate::web::csrf;
use crate::web::error::{ApiError, PageResult};
use crate::web::scope::Scope;
use crate::web::views::contacts::{Contact, contacts};
use crate::web::views::icons::Icon as _;
use crate::web::views::present::Live;
use askama::Template;
use axum::extract::{OriginalUri, Path, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Extension, Form, Router};
use chrono::{DateTime, TimeDelta, Utc};
use serde::Deserialize;

pub const PAGE: &str = "/alerts";
pub const ADD_SILENCE: &str = "/alerts/silences";
pub const EXPIRE_SILENCE: &str = "/alerts/silences/{id}/expire";

pub fn router() -> Router<AppState> {
    Router::new()
        .route(PAGE, get(page))
        .route(ADD_SILENCE, post(add))
        .route(EXPIRE_SILENCE, post(expire))
}

#[derive(Template)]
#[template(path = "alerts.html")]
struct AlertsPage {
    summary: String,
    /// Where notifications go, or that they go nowhere.
    sinks: String,
    /// No sink is configured: said as a warning.
    unsent: bool,
    sections: Vec<Section>,
    silences: Vec<SilenceRow>,
    csrf: String,
    csrf_field: &'static str,
    /// Without authentication the forms are not shown: nothing can be written.
    can_write: bool,
    live: Live,
    access: &'static str,
}

/// Open, silenced or resolved alerts.
struct Section {
    title: &'static str,
    empty: &'static str,
    rows: Vec<Row>,
}

/// One alert, ready to print.
struct Row {
    state: crate::health::State,
    severity: String,
    root_cause: String,
    /// Every cluster the incident is on, when more than one.
    clusters: Vec<String>,
    /// What the "silence" buttons silence: the root cause on each cluster.
    silence: Vec<SilenceTarget>,
    reason: String,
    message: String,
    when: When,
    affected: i32,
    domains: String,
    deliveries: Vec<String>,
    contacts: Vec<Contact>,
}

impl Row {
    /// Every cluster's root cause, for the one "silence this incident on all its clusters".
    fn all_root_causes(&self) -> String {
        let ids: Vec<&str> = self.silence.iter().map(|t| t.root_cause.as_str()).collect();
        ids.join(" ")
    }
}

struct SilenceTarget {
    /// Empty when the alert is on one cluster.
    cluster: String,
    root_cause: String,
}

/// A relative time with the absolute one for the title.
struct When {
    relative: String,
    absolute: String,
}

struct SilenceRow {
    id: i64,
    matches: String,
    until: When,
    comment: String,
    created_by: String,
}

pub async fn page(
    State(state): State<AppState>,
    Extension(identity): Extension<Identity>,
    Extension(scope): Extension<Scope>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> PageResult<Response> {
    let now = Utc::now();
    let reply = AlertsReply::load(&state, &scope).await?;
    let mut conn = state.store.pool().acquire().await?;
    let mut active = silences::active(&mut conn, now).await?;
    active.retain(|s| scope.sees_silence(s));
    // Silencing is for those who see everything (a team's silence routes are closed).
    let can_write = state.site.can_write() && scope.is_everything();
    let (csrf, cookie) = if can_write {
        csrf::token(
            &headers,
            &state.site,
            &state.csrf_key,
            &identity.requester(),
        )
    } else {
        (String::new(), None)
    };
    let domains = &state.site.domains;
    let rows = |alerts: Vec<AlertView>| alerts.into_iter().map(|a| row(a, domains, now)).collect();
    let summary = format!(
        "{} open · {} silenced · {} recently resolved — one alert per incident",
        reply.open.len(),
        reply.silenced.len(),
        reply.resolved.len()
    );
    let section = |title, empty, alerts| Section {
        title,
        empty,
        rows: rows(alerts),
    };
    let page = AlertsPage {
        summary,
        sinks: sinks_note(&state.site.sinks),
        unsent: state.site.sinks.is_empty(),
        sections: vec![
            section("Open", "nothing is alerting", reply.open),
            section("Silenced", "no alert is silenced", reply.silenced),
            section("Resolved", "nothing resolved recently", reply.resolved),
        ],
        silences: active.into_iter().map(|s| silence_row(s, now)).collect(),
        csrf,
        csrf_field: csrf::FIELD,
        can_write,
        live: Live::new(&uri, now),
        access: state.site.access_note(),
    };
    let mut response = render(&page)?;
    if let Some(cookie) = cookie
        && let Ok(value) = cookie.parse()
    {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    Ok(response)
}

#[derive(Deserialize)]
pub struct SilenceForm {
    csrf: String,
    #[serde(default)]
    root_cause: String,
    /// An incident's root causes on all its clusters, space-separated: one silence each, so
    /// one click silences the incident everywhere it is.
    #[serde(default)]
    root_causes: String,
    #[serde(default)]
    domain: String,
    #[serde(default)]
    cluster: String,
    /// How long, as `2h`, `1d`… (Go durations plus days).
    duration: String,
    #[serde(default)]
    comment: String,
}

pub async fn add(
    State(state): State<AppState>,
    Extension(identity): Extension<Identity>,
    source: Source,
    headers: HeaderMap,
    Form(form): Form<SilenceForm>,
) -> PageResult<Response> {
    check_csrf(&state, &identity, &headers, &form.csrf)?;
    let duration = parse_duration(&form.duration).ok_or_else(|| {
        ApiError::BadRequest(format!(
            "{:?} is not a duration like 2h, 30m or 1d",
            form.duration
        ))
    })?;
    let until = Utc::now()
        .checked_add_signed(duration.min(MAX_SILENCE + TimeDelta::days(1)))
        .ok_or_else(|| ApiError::BadRequest("that duration is too long".into()))?;
    let root_causes: Vec<&str> = form.root_causes.split_whitespace().collect();
    if let Some(bad) = root_causes
        .iter()
        .find(|id| crate::model::ObjectId::split(id).is_none())
    {
        return Err(ApiError::BadRequest(format!(
            "{bad:?} is not a root cause id (cluster/Kind/namespace/name)"
        ))
        .into());
    }
    let silences: Vec<NewSilence> = if root_causes.is_empty() {
        vec![NewSilence {
            root_cause: Some(form.root_cause),
            domain: Some(form.domain),
            cluster: Some(form.cluster),
            until,
            comment: form.comment,
        }]
    } else {
        root_causes
            .into_iter()
            .map(|id| NewSilence {
                root_cause: Some(id.to_string()),
                domain: None,
                cluster: None,
                until,
                comment: form.comment.clone(),
            })
            .collect()
    };
    // Each is checked before any is written: a bad one among them sets none.
    let now = Utc::now();
    for silence in &silences {
        silence
            .clone()
            .validated(now)
            .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    }
    for silence in silences {
        add_silence(&state, silence, &identity, &source).await?;
    }
    Ok(Redirect::to("/alerts").into_response())
}

#[derive(Deserialize)]
pub struct CsrfOnly {
    csrf: String,
}

pub async fn expire(
    State(state): State<AppState>,
    Extension(identity): Extension<Identity>,
    source: Source,
    Path(id): Path<i64>,
    headers: HeaderMap,
    Form(form): Form<CsrfOnly>,
) -> PageResult<Response> {
    check_csrf(&state, &identity, &headers, &form.csrf)?;
    let now = Utc::now();
    let mut tx = state.store.pool().begin().await?;
    if !silences::expire(&mut tx, id, now).await? {
        return Err(ApiError::NotFound(format!("no silence {id} in force")).into());
    }
    let (requester, subject) = (identity.requester(), format!("silence {id}"));
    let event = NewAuditEvent {
        actor: &requester,
        action: "silence-expired",
        subject: &subject,
        detail: "",
        source: &source.0,
    };
    audit::record(&mut tx, &event, now).await?;
    tx.commit().await?;
    Ok(Redirect::to("/alerts").into_response())
}

/// Where notifications go, in a sentence.
fn sinks_note(sinks: &[String]) -> String {
    if sinks.is_empty() {
        "No notification sink is configured (alerts.slack, alerts.webhooks): alerts are recorded \
         here and nobody is told."
            .to_string()
    } else {
        format!("Notifications go to {}.", sinks.join(", "))
    }
}

fn check_csrf(
    state: &AppState,
    identity: &Identity,
    headers: &HeaderMap,
    submitted: &str,
) -> PageResult<()> {
    let requester = identity.requester();
    if csrf::verify(headers, &state.site, &state.csrf_key, &requester, submitted) {
        Ok(())
    } else {
        Err(ApiError::Forbidden(
            "this form is out of date or came from another site; reload /alerts and try again"
                .into(),
        )
        .into())
    }
}

/// `1d`, `7d` as well as Go durations (`90m`, `2h30m`); zero or negative is not a duration.
fn parse_duration(text: &str) -> Option<TimeDelta> {
    let text = text.trim();
    let delta = match text.strip_suffix('d') {
        Some(days) => TimeDelta::try_days(days.parse().ok()?)?,
        None => parse_go_duration(text).ok()?,
    };
    (delta > TimeDelta::zero()).then_some(delta)
}

fn when(at: DateTime<Utc>, now: DateTime<Utc>, past: &str, future: &str) -> When {
    let relative = if at <= now {
        format!("{past} {}", human(now - at))
    } else {
        format!("{future} {}", human(at - now))
    };
    When {
        relative,
        absolute: at.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
    }
}

fn row(alert: AlertView, domains: &[crate::health::DomainSpec], now: DateTime<Utc>) -> Row {
    let started = match alert.resolved_at {
        Some(resolved) => when(resolved, now, "resolved", "resolves in"),
        None => when(alert.since.unwrap_or(alert.first_seen), now, "for", "from"),
    };
    Row {
        state: alert.state,
        severity: alert.severity,
        reason: alert.reason,
        message: alert.message,
        when: started,
        affected: alert.affected_count,
        contacts: contacts(domains, strings(&alert.domains).iter().map(String::as_str)),
        domains: strings(&alert.domains).join(", "),
        deliveries: delivery_summary(&alert.deliveries, now),
        silence: silence_targets(alert.root_cause.as_str(), &alert.clusters),
        clusters: match alert.clusters.len() {
            0 | 1 => Vec::new(),
            _ => alert.clusters,
        },
        root_cause: alert.root_cause.into_string(),
    }
}

/// The root cause on each of the clusters (an incident is one kind, namespace and name on
/// all of them; a cluster that is itself the cause is named after itself).
fn silence_targets(root_cause: &str, clusters: &[String]) -> Vec<SilenceTarget> {
    if clusters.len() < 2 {
        return vec![SilenceTarget {
            cluster: String::new(),
            root_cause: root_cause.to_string(),
        }];
    }
    clusters
        .iter()
        .map(|cluster| SilenceTarget {
            cluster: cluster.clone(),
            root_cause: crate::health::same_cause_on(root_cause, cluster).into_string(),
        })
        .collect()
}

fn strings(value: &serde_json::Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Per notification: `slack firing: delivered 3m ago`, `slack update: retrying (4 attempts, HTTP 500)`.
fn delivery_summary(deliveries: &[Delivery], now: DateTime<Utc>) -> Vec<String> {
    deliveries
        .iter()
        .map(|d| {
            let head = format!("{} {}", d.sink, d.event);
            match (d.status.as_str(), d.delivered_at) {
                ("delivered", Some(at)) => format!("{head}: delivered {} ago", human(now - at)),
                ("silenced", _) => format!("{head}: silenced, not sent"),
                _ => format!(
                    "{head}: {} ({} attempts{})",
                    if d.attempts == 0 {
                        "queued"
                    } else {
                        "retrying"
                    },
                    d.attempts,
                    d.last_error
                        .as_deref()
                        .map(|e| format!(", last: {e}"))
                        .unwrap_or_default()
                ),
            }
        })
        .collect()
}

fn silence_row(silence: Silence, now: DateTime<Utc>) -> SilenceRow {
    let matchers = [
        ("root cause", &silence.root_cause),
        ("domain", &silence.domain),
        ("cluster", &silence.cluster),
    ];
    SilenceRow {
        id: silence.id,
        matches: matchers
            .iter()
            .filter_map(|(name, value)| value.as_ref().map(|v| format!("{name} {v}")))
            .collect::<Vec<_>>()
            .join(" and "),
        until: when(silence.until, now, "ended", "for"),
        comment: silence.comment,
        created_by: silence.created_by,
    }
}
