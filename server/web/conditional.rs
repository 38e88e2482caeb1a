//! Conditional GETs: every whole 200 answer to a GET carries an `ETag` made from its body,
//! and a request whose `If-None-Match` names it gets 304 with no body. A page refreshed every
//! few seconds (htmx, a CI script polling the API) then costs a few bytes while nothing
//! changed. The tag is weak (`W/`): the same content gzip'd or not is the same tag.

use axum::body::{Body, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

/// Largest body given a tag; bigger ones pass as they are.
const MOST: u64 = 4 * 1024 * 1024;

pub async fn etag(request: Request, next: Next) -> Response {
    let get = matches!(*request.method(), Method::GET | Method::HEAD);
    let asked = request.headers().get(header::IF_NONE_MATCH).cloned();
    let response = next.run(request).await;
    let whole = response
        .body()
        .size_hint()
        .exact()
        .is_some_and(|n| n <= MOST);
    if !get
        || response.status() != StatusCode::OK
        || !whole
        || response.headers().contains_key(header::ETAG)
    {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MOST as usize).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let digest = Sha256::digest(&bytes);
    let tag: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
    let tag = HeaderValue::from_str(&format!("W/\"{tag}\"")).expect("hex is a header value");
    if asked.is_some_and(|asked| names(&asked, &tag)) {
        let mut not_modified = StatusCode::NOT_MODIFIED.into_response();
        copy_validators(&parts.headers, not_modified.headers_mut());
        not_modified.headers_mut().insert(header::ETAG, tag);
        return not_modified;
    }
    parts.headers.insert(header::ETAG, tag);
    Response::from_parts(parts, Body::from(bytes))
}

/// Whether an `If-None-Match` value names `tag` (a list, `*`, weak or strong forms alike:
/// RFC 9110 §13.1.2 compares weakly).
fn names(asked: &HeaderValue, tag: &HeaderValue) -> bool {
    let Ok(asked) = asked.to_str() else {
        return false;
    };
    let bare = |t: &str| t.trim().trim_start_matches("W/").to_string();
    let wanted = bare(tag.to_str().unwrap_or_default());
    asked
        .split(',')
        .any(|candidate| candidate.trim() == "*" || bare(candidate) == wanted)
}

/// What a 304 must repeat of the 200 it stands for (RFC 9110 §15.4.5).
fn copy_validators(from: &HeaderMap, to: &mut HeaderMap) {
    for name in [
        header::CACHE_CONTROL,
        header::VARY,
        header::CONTENT_LOCATION,
    ] {
        if let Some(value) = from.get(&name) {
            to.insert(name, value.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_none_match_names_the_tag_in_any_form() {
        let tag = HeaderValue::from_static("W/\"abc\"");
        for asked in ["W/\"abc\"", "\"abc\"", "\"x\", W/\"abc\"", "*"] {
            assert!(names(&HeaderValue::from_static(asked), &tag), "{asked}");
        }
        for asked in ["\"abd\"", "W/\"ab\"", ""] {
            assert!(!names(&HeaderValue::from_static(asked), &tag), "{asked}");
        }
    }
}
