//! One error type per surface, by kind: pages answer with the site's error page, the API with
//! `{"error": …}`. An unreachable database (503) is told apart from every other internal
//! failure (500); internal detail is logged, never shown. Errors raised outside our handlers
//! (axum's extractor rejections, 405) are given the same shape by [`uniform`].

use axum::Json;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use serde::Serialize;

/// What every JSON error answers with, ours and axum's alike.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// What went wrong, in a sentence for people.
    pub error: String,
}

impl ErrorBody {
    fn json(message: String) -> Json<ErrorBody> {
        Json(ErrorBody { error: message })
    }

    fn text(message: String) -> String {
        serde_json::to_string(&ErrorBody { error: message }).expect("a string serialises")
    }
}

/// What API handlers return.
pub type Result<T, E = ApiError> = std::result::Result<T, E>;
/// What page handlers return.
pub type PageResult<T> = Result<T, PageError>;

/// What people are told when the database does not answer (the readiness probe says the same).
const UNAVAILABLE: &str = "the database is not answering; try again shortly";
/// What people are told of any other failure: the detail is in the log.
const INTERNAL: &str = "internal error; the details are in the server's log";

#[derive(Debug)]
pub enum ApiError {
    NotFound(String),
    BadRequest(String),
    /// No or a wrong credential.
    Unauthorized(String),
    /// A credential from somewhere it may not come from.
    Forbidden(String),
    TooLong(String),
    /// A method the route does not take; `allow` lists those it does.
    MethodNotAllowed {
        allow: &'static str,
    },
    /// A request body larger than the route takes.
    PayloadTooLarge(String),
    /// A request body that did not arrive in time; the connection is closed.
    SlowBody(String),
    /// The Host header names a site this server is not (DNS rebinding, a wrong proxy).
    Misdirected(String),
    /// Too much of something is in flight; try again after `retry_after` seconds.
    Busy {
        message: String,
        retry_after: u32,
    },
    /// Postgres cannot be reached or refuses connections; the detail is logged.
    Unavailable(String),
    /// Anything else that should not happen (a failed query, a template error); the detail is
    /// logged.
    Internal(String),
}

impl From<sqlx::Error> for ApiError {
    fn from(error: sqlx::Error) -> Self {
        if unreachable(&error) {
            ApiError::Unavailable(error.to_string())
        } else {
            ApiError::Internal(error.to_string())
        }
    }
}

impl From<askama::Error> for ApiError {
    fn from(error: askama::Error) -> Self {
        ApiError::Internal(format!("template: {error}"))
    }
}

/// Whether an error means the database cannot be reached, rather than that a query failed.
/// The pool times out when connecting keeps failing (refused, too many connections, starting
/// up: sqlx-core pool/inner.rs retries those until the acquire timeout).
fn unreachable(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) => true,
        sqlx::Error::Tls(_) => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|code| unavailable_sqlstate(&code)),
        _ => false,
    }
}

/// SQLSTATEs of a database that is away (PostgreSQL errcodes appendix): class 08 connection
/// exceptions, 57P01-57P03 (terminated by an administrator, crash shutdown, cannot connect
/// now), 53300 too many connections, and 55000 as Postgres answers a connection to a database
/// with ALLOW_CONNECTIONS false (postinit.c, "database … is not currently accepting
/// connections").
fn unavailable_sqlstate(code: &str) -> bool {
    code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03" | "53300" | "55000")
}

impl ApiError {
    fn status_and_message(&self) -> (StatusCode, String) {
        match self {
            ApiError::NotFound(m) => (StatusCode::NOT_FOUND, m.clone()),
            ApiError::BadRequest(m) => (StatusCode::BAD_REQUEST, m.clone()),
            ApiError::Unauthorized(m) => (StatusCode::UNAUTHORIZED, m.clone()),
            ApiError::Forbidden(m) => (StatusCode::FORBIDDEN, m.clone()),
            ApiError::TooLong(m) => (StatusCode::URI_TOO_LONG, m.clone()),
            ApiError::MethodNotAllowed { allow } => (
                StatusCode::METHOD_NOT_ALLOWED,
                format!("this path takes only {allow}"),
            ),
            ApiError::PayloadTooLarge(m) => (StatusCode::PAYLOAD_TOO_LARGE, m.clone()),
            ApiError::SlowBody(m) => (StatusCode::REQUEST_TIMEOUT, m.clone()),
            ApiError::Misdirected(m) => (StatusCode::MISDIRECTED_REQUEST, m.clone()),
            ApiError::Busy { message, .. } => (StatusCode::SERVICE_UNAVAILABLE, message.clone()),
            ApiError::Unavailable(detail) => {
                tracing::warn!(%detail, "request failed: the database is not answering");
                (StatusCode::SERVICE_UNAVAILABLE, UNAVAILABLE.to_string())
            }
            ApiError::Internal(detail) => {
                tracing::error!(%detail, "request failed");
                (StatusCode::INTERNAL_SERVER_ERROR, INTERNAL.to_string())
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, message) = self.status_and_message();
        let mut response = (status, ErrorBody::json(message)).into_response();
        self.add_headers(&mut response);
        response
    }
}

impl ApiError {
    fn add_headers(&self, response: &mut Response) {
        let headers = response.headers_mut();
        match self {
            ApiError::Unauthorized(_) => {
                headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            ApiError::Busy { retry_after, .. } => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(*retry_after));
            }
            ApiError::MethodNotAllowed { allow } => {
                headers.insert(header::ALLOW, HeaderValue::from_static(allow));
            }
            _ => {}
        }
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
        let mut response = (status, Html(error_page(status, &message))).into_response();
        self.0.add_headers(&mut response);
        response
    }
}

