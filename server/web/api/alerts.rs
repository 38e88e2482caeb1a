//! `GET /api/v1/alerts` (open, silenced and recently resolved alerts with the delivery status
//! of their notifications), `GET /api/v1/silences` and `POST /api/v1/silences`.
//!
//! The JSON POST needs no CSRF token: browsers cannot send `application/json` cross-site
//! without a CORS preflight, which this server never grants.

use crate::alerts::silences::{NewSilence, Silence};
use crate::alerts::tables::silences;
use crate::alerts::{AlertView, list_alerts};
use crate::store::audit::{self, NewAuditEvent};
use crate::web::AppState;
use crate::web::audit::Source;
use crate::web::auth::Identity;
use crate::web::error::{ApiError, ErrorBody, Result};
use crate::web::scope::Scope;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Extension, Json, Router};
use chrono::Utc;
use serde::Serialize;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(super::ALERTS, get(alerts))
        .route(super::SILENCES, get(list_silences).post(create_silence))
}

/// How many resolved alerts the listing shows.
const RESOLVED_SHOWN: i64 = 50;

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct AlertsReply {
    pub open: Vec<AlertView>,
    pub silenced: Vec<AlertView>,
    pub resolved: Vec<AlertView>,
}

impl AlertsReply {
    /// The alerts `scope` sees.
    pub async fn load(state: &AppState, scope: &Scope) -> Result<AlertsReply> {
        let mut conn = state.store.pool().acquire().await?;
        let mut reply = AlertsReply {
            open: Vec::new(),
            silenced: Vec::new(),
            resolved: Vec::new(),
        };
        let alerts = list_alerts(&mut conn, RESOLVED_SHOWN).await?;
        for alert in alerts.into_iter().filter_map(|a| scope.alert(a)) {
            match (alert.status.as_str(), alert.silence_id) {
                ("resolved", _) => reply.resolved.push(alert),
                (_, Some(_)) => reply.silenced.push(alert),
                _ => reply.open.push(alert),
            }
        }
        Ok(reply)
    }
}

/// Alerts by root cause: open, silenced and recently resolved, with the delivery status of
/// their notifications.
#[utoipa::path(get, path = super::ALERTS, operation_id = "alerts", responses(
    (status = 200, description = "the alerts", body = AlertsReply),
    (status = "default", description = "an error (see the document's description)", body = ErrorBody),
))]
pub async fn alerts(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
) -> Result<Json<AlertsReply>> {
    Ok(Json(AlertsReply::load(&state, &scope).await?))
}

/// The silences in force.
#[utoipa::path(get, path = super::SILENCES, operation_id = "silences", responses(
    (status = 200, description = "the silences in force", body = Vec<Silence>),
    (status = "default", description = "an error (see the document's description)", body = ErrorBody),
))]
pub async fn list_silences(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
) -> Result<Json<Vec<Silence>>> {
    let mut conn = state.store.pool().acquire().await?;
    let mut active = silences::active(&mut conn, Utc::now()).await?;
    active.retain(|s| scope.sees_silence(s));
    Ok(Json(active))
}

/// Silences the alerts matching a root cause, domain and/or cluster until a time.
#[utoipa::path(post, path = super::SILENCES, operation_id = "create_silence", request_body = NewSilence, responses(
    (status = 201, description = "the silence as stored", body = Silence),
    (status = 400, description = "not JSON, or a silence that cannot be (no matcher, an end in the past)", body = ErrorBody),
    (status = 403, description = "no authentication is configured (the API is read-only), or the request came from another site", body = ErrorBody),
    (status = 415, description = "the body is not application/json", body = ErrorBody),
    (status = 422, description = "JSON of the wrong shape (an unknown field, a time that is not RFC 3339)", body = ErrorBody),
    (status = "default", description = "an error (see the document's description)", body = ErrorBody),
))]
pub async fn create_silence(
    State(state): State<AppState>,
    Extension(identity): Extension<Identity>,
    Extension(scope): Extension<Scope>,
    source: Source,
    Json(silence): Json<NewSilence>,
) -> Result<(StatusCode, Json<Silence>)> {
    if !scope.is_everything() {
        return Err(ApiError::Forbidden(
            "silences are for admins while web.scopes is in force".into(),
        ));
    }
    let created = add_silence(&state, silence, &identity, &source).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// Validates and stores a silence, recording who set it as authentication established it (the
/// token's name or the trusted proxy's user; never a header anyone could send), with its
/// record in the audit trail in the same transaction.
pub async fn add_silence(
    state: &AppState,
    silence: NewSilence,
    identity: &Identity,
    source: &Source,
) -> Result<Silence> {
    let now = Utc::now();
    let silence = silence
        .validated(now)
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let requester = identity.requester();
    let mut tx = state.store.pool().begin().await?;
    let created = silences::create(&mut tx, &silence, &requester, now).await?;
    let detail = format!("until {}; {}", created.until.to_rfc3339(), created.comment);
    let event = NewAuditEvent {
        actor: &requester,
        action: "silence-added",
        subject: &silenced(&created),
        detail: &detail,
        source: &source.0,
    };
    audit::record(&mut tx, &event, now).await?;
    tx.commit().await?;
    Ok(created)
}

/// What a silence holds back, as the audit trail names it: "silence 7: root cause …",
/// "silence 8: domain gateway on prod-1".
pub fn silenced(silence: &Silence) -> String {
    let mut scope = Vec::new();
    if let Some(cause) = &silence.root_cause {
        scope.push(format!("root cause {cause}"));
    }
    if let Some(domain) = &silence.domain {
        scope.push(format!("domain {domain}"));
    }
    if let Some(cluster) = &silence.cluster {
        scope.push(format!("on {cluster}"));
    }
    format!("silence {}: {}", silence.id, scope.join(" "))
}
