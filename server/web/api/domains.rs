//! `GET /api/v1/domains`, `/api/v1/domains/{name}` and the CI gate
//! `/api/v1/domains/{name}/wait?version=V&timeout=D`.

use crate::web::AppState;
use crate::web::client::Client;
use crate::web::error::{ApiError, ErrorBody, Result};
use crate::web::scope::Scope;
use crate::web::views::domain::DomainDetail;
use crate::web::views::filters::label_pair;
use crate::web::views::gate::{self, GateVerdict};
use axum::Json;
use axum::extract::{Extension, Path, Query, State};
use chrono::Utc;
use serde::Serialize;
use std::collections::HashMap;

/// Every configured domain, each as `/api/v1/domains/{name}` shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DomainList {
    pub domains: Vec<DomainDetail>,
}

/// Every domain with its version and state per cluster.
#[utoipa::path(get, path = super::DOMAINS, operation_id = "domains", responses(
    (status = 200, description = "the domains", body = DomainList),
    (status = "default", description = "an error (see the document's description)", body = ErrorBody),
))]
pub async fn list(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
) -> Result<Json<DomainList>> {
    let domains = DomainDetail::load_all(&state.store, &state.site, &scope, Utc::now()).await?;
    Ok(Json(DomainList { domains }))
}

/// One domain: its version and state per cluster, and how far the newest version has rolled
/// out.
#[utoipa::path(get, path = super::DOMAIN, operation_id = "domain",
    params(
        ("name" = String, Path, description = "domain name"),
        ("label" = Option<String>, Query, description = "only clusters with this label, key=value (e.g. ring=prod)"),
    ),
    responses(
        (status = 200, description = "the domain", body = DomainDetail),
        (status = 400, description = "a bad label filter", body = ErrorBody),
        (status = 404, description = "no such domain", body = ErrorBody),
        (status = "default", description = "an error (see the document's description)", body = ErrorBody),
    ))]
pub async fn one(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    Path(name): Path<String>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Json<DomainDetail>> {
    let label = match params.get("label").filter(|l| !l.is_empty()) {
        Some(label) => Some(label_pair(label)?),
        None => None,
    };
    Ok(Json(
        DomainDetail::load(&state.store, &state.site, &scope, &name, label, Utc::now()).await?,
    ))
}

/// The CI gate: waits until version V of the domain is fully healthy on every cluster in its
/// scope, or the timeout passes, and answers with the verdict and the blockers.
#[utoipa::path(get, path = super::WAIT, operation_id = "wait",
    params(
        ("name" = String, Path, description = "domain name"),
        ("version" = String, Query, description = "the version to wait for"),
        ("timeout" = Option<String>, Query, description = "Go duration (90s, 15m, 1h30m), at most 1h; default 5m"),
        ("label" = Option<String>, Query, description = "only clusters with this label count, key=value (ring=prod gates one ring)"),
        ("fail_fast" = Option<bool>, Query, description = "true: answer as soon as the version has failed on a cluster in scope (failed_on), not at the timeout"),
    ),
    responses(
        (status = 200, description = "the verdict: healthy, or not with the blockers when the timeout passed (or, with fail_fast, when the version failed somewhere)", body = GateVerdict),
        (status = 400, description = "no version, or a bad timeout or label", body = ErrorBody),
        (status = 404, description = "no such domain", body = ErrorBody),
        (status = 503, description = "web.limits.max_waits waits are in progress already, or this client's share of them (web.limits.max_waits_per_client), or the server is shutting down; try again after Retry-After seconds", body = ErrorBody),
        (status = "default", description = "an error (see the document's description)", body = ErrorBody),
    ))]
pub async fn wait(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    client: Client,
    Path(name): Path<String>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Json<GateVerdict>> {
    let version = params
        .get("version")
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())
        .ok_or_else(|| ApiError::BadRequest("version is required, e.g. ?version=v1.4.2".into()))?;
    let timeout = gate::timeout(params.get("timeout").map(String::as_str))?;
    let label = match params.get("label").filter(|l| !l.is_empty()) {
        Some(label) => Some(label_pair(label)?),
        None => None,
    };
    let fail_fast = match params.get("fail_fast").map(String::as_str) {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            return Err(ApiError::BadRequest(format!(
                "fail_fast is true or false, not {other:?}"
            )));
        }
    };
    let asked = gate::Asked {
        domain: &name,
        version,
        timeout,
        label,
        fail_fast,
    };
    Ok(Json(gate::wait(&state, &scope, &client.0, asked).await?))
}
