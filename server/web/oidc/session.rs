//! Browser sessions of people signed in through the provider. The cookie holds a random
//! secret and Postgres holds its sha256 with who it is and until when, so a session can be
//! revoked (signing out, `fleetglass sessions revoke`) and a copied cookie dies with it.
//! The cookie is `SameSite=Lax`: the provider's redirect back is a navigation from another
//! site, and a `Strict` cookie set there would not be sent on the way on to the page. Writes
//! stay protected by their same-origin check and form tokens.

use crate::store::web_sessions;
use crate::web::AppState;
use crate::web::csrf;
use crate::web::state::Site;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

const SECURE_COOKIE: &str = "__Host-fleetglass_sso";
const PLAIN_COOKIE: &str = "fleetglass_sso";
const SECURE_LOGIN_COOKIE: &str = "__Host-fleetglass_login";
const PLAIN_LOGIN_COOKIE: &str = "fleetglass_login";
const SECRET_BYTES: usize = 32;

/// A person signed in through the provider, as their live session says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub name: String,
    pub groups: Vec<String>,
}

fn names(site: &Site) -> (&'static str, &'static str) {
    if site.hosts.https() {
        (SECURE_COOKIE, SECURE_LOGIN_COOKIE)
    } else {
        (PLAIN_COOKIE, PLAIN_LOGIN_COOKIE)
    }
}

/// The session cookie's value, if the browser sent one.
pub fn cookie(headers: &HeaderMap, site: &Site) -> Option<String> {
    csrf::cookie(headers, names(site).0).filter(|v| !v.is_empty())
}

/// The state the browser was sent to the provider with (its sign-in cookie).
pub fn login_cookie(headers: &HeaderMap, site: &Site) -> Option<String> {
    csrf::cookie(headers, names(site).1).filter(|v| !v.is_empty())
}

pub fn hash(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

pub fn new_secret() -> String {
    csrf::hex(&rand::random::<[u8; SECRET_BYTES]>())
}

/// The person whose live session the browser's cookie names.
pub async fn person(state: &AppState, headers: &HeaderMap) -> Result<Option<Person>, sqlx::Error> {
    let Some(secret) = cookie(headers, &state.site) else {
        return Ok(None);
    };
    let mut conn = state.store.pool().acquire().await?;
    let session = web_sessions::find(&mut conn, &hash(&secret), Utc::now()).await?;
    Ok(session.map(|s| Person {
        name: s.username,
        groups: s.groups,
    }))
}

/// Ends the session the cookie holds (signing out).
pub async fn end(
    conn: &mut sqlx::PgConnection,
    secret: &str,
    now: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    web_sessions::revoke(conn, &hash(secret), now).await
}

fn attributes(site: &Site) -> &'static str {
    if site.hosts.https() {
        "Path=/; HttpOnly; SameSite=Lax; Secure"
    } else {
        "Path=/; HttpOnly; SameSite=Lax"
    }
}

fn set(response: &mut Response, cookie: String) {
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
}

/// Sets the session cookie, to last until `expires`.
pub fn set_session(response: &mut Response, site: &Site, secret: &str, expires: DateTime<Utc>) {
    let max_age = (expires - Utc::now()).num_seconds().max(0);
    let (name, _) = names(site);
    set(
        response,
        format!("{name}={secret}; Max-Age={max_age}; {}", attributes(site)),
    );
}

pub fn clear_session(response: &mut Response, site: &Site) {
    let (name, _) = names(site);
    set(
        response,
        format!("{name}=; Max-Age=0; {}", attributes(site)),
    );
}

/// Ties a sign-in sent to the provider to this browser: the callback must come back to the
/// browser that left.
pub fn set_login(response: &mut Response, site: &Site, state: &str) {
    let max_age = web_sessions::LOGIN_TIMEOUT.num_seconds();
    let (_, name) = names(site);
    set(
        response,
        format!("{name}={state}; Max-Age={max_age}; {}", attributes(site)),
    );
}

pub fn clear_login(response: &mut Response, site: &Site) {
    let (_, name) = names(site);
    set(
        response,
        format!("{name}=; Max-Age=0; {}", attributes(site)),
    );
}
