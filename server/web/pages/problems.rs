//! `/problems`: every root cause, worst first, with the chain from each affected object.

use super::render;
use crate::web::AppState;
use crate::web::error::PageResult;
use crate::web::scope::Scope;
use crate::web::views::icons::Icon as _;
use crate::web::views::problems::ProblemsView;
use askama::Template;
use axum::extract::{Extension, State};
use axum::response::Response;
use chrono::Utc;

#[derive(Template)]
#[template(path = "problems.html")]
struct ProblemsPage {
    view: ProblemsView,
    access: &'static str,
}

#[derive(Template)]
#[template(path = "problems_body.html")]
struct ProblemsFragment {
    view: ProblemsView,
}

pub async fn page(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
) -> PageResult<Response> {
    let view = ProblemsView::load(&state.store, &state.site, &scope, Utc::now()).await?;
    render(&ProblemsPage {
        view,
        access: state.site.access_note(),
    })
}

/// The live part of the page, for htmx to swap in place.
pub async fn fragment(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
) -> PageResult<Response> {
    let view = ProblemsView::load(&state.store, &state.site, &scope, Utc::now()).await?;
    render(&ProblemsFragment { view })
}
