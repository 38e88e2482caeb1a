//! `GET /api/v1/fleet`, `/api/v1/clusters` and `/api/v1/clusters/{name}`.

use crate::web::AppState;
use crate::web::error::Result;
use crate::web::fleet_view::FleetView;
use crate::web::views::cluster::ClusterDetail;
use axum::Json;
use axum::extract::{Path, State};
use chrono::Utc;
use serde_json::{Value, json};

pub async fn fleet(State(state): State<AppState>) -> Result<Json<FleetView>> {
    Ok(Json(
        FleetView::load(&state.store, &state.site, Utc::now()).await?,
    ))
}

pub async fn clusters(State(state): State<AppState>) -> Result<Json<Value>> {
    let view = FleetView::load(&state.store, &state.site, Utc::now()).await?;
    Ok(Json(json!({"clusters": view.clusters})))
}

pub async fn cluster(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<ClusterDetail>> {
    Ok(Json(
        ClusterDetail::load(&state.store, &state.site, &name, Utc::now()).await?,
    ))
}
