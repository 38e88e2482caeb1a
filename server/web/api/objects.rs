//! `GET /api/v1/objects` (filtered, paginated), one object with its history, the problems,
//! and `/api/v1/owner` ("what reconciles this?").

use super::openapi::StateFilter;
use crate::web::AppState;
use crate::web::error::{ApiError, ErrorBody, Result};
use crate::web::scope::Scope;
use crate::web::views::filters::ObjectQuery;
use crate::web::views::object::{ObjectDetail, key_from_path};
use crate::web::views::owner::OwnerView;
use crate::web::views::present::ObjectItem;
use crate::web::views::problems::ProblemsView;
use axum::Json;
use axum::extract::{Extension, Path, Query, State};
use chrono::Utc;
use serde::Serialize;
use std::collections::HashMap;

/// One page of the objects the filters select.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ObjectPage {
    pub items: Vec<ObjectItem>,
    /// How many objects the filters select, on every page.
    pub total: i64,
    pub limit: i64,
    pub offset: i64,
}

/// Objects, filtered and paginated.
#[utoipa::path(get, path = super::OBJECTS, operation_id = "objects",
    params(
        ("cluster" = Option<String>, Query, description = "cluster name"),
        ("label" = Option<String>, Query, description = "cluster label, key=value"),
        ("kind" = Option<String>, Query, description = "Kubernetes kind, any case"),
        ("namespace" = Option<String>, Query, description = "namespace"),
        ("state" = inline(Option<Vec<StateFilter>>), Query, explode, description = "a state, or not-healthy (every state but healthy); repeated, any of them (state=failed&state=stuck)"),
        ("domain" = Option<String>, Query, description = "domain name"),
        ("q" = Option<String>, Query, description = "part of the name, any case"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 1000, description = "page size (default 100)"),
        ("offset" = Option<i64>, Query, minimum = 0, description = "objects to skip"),
    ),
    responses(
        (status = 200, description = "one page of objects", body = ObjectPage),
        (status = 400, description = "a bad filter, with what is wrong", body = ErrorBody),
        (status = "default", description = "an error (see the document's description)", body = ErrorBody),
    ))]
pub async fn list(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    Query(params): Query<Vec<(String, String)>>,
) -> Result<Json<ObjectPage>> {
    let site = scope.site(&state.site);
    let query = ObjectQuery::parse(&params, &site)?;
    let now = Utc::now();
    let page = query.page(&state.store, &site, &scope, now).await?;
    Ok(Json(ObjectPage {
        items: page
            .items
            .iter()
            .map(|r| scope.item(ObjectItem::new(r, now)))
            .collect(),
        total: page.total,
        limit: query.limit,
        offset: query.offset,
    }))
}

/// One object: conditions, revisions, dependencies, what it applied, who reconciles it, its
/// state history and the flux commands for it.
#[utoipa::path(get, path = super::OBJECT, operation_id = "object",
    params(
        ("cluster" = String, Path, description = "cluster name"),
        ("kind" = String, Path, description = "kind, any case"),
        ("namespace" = String, Path, description = "namespace; _ for cluster-scoped objects"),
        ("name" = String, Path, description = "object name"),
    ),
    responses(
        (status = 200, description = "the object", body = ObjectDetail),
        (status = 400, description = "an unknown kind", body = ErrorBody),
        (status = 404, description = "no such object", body = ErrorBody),
        (status = "default", description = "an error (see the document's description)", body = ErrorBody),
    ))]
pub async fn one(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    Path((cluster, kind, namespace, name)): Path<(String, String, String, String)>,
) -> Result<Json<ObjectDetail>> {
    let key = key_from_path(cluster, &kind, &namespace, name)?;
    let site = scope.site(&state.site);
    Ok(Json(
        ObjectDetail::load(&state.store, &site, &scope, &key, Utc::now()).await?,
    ))
}

/// Every root cause, worst first, with what it affects and the chain to each affected object.
#[utoipa::path(get, path = super::PROBLEMS, operation_id = "problems", responses(
    (status = 200, description = "the root causes", body = ProblemsView),
    (status = "default", description = "an error (see the document's description)", body = ErrorBody),
))]
pub async fn problems(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
) -> Result<Json<ProblemsView>> {
    Ok(Json(
        ProblemsView::load(&state.store, &state.site, &scope, Utc::now()).await?,
    ))
}

/// What reconciles this? The Flux object that applied an object, its source and revisions,
/// and the controller.
#[utoipa::path(get, path = super::OWNER, operation_id = "owner",
    params(
        ("cluster" = String, Query, description = "cluster name"),
        ("kind" = String, Query, description = "kind, any case"),
        ("namespace" = Option<String>, Query, description = "namespace (empty or _ for cluster-scoped objects)"),
        ("name" = String, Query, description = "object name"),
    ),
    responses(
        (status = 200, description = "what applied and reconciles the object", body = OwnerView),
        (status = 400, description = "a missing or bad parameter", body = ErrorBody),
        (status = 404, description = "no such object", body = ErrorBody),
        (status = "default", description = "an error (see the document's description)", body = ErrorBody),
    ))]
pub async fn owner(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
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
        OwnerView::load(&state.store, &state.site, &scope, &key, Utc::now()).await?,
    ))
}
