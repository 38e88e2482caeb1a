//! Cross-site request forgery, two ways. Every write must come from this site: a browser's
//! `Sec-Fetch-Site` must say `same-origin` (or `none`, typed by the user) and its `Origin` must
//! be this server. Forms also carry a token: HMAC(server key, session id, requester), the
//! session id a random value in a `SameSite=Strict`, `HttpOnly` cookie. A token is good only
//! with the cookie it was made for and for the user it was shown to, so a planted cookie (a
//! sibling subdomain can set one) or a token copied from another session does not pass.
//!
//! Under https (`public_url` starts with `https://`) the cookie is `__Host-fleetglass_session`
//! with `Secure`: browsers refuse a `__Host-` cookie set by any other host or without `Secure`,
//! so nothing but this server can plant it. Over plain http a browser refuses `Secure`
//! cookies (localhost aside in some browsers), so there the cookie is `fleetglass_session`
//! without the prefix and the binding to session and user is what holds.

use super::error::ApiError;
use super::hosts::authority_of;
use super::state::Site;
use axum::http::HeaderMap;
use axum::http::header::{COOKIE, HOST, ORIGIN};
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

pub const FIELD: &str = "csrf";
const SECURE_COOKIE: &str = "__Host-fleetglass_session";
const PLAIN_COOKIE: &str = "fleetglass_session";
const SESSION_BYTES: usize = 16;
/// Shortest configured secret accepted, in bytes.
pub const MIN_SECRET: usize = 32;

/// The server's key for form tokens. Web replicas behind one address must share it, or a form
/// shown by one is refused by another.
#[derive(Clone)]
pub struct CsrfKey([u8; 32]);

impl CsrfKey {
    /// A fresh random key: forms shown before a restart are refused after it.
    pub fn generate() -> CsrfKey {
        CsrfKey(rand::random())
    }

    /// A key derived from a configured secret (hashed to 32 bytes), which must hold at
    /// least [`MIN_SECRET`] bytes once the whitespace around it (a file's last newline) is
    /// trimmed: an empty or short secret would let anyone who guesses it forge sign-ins and
    /// form tokens.
    pub fn from_secret(secret: &[u8]) -> Result<CsrfKey, String> {
        let trimmed = secret.trim_ascii();
        if trimmed.len() < MIN_SECRET {
            return Err(format!(
                "holds {} bytes (whitespace trimmed); at least {MIN_SECRET} random bytes are needed, e.g. from `openssl rand -hex 32`",
                trimmed.len()
            ));
        }
        Ok(CsrfKey(Sha256::digest(trimmed).into()))
    }

    fn token(&self, session: &str, requester: &str) -> String {
        self.mac(&["fleetglass csrf v1", session, requester])
    }

    /// HMAC of the parts, each ended by a zero byte; the first part names the purpose, so
    /// a value signed for one use is never good for another.
    pub fn mac(&self, parts: &[&str]) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key length");
        for part in parts {
            mac.update(part.as_bytes());
            mac.update(&[0]);
        }
        hex(&mac.finalize().into_bytes())
    }
}

impl std::fmt::Debug for CsrfKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CsrfKey(<redacted>)")
    }
}

fn cookie_name(site: &Site) -> &'static str {
    if site.hosts.https() {
        SECURE_COOKIE
    } else {
        PLAIN_COOKIE
    }
}

/// The token to put in a page shown to `requester`, and the `Set-Cookie` value when the
/// browser has no session yet.
pub fn token(
    headers: &HeaderMap,
    site: &Site,
    key: &CsrfKey,
    requester: &str,
) -> (String, Option<String>) {
    let name = cookie_name(site);
    if let Some(session) = session(headers, name) {
        return (key.token(&session, requester), None);
    }
    let session = hex(&rand::random::<[u8; SESSION_BYTES]>());
    let secure = if site.hosts.https() { "; Secure" } else { "" };
    let cookie = format!("{name}={session}; Path=/; HttpOnly; SameSite=Strict{secure}");
    (key.token(&session, requester), Some(cookie))
}

/// Whether a submitted form's token was made for this browser's session and this requester.
pub fn verify(
    headers: &HeaderMap,
    site: &Site,
    key: &CsrfKey,
    requester: &str,
    submitted: &str,
) -> bool {
    session(headers, cookie_name(site)).is_some_and(|session| {
        constant_time_eq(
            key.token(&session, requester).as_bytes(),
            submitted.as_bytes(),
        )
    })
}

fn session(headers: &HeaderMap, name: &str) -> Option<String> {
    cookie(headers, name)
        .filter(|v| v.len() == SESSION_BYTES * 2 && v.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The value of the named cookie in the request.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(cookie, _)| *cookie == name)
        .map(|(_, value)| value.to_string())
}

