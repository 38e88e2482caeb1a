//! Signing in with an API token from a browser (tokens and proxy modes). A browser cannot
//! send a bearer header, so a page asking for one would leave people at a bare 401: instead
//! it gets a form that takes the token once and sets a session cookie holding the token's
//! *name*, an expiry and a random sign-in id, signed with the server's key over the token's
//! configured hash too (the token itself is never stored): rotating a token (same name, new
//! hash) or removing it ends every sign-in made with it. Signing out records the sign-in id in
//! Postgres until its expiry, so a copy of the cookie is refused too.
//! The cookie is `HttpOnly` and `SameSite=Strict`, and under https `__Host-` prefixed and
//! `Secure`, like the CSRF session cookie. Forms keep their CSRF token; writes to the JSON API
//! still need a bearer token.
//!
//! Signing out is a form in every page's header while a browser is signed in; it carries a
//! token made from the sign-in cookie (HMAC with the server's key, so it is different for every
//! sign-in and cannot be made without the cookie, which is HttpOnly), checked in constant time:
//! another site cannot sign a browser out.

use super::AppState;
use super::audit::Source;
use super::client::Client;
use super::csrf;
use super::error::{ApiError, PageError};
use super::oidc;
use super::pages::render;
use super::state::Site;
use super::throttle;
use crate::store::audit::{self, NewAuditEvent};
use crate::store::sign_ins;
use askama::Template;
use axum::Form;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use chrono::{DateTime, TimeDelta, Utc};
use serde::Deserialize;
use std::time::{Duration, Instant};

pub const SIGN_IN: &str = "/sign-in";
pub const SIGN_OUT: &str = "/sign-out";
const SECURE_COOKIE: &str = "__Host-fleetglass_signin";
const PLAIN_COOKIE: &str = "fleetglass_signin";
/// How long a sign-in lasts.
const LIFETIME: TimeDelta = TimeDelta::hours(12);
const PURPOSE: &str = "fleetglass sign-in v2";
const ID_BYTES: usize = 16;
const SIGN_OUT_PURPOSE: &str = "fleetglass sign-out v1";

tokio::task_local! {
    /// Who is signed in and the sign-out form's token while a page for a browser signed in
    /// with a session renders (set by the auth middleware around the handler), so the shared
    /// header shows them without every page passing them along.
    static SIGN_OUT_TOKEN: Option<SignedIn>;
}

/// The page header's sign-out form: for whom, and its token.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub name: String,
    pub token: String,
}

#[derive(Template)]
#[template(path = "signin.html")]
struct SignInPage<'a> {
    next: &'a str,
    problem: &'a str,
    access: &'static str,
    /// The OpenID provider's issuer, when people sign in there.
    provider: Option<&'a str>,
}

#[derive(Deserialize)]
pub struct Next {
    #[serde(default)]
    next: String,
}

#[derive(Deserialize)]
pub struct SignInForm {
    token: String,
    #[serde(default)]
    next: String,
}

fn cookie_name(site: &Site) -> &'static str {
    if site.hosts.https() {
        SECURE_COOKIE
    } else {
        PLAIN_COOKIE
    }
}

/// The sign-in form, with status 401 when it stands in for a page that needs a sign-in.
pub fn page(site: &Site, next: &str, problem: &str, status: StatusCode) -> Response {
    let page = SignInPage {
        next: safe_next(next),
        problem,
        access: site.access_note(),
        provider: site.auth.oidc.as_ref().map(|oidc| oidc.issuer.as_str()),
    };
    match render(&page) {
        Ok(mut response) => {
            *response.status_mut() = status;
            response
        }
        Err(error) => error.into_response(),
    }
}

pub async fn form(State(state): State<AppState>, Query(next): Query<Next>) -> Response {
    page(&state.site, &next.next, "", StatusCode::OK)
}

