//! The JSON API under `/api/v1`: the same verdicts as the pages, for scripts and CI.

pub mod alerts;
mod fleet;

use super::AppState;
use axum::Router;
use axum::routing::get;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/fleet", get(fleet::fleet))
        .merge(alerts::router())
}
