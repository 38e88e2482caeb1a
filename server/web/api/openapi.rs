//! `GET /api/v1/openapi.json`: the hand-written OpenAPI 3 document describing this API
//! (a test keeps it and the router in step).

use axum::http::header;
use axum::response::IntoResponse;

const DOCUMENT: &str = include_str!("openapi.json");

pub async fn document() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], DOCUMENT)
}
