//! CSRF protection for state-changing forms, by double submit: the page sets a random token
//! in a SameSite=Strict cookie and the same token in a hidden form field; a POST is accepted
//! only when both are present and equal. No form changes state yet (the pages are
//! read-only); forms that do must call `verify` before acting.

use rand::RngCore;

pub const COOKIE: &str = "fleetglass_csrf";
pub const FIELD: &str = "csrf_token";

/// A fresh token and the `Set-Cookie` value carrying it.
pub fn issue() -> (String, String) {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let cookie = format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict");
    (token, cookie)
}

/// True when the request's cookie header carries the same token as the submitted field.
pub fn verify(cookie_header: Option<&str>, submitted: &str) -> bool {
    let Some(cookie) = cookie_header.and_then(|header| {
        header
            .split(';')
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(name, _)| *name == COOKIE)
            .map(|(_, value)| value)
    }) else {
        return false;
    };
    !submitted.is_empty()
        && cookie.len() == submitted.len()
        && cookie
            .bytes()
            .zip(submitted.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_matching_cookie_and_field_pass() {
        let (token, cookie) = issue();
        let header = cookie.split(';').next().unwrap().to_string();
        assert!(verify(Some(&format!("a=b; {header}")), &token));
        assert!(!verify(Some(&header), "forged"));
        assert!(!verify(None, &token));
        assert!(!verify(Some(&header), ""));
        assert_ne!(issue().0, token, "tokens are random");
    }
}
