//! Request tracing keyed on the route axum matched (`/objects/{cluster}/{kind}/…`), never the
//! raw URI: span fields stay bounded and carry no object names. Each span records the method,
//! the route and, once answered, the status.

use axum::extract::MatchedPath;
use axum::http::{Request, Response};
use std::time::Duration;
use tower_http::classify::{ServerErrorsAsFailures, SharedClassifier};
use tower_http::trace::{DefaultOnRequest, MakeSpan, OnResponse, TraceLayer};
use tracing::Span;

/// The route of requests no route matched (404s of any path), as the metrics name it.
const UNMATCHED: &str = "unmatched";

pub type RequestTracing =
    TraceLayer<SharedClassifier<ServerErrorsAsFailures>, RouteSpan, DefaultOnRequest, RecordStatus>;

/// Added with `Router::layer`, so it runs after routing and sees the `MatchedPath`.
pub fn layer() -> RequestTracing {
    TraceLayer::new_for_http()
        .make_span_with(RouteSpan)
        .on_response(RecordStatus)
}

#[derive(Debug, Clone, Copy)]
pub struct RouteSpan;

impl<B> MakeSpan<B> for RouteSpan {
    fn make_span(&mut self, request: &Request<B>) -> Span {
        let route = request
            .extensions()
            .get::<MatchedPath>()
            .map_or(UNMATCHED, MatchedPath::as_str);
        tracing::info_span!(
            "request",
            method = %request.method(),
            route,
            status = tracing::field::Empty,
        )
    }
}

#[derive(Debug, Clone, Copy)]
pub struct RecordStatus;

impl<B> OnResponse<B> for RecordStatus {
    fn on_response(self, response: &Response<B>, latency: Duration, span: &Span) {
        span.record("status", response.status().as_u16());
        tracing::debug!(latency_ms = latency.as_millis() as u64, "answered");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::body::Body;
    use axum::routing::get;
    use std::sync::{Arc, Mutex};
    use tower::ServiceExt;
    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

    /// Every field recorded on any span, as `name=value`.
    #[derive(Clone, Default)]
    struct Fields(Arc<Mutex<Vec<String>>>);

    impl Visit for Fields {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            let mut fields = self.0.lock().unwrap();
            fields.push(format!("{}={value:?}", field.name()));
        }
    }

    impl<S: tracing::Subscriber> Layer<S> for Fields {
        fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
            attrs.record(&mut self.clone());
        }

        fn on_record(&self, _: &Id, values: &Record<'_>, _: Context<'_, S>) {
            values.record(&mut self.clone());
        }
    }

    #[tokio::test]
    async fn spans_name_the_matched_route_method_and_status_not_the_uri() {
        let fields = Fields::default();
        let subscriber = tracing_subscriber::registry().with(fields.clone());
        let _default = tracing::subscriber::set_default(subscriber);
        let app = Router::new()
            .route("/objects/{name}", get(|| async { "found" }))
            .layer(layer());
        for uri in ["/objects/secret-name", "/nowhere/secret-name"] {
            app.clone()
                .oneshot(Request::get(uri).body(Body::empty()).unwrap())
                .await
                .unwrap();
        }
        let recorded = fields.0.lock().unwrap().join(" ");
        for expected in [
            "route=\"/objects/{name}\"",
            "route=\"unmatched\"",
            "method=GET",
            "status=200",
            "status=404",
        ] {
            assert!(recorded.contains(expected), "{expected} in {recorded}");
        }
        assert!(!recorded.contains("secret-name"), "{recorded}");
    }
}
