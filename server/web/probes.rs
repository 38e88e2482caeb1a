//! `/healthz` (the process is up) and `/readyz` (it can serve: the database answers).

use super::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use std::time::Duration;

/// Readiness must answer inside the probe's own timeout (the chart gives it 2 s), even when
/// the pool would wait longer for a connection to a database that is gone.
const DATABASE_ANSWER: Duration = Duration::from_millis(500);

/// The probe and metrics paths: always open, answering any Host name, in plain text.
pub fn is_probe(path: &str) -> bool {
    matches!(path, "/healthz" | "/readyz" | "/metrics")
}

pub async fn healthz() -> &'static str {
    "ok"
}

pub async fn readyz(State(state): State<AppState>) -> (StatusCode, &'static str) {
    match state.store.check(DATABASE_ANSWER).await {
        Ok(()) => (StatusCode::OK, "ready"),
        Err(reason) => {
            tracing::warn!(%reason, "not ready: the database is not answering");
            (StatusCode::SERVICE_UNAVAILABLE, "database not answering")
        }
    }
}
