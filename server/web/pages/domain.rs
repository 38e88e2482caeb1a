//! `/domains/{name}`: the domain's version and state on each cluster, and rollout progress;
//! `?label=ring=prod` narrows it to one group of clusters.

use super::render;
use crate::delivery::Estimate;
use crate::web::AppState;
use crate::web::error::PageResult;
use crate::web::scope::Scope;
use crate::web::views::delivery::estimate_of_version;
use crate::web::views::domain::DomainDetail;
use crate::web::views::filters::label_pair;
use crate::web::views::icons::Icon as _;
use crate::web::views::present::Live;
use askama::Template;
use axum::extract::{Extension, OriginalUri, Path, Query, State};
use axum::response::Response;
use chrono::Utc;
use std::collections::HashMap;

#[derive(Template)]
#[template(path = "domain.html")]
struct DomainPage {
    view: DomainDetail,
    /// For the newest version while it is in flight on the clusters shown.
    estimate: Option<Estimate>,
    live: Live,
    access: &'static str,
}

pub async fn page(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    OriginalUri(uri): OriginalUri,
    Path(name): Path<String>,
    Query(params): Query<HashMap<String, String>>,
) -> PageResult<Response> {
    let label = match params.get("label").filter(|l| !l.is_empty()) {
        Some(label) => Some(label_pair(label)?),
        None => None,
    };
    let now = Utc::now();
    let view = DomainDetail::load(&state.store, &state.site, &scope, &name, label, now).await?;
    let estimate = match &view.newest_version {
        Some(version) => {
            let shown = |cluster: &str| view.clusters.iter().any(|c| c.cluster == cluster);
            estimate_of_version(&state.store, &state.site, &name, version, shown, now).await?
        }
        None => None,
    };
    render(&DomainPage {
        view,
        estimate,
        live: Live::new(&uri, now),
        access: state.site.access_note(),
    })
}
