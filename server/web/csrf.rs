//! CSRF protection for state-changing forms, by double submit: the page sets a random token in
//! a `SameSite=Strict` cookie and the same token in a hidden field; a POST is accepted only when
//! both are present and equal, which a cross-site form cannot arrange (it can neither read nor
//! set the cookie).

use axum::http::HeaderMap;
use axum::http::header::COOKIE;
use rand::Rng;

pub const FIELD: &str = "csrf";
const COOKIE_NAME: &str = "fleetglass_csrf";
const TOKEN_BYTES: usize = 16;

/// The token to put in the page, and the `Set-Cookie` value when the browser has none yet.
pub fn token(headers: &HeaderMap) -> (String, Option<String>) {
    if let Some(existing) = from_cookie(headers) {
        return (existing, None);
    }
    let bytes: [u8; TOKEN_BYTES] = rand::rng().random();
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let cookie = format!("{COOKIE_NAME}={token}; Path=/; HttpOnly; SameSite=Strict");
    (token, Some(cookie))
}

/// Whether a submitted form's token matches the browser's cookie.
pub fn verify(headers: &HeaderMap, submitted: &str) -> bool {
    from_cookie(headers)
        .is_some_and(|cookie| constant_time_eq(cookie.as_bytes(), submitted.as_bytes()))
}

fn from_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE_NAME)
        .map(|(_, value)| value.to_string())
        .filter(|v| v.len() == TOKEN_BYTES * 2 && v.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Equal bytes, compared without an early exit so timing does not reveal a common prefix.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_matching_cookie_passes() {
        let (token, cookie) = token(&HeaderMap::new());
        let cookie = cookie.unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(COOKIE, cookie.split(';').next().unwrap().parse().unwrap());
        assert!(verify(&headers, &token));
        assert!(!verify(&headers, "0".repeat(32).as_str()));
        assert!(!verify(&HeaderMap::new(), &token));
        assert_eq!(super::token(&headers), (token, None));
        assert_ne!(
            super::token(&HeaderMap::new()).0,
            super::token(&HeaderMap::new()).0
        );
    }
}
