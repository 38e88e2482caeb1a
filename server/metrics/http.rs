//! HTTP request metrics, labelled by the route template axum matched (`/objects/{cluster}/…`),
//! never the raw path, so label values stay bounded.

use super::registry::{RequestLabels, RouteLabels, metrics};
use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use std::time::Instant;

/// The route label of requests no route matched (404s of any path).
const UNMATCHED: &str = "unmatched";

pub async fn track(request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or(UNMATCHED, MatchedPath::as_str)
        .to_string();
    let method = request.method().as_str().to_string();
    let started = Instant::now();
    let response = next.run(request).await;
    let m = metrics();
    m.http_seconds
        .get_or_create(&RouteLabels {
            route: route.clone(),
        })
        .observe(started.elapsed().as_secs_f64());
    m.http_requests
        .get_or_create(&RequestLabels {
            route,
            method: bounded_method(&method).to_string(),
            status: response.status().as_str().to_string(),
        })
        .inc();
    response
}

/// Methods a client invents are one label value, not one each.
fn bounded_method(method: &str) -> &str {
    match method {
        "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS" => method,
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::body::Body;
    use axum::http::Request;
    use axum::middleware::from_fn;
    use axum::routing::get;
    use tower::ServiceExt;

    #[tokio::test]
    async fn requests_are_counted_by_route_template_not_path() {
        let app = Router::new()
            .route("/metrics-test/{name}", get(|| async { "ok" }))
            .layer(from_fn(super::track));
        for path in [
            "/metrics-test/a",
            "/metrics-test/b",
            "/metrics-test-nowhere",
        ] {
            let request = Request::get(path).body(Body::empty()).unwrap();
            app.clone().oneshot(request).await.unwrap();
        }
        let text = super::metrics().encode(std::time::Instant::now());
        assert!(
            text.contains("fleetglass_http_requests_total{route=\"/metrics-test/{name}\",method=\"GET\",status=\"200\"} 2"),
            "{text}"
        );
        assert!(!text.contains("/metrics-test/a"), "{text}");
        assert!(
            text.contains("route=\"unmatched\",method=\"GET\",status=\"404\""),
            "{text}"
        );
    }
}
