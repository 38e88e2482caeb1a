//! Bounds on what a request may make the server read: the body has its own layer; the
//! query string is bounded here (filters are short; a long one is a mistake or an attack).

use super::error::ApiError;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;

/// Longest accepted query string, in bytes.
pub const MAX_QUERY: usize = 2048;

pub async fn query_length(request: Request, next: Next) -> Response {
    let length = request.uri().query().map_or(0, str::len);
    if length > MAX_QUERY {
        let path = request.uri().path().to_string();
        return ApiError::TooLong(format!(
            "the query string is {length} bytes; at most {MAX_QUERY} are accepted"
        ))
        .respond_for(&path);
    }
    // Postgres refuses NUL in text, which would surface as a database failure (503).
    let query = request.uri().query().unwrap_or_default();
    if query.contains("%00") || query.contains('\0') {
        let path = request.uri().path().to_string();
        return ApiError::BadRequest("query values cannot contain NUL characters".into())
            .respond_for(&path);
    }
    next.run(request).await
}
