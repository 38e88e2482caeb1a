//! `/healthz` (the process is up) and `/readyz` (it can serve: the database answers).

use super::AppState;
use axum::extract::State;
use axum::http::StatusCode;

pub async fn healthz() -> &'static str {
    "ok"
}

pub async fn readyz(State(state): State<AppState>) -> (StatusCode, &'static str) {
    if state.store.ping().await {
        (StatusCode::OK, "ready")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "database not answering")
    }
}
