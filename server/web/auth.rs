//! Who may read: nobody is asked in `none` mode (local use, said on every page); in `tokens`
//! mode every request carries a bearer token whose sha256 is configured; in `proxy` mode an
//! authenticating proxy at a trusted address names the user in a header (scripts may still
//! use tokens). Probes and static assets are always open.

use super::AppState;
use super::error::ApiError;
use crate::config::{AuthConfig, AuthMode};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use sha2::{Digest, Sha256};
use std::net::SocketAddr;

pub async fn check(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_string();
    if is_open(&path) {
        return next.run(request).await;
    }
    match decide(&state.site.auth, &request) {
        Ok(()) => next.run(request).await,
        Err(error) => error.respond_for(&path),
    }
}

fn is_open(path: &str) -> bool {
    matches!(path, "/healthz" | "/readyz" | "/metrics") || path.starts_with("/static/")
}

fn decide(auth: &AuthConfig, request: &Request) -> Result<(), ApiError> {
    if auth.mode == AuthMode::None {
        return Ok(());
    }
    let bearer = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if let Some(token) = bearer {
        return if token_matches(auth, token) {
            Ok(())
        } else {
            Err(ApiError::Unauthorized(
                "the bearer token is not valid".into(),
            ))
        };
    }
    if auth.mode == AuthMode::Tokens {
        return Err(ApiError::Unauthorized(
            "authentication required: send Authorization: Bearer <token>".into(),
        ));
    }
    let user = request
        .headers()
        .get(auth.proxy.user_header.as_str())
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.trim().is_empty());
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let trusted = peer.is_some_and(|ip| auth.proxy.trusted_proxies.iter().any(|c| c.contains(ip)));
    match (user, trusted) {
        (Some(_), true) => Ok(()),
        (Some(_), false) => Err(ApiError::Forbidden(format!(
            "{} is only accepted from the configured proxies",
            auth.proxy.user_header
        ))),
        (None, _) => Err(ApiError::Unauthorized(
            "authentication required: sign in through the proxy, or send a bearer token".into(),
        )),
    }
}

/// Compares the token's hash with every configured hash in constant time, so neither the
/// position of a match nor the length of a common prefix shows in the timing.
fn token_matches(auth: &AuthConfig, token: &str) -> bool {
    let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
    auth.tokens.iter().fold(false, |found, configured| {
        found | super::csrf::constant_time_eq(&configured.sha256, &hash)
    })
}
