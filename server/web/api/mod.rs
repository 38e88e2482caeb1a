//! The JSON API under `/api/v1`: the same verdicts as the pages, for scripts and CI.
//! Described by the OpenAPI document at `/api/v1/openapi.json`.

pub mod alerts;
pub mod audit;
mod delivery;
mod domains;
mod fleet;
mod impact;
mod objects;
mod openapi;
mod strict_query;

use super::AppState;
use axum::Router;
use axum::routing::get;

const FLEET: &str = "/api/v1/fleet";
const DOMAINS: &str = "/api/v1/domains";
const DOMAIN: &str = "/api/v1/domains/{name}";
const WAIT: &str = "/api/v1/domains/{name}/wait";
const ROLLOUTS: &str = "/api/v1/domains/{name}/rollouts";
const ROLLOUT: &str = "/api/v1/domains/{name}/rollouts/{version}";
const DELIVERY: &str = "/api/v1/domains/{name}/delivery";
const CLUSTERS: &str = "/api/v1/clusters";
const CLUSTER: &str = "/api/v1/clusters/{name}";
const OBJECTS: &str = "/api/v1/objects";
const OBJECT: &str = "/api/v1/objects/{cluster}/{kind}/{namespace}/{name}";
const PROBLEMS: &str = "/api/v1/problems";
const OWNER: &str = "/api/v1/owner";
const IMPACT: &str = "/api/v1/impact";
const OPENAPI: &str = "/api/v1/openapi.json";
const AUDIT: &str = "/api/v1/audit";
pub(super) const ALERTS: &str = "/api/v1/alerts";
pub(super) const SILENCES: &str = "/api/v1/silences";

/// Every API route this router serves (the OpenAPI test checks the document against it).
pub const PATHS: [&str; 18] = [
    FLEET, DOMAINS, DOMAIN, WAIT, ROLLOUTS, ROLLOUT, DELIVERY, CLUSTERS, CLUSTER, OBJECTS, OBJECT,
    PROBLEMS, OWNER, IMPACT, OPENAPI, AUDIT, ALERTS, SILENCES,
];

pub fn router() -> Router<AppState> {
    Router::new()
        .route(FLEET, get(fleet::fleet))
        .route(DOMAINS, get(domains::list))
        .route(DOMAIN, get(domains::one))
        .route(WAIT, get(domains::wait))
        .route(ROLLOUTS, get(delivery::rollouts))
        .route(ROLLOUT, get(delivery::rollout))
        .route(DELIVERY, get(delivery::delivery))
        .route(CLUSTERS, get(fleet::clusters))
        .route(CLUSTER, get(fleet::cluster))
        .route(OBJECTS, get(objects::list))
        .route(OBJECT, get(objects::one))
        .route(PROBLEMS, get(objects::problems))
        .route(OWNER, get(objects::owner))
        .route(IMPACT, get(impact::impact))
        .route(OPENAPI, get(openapi::document))
        .route(AUDIT, get(audit::audit))
        .merge(alerts::router())
        .route_layer(axum::middleware::from_fn(strict_query::refuse_unknown))
}
