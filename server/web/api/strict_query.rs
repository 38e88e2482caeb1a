//! Unknown query parameters are refused (400, naming them and what the path takes): a typo in
//! a filter (`stat=failed`) would otherwise answer as if there were no filter at all. What a
//! path takes is what its handler declares in the OpenAPI document, so the two cannot differ.

use crate::web::error::ApiError;
use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use percent_encoding::percent_decode_str;
use std::collections::BTreeSet;

pub async fn refuse_unknown(request: Request, next: Next) -> Response {
    let pattern = request
        .extensions()
        .get::<MatchedPath>()
        .map(MatchedPath::as_str);
    let (Some(known), Some(query)) = (
        pattern.and_then(super::openapi::query_parameters),
        request.uri().query(),
    ) else {
        return next.run(request).await;
    };
    let unknown: BTreeSet<String> = names(query).filter(|name| !known.contains(name)).collect();
    if unknown.is_empty() {
        return next.run(request).await;
    }
    let listed = |names: &mut dyn Iterator<Item = &String>| {
        names.map(String::as_str).collect::<Vec<_>>().join(", ")
    };
    let takes = if known.is_empty() {
        "no query parameters".to_string()
    } else {
        listed(&mut known.iter())
    };
    ApiError::BadRequest(format!(
        "unknown query parameter(s) {}: this path takes {takes}",
        listed(&mut unknown.iter())
    ))
    .respond_for(request.uri().path())
}

/// The parameter names of a query string, decoded as forms encode them.
fn names(query: &str) -> impl Iterator<Item = String> + '_ {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| pair.split_once('=').map_or(pair, |(name, _)| name))
        .map(|name| {
            percent_decode_str(&name.replace('+', " "))
                .decode_utf8_lossy()
                .into_owned()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_decoded_and_values_ignored() {
        let found: Vec<String> = names("state=failed&cl%75ster=a&&flag&a+b=1").collect();
        assert_eq!(found, ["state", "cluster", "flag", "a b"]);
    }
}
