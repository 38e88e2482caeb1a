//! `/audit`: the audit trail, newest first, a page at a time.

use super::render;
use crate::web::AppState;
use crate::web::api::audit::AuditTrail;
use crate::web::error::PageResult;
use crate::web::views::present::Live;
use askama::Template;
use axum::extract::{OriginalUri, Query, State};
use axum::response::Response;
use chrono::Utc;
use std::collections::HashMap;

#[derive(Template)]
#[template(path = "audit.html")]
struct AuditPage {
    trail: AuditTrail,
    live: Live,
    access: &'static str,
}

pub async fn page(
    State(state): State<AppState>,
    OriginalUri(uri): OriginalUri,
    Query(params): Query<HashMap<String, String>>,
) -> PageResult<Response> {
    let trail = AuditTrail::load(&state, &params).await?;
    render(&AuditPage {
        trail,
        live: Live::new(&uri, Utc::now()),
        access: state.site.access_note(),
    })
}
