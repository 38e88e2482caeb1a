//! `/objects/{cluster}/{kind}/{namespace}/{name}` (`_` for the empty namespace of
//! cluster-scoped objects): one object in full.

use super::render;
use crate::web::AppState;
use crate::web::error::PageError;
use crate::web::views::object::{ObjectDetail, key_from_path};
use askama::Template;
use axum::extract::{Path, State};
use axum::response::Response;
use chrono::Utc;

#[derive(Template)]
#[template(path = "object.html")]
struct ObjectPage {
    view: ObjectDetail,
    access: &'static str,
}

pub async fn page(
    State(state): State<AppState>,
    Path((cluster, kind, namespace, name)): Path<(String, String, String, String)>,
) -> Result<Response, PageError> {
    let key = key_from_path(cluster, &kind, &namespace, name)?;
    let view = ObjectDetail::load(&state.store, &key, Utc::now()).await?;
    render(&ObjectPage {
        view,
        access: state.site.access_note(),
    })
}
