//! `/clusters/{name}`: freshness, controllers, objects by state, the dependsOn tree.

use super::render;
use crate::web::AppState;
use crate::web::error::PageResult;
use crate::web::scope::Scope;
use crate::web::views::cluster::ClusterDetail;
use crate::web::views::icons::Icon as _;
use crate::web::views::present::Live;
use askama::Template;
use axum::extract::{Extension, OriginalUri, Path, State};
use axum::response::Response;
use chrono::Utc;

#[derive(Template)]
#[template(path = "cluster.html")]
struct ClusterPage {
    view: ClusterDetail,
    live: Live,
    access: &'static str,
}

pub async fn page(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    OriginalUri(uri): OriginalUri,
    Path(name): Path<String>,
) -> PageResult<Response> {
    let now = Utc::now();
    let view = ClusterDetail::load(&state.store, &state.site, &scope, &name, now).await?;
    render(&ClusterPage {
        view,
        live: Live::new(&uri, now),
        access: state.site.access_note(),
    })
}
