//! The web: server-rendered pages with htmx refresh, the JSON API, probes and assets.

mod api;
mod assets;
mod audit;
mod auth;
mod client;
mod conditional;
mod connections;
pub mod csrf;
mod error;
mod fleet_view;
mod freshness;
mod hosts;
mod limits;
mod listener;
mod oidc;
mod pages;
mod probes;
mod request_spans;
mod scope;
mod signin;
mod state;
mod throttle;
mod views;
mod waits;

pub use api::PATHS as API_PATHS;
pub use audit::record_policy;
pub use csrf::CsrfKey;
pub use listener::{ConnectionLimits, serve};
pub use pages::PATHS as PAGE_PATHS;
pub use scope::SCOPED_ROUTES as SCOPED_PATHS;
pub use state::{AppState, Site};
pub use views::delivery::{
    GAUGES_EVERY as DORA_GAUGES_EVERY, refresh_gauges as refresh_dora_gauges,
};
pub use views::domain::version_text;
pub use views::present::encode as encode_component;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, header};
use axum::middleware::{from_fn, from_fn_with_state};
use axum::routing::get;
use tower_http::compression::CompressionLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::set_header::SetResponseHeaderLayer;

/// Largest request body accepted: the API is read-mostly, and its largest body (a silence:
/// four fields of at most 1,000 characters) fits. Every held connection may buffer one, so
/// it counts in the memory the connection cap allows (config/web_limits.rs).
const BODY_LIMIT: usize = 32 * 1024;
/// Largest sign-in and sign-out form: a token and where to go next.
const SIGN_IN_BODY_LIMIT: usize = 4 * 1024;

pub fn router(state: AppState) -> Router {
    let security_headers = [
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
        ),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "same-origin"),
    ];
    let mut router = Router::new()
        .merge(pages::router())
        .merge(api::router())
        .route("/healthz", get(probes::healthz))
        .route("/readyz", get(probes::readyz))
        .route("/metrics", get(crate::metrics::serve))
        .route("/static/{*path}", get(assets::serve))
        .route(
            signin::SIGN_IN,
            get(signin::form)
                .post(signin::sign_in)
                .layer(DefaultBodyLimit::max(SIGN_IN_BODY_LIMIT)),
        )
        .route(oidc::routes::LOGIN, get(oidc::routes::login))
        .route(oidc::routes::CALLBACK_PATH, get(oidc::routes::callback))
        .route(
            signin::SIGN_OUT,
            axum::routing::post(signin::sign_out).layer(DefaultBodyLimit::max(SIGN_IN_BODY_LIMIT)),
        )
        // Only where a route and method match: a method the route lacks is 405, not refused.
        .route_layer(from_fn_with_state(state.clone(), scope::gate))
        .route_layer(from_fn_with_state(state.clone(), auth::check_write))
        .fallback(not_found)
        .layer(from_fn_with_state(state.clone(), auth::check))
        .layer(from_fn_with_state(state.clone(), hosts::check))
        .layer(from_fn(limits::bounded_input))
        .layer(RequestBodyLimitLayer::new(BODY_LIMIT))
        .layer(from_fn(error::uniform))
        .layer(request_spans::layer())
        .layer(from_fn(crate::metrics::track_http))
        .layer(from_fn(conditional::etag))
        .layer(CompressionLayer::new().gzip(true));
    for (name, value) in security_headers {
        router = router.layer(SetResponseHeaderLayer::overriding(
            name,
            HeaderValue::from_static(value),
        ));
    }
    router.with_state(state)
}

/// Unknown paths answer like known ones that find nothing: JSON under /api/, a page elsewhere.
async fn not_found(uri: axum::http::Uri) -> axum::response::Response {
    error::ApiError::NotFound(format!("no such path: {}", uri.path())).respond_for(uri.path())
}
