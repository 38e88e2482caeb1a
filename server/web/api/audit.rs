//! `GET /api/v1/audit`: the audit trail, newest first.

use crate::store::AuditEvent;
use crate::web::AppState;
use crate::web::error::{ApiError, ErrorBody, Result};
use axum::Json;
use axum::extract::{Query, State};
use serde::Serialize;
use std::collections::HashMap;

/// Events listed when not told how many, and the most one read lists.
pub const DEFAULT_EVENTS: i64 = 100;
const MAX_EVENTS: i64 = 1_000;

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct AuditTrail {
    /// Newest first.
    pub events: Vec<AuditEvent>,
    /// Pass as `before` for the next (older) page; None on the last page.
    pub next_before: Option<i64>,
}

/// Every write made through fleetglass — sign-ins (and refused ones) and sign-outs, silences
/// set and expired, the access policy when it changed at start-up — with who, what, when and
/// from where.
#[utoipa::path(get, path = super::AUDIT, operation_id = "audit",
    params(
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 1000, description = "how many events (default 100)"),
        ("before" = Option<i64>, Query, description = "only events older than this event id (a page's next_before)"),
    ),
    responses(
        (status = 200, description = "the events, newest first", body = AuditTrail),
        (status = 400, description = "a bad limit or before", body = ErrorBody),
        (status = "default", description = "an error (see the document's description)", body = ErrorBody),
    ))]
pub async fn audit(
    State(state): State<AppState>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Json<AuditTrail>> {
    Ok(Json(AuditTrail::load(&state, &params).await?))
}

impl AuditTrail {
    pub async fn load(state: &AppState, params: &HashMap<String, String>) -> Result<AuditTrail> {
        let number = |name: &str, range: std::ops::RangeInclusive<i64>| match params.get(name) {
            None => Ok(None),
            Some(text) => text
                .parse::<i64>()
                .ok()
                .filter(|n| range.contains(n))
                .map(Some)
                .ok_or_else(|| {
                    ApiError::BadRequest(format!(
                        "{name} is a whole number from {} to {}, not {text:?}",
                        range.start(),
                        range.end()
                    ))
                }),
        };
        let limit = number("limit", 1..=MAX_EVENTS)?.unwrap_or(DEFAULT_EVENTS);
        let before = number("before", 1..=i64::MAX)?;
        let events = state.store.audit_events(limit, before).await?;
        let full = events.len() as i64 == limit;
        Ok(AuditTrail {
            next_before: events.last().filter(|_| full).map(|e| e.id),
            events,
        })
    }
}
