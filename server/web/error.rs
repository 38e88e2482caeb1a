//! One error type per surface: pages answer with a plain HTML message, the API with JSON.
//! Internal detail is logged, never shown.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use serde_json::json;

#[derive(Debug)]
pub enum ApiError {
    NotFound(String),
    BadRequest(String),
    /// No or a wrong credential.
    Unauthorized(String),
    /// A credential from somewhere it may not come from.
    Forbidden(String),
    TooLong(String),
    Internal(String),
}

impl From<sqlx::Error> for ApiError {
    fn from(error: sqlx::Error) -> Self {
        ApiError::Internal(error.to_string())
    }
}

impl ApiError {
    fn status_and_message(&self) -> (StatusCode, String) {
        match self {
            ApiError::NotFound(m) => (StatusCode::NOT_FOUND, m.clone()),
            ApiError::BadRequest(m) => (StatusCode::BAD_REQUEST, m.clone()),
            ApiError::Unauthorized(m) => (StatusCode::UNAUTHORIZED, m.clone()),
            ApiError::Forbidden(m) => (StatusCode::FORBIDDEN, m.clone()),
            ApiError::TooLong(m) => (StatusCode::URI_TOO_LONG, m.clone()),
            ApiError::Internal(detail) => {
                tracing::error!(%detail, "request failed");
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the database is not answering; try again shortly".to_string(),
                )
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, message) = self.status_and_message();
        let mut response = (status, Json(json!({"error": message}))).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}

impl ApiError {
    /// As JSON for API paths, as a page for everything else.
    pub fn respond_for(self, path: &str) -> Response {
        if path.starts_with("/api/") {
            self.into_response()
        } else {
            PageError(self).into_response()
        }
    }
}

/// The same errors, rendered for people.
#[derive(Debug)]
pub struct PageError(pub ApiError);

impl<E: Into<ApiError>> From<E> for PageError {
    fn from(error: E) -> Self {
        PageError(error.into())
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let (status, message) = self.0.status_and_message();
        let body = format!(
            "<!doctype html><meta charset=utf-8><title>fleetglass: {code}</title>\
             <link rel=stylesheet href=/static/style.css><main class=error><h1>{code}</h1><p>{text}</p>\
             <p><a href=/>back to the fleet</a></p></main>",
            code = status.as_u16(),
            text = escape(&message)
        );
        (status, Html(body)).into_response()
    }
}

pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
