//! `GET /api/v1/domains/{name}/rollouts`, `…/rollouts/{version}` and `…/delivery`: the
//! domain's rollouts across rings (with the expected time to fully healthy of the one in
//! flight) and its DORA figures per ring.

use crate::delivery::DeliveryFigures;
use crate::web::AppState;
use crate::web::error::{ApiError, ErrorBody, Result};
use crate::web::scope::Scope;
use crate::web::views::delivery::{
    DEFAULT_VERSIONS, MAX_VERSIONS, RolloutOfVersion, Rollouts, figures_of, window_of,
};
use axum::Json;
use axum::extract::{Extension, Path, Query, State};
use chrono::Utc;
use std::collections::HashMap;

/// The domain's newest versions, each as a rollout across rings: per cluster when it was
/// offered, applied and fully healthy, or where it stopped and why.
#[utoipa::path(get, path = super::ROLLOUTS, operation_id = "rollouts",
    params(
        ("name" = String, Path, description = "domain name"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 100, description = "how many versions, newest first offered first (default 10)"),
    ),
    responses(
        (status = 200, description = "the rollouts", body = Rollouts),
        (status = 400, description = "a bad limit", body = ErrorBody),
        (status = 404, description = "no such domain", body = ErrorBody),
        (status = "default", description = "an error (see the document's description)", body = ErrorBody),
    ))]
pub async fn rollouts(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    Path(name): Path<String>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Json<Rollouts>> {
    let limit = match params.get("limit") {
        None => DEFAULT_VERSIONS,
        Some(text) => text
            .parse::<i64>()
            .ok()
            .filter(|n| (1..=MAX_VERSIONS).contains(n))
            .ok_or_else(|| {
                ApiError::BadRequest(format!(
                    "limit is a whole number from 1 to {MAX_VERSIONS}, not {text:?}"
                ))
            })?,
    };
    let view = Rollouts::load(&state.store, &state.site, &scope, &name, limit, Utc::now()).await?;
    Ok(Json(view))
}

/// One version's rollout across rings, with the expected time to fully healthy while it is
/// the newest and in flight.
#[utoipa::path(get, path = super::ROLLOUT, operation_id = "rollout",
    params(
        ("name" = String, Path, description = "domain name"),
        ("version" = String, Path, description = "the version"),
    ),
    responses(
        (status = 200, description = "the rollout", body = RolloutOfVersion),
        (status = 404, description = "no such domain, or no rollout of the version recorded", body = ErrorBody),
        (status = "default", description = "an error (see the document's description)", body = ErrorBody),
    ))]
pub async fn rollout(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    Path((name, version)): Path<(String, String)>,
) -> Result<Json<RolloutOfVersion>> {
    let now = Utc::now();
    let view =
        RolloutOfVersion::load(&state.store, &state.site, &scope, &name, &version, now).await?;
    Ok(Json(view))
}

/// DORA's four for the domain on one ring (or the whole fleet) over a window: deployment
/// frequency, lead time, change failure rate and time to restore, as docs/delivery.md defines
/// them.
#[utoipa::path(get, path = super::DELIVERY, operation_id = "delivery",
    params(
        ("name" = String, Path, description = "domain name"),
        ("ring" = Option<String>, Query, description = "one ring (a value of the group_by label); empty or absent: every cluster"),
        ("window" = Option<String>, Query, description = "the window ending now: whole days (30d) or a Go duration (12h), from 1h to 366d; default 30d"),
    ),
    responses(
        (status = 200, description = "the figures", body = DeliveryFigures),
        (status = 400, description = "a bad window, or a ring no cluster is in", body = ErrorBody),
        (status = 404, description = "no such domain", body = ErrorBody),
        (status = "default", description = "an error (see the document's description)", body = ErrorBody),
    ))]
pub async fn delivery(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    Path(name): Path<String>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Json<DeliveryFigures>> {
    let window = window_of(params.get("window").map(String::as_str), Utc::now())?;
    let ring = params
        .get("ring")
        .map(String::as_str)
        .filter(|r| !r.is_empty());
    let figures = figures_of(&state.store, &state.site, &scope, &name, ring, window).await?;
    Ok(Json(figures))
}
