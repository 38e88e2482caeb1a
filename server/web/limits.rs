//! Bounds on what a request may make the server read: the body has its own layer; the query
//! string is bounded here (filters are short; a long one is a mistake or an attack), and
//! neither the path nor the query may carry control characters once decoded. Postgres refuses
//! NUL in text, which would otherwise surface as a database failure (503), and no name
//! fleetglass serves contains one. Bodies are checked where they are read (silences).

use super::error::ApiError;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;

/// Longest accepted query string, in bytes.
pub const MAX_QUERY: usize = 2048;

pub async fn bounded_input(request: Request, next: Next) -> Response {
    let uri = request.uri();
    let path = uri.path().to_string();
    let query = uri.query().unwrap_or_default();
    let refusal = if query.len() > MAX_QUERY {
        Some(ApiError::TooLong(format!(
            "the query string is {} bytes; at most {MAX_QUERY} are accepted",
            query.len()
        )))
    } else if has_control(&path) {
        Some(ApiError::BadRequest(
            "the path contains a control character (NUL and the like are not part of any name)"
                .into(),
        ))
    } else if has_control(query) {
        Some(ApiError::BadRequest(
            "query values cannot contain control characters (NUL and the like)".into(),
        ))
    } else {
        None
    };
    match refusal {
        Some(error) => error.respond_for(&path),
        None => next.run(request).await,
    }
}

/// Whether percent-decoding `text` yields a control character (C0, DEL); raw ones cannot
/// reach here, the HTTP parser refuses them.
fn has_control(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let byte = match (bytes[i], bytes.get(i + 1..i + 3)) {
            (b'%', Some(hex)) => match std::str::from_utf8(hex)
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                Some(decoded) => {
                    i += 2;
                    decoded
                }
                None => b'%',
            },
            (byte, _) => byte,
        };
        if byte < 0x20 || byte == 0x7f {
            return true;
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_control_characters_are_found() {
        for text in ["%00", "a%0Ab", "x%1f", "%7F", "name=%00", "a\u{1}"] {
            assert!(has_control(text), "{text}");
        }
        for text in [
            "",
            "prod-eu-1",
            "q=a%20b&state=failed",
            "100%",
            "%zz",
            "%2F%25",
        ] {
            assert!(!has_control(text), "{text}");
        }
    }
}
