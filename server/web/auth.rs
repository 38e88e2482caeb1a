//! Who may read and who may write. In `none` mode nobody is asked and nothing may be written
//! (local use, said on every page); in `tokens` mode every request carries a bearer token whose
//! sha256 is configured; in `proxy` mode an authenticating proxy at a trusted address names the
//! user in a header (scripts may still use tokens). Probes and static assets are always open.
//! The [`Identity`] established here is the only source of a requester's name. A browser
//! that signed in with a token (see [`super::signin`]) carries its name in a signed cookie;
//! without one, a person opening a page in tokens mode gets the sign-in form, not a bare 401.

use super::AppState;
use super::csrf;
use super::error::ApiError;
use super::oidc::{self, Person};
use super::signin;
use crate::config::{AuthConfig, AuthMode, Grantees};
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use sha2::{Digest, Sha256};
use std::net::IpAddr;

/// Who made a request, as the configured authentication established it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// No authentication is configured (read-only).
    Anonymous,
    /// A bearer token, by its configured name.
    Token(String),
    /// The user a trusted proxy named, with the groups it named (`proxy.groups_header`).
    ProxyUser(Person),
    /// A person signed in with the OpenID provider, with their groups.
    Person(Person),
}

impl Identity {
    /// Whether this identity is among `grantees` (a token by its name, a person by name or
    /// group); nobody anonymous is.
    pub fn is_among(&self, grantees: &Grantees) -> bool {
        match self {
            Identity::Anonymous => false,
            Identity::Token(name) => grantees.has_token(name),
            Identity::ProxyUser(user) => grantees.has_person(&user.name, &user.groups),
            Identity::Person(person) => grantees.has_person(&person.name, &person.groups),
        }
    }

    /// The name recorded with what this request changes (a silence's `created_by`).
    pub fn requester(&self) -> String {
        match self {
            Identity::Anonymous => "anonymous".to_string(),
            Identity::Token(name) => format!("token {name}"),
            Identity::ProxyUser(user) => user.name.chars().take(200).collect(),
            Identity::Person(person) => person.name.clone(),
        }
    }
}

pub async fn check(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let path = request.uri().path().to_string();
    if is_open(&path) {
        return next.run(request).await;
    }
    if path == oidc::routes::LOGIN || path == oidc::routes::CALLBACK_PATH {
        // The way in (reads only: a write there is 405 by the router).
        return next.run(request).await;
    }
    if path == signin::SIGN_IN || path == signin::SIGN_OUT {
        // Open to everyone (signing in is how one gets in), but only from this site.
        if is_write(request.method())
            && let Err(error) = csrf::same_origin(request.headers(), &state.site)
        {
            return error.respond_for(&path);
        }
        return next.run(request).await;
    }
    let auth = &state.site.auth;
    let peer = super::client::peer(request.extensions());
    let (identity, by_cookie) = match identify(&state, request.headers(), peer).await {
        Ok(found) => found,
        Err(ApiError::Unauthorized(_))
            if matches!(auth.mode(), AuthMode::Tokens | AuthMode::Oidc)
                && signin::is_browser_page(request.headers(), request.method(), &path) =>
        {
            let next = request
                .uri()
                .path_and_query()
                .map_or(path.clone(), |p| p.to_string());
            if auth.mode() == AuthMode::Oidc {
                // Straight to the provider: with a session there, this is a round trip.
                let encoded: String = url_encoded(&next);
                return Redirect::to(&format!("{}?next={encoded}", oidc::routes::LOGIN))
                    .into_response();
            }
            return signin::page(&state.site, &next, "", StatusCode::UNAUTHORIZED);
        }
        Err(error) => return error.respond_for(&path),
    };
    let sign_out = by_cookie
        .then(|| signin::sign_out_token(request.headers(), &state))
        .flatten()
        .map(|token| signin::SignedIn {
            name: identity.requester(),
            token,
        });
    request.extensions_mut().insert(identity);
    request.extensions_mut().insert(ByCookie(by_cookie));
    signin::with_sign_out(sign_out, next.run(request)).await
}

/// Whether a browser's sign-in cookie (not a header) established the request's identity.
#[derive(Debug, Clone, Copy)]
struct ByCookie(bool);

