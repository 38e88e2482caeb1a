//! Static assets compiled into the binary, so the image needs no files beside it.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

const ASSETS: &[(&str, &str, &[u8])] = &[
    (
        "style.css",
        "text/css; charset=utf-8",
        include_bytes!("../../static/style.css"),
    ),
    (
        "refresh.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../static/refresh.js"),
    ),
    (
        "vendor/htmx.min.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../static/vendor/htmx.min.js"),
    ),
];

pub async fn serve(axum::extract::Path(path): axum::extract::Path<String>) -> Response {
    match ASSETS.iter().find(|(name, ..)| *name == path) {
        Some((_, mime, body)) => (
            [
                (header::CONTENT_TYPE, *mime),
                (header::CACHE_CONTROL, "public, max-age=3600"),
            ],
            *body,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no such asset").into_response(),
    }
}
