//! `/domains`: the domain index.

use super::render;
use crate::web::AppState;
use crate::web::error::PageResult;
use crate::web::scope::Scope;
use crate::web::views::domain_index::DomainIndex;
use crate::web::views::icons::Icon as _;
use crate::web::views::present::Live;
use askama::Template;
use axum::extract::{Extension, OriginalUri, State};
use axum::response::Response;
use chrono::Utc;

#[derive(Template)]
#[template(path = "domains.html")]
struct DomainsPage {
    view: DomainIndex,
    live: Live,
    access: &'static str,
}

pub async fn page(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    OriginalUri(uri): OriginalUri,
) -> PageResult<Response> {
    let now = Utc::now();
    let view = DomainIndex::load(&state.store, &state.site, &scope, now).await?;
    render(&DomainsPage {
        view,
        live: Live::new(&uri, now),
        access: state.site.access_note(),
    })
}