/// Writes, once a path matched: only `POST` to a route in [`WRITE_ROUTES`] reaches a handler
/// (any other write is 405, so a write route missing from the list fails closed), and then
/// never by nobody, never to the API by a cookie, only from this site. Requests [`check`]
/// identified nobody for (the sign-in forms) check their own.
pub async fn check_write(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if !is_write(request.method()) {
        return next.run(request).await;
    }
    let path = request.uri().path();
    let pattern = request
        .extensions()
        .get::<MatchedPath>()
        .map_or(path, MatchedPath::as_str);
    let allow = WRITE_ROUTES
        .iter()
        .find(|(route, _)| *route == pattern)
        .map(|(_, allow)| *allow);
    let Some(_) = allow.filter(|_| request.method() == Method::POST) else {
        return ApiError::MethodNotAllowed {
            allow: allow.unwrap_or("GET, HEAD"),
        }
        .respond_for(path);
    };
    let (Some(identity), Some(ByCookie(by_cookie))) = (
        request.extensions().get::<Identity>(),
        request.extensions().get::<ByCookie>(),
    ) else {
        return next.run(request).await;
    };
    if *by_cookie && path.starts_with("/api/") {
        // A cookie rides along with any request the browser makes; scripts use tokens.
        return ApiError::Forbidden(
            "writes to the API need a bearer token, not a browser sign-in".into(),
        )
        .into_response();
    }
    if *identity == Identity::Anonymous {
        // JSON on every path: whoever scripts a write gets a reason they can read.
        return ApiError::Forbidden(READ_ONLY.into()).into_response();
    }
    if let Err(error) = csrf::same_origin(request.headers(), &state.site) {
        return error.respond_for(path);
    }
    next.run(request).await
}

/// `text` as one query parameter value.
fn url_encoded(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// Every route that takes a write (`POST`), by its pattern, with the methods it takes.
const WRITE_ROUTES: [(&str, &str); 6] = [
    (super::pages::ADD_SILENCE, "POST"),
    (super::pages::ACTION, "GET, HEAD, POST"),
    (super::pages::EXPIRE_SILENCE, "POST"),
    (super::api::SILENCES, "GET, HEAD, POST"),
    (signin::SIGN_IN, "GET, HEAD, POST"),
    (signin::SIGN_OUT, "POST"),
];

const READ_ONLY: &str = "this fleetglass has no authentication configured (web.auth.mode none), \
    so it is read-only: configure API tokens or an authenticating proxy to make changes";

fn is_open(path: &str) -> bool {
    super::probes::is_probe(path) || path.starts_with("/static/")
}

pub fn is_write(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Who made the request, and whether a sign-in cookie (not a header) said so.
async fn identify(
    state: &AppState,
    headers: &HeaderMap,
    peer: Option<IpAddr>,
) -> Result<(Identity, bool), ApiError> {
    let auth = &state.site.auth;
    let mode = auth.mode();
    if mode == AuthMode::None {
        return Ok((Identity::Anonymous, false));
    }
    if let Some(token) = bearer(headers) {
        return token_name(auth, token)
            .map(|name| (Identity::Token(name), false))
            .ok_or_else(|| ApiError::Unauthorized("the bearer token is not valid".into()));
    }
    // A sign-in counts while its token is configured with the same hash, and until it is
    // signed out: rotating or removing a token signs out every browser signed in with it.
    if let Some(sign_in) = signin::signed_in(headers, state)
        && !signin::is_revoked(state, &sign_in).await?
    {
        return Ok((Identity::Token(sign_in.name), true));
    }
    if mode == AuthMode::Oidc {
        return match oidc::session::person(state, headers).await? {
            Some(person) => Ok((Identity::Person(person), true)),
            None => Err(ApiError::Unauthorized(
                "authentication required: sign in (your session may have ended), or send a bearer token"
                    .into(),
            )),
        };
    }
    identify_without_token(auth, headers, peer).map(|identity| (identity, false))
}

fn identify_without_token(
    auth: &AuthConfig,
    headers: &HeaderMap,
    peer: Option<IpAddr>,
) -> Result<Identity, ApiError> {
    let mode = auth.mode();
    if mode == AuthMode::Tokens {
        return Err(ApiError::Unauthorized(
            "authentication required: send Authorization: Bearer <token>".into(),
        ));
    }
    let user = proxy_user(headers, &auth.proxy.user_header)?;
    let trusted = peer.is_some_and(|ip| auth.proxy.trusted_proxies.iter().any(|c| c.contains(ip)));
    match (user, trusted) {
        (Some(user), true) => Ok(Identity::ProxyUser(Person {
            name: user.to_string(),
            groups: proxy_groups(headers, auth.proxy.groups_header.as_deref())?,
        })),
        (Some(_), false) => Err(ApiError::Forbidden(format!(
            "{} is only accepted from the configured proxies",
            auth.proxy.user_header
        ))),
        (None, _) => Err(ApiError::Unauthorized(
            "authentication required: sign in through the proxy, or send a bearer token".into(),
        )),
    }
}

/// The user named in the proxy's header, in UTF-8 (names are not only ASCII). More than one
/// such header is refused: which one the proxy set cannot be told, and taking the first lets
/// a client name itself when a proxy appends rather than replaces.
fn proxy_user<'h>(headers: &'h HeaderMap, header_name: &str) -> Result<Option<&'h str>, ApiError> {
    let mut values = headers.get_all(header_name).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return match headers.get(header_name) {
            None => Ok(None),
            Some(_) => Err(ApiError::BadRequest(format!(
                "{header_name} appears more than once; a proxy must send exactly one"
            ))),
        };
    };
    let user = std::str::from_utf8(value.as_bytes())
        .map_err(|_| ApiError::BadRequest(format!("{header_name} is not valid UTF-8")))?
        .trim();
    Ok((!user.is_empty()).then_some(user))
}