/// An error in the site's own frame (viewport, header, navigation), so a wrong link on a
/// phone still leads somewhere.
#[derive(askama::Template)]
#[template(path = "error.html")]
struct ErrorPage<'a> {
    code: u16,
    reason: &'a str,
    message: &'a str,
    /// The footer's access note is left out: errors are shaped where the site is not known.
    access: &'static str,
}

/// The error page; should the template itself fail, a fixed page that repeats nothing of the
/// message (the failure is logged).
fn error_page(status: StatusCode, message: &str) -> String {
    let page = ErrorPage {
        code: status.as_u16(),
        reason: status.canonical_reason().unwrap_or(""),
        message,
        access: "",
    };
    askama::Template::render(&page).unwrap_or_else(|error| {
        tracing::error!(%error, "the error page failed to render");
        "<!doctype html><meta charset=utf-8><title>fleetglass: error</title><p>error</p>".into()
    })
}

/// Longest error body rewritten; rejections are a line of text.
const REWRITE_LIMIT: usize = 16 * 1024;

/// Gives every error the surface's shape: a rejection from an extractor (bad JSON, a bad path
/// segment, a missing form field) or a 405 arrives as plain text or nothing; under `/api/` it
/// becomes `{"error": …}`, elsewhere the HTML error page (probes aside). Headers (Allow,
/// Retry-After) stay.
pub async fn uniform(request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let api = path.starts_with("/api/");
    // Probes answer in plain text for whatever probes them.
    let probe = super::probes::is_probe(path);
    let response = next.run(request).await;
    let status = response.status();
    // Our own errors are JSON or HTML already (a refused write is JSON on every path).
    let shaped = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json") || t.starts_with("text/html"));
    if !(status.is_client_error() || status.is_server_error()) || shaped || probe {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = match axum::body::to_bytes(body, REWRITE_LIMIT).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_string(),
        Err(_) => String::new(),
    };
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("error").to_lowercase()
    } else {
        text
    };
    let (content_type, body) = if api {
        ("application/json", ErrorBody::text(message))
    } else {
        ("text/html; charset=utf-8", error_page(status, &message))
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    parts
        .headers
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    Response::from_parts(parts, Body::from(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreachable_database_is_unavailable_and_a_failed_query_internal() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        for error in [
            sqlx::Error::PoolTimedOut,
            sqlx::Error::PoolClosed,
            sqlx::Error::Io(refused),
        ] {
            assert!(
                matches!(ApiError::from(error), ApiError::Unavailable(_)),
                "unreachable"
            );
        }
        for error in [
            sqlx::Error::RowNotFound,
            sqlx::Error::Protocol("unexpected message".into()),
            sqlx::Error::ColumnNotFound("edges".into()),
        ] {
            assert!(matches!(ApiError::from(error), ApiError::Internal(_)));
        }
    }

    #[test]
    fn sqlstates_of_an_absent_database_are_told_from_query_errors() {
        for code in ["08006", "08001", "57P01", "57P03", "53300", "55000"] {
            assert!(unavailable_sqlstate(code), "{code}");
        }
        for code in ["42703", "23505", "57014", "22P02"] {
            assert!(!unavailable_sqlstate(code), "{code}");
        }
    }

    #[test]
    fn statuses_and_messages_by_kind_never_show_internals() {
        let shown = |error: ApiError| error.status_and_message();
        assert_eq!(
            shown(ApiError::Unavailable("connection refused".into())),
            (StatusCode::SERVICE_UNAVAILABLE, UNAVAILABLE.to_string())
        );
        let (status, message) = shown(ApiError::Internal("template: no field x".into()));
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert!(!message.contains("template") && !message.contains("database"));
        assert_eq!(
            shown(ApiError::NotFound("no such path".into())).0,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            shown(ApiError::BadRequest("bad kind".into())).0,
            StatusCode::BAD_REQUEST
        );
    }
}
