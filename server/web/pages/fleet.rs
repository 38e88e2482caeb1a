//! `/`: domains × cluster groups, counts by state, root causes first, stale data called out.

use super::render;
use crate::web::AppState;
use crate::web::error::PageResult;
use crate::web::fleet_view::{FleetView, past_time};
use crate::web::scope::Scope;
use crate::web::views::domain_hint::DomainHint;
use crate::web::views::icons::Icon as _;
use askama::Template;
use axum::extract::{Extension, Query, State};
use axum::response::Response;
use chrono::Utc;
use std::collections::HashMap;
use std::time::Instant;

#[derive(Template)]
#[template(path = "fleet.html")]
struct FleetPage {
    view: FleetView,
    access: &'static str,
    /// Shown while the config has no domains.
    hint: Option<DomainHint>,
}

#[derive(Template)]
#[template(path = "fleet_fragment.html")]
struct FleetFragment {
    view: FleetView,
}

pub async fn page(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    Query(params): Query<HashMap<String, String>>,
) -> PageResult<Response> {
    let now = Utc::now();
    let at = past_time(params.get("at").map(String::as_str), &state.site, now)?;
    let view = FleetView::load_when(&state.store, &state.site, &scope, at, now).await?;
    // The hint reads the whole fleet's objects: for those who see everything only.
    let hint = if state.site.domains.is_empty() && scope.is_everything() {
        Some(DomainHint::cached(&state.domain_hint, &state.store, Instant::now()).await?)
    } else {
        None
    };
    render(&FleetPage {
        view,
        access: state.site.access_note(),
        hint,
    })
}

/// The live part of the page, for htmx to swap in place.
pub async fn fragment(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
) -> PageResult<Response> {
    let view = FleetView::load(&state.store, &state.site, &scope, Utc::now()).await?;
    render(&FleetFragment { view })
}
