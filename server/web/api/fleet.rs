//! `GET /api/v1/fleet`: what the fleet page shows, as JSON.

use crate::web::AppState;
use crate::web::error::ApiError;
use crate::web::fleet_view::FleetView;
use axum::Json;
use axum::extract::State;
use chrono::Utc;

pub async fn fleet(State(state): State<AppState>) -> Result<Json<FleetView>, ApiError> {
    Ok(Json(
        FleetView::load(&state.store, &state.site, Utc::now()).await?,
    ))
}