/// Refuses a write a browser says came from another site. Clients that send neither header
/// (scripts) pass; they authenticate with a token no other site can make a browser send.
pub fn same_origin(headers: &HeaderMap, site: &Site) -> Result<(), ApiError> {
    let header = |name| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(fetch_site) = header("sec-fetch-site")
        && !matches!(fetch_site, "same-origin" | "none")
    {
        return Err(ApiError::Forbidden(format!(
            "a {fetch_site} request cannot change anything here (Sec-Fetch-Site)"
        )));
    }
    let Some(origin) = header(ORIGIN.as_str()) else {
        return Ok(());
    };
    let from = authority_of(origin);
    let host = header(HOST.as_str());
    let ours = from.is_some_and(|from| {
        host.is_some_and(|h| h.eq_ignore_ascii_case(from)) || site.hosts.is_public(from)
    });
    if ours {
        Ok(())
    } else {
        Err(ApiError::Forbidden(format!(
            "a request from {origin} cannot change anything here (Origin is not this site)"
        )))
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Equal bytes, compared in constant time so timing does not reveal a common prefix.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    subtle::ConstantTimeEq::ct_eq(a, b).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::hosts::HostPolicy;

    #[test]
    fn constant_time_comparison_needs_the_same_length_and_bytes() {
        assert!(constant_time_eq(b"token", b"token"));
        assert!(!constant_time_eq(b"token", b"tokem"));
        assert!(!constant_time_eq(b"token", b"tok"));
        assert!(!constant_time_eq(b"", b"t"));
    }

    fn site(public_url: Option<&str>) -> Site {
        Site {
            hosts: HostPolicy::new(public_url, &[], None),
            ..Site::default()
        }
    }

    fn with_cookie(set_cookie: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let pair = set_cookie.split(';').next().unwrap();
        headers.insert(COOKIE, pair.parse().unwrap());
        headers
    }

    #[test]
    fn an_empty_or_short_secret_is_refused_and_trimming_does_not_change_the_key() {
        for short in ["", "   \n", "\t0123456789abcdef0123456789abcde \n"] {
            let problem = CsrfKey::from_secret(short.as_bytes()).unwrap_err();
            assert!(problem.contains("at least 32"), "{short:?}: {problem}");
        }
        let secret = "0123456789abcdef0123456789abcdef";
        let key = CsrfKey::from_secret(secret.as_bytes()).unwrap();
        let from_file = CsrfKey::from_secret(format!("{secret}\n").as_bytes()).unwrap();
        assert_eq!(key.mac(&["x"]), from_file.mac(&["x"]));
        let other = CsrfKey::from_secret(b"0123456789abcdef0123456789abcdeX").unwrap();
        assert_ne!(key.mac(&["x"]), other.mac(&["x"]));
    }

    #[test]
    fn a_token_is_bound_to_its_session_and_its_user() {
        let (site, key) = (site(None), CsrfKey::generate());
        let (token, cookie) = token(&HeaderMap::new(), &site, &key, "ana");
        let cookie = cookie.unwrap();
        assert!(cookie.starts_with("fleetglass_session=") && !cookie.contains("Secure"));
        let headers = with_cookie(&cookie);
        assert!(verify(&headers, &site, &key, "ana", &token));
        assert!(
            !verify(&headers, &site, &key, "bob", &token),
            "another user"
        );
        assert!(
            !verify(&headers, &site, &CsrfKey::generate(), "ana", &token),
            "another key"
        );
        let (_, other) = super::token(&HeaderMap::new(), &site, &key, "ana");
        assert!(
            !verify(&with_cookie(&other.unwrap()), &site, &key, "ana", &token),
            "another session"
        );
        assert!(
            !verify(&HeaderMap::new(), &site, &key, "ana", &token),
            "no cookie"
        );
        assert_eq!(super::token(&headers, &site, &key, "ana"), (token, None));
    }

    #[test]
    fn under_https_the_cookie_is_host_prefixed_and_secure() {
        let (site, key) = (site(Some("https://fleet.example.com")), CsrfKey::generate());
        let (token, cookie) = token(&HeaderMap::new(), &site, &key, "ana");
        let cookie = cookie.unwrap();
        assert!(cookie.starts_with("__Host-fleetglass_session=") && cookie.contains("; Secure"));
        assert!(cookie.contains("Path=/") && !cookie.contains("Domain"));
        assert!(verify(&with_cookie(&cookie), &site, &key, "ana", &token));
        let plain = with_cookie(&cookie.replacen("__Host-", "", 1));
        assert!(
            !verify(&plain, &site, &key, "ana", &token),
            "an unprefixed cookie does not count"
        );
    }

    #[test]
    fn writes_from_other_sites_are_refused() {
        let site = site(Some("https://fleet.example.com"));
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut headers = HeaderMap::new();
            for (name, value) in pairs {
                headers.insert(*name, value.parse().unwrap());
            }
            headers
        };
        let ok = [
            headers(&[]),
            headers(&[
                ("sec-fetch-site", "same-origin"),
                ("origin", "https://fleet.example.com"),
            ]),
            headers(&[
                ("origin", "http://127.0.0.1:8080"),
                ("host", "127.0.0.1:8080"),
            ]),
        ];
        for h in ok {
            assert!(same_origin(&h, &site).is_ok(), "{h:?}");
        }
        let refused = [
            headers(&[("sec-fetch-site", "cross-site")]),
            headers(&[("sec-fetch-site", "same-site")]),
            headers(&[
                ("origin", "https://evil.example"),
                ("host", "fleet.example.com"),
            ]),
            headers(&[("origin", "null")]),
        ];
        for h in refused {
            assert!(same_origin(&h, &site).is_err(), "{h:?}");
        }
    }
}
