//! `GET /api/v1/domains`, `/api/v1/domains/{name}` and the CI gate
//! `/api/v1/domains/{name}/wait?version=V&timeout=D`.

use crate::web::AppState;
use crate::web::error::{ApiError, Result};
use crate::web::views::domain::DomainDetail;
use crate::web::views::filters::label_pair;
use crate::web::views::gate::{self, GateVerdict};
use axum::Json;
use axum::extract::{Path, Query, State};
use chrono::Utc;
use serde_json::{Value, json};
use std::collections::HashMap;

pub async fn list(State(state): State<AppState>) -> Result<Json<Value>> {
    let domains = DomainDetail::load_all(&state.store, &state.site, Utc::now()).await?;
    Ok(Json(json!({"domains": domains})))
}

pub async fn one(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Json<DomainDetail>> {
    let label = match params.get("label").filter(|l| !l.is_empty()) {
        Some(label) => Some(label_pair(label)?),
        None => None,
    };
    Ok(Json(
        DomainDetail::load(&state.store, &state.site, &name, label, Utc::now()).await?,
    ))
}

pub async fn wait(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Json<GateVerdict>> {
    let version = params
        .get("version")
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())
        .ok_or_else(|| ApiError::BadRequest("version is required, e.g. ?version=v1.4.2".into()))?;
    let timeout = gate::timeout(params.get("timeout").map(String::as_str))?;
    let label = match params.get("label").filter(|l| !l.is_empty()) {
        Some(label) => Some(label_pair(label)?),
        None => None,
    };
    Ok(Json(
        gate::wait(
            &state.store,
            &state.site,
            &state.waits,
            &name,
            version,
            timeout,
            label,
        )
        .await?,
    ))
}
