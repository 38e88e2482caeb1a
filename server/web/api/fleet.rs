//! `GET /api/v1/fleet`, `/api/v1/clusters` and `/api/v1/clusters/{name}`.

use crate::web::AppState;
use crate::web::error::{ErrorBody, Result};
use crate::web::fleet_view::{ClusterView, FleetView, past_time};
use crate::web::scope::Scope;
use crate::web::views::cluster::ClusterDetail;
use axum::Json;
use axum::extract::{Extension, Path, Query, State};
use chrono::Utc;
use serde::Serialize;
use std::collections::HashMap;

/// Every cluster, as the fleet view lists them.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ClusterList {
    pub clusters: Vec<ClusterView>,
}

/// The fleet at a glance: domains × cluster groups, counts by state, root causes, stale
/// clusters; with `at`, as it was then (from the history, for post-incident reviews).
#[utoipa::path(get, path = super::FLEET, operation_id = "fleet",
    params(
        ("at" = Option<String>, Query, description = "an RFC 3339 time in the past (2026-12-01T09:30:00Z), within retention.transitions: the fleet as it was then; absent: now"),
    ),
    responses(
        (status = 200, description = "the fleet", body = FleetView),
        (status = 400, description = "a bad time, one in the future or one before the history kept", body = ErrorBody),
        (status = "default", description = "an error (see the document's description)", body = ErrorBody),
    ))]
pub async fn fleet(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Json<FleetView>> {
    let now = Utc::now();
    let at = past_time(params.get("at").map(String::as_str), &state.site, now)?;
    Ok(Json(
        FleetView::load_when(&state.store, &state.site, &scope, at, now).await?,
    ))
}

/// Every cluster with its labels, freshness and objects by state.
#[utoipa::path(get, path = super::CLUSTERS, operation_id = "clusters", responses(
    (status = 200, description = "the clusters", body = ClusterList),
    (status = "default", description = "an error (see the document's description)", body = ErrorBody),
))]
pub async fn clusters(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
) -> Result<Json<ClusterList>> {
    let view = FleetView::load(&state.store, &state.site, &scope, Utc::now()).await?;
    Ok(Json(ClusterList {
        clusters: view.clusters,
    }))
}

/// One cluster: freshness, Flux controllers and whether they run, objects by state, the
/// dependsOn tree.
#[utoipa::path(get, path = super::CLUSTER, operation_id = "cluster",
    params(("name" = String, Path, description = "cluster name")),
    responses(
        (status = 200, description = "the cluster", body = ClusterDetail),
        (status = 404, description = "no such cluster", body = ErrorBody),
        (status = "default", description = "an error (see the document's description)", body = ErrorBody),
    ))]
pub async fn cluster(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    Path(name): Path<String>,
) -> Result<Json<ClusterDetail>> {
    Ok(Json(
        ClusterDetail::load(&state.store, &state.site, &scope, &name, Utc::now()).await?,
    ))
}
