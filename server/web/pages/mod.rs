//! Server-rendered pages: one askama struct per page, defined beside its handler.

mod alerts;
mod cluster;
mod domain;
mod fleet;
mod impact;
mod object;
mod objects;
mod problems;

use super::AppState;
use super::error::PageError;
use askama::Template;
use axum::Router;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(fleet::page))
        .route("/fragments/fleet", get(fleet::fragment))
        .route("/problems", get(problems::page))
        .route("/fragments/problems", get(problems::fragment))
        .route("/domains/{name}", get(domain::page))
        .route("/clusters/{name}", get(cluster::page))
        .route("/objects", get(objects::page))
        .route(
            "/objects/{cluster}/{kind}/{namespace}/{name}",
            get(object::page),
        )
        .route(
            "/impact/{cluster}/{kind}/{namespace}/{name}",
            get(impact::page),
        )
        .merge(alerts::router())
}

/// Renders any page template into a response.
pub fn render(template: &impl Template) -> Result<Response, PageError> {
    template
        .render()
        .map(|html| Html(html).into_response())
        .map_err(|e| PageError(super::error::ApiError::Internal(format!("template: {e}"))))
}
