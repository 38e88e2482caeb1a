//! `/objects/{cluster}/{kind}/{namespace}/{name}` (`_` for the empty namespace of
//! cluster-scoped objects): one object in full.

use super::render;
use crate::web::AppState;
use crate::web::error::PageResult;
use crate::web::views::icons::Icon as _;
use crate::web::views::object::{ObjectDetail, key_from_path};
use crate::web::views::present::Live;
use askama::Template;
use axum::extract::{OriginalUri, Path, State};
use axum::response::Response;
use chrono::Utc;

#[derive(Template)]
#[template(path = "object.html")]
struct ObjectPage {
    view: ObjectDetail,
    live: Live,
    access: &'static str,
}

pub async fn page(
    State(state): State<AppState>,
    OriginalUri(uri): OriginalUri,
    Path((cluster, kind, namespace, name)): Path<(String, String, String, String)>,
) -> PageResult<Response> {
    let key = key_from_path(cluster, &kind, &namespace, name)?;
    let now = Utc::now();
    let view = ObjectDetail::load(&state.store, &state.site, &key, now).await?;
    render(&ObjectPage {
        view,
        live: Live::new(&uri, now),
        access: state.site.access_note(),
    })
}
