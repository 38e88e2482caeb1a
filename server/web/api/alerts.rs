//! `GET /api/v1/alerts` (open, silenced and recently resolved alerts with the delivery status
//! of their notifications), `GET /api/v1/silences` and `POST /api/v1/silences`.
//!
//! The JSON POST needs no CSRF token: browsers cannot send `application/json` cross-site
//! without a CORS preflight, which this server never grants.

use crate::alerts::silences::{self, NewSilence, Silence};
use crate::alerts::{AlertView, list_alerts};
use crate::web::AppState;
use crate::web::error::ApiError;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use chrono::Utc;
use serde::Serialize;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(super::ALERTS, get(alerts))
        .route(super::SILENCES, get(list_silences).post(create_silence))
}

/// How many resolved alerts the listing shows.
const RESOLVED_SHOWN: i64 = 50;

#[derive(Debug, Serialize)]
pub struct AlertsReply {
    pub open: Vec<AlertView>,
    pub silenced: Vec<AlertView>,
    pub resolved: Vec<AlertView>,
}

impl AlertsReply {
    pub async fn load(state: &AppState) -> Result<AlertsReply, ApiError> {
        let mut conn = state.store.pool().acquire().await?;
        let mut reply = AlertsReply {
            open: Vec::new(),
            silenced: Vec::new(),
            resolved: Vec::new(),
        };
        for alert in list_alerts(&mut conn, RESOLVED_SHOWN).await? {
            match (alert.status.as_str(), alert.silence_id) {
                ("resolved", _) => reply.resolved.push(alert),
                (_, Some(_)) => reply.silenced.push(alert),
                _ => reply.open.push(alert),
            }
        }
        Ok(reply)
    }
}

pub async fn alerts(State(state): State<AppState>) -> Result<Json<AlertsReply>, ApiError> {
    Ok(Json(AlertsReply::load(&state).await?))
}

pub async fn list_silences(State(state): State<AppState>) -> Result<Json<Vec<Silence>>, ApiError> {
    let mut conn = state.store.pool().acquire().await?;
    Ok(Json(silences::active(&mut conn, Utc::now()).await?))
}

pub async fn create_silence(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(silence): Json<NewSilence>,
) -> Result<(StatusCode, Json<Silence>), ApiError> {
    let created = add_silence(&state, silence, &headers).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// Validates and stores a silence set by whoever the proxy says made the request.
pub async fn add_silence(
    state: &AppState,
    silence: NewSilence,
    headers: &HeaderMap,
) -> Result<Silence, ApiError> {
    let now = Utc::now();
    let silence = silence
        .validated(now)
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let mut conn = state.store.pool().acquire().await?;
    Ok(silences::create(&mut conn, &silence, &requester(headers), now).await?)
}

/// The user an authenticating proxy in front of fleetglass names, else "anonymous".
pub fn requester(headers: &HeaderMap) -> String {
    ["x-forwarded-user", "x-auth-request-user"]
        .iter()
        .filter_map(|name| headers.get(*name)?.to_str().ok())
        .map(str::trim)
        .find(|user| !user.is_empty())
        .map_or_else(
            || "anonymous".to_string(),
            |user| user.chars().take(200).collect(),
        )
}
