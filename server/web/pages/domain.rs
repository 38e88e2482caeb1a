//! `/domains/{name}`: the domain's version and state on each cluster, and rollout progress;
//! `?label=ring=prod` narrows it to one group of clusters.

use super::render;
use crate::web::AppState;
use crate::web::error::PageResult;
use crate::web::views::domain::DomainDetail;
use crate::web::views::filters::label_pair;
use crate::web::views::icons::Icon as _;
use crate::web::views::present::Live;
use askama::Template;
use axum::extract::{OriginalUri, Path, Query, State};
use axum::response::Response;
use chrono::Utc;
use std::collections::HashMap;

#[derive(Template)]
#[template(path = "domain.html")]
struct DomainPage {
    view: DomainDetail,
    live: Live,
    access: &'static str,
}

pub async fn page(
    State(state): State<AppState>,
    OriginalUri(uri): OriginalUri,
    Path(name): Path<String>,
    Query(params): Query<HashMap<String, String>>,
) -> PageResult<Response> {
    let label = match params.get("label").filter(|l| !l.is_empty()) {
        Some(label) => Some(label_pair(label)?),
        None => None,
    };
    let now = Utc::now();
    let view = DomainDetail::load(&state.store, &state.site, &name, label, now).await?;
    render(&DomainPage {
        view,
        live: Live::new(&uri, now),
        access: state.site.access_note(),
    })
}
