//! `GET /api/v1/openapi.json`: the OpenAPI 3.1 document of this API, generated from the
//! handlers' `#[utoipa::path]` annotations and the reply types themselves, so it cannot drift
//! from what the server answers (tests/openapi.rs checks real answers against it).

use super::{alerts, audit, delivery, domains, fleet, impact, objects};
use crate::alerts::WebhookBody;
use crate::health::State;
use crate::web::error::ErrorBody;
use crate::web::views::filters::NOT_HEALTHY;
use axum::http::header;
use axum::response::IntoResponse;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;
use utoipa::openapi::RefOr;
use utoipa::openapi::path::ParameterIn;
use utoipa::openapi::schema::{Schema, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi, PartialSchema, ToSchema};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "fleetglass API",
        version = "1",
        description = "The same verdicts as the dashboard, for scripts and CI. Times are RFC 3339 \
            in UTC. Every error is a JSON object {\"error\": message}: unknown names and paths \
            answer 404; bad filters, unknown query parameters, control characters and malformed JSON 400; a method a \
            path does not serve 405; a query string past 2048 bytes 414; a body that is not \
            application/json 415; JSON of the wrong shape 422; a database that does not answer \
            503. With web.auth.mode tokens (or configured tokens), send Authorization: Bearer \
            <token> (401 without it); without authentication the API is read-only (writes \
            answer 403)."
    ),
    paths(
        fleet::fleet,
        domains::list,
        domains::one,
        domains::wait,
        delivery::rollouts,
        delivery::rollout,
        delivery::delivery,
        fleet::clusters,
        fleet::cluster,
        objects::list,
        objects::one,
        objects::problems,
        objects::owner,
        impact::impact,
        document,
        audit::audit,
        alerts::alerts,
        alerts::list_silences,
        alerts::create_silence,
    ),
    components(schemas(ErrorBody, WebhookBody)),
    security((), ("bearer" = [])),
    modifiers(&Bearer, &RepliesHaveEveryField, &Webhooks),
)]
struct ApiDoc;

static DOCUMENT: LazyLock<String> = LazyLock::new(|| {
    ApiDoc::openapi()
        .to_json()
        .expect("the OpenAPI document serialises")
});

/// The query parameters each path takes, as its handlers declare them here.
static QUERY_PARAMETERS: LazyLock<BTreeMap<String, BTreeSet<String>>> = LazyLock::new(|| {
    let document = ApiDoc::openapi();
    document
        .paths
        .paths
        .into_iter()
        .map(|(path, item)| {
            let operations = [item.get, item.post].into_iter().flatten();
            let names = operations
                .flat_map(|operation| operation.parameters.into_iter().flatten())
                .filter_map(|parameter| match parameter {
                    RefOr::T(p) if p.parameter_in == ParameterIn::Query => Some(p.name),
                    _ => None,
                })
                .collect();
            (path, names)
        })
        .collect()
});

/// The query parameters `path` (a route pattern) takes; None for a path not in this document.
pub fn query_parameters(path: &str) -> Option<&'static BTreeSet<String>> {
    QUERY_PARAMETERS.get(path)
}

/// This document.
#[utoipa::path(get, path = super::OPENAPI, operation_id = "openapi", responses(
    (status = 200, description = "the OpenAPI 3.1 document", content_type = "application/json", body = Object),
    (status = "default", description = "an error (see the document's description)", body = ErrorBody),
))]
pub async fn document() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        DOCUMENT.as_str(),
    )
}

/// What fleetglass sends: each generic webhook (`alerts.webhooks[]`) receives a POST of a
/// [`WebhookBody`] per notification.
struct Webhooks;

impl Modify for Webhooks {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::path::{HttpMethod, OperationBuilder, PathItem, PathsBuilder};
        use utoipa::openapi::request_body::RequestBodyBuilder;
        use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
        let body = ContentBuilder::new()
            .schema(Some(Ref::from_schema_name(WebhookBody::name())))
            .build();
        let operation = OperationBuilder::new()
            .operation_id(Some("alertWebhook"))
            .summary(Some(
                "One alert notification, sent to every configured webhook",
            ))
            .description(Some(
                "Header Idempotency-Key carries the body's id. A 2xx answer is delivered; 429 \
                 with Retry-After is retried then; anything else is retried with backoff.",
            ))
            .request_body(Some(
                RequestBodyBuilder::new()
                    .content("application/json", body)
                    .required(Some(utoipa::openapi::Required::True))
                    .build(),
            ))
            .response(
                "2XX",
                ResponseBuilder::new().description("received").build(),
            );
        let item = PathItem::new(HttpMethod::Post, operation);
        openapi.webhooks = Some(PathsBuilder::new().path("alert", item).build());
    }
}

/// The bearer-token scheme the `security` requirement names.
struct Bearer;

impl Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// Our replies never leave a field out (serde writes `None` as `null`), so every property of
/// a reply schema is required; utoipa would leave `Option` fields optional. Only request
/// bodies, whose fields may be absent, keep what the derive says.
struct RepliesHaveEveryField;

/// Schemas of request bodies.
const REQUESTS: [&str; 1] = ["NewSilence"];

impl Modify for RepliesHaveEveryField {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let Some(components) = openapi.components.as_mut() else {
            return;
        };
        for (name, schema) in components.schemas.iter_mut() {
            if !REQUESTS.contains(&name.as_str()) {
                require_every_property(schema);
            }
        }
    }
}

fn require_every_property(schema: &mut RefOr<Schema>) {
    match schema {
        RefOr::T(Schema::Object(object)) => {
            object.required = object.properties.keys().cloned().collect();
        }
        // A flattened struct is the allOf of its parts.
        RefOr::T(Schema::AllOf(all)) => all.items.iter_mut().for_each(require_every_property),
        _ => {}
    }
}

/// The `state` filter's words: a state, or every state but healthy.
pub struct StateFilter;

impl PartialSchema for StateFilter {
    fn schema() -> RefOr<Schema> {
        let words = State::BY_SEVERITY
            .map(State::as_str)
            .into_iter()
            .chain([NOT_HEALTHY]);
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(words))
            .into()
    }
}

impl ToSchema for StateFilter {}