/// The groups a trusted proxy lists in `header` (comma-separated, as oauth2-proxy's
/// `X-Forwarded-Groups`); none without the header configured.
fn proxy_groups(headers: &HeaderMap, header: Option<&str>) -> Result<Vec<String>, ApiError> {
    let Some(header) = header else {
        return Ok(Vec::new());
    };
    let mut groups = Vec::new();
    for value in headers.get_all(header) {
        let text = std::str::from_utf8(value.as_bytes())
            .map_err(|_| ApiError::BadRequest(format!("{header} is not valid UTF-8")))?;
        groups.extend(
            text.split(',')
                .map(str::trim)
                .filter(|g| !g.is_empty())
                .map(|g| g.chars().take(200).collect::<String>()),
        );
    }
    groups.sort_unstable();
    groups.dedup();
    Ok(groups)
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
pub fn token_name(auth: &AuthConfig, token: &str) -> Option<String> {
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
        assert_eq!(Identity::ProxyUser(person("ana", &[])).requester(), "ana");
        assert_eq!(Identity::Person(person("bo", &["dev"])).requester(), "bo");
    }

    fn person(name: &str, groups: &[&str]) -> Person {
        Person {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
        }
    }

    #[test]
    fn a_proxy_lists_groups_comma_separated_in_any_number_of_headers() {
        let mut headers = HeaderMap::new();
        headers.append("x-forwarded-groups", HeaderValue::from_static("b, a,,"));
        headers.append("x-forwarded-groups", HeaderValue::from_static("c,a"));
        let groups = proxy_groups(&headers, Some("X-Forwarded-Groups")).unwrap();
        assert_eq!(groups, ["a", "b", "c"]);
        assert!(
            proxy_groups(&headers, None).unwrap().is_empty(),
            "not configured: none"
        );
    }

    #[test]
    fn who_is_among_grantees_depends_on_how_they_signed_in() {
        let grantees: Grantees =
            crate::yaml::from_str("{users: [ana], groups: [platform], tokens: [deploy]}").unwrap();
        let signed_in = |name: &str, groups: &[&str]| Identity::Person(person(name, groups));
        assert!(signed_in("ana", &[]).is_among(&grantees));
        assert!(signed_in("bo", &["platform"]).is_among(&grantees));
        assert!(!signed_in("bo", &["dev"]).is_among(&grantees));
        assert!(Identity::ProxyUser(person("ana", &[])).is_among(&grantees));
        assert!(Identity::ProxyUser(person("bo", &["platform"])).is_among(&grantees));
        assert!(Identity::Token("deploy".into()).is_among(&grantees));
        // A token named like a person is not that person, nor the reverse.
        assert!(!Identity::Token("ana".into()).is_among(&grantees));
        assert!(!Identity::ProxyUser(person("deploy", &[])).is_among(&grantees));
        assert!(!Identity::Anonymous.is_among(&grantees));
    }
}
