//! `/domains/{name}`: the domain's version and state on each cluster, and rollout progress;
//! `?label=ring=prod` narrows it to one group of clusters.

use super::render;
use crate::web::AppState;
use crate::web::error::PageError;
use crate::web::views::domain::DomainDetail;
use crate::web::views::filters::label_pair;
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::Response;
use chrono::Utc;
use std::collections::HashMap;

#[derive(Template)]
#[template(path = "domain.html")]
struct DomainPage {
    view: DomainDetail,
    access: &'static str,
}

pub async fn page(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Response, PageError> {
    let label = match params.get("label").filter(|l| !l.is_empty()) {
        Some(label) => Some(label_pair(label)?),
        None => None,
    };
    let view = DomainDetail::load(&state.store, &state.site, &name, label, Utc::now()).await?;
    render(&DomainPage {
        view,
        access: state.site.access_note(),
    })
}
