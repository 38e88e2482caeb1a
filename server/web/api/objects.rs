//! `GET /api/v1/objects` (filtered, paginated), one object with its history, the problems,
//! and `/api/v1/owner` ("what reconciles this?").

use crate::web::AppState;
use crate::web::error::{ApiError, Result};
use crate::web::views::filters::ObjectQuery;
use crate::web::views::object::{ObjectDetail, key_from_path};
use crate::web::views::owner::OwnerView;
use crate::web::views::present::ObjectItem;
use crate::web::views::problems::ProblemsView;
use axum::Json;
use axum::extract::{Path, Query, State};
use chrono::Utc;
use serde_json::{Value, json};
use std::collections::HashMap;

pub async fn list(
    State(state): State<AppState>,
    Query(params): Query<Vec<(String, String)>>,
) -> Result<Json<Value>> {
    let query = ObjectQuery::parse(&params, &state.site)?;
    let page = state
        .store
        .objects(&query.filter(&state.store).await?)
        .await?;
    let now = Utc::now();
    let items: Vec<ObjectItem> = page.items.iter().map(|r| ObjectItem::new(r, now)).collect();
    Ok(Json(json!({
        "items": items,
        "total": page.total,
        "limit": query.limit,
        "offset": query.offset,
    })))
}

pub async fn one(
    State(state): State<AppState>,
    Path((cluster, kind, namespace, name)): Path<(String, String, String, String)>,
) -> Result<Json<ObjectDetail>> {
    let key = key_from_path(cluster, &kind, &namespace, name)?;
    Ok(Json(
        ObjectDetail::load(&state.store, &state.site, &key, Utc::now()).await?,
    ))
}

pub async fn problems(State(state): State<AppState>) -> Result<Json<ProblemsView>> {
    Ok(Json(
        ProblemsView::load(&state.store, &state.site, Utc::now()).await?,
    ))
}

pub async fn owner(
    State(state): State<AppState>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Json<OwnerView>> {
    let field = |key: &str| {
        params
            .get(key)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .ok_or_else(|| {
                ApiError::BadRequest(format!(
                    "{key} is required (cluster, kind, namespace, name)"
                ))
            })
    };
    let namespace = params
        .get("namespace")
        .map(|v| v.trim().to_string())
        .unwrap_or_default();
    let key = key_from_path(
        field("cluster")?,
        &field("kind")?,
        &namespace,
        field("name")?,
    )?;
    Ok(Json(
        OwnerView::load(&state.store, &state.site, &key, Utc::now()).await?,
    ))
}
