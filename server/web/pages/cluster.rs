//! `/clusters/{name}`: freshness, controllers, objects by state, the dependsOn tree.

use super::render;
use crate::web::AppState;
use crate::web::error::PageError;
use crate::web::views::cluster::ClusterDetail;
use askama::Template;
use axum::extract::{Path, State};
use axum::response::Response;
use chrono::Utc;

#[derive(Template)]
#[template(path = "cluster.html")]
struct ClusterPage {
    view: ClusterDetail,
    access: &'static str,
}

pub async fn page(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Response, PageError> {
    let view = ClusterDetail::load(&state.store, &state.site, &name, Utc::now()).await?;
    render(&ClusterPage {
        view,
        access: state.site.access_note(),
    })
}
