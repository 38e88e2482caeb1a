//! `/clusters`: the cluster index (`?group=` narrows it to one ring).

use super::render;
use crate::web::AppState;
use crate::web::error::PageResult;
use crate::web::scope::Scope;
use crate::web::views::cluster_index::ClusterIndex;
use crate::web::views::icons::Icon as _;
use crate::web::views::present::Live;
use askama::Template;
use axum::extract::{Extension, OriginalUri, Query, State};
use axum::response::Response;
use chrono::Utc;
use serde::Deserialize;

#[derive(Template)]
#[template(path = "clusters.html")]
struct ClustersPage {
    view: ClusterIndex,
    live: Live,
    access: &'static str,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClustersQuery {
    group: Option<String>,
}

pub async fn page(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    OriginalUri(uri): OriginalUri,
    Query(query): Query<ClustersQuery>,
) -> PageResult<Response> {
    let now = Utc::now();
    let view = ClusterIndex::load(&state.store, &state.site, &scope, query.group, now).await?;
    render(&ClustersPage {
        view,
        live: Live::new(&uri, now),
        access: state.site.access_note(),
    })
}
