//! `/healthz` (the process is up) and `/readyz` (it can serve: the database answers, takes
//! writes, and the collector's latest round write in this process went through).

use super::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use std::time::Duration;

/// Readiness must answer inside the probe's own timeout (the chart gives it 2 s), even when
/// the pool would wait longer for a connection to a database that is gone.
const DATABASE_ANSWER: Duration = Duration::from_millis(500);

/// The probe paths: always open, answering any Host name, in plain text. `/metrics` is not
/// one: it names clusters, domains and versions, so it checks the Host name and, when
/// authentication is on, asks for a token like every other route (Prometheus sends one with
/// `authorization`; a scrape by pod IP passes the Host check).
pub fn is_probe(path: &str) -> bool {
    matches!(path, "/healthz" | "/readyz")
}

pub async fn healthz() -> &'static str {
    "ok"
}

pub async fn readyz(State(state): State<AppState>) -> (StatusCode, String) {
    match state.store.check(DATABASE_ANSWER).await {
        Ok(()) => (StatusCode::OK, "ready".into()),
        Err(reason) => {
            tracing::warn!(%reason, "not ready");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("not ready: {reason}"),
            )
        }
    }
}
