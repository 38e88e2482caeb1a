//! Server-rendered pages: one askama struct per page, defined beside its handler.

mod actions;
mod alerts;
mod audit;
pub use actions::ACTION;
pub use alerts::{ADD_SILENCE, EXPIRE_SILENCE};
mod cluster;
mod clusters;
mod delivery;
mod domain;
mod domains;
mod fleet;
mod impact;
mod logs;
mod object;
mod objects;
mod owner;
mod problems;

use super::AppState;
use super::error::PageResult;
use askama::Template;
use axum::Router;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;

const FLEET: &str = "/";
const FLEET_FRAGMENT: &str = "/fragments/fleet";
const PROBLEMS: &str = "/problems";
const PROBLEMS_FRAGMENT: &str = "/fragments/problems";
const DOMAINS: &str = "/domains";
const DOMAIN: &str = "/domains/{name}";
const ROLLOUTS: &str = "/domains/{name}/rollouts";
const ROLLOUT: &str = "/domains/{name}/rollouts/{version}";
const DELIVERY: &str = "/domains/{name}/delivery";
const CLUSTERS: &str = "/clusters";
const CLUSTER: &str = "/clusters/{name}";
const OBJECTS: &str = "/objects";
const OBJECT: &str = "/objects/{cluster}/{kind}/{namespace}/{name}";
const IMPACT: &str = "/impact/{cluster}/{kind}/{namespace}/{name}";
const OWNER: &str = "/owner/{cluster}/{kind}/{namespace}/{name}";
const AUDIT: &str = "/audit";
const LOGS_FRAGMENT: &str = "/fragments/logs/{cluster}/{namespace}/{pod}/{container}";

/// Every page route this router serves, with the form targets of `/alerts` (the access test
/// walks it so that no page can be left open by mistake).
pub const PATHS: [&str; 21] = [
    FLEET,
    FLEET_FRAGMENT,
    PROBLEMS,
    PROBLEMS_FRAGMENT,
    DOMAINS,
    DOMAIN,
    ROLLOUTS,
    ROLLOUT,
    DELIVERY,
    CLUSTERS,
    CLUSTER,
    OBJECTS,
    OBJECT,
    IMPACT,
    OWNER,
    LOGS_FRAGMENT,
    AUDIT,
    ACTION,
    alerts::PAGE,
    alerts::ADD_SILENCE,
    alerts::EXPIRE_SILENCE,
];

pub fn router() -> Router<AppState> {
    Router::new()
        .route(FLEET, get(fleet::page))
        .route(FLEET_FRAGMENT, get(fleet::fragment))
        .route(PROBLEMS, get(problems::page))
        .route(PROBLEMS_FRAGMENT, get(problems::fragment))
        .route(DOMAINS, get(domains::page))
        .route(DOMAIN, get(domain::page))
        .route(ROLLOUTS, get(delivery::newest))
        .route(ROLLOUT, get(delivery::of_version))
        .route(DELIVERY, get(delivery::delivery))
        .route(CLUSTERS, get(clusters::page))
        .route(CLUSTER, get(cluster::page))
        .route(OBJECTS, get(objects::page))
        .route(OBJECT, get(object::page))
        .route(IMPACT, get(impact::page))
        .route(OWNER, get(owner::page))
        .route(LOGS_FRAGMENT, get(logs::fragment))
        .route(AUDIT, get(audit::page))
        .route(ACTION, get(actions::confirm).post(actions::act))
        .merge(alerts::router())
}

/// Renders any page template into a response; a template that fails is an internal error.
pub(super) fn render(template: &impl Template) -> PageResult<Response> {
    Ok(Html(template.render()?).into_response())
}
