//! `/impact/{cluster}/{kind}/{namespace}/{name}`: what breaks if this stack goes.

use super::render;
use crate::web::AppState;
use crate::web::error::PageResult;
use crate::web::scope::Scope;
use crate::web::views::icons::Icon as _;
use crate::web::views::impact::ImpactView;
use crate::web::views::object::key_from_path;
use askama::Template;
use axum::extract::{Extension, Path, State};
use axum::response::Response;
use chrono::Utc;

#[derive(Template)]
#[template(path = "impact.html")]
struct ImpactPage {
    view: ImpactView,
    object_href: String,
    access: &'static str,
}

pub async fn page(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    Path((cluster, kind, namespace, name)): Path<(String, String, String, String)>,
) -> PageResult<Response> {
    let key = key_from_path(cluster, &kind, &namespace, name)?;
    let clusters = [key.cluster.clone()];
    let view = ImpactView::load(
        &state.store,
        &state.site,
        &scope,
        &clusters,
        (key.kind, &key.namespace, &key.name),
        None,
        Utc::now(),
    )
    .await?;
    render(&ImpactPage {
        object_href: format!(
            "/objects/{}/{}/{}/{}",
            key.cluster,
            key.kind,
            if key.namespace.is_empty() {
                "_"
            } else {
                &key.namespace
            },
            key.name
        ),
        view,
        access: state.site.access_note(),
    })
}
