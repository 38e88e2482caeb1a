//! `/owner/{cluster}/{kind}/{namespace}/{name}`: what reconciles this object — the Flux
//! object that applied it, that one's source and revisions, and the controller behind it.

use super::render;
use crate::web::AppState;
use crate::web::error::PageResult;
use crate::web::scope::Scope;
use crate::web::views::icons::Icon as _;
use crate::web::views::object::key_from_path;
use crate::web::views::owner::OwnerView;
use crate::web::views::present::Live;
use askama::Template;
use axum::extract::{Extension, OriginalUri, Path, State};
use axum::response::Response;
use chrono::Utc;

#[derive(Template)]
#[template(path = "owner.html")]
struct OwnerPage {
    view: OwnerView,
    live: Live,
    access: &'static str,
}

pub async fn page(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    OriginalUri(uri): OriginalUri,
    Path((cluster, kind, namespace, name)): Path<(String, String, String, String)>,
) -> PageResult<Response> {
    let key = key_from_path(cluster, &kind, &namespace, name)?;
    let now = Utc::now();
    let view = OwnerView::load(&state.store, &state.site, &scope, &key, now).await?;
    render(&OwnerPage {
        view,
        live: Live::new(&uri, now),
        access: state.site.access_note(),
    })
}