pub async fn sign_in(
    State(state): State<AppState>,
    client: Client,
    source: Source,
    Form(form): Form<SignInForm>,
) -> Result<Response, PageError> {
    if !state.site.auth.identifies() {
        return Err(ApiError::BadRequest(
            "this fleetglass has no authentication configured: there is nothing to sign in to"
                .into(),
        )
        .into());
    }
    let (throttle, now) = (&state.sign_in_throttle, Instant::now());
    if let Some(wait) = throttle
        .failures
        .wait(&client.0, throttle::FAILURES_PER_CLIENT, now)
    {
        return Ok(too_many(&state.site, &form.next, wait));
    }
    let Some(name) = super::auth::token_name(&state.site.auth, form.token.trim()) else {
        throttle.failures.record(&client.0, now);
        let refused = NewAuditEvent {
            actor: "unknown",
            action: "sign-in-refused",
            subject: "",
            detail: "not a valid token",
            source: &source.0,
        };
        record(&state, &refused).await?;
        return Ok(page(
            &state.site,
            &form.next,
            "That token is not valid.",
            StatusCode::UNAUTHORIZED,
        ));
    };
    if let Some(wait) = throttle
        .sign_ins
        .wait(&name, throttle::SIGN_INS_PER_NAME, now)
    {
        return Ok(too_many(&state.site, &form.next, wait));
    }
    throttle.sign_ins.record(&name, now);
    let actor = format!("token {name}");
    let signed = NewAuditEvent {
        actor: &actor,
        action: "sign-in",
        subject: &name,
        detail: "",
        source: &source.0,
    };
    record(&state, &signed).await?;
    let expires = (Utc::now() + LIFETIME).timestamp().to_string();
    let name_hex = csrf::hex(name.as_bytes());
    let id = csrf::hex(&rand::random::<[u8; ID_BYTES]>());
    let mac = cookie_mac(&state, &name, &name_hex, &expires, &id).unwrap_or_default();
    let secure = if state.site.hosts.https() {
        "; Secure"
    } else {
        ""
    };
    let cookie = format!(
        "{}={name_hex}.{expires}.{id}.{mac}; Path=/; Max-Age={}; HttpOnly; SameSite=Strict{secure}",
        cookie_name(&state.site),
        LIFETIME.num_seconds()
    );
    let mut response = Redirect::to(safe_next(&form.next)).into_response();
    set_cookie(&mut response, &cookie);
    Ok(response)
}

/// The sign-in form again, saying when to try again (429 with Retry-After).
fn too_many(site: &Site, next: &str, wait: Duration) -> Response {
    let seconds = wait.as_secs().max(1);
    let problem = format!("Too many sign-in attempts; try again in {seconds} seconds.");
    let mut response = page(site, next, &problem, StatusCode::TOO_MANY_REQUESTS);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    response
}

#[derive(Deserialize)]
pub struct SignOutForm {
    #[serde(default)]
    csrf: String,
}

/// Ends the browser's sign-in, if the form carries its token: the cookie is cleared and the
/// sign-in is recorded as ended, so a copy of the cookie no longer counts either. Without the
/// token (or with a wrong one) nothing changes. A browser with no sign-in has nothing to end
/// and goes to the sign-in page.
pub async fn sign_out(
    State(state): State<AppState>,
    source: Source,
    headers: HeaderMap,
    Form(form): Form<SignOutForm>,
) -> Result<Response, PageError> {
    let Some(expected) = sign_out_token(&headers, &state) else {
        return Ok(Redirect::to(SIGN_IN).into_response());
    };
    if !csrf::constant_time_eq(expected.as_bytes(), form.csrf.as_bytes()) {
        return Ok(ApiError::Forbidden(
            "this sign-out form is out of date or came from another site; reload the page and \
             try again"
                .into(),
        )
        .respond_for(SIGN_OUT));
    }
    let now = Utc::now();
    let mut tx = state.store.pool().begin().await?;
    let mut response = Redirect::to(SIGN_IN).into_response();
    if let Some(sign_in) = signed_in(&headers, &state) {
        sign_ins::revoke(&mut tx, &sign_in.id, sign_in.expires, now).await?;
        let actor = format!("token {}", sign_in.name);
        let signed_out = NewAuditEvent {
            actor: &actor,
            action: "sign-out",
            subject: &sign_in.name,
            detail: "",
            source: &source.0,
        };
        audit::record(&mut tx, &signed_out, now).await?;
        let secure = if state.site.hosts.https() {
            "; Secure"
        } else {
            ""
        };
        let cookie = format!(
            "{}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict{secure}",
            cookie_name(&state.site)
        );
        set_cookie(&mut response, &cookie);
    }
    if let Some(secret) = oidc::session::cookie(&headers, &state.site) {
        let person = oidc::session::person(&state, &headers).await?;
        oidc::session::end(&mut tx, &secret, now).await?;
        let name = person.map(|p| p.name).unwrap_or_default();
        let signed_out = NewAuditEvent {
            actor: &name,
            action: "sign-out",
            subject: &name,
            detail: "single sign-on session ended",
            source: &source.0,
        };
        audit::record(&mut tx, &signed_out, now).await?;
        oidc::session::clear_session(&mut response, &state.site);
    }
    tx.commit().await?;
    Ok(response)
}

/// A sign-in is not let through unrecorded: a failed record fails the request.
async fn record(state: &AppState, event: &NewAuditEvent<'_>) -> Result<(), sqlx::Error> {
    let mut conn = state.store.pool().acquire().await?;
    audit::record(&mut conn, event, Utc::now()).await
}

