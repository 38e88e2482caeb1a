//! Who may read and who may write. In `none` mode nobody is asked and nothing may be written
//! (local use, said on every page); in `tokens` mode every request carries a bearer token whose
//! sha256 is configured; in `proxy` mode an authenticating proxy at a trusted address names the
//! user in a header (scripts may still use tokens). Probes and static assets are always open.
//! The [`Identity`] established here is the only source of a requester's name.

use super::AppState;
use super::csrf;
use super::error::ApiError;
use crate::config::{AuthConfig, AuthMode};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use std::net::SocketAddr;

/// Who made a request, as the configured authentication established it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// No authentication is configured (read-only).
    Anonymous,
    /// A bearer token, by its configured name.
    Token(String),
    /// The user a trusted proxy named.
    ProxyUser(String),
}

impl Identity {
    /// The name recorded with what this request changes (a silence's `created_by`).
    pub fn requester(&self) -> String {
        match self {
            Identity::Anonymous => "anonymous".to_string(),
            Identity::Token(name) => format!("token {name}"),
            Identity::ProxyUser(user) => user.chars().take(200).collect(),
        }
    }
}

pub async fn check(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let path = request.uri().path().to_string();
    if is_open(&path) {
        return next.run(request).await;
    }
    let auth = &state.site.auth;
    let identity = match identify(auth, &request) {
        Ok(identity) => identity,
        Err(error) => return error.respond_for(&path),
    };
    if is_write(request.method()) {
        if identity == Identity::Anonymous {
            // JSON on every path: whoever scripts a write gets a reason they can read.
            return ApiError::Forbidden(READ_ONLY.into()).into_response();
        }
        if let Err(error) = csrf::same_origin(request.headers(), &state.site) {
            return error.respond_for(&path);
        }
    }
    request.extensions_mut().insert(identity);
    next.run(request).await
}

const READ_ONLY: &str = "this fleetglass has no authentication configured (web.auth.mode none), \
    so it is read-only: configure API tokens or an authenticating proxy to make changes";

fn is_open(path: &str) -> bool {
    super::probes::is_probe(path) || path.starts_with("/static/")
}

pub fn is_write(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

fn identify(auth: &AuthConfig, request: &Request) -> Result<Identity, ApiError> {
    let mode = auth.mode();
    if mode == AuthMode::None {
        return Ok(Identity::Anonymous);
    }
    if let Some(token) = bearer(request.headers()) {
        return token_name(auth, token)
            .map(Identity::Token)
            .ok_or_else(|| ApiError::Unauthorized("the bearer token is not valid".into()));
    }
    if mode == AuthMode::Tokens {
        return Err(ApiError::Unauthorized(
            "authentication required: send Authorization: Bearer <token>".into(),
        ));
    }
    let user = request
        .headers()
        .get(auth.proxy.user_header.as_str())
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty());
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let trusted = peer.is_some_and(|ip| auth.proxy.trusted_proxies.iter().any(|c| c.contains(ip)));
    match (user, trusted) {
        (Some(user), true) => Ok(Identity::ProxyUser(user.to_string())),
        (Some(_), false) => Err(ApiError::Forbidden(format!(
            "{} is only accepted from the configured proxies",
            auth.proxy.user_header
        ))),
        (None, _) => Err(ApiError::Unauthorized(
            "authentication required: sign in through the proxy, or send a bearer token".into(),
        )),
    }
}

/// The credentials of an `Authorization: Bearer …` header; the scheme name is
/// case-insensitive (RFC 9110 §11.1), so `bearer` and `BEARER` count too.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, credentials) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| credentials.trim())
        .filter(|c| !c.is_empty())
}

/// The name of the configured token with this hash. Every configured hash is compared in
/// constant time, so neither the position of a match nor a common prefix shows in the timing.
fn token_name(auth: &AuthConfig, token: &str) -> Option<String> {
    let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
    auth.tokens.iter().fold(None, |found, configured| {
        let equal = csrf::constant_time_eq(&configured.sha256, &hash);
        found.or(equal.then(|| configured.name.clone()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        for value in ["Bearer t0k", "bearer t0k", "BEARER  t0k ", "BeArEr t0k"] {
            let mut headers = HeaderMap::new();
            headers.insert(header::AUTHORIZATION, HeaderValue::from_static(value));
            assert_eq!(bearer(&headers), Some("t0k"), "{value:?}");
        }
        for value in ["Basic dXNlcg==", "Bearer", "Bearer ", "Bearert0k"] {
            let mut headers = HeaderMap::new();
            headers.insert(header::AUTHORIZATION, HeaderValue::from_static(value));
            assert_eq!(bearer(&headers), None, "{value:?}");
        }
    }

    #[test]
    fn requesters_name_their_source() {
        assert_eq!(Identity::Anonymous.requester(), "anonymous");
        assert_eq!(Identity::Token("ci".into()).requester(), "token ci");
        assert_eq!(Identity::ProxyUser("ana".into()).requester(), "ana");
    }
}