fn set_cookie(response: &mut Response, cookie: &str) {
    if let Ok(value) = HeaderValue::from_str(cookie) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
}

/// The token a sign-out form must carry: bound to this browser's sign-in cookie, which must
/// be valid.
pub fn sign_out_token(headers: &HeaderMap, state: &AppState) -> Option<String> {
    let value = signed_in(headers, state)
        .and_then(|_| csrf::cookie(headers, cookie_name(&state.site)))
        .or_else(|| oidc::session::cookie(headers, &state.site))?;
    Some(state.csrf_key.mac(&[SIGN_OUT_PURPOSE, &value]))
}

/// Runs a request with its sign-out form (if signed in by cookie) available to the page
/// header.
pub async fn with_sign_out<F: Future<Output = Response>>(
    signed_in: Option<SignedIn>,
    run: F,
) -> Response {
    SIGN_OUT_TOKEN.scope(signed_in, run).await
}

/// The sign-out form for the page being rendered: Some only for a browser signed in with a
/// session (not with a bearer token, a proxy, or no authentication).
pub fn header_sign_out() -> Option<SignedIn> {
    SIGN_OUT_TOKEN.try_with(Clone::clone).ok().flatten()
}

/// What a valid, unexpired sign-in cookie says.
#[derive(Debug)]
pub struct SignIn {
    /// The name of the token signed in with.
    pub name: String,
    /// The sign-in's own id, recorded when it is ended early.
    pub id: String,
    pub expires: DateTime<Utc>,
}

/// The sign-in a cookie carries, if its signature holds for the token of that name as it is
/// configured now and it has not expired; whether it was ended by a sign-out is
/// [`is_revoked`].
pub fn signed_in(headers: &HeaderMap, state: &AppState) -> Option<SignIn> {
    let value = csrf::cookie(headers, cookie_name(&state.site))?;
    let mut parts = value.splitn(4, '.');
    let (name_hex, expires, id, mac) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let bytes: Option<Vec<u8>> = (0..name_hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(name_hex.get(i..i + 2)?, 16).ok())
        .collect();
    let name = String::from_utf8(bytes?).ok()?;
    let expected = cookie_mac(state, &name, name_hex, expires, id)?;
    if !csrf::constant_time_eq(expected.as_bytes(), mac.as_bytes()) {
        return None;
    }
    let expires = DateTime::from_timestamp(expires.parse::<i64>().ok()?, 0)?;
    (expires > Utc::now()).then(|| SignIn {
        name,
        id: id.to_string(),
        expires,
    })
}

/// Whether the sign-in was ended by a sign-out.
pub async fn is_revoked(state: &AppState, sign_in: &SignIn) -> Result<bool, ApiError> {
    let mut conn = state.store.pool().acquire().await?;
    Ok(sign_ins::is_revoked(&mut conn, &sign_in.id).await?)
}

/// The cookie's signature, over the configured hash of the token named too; None when no
/// token has that name.
fn cookie_mac(
    state: &AppState,
    name: &str,
    name_hex: &str,
    expires: &str,
    id: &str,
) -> Option<String> {
    let token = state.site.auth.tokens.iter().find(|t| t.name == name)?;
    let hash = csrf::hex(&token.sha256);
    Some(state.csrf_key.mac(&[PURPOSE, name_hex, expires, id, &hash]))
}

/// Only a path on this site: never `//host` or a full URL (an open redirect), nor one with a
/// control character (browsers drop tabs and newlines from URLs, so `/\t/host` is `//host`).
pub fn safe_next(next: &str) -> &str {
    let local = next.starts_with('/')
        && !next.starts_with("//")
        && !next.contains('\\')
        && !next.chars().any(char::is_control);
    if local { next } else { "/" }
}

/// Whether a request was made by a person's browser navigating to a page (so a sign-in
/// form serves them better than a bare 401).
pub fn is_browser_page(headers: &HeaderMap, method: &axum::http::Method, path: &str) -> bool {
    let html = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"));
    *method == axum::http::Method::GET
        && html
        && !path.starts_with("/api/")
        && !path.starts_with("/fragments/")
        && !headers.contains_key("hx-request")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_stays_on_this_site() {
        assert_eq!(safe_next("/objects?state=failed"), "/objects?state=failed");
        for outside in [
            "https://evil.example",
            "//evil.example",
            "/\\evil.example",
            "/\t/evil.example",
            "/\n/evil.example",
            "/\r\nSet-Cookie: x=y",
            "/\u{7f}",
            "",
        ] {
            assert_eq!(safe_next(outside), "/", "{outside:?}");
        }
    }
}
