//! `GET /api/v1/impact?cluster=&kind=&namespace=&name=` (or `domain=` instead of `cluster=`):
//! what breaks if this stack goes.

use crate::web::AppState;
use crate::web::error::{ApiError, ErrorBody, Result};
use crate::web::freshness::Freshness;
use crate::web::scope::Scope;
use crate::web::views::impact::ImpactView;
use crate::web::views::object::key_from_path;
use axum::Json;
use axum::extract::{Extension, Query, State};
use chrono::Utc;
use std::collections::HashMap;

/// What breaks if this stack goes: what the Flux object provides (CRDs, Namespaces) that other
/// Flux objects consume, per cluster.
#[utoipa::path(get, path = super::IMPACT, operation_id = "impact",
    params(
        ("cluster" = Option<String>, Query, description = "one cluster (or give domain)"),
        ("domain" = Option<String>, Query, description = "every cluster of this domain (or give cluster)"),
        ("kind" = String, Query, description = "Kustomization or HelmRelease (any kind is accepted)"),
        ("namespace" = Option<String>, Query, description = "namespace of the Flux object"),
        ("name" = String, Query, description = "name of the Flux object"),
    ),
    responses(
        (status = 200, description = "what depends on the stack", body = ImpactView),
        (status = 400, description = "a missing parameter, or both or neither of cluster and domain", body = ErrorBody),
        (status = 404, description = "no such domain or cluster, or no such stack on the clusters searched", body = ErrorBody),
        (status = "default", description = "an error (see the document's description)", body = ErrorBody),
    ))]
pub async fn impact(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Json<ImpactView>> {
    let field = |key: &str| {
        params
            .get(key)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let required = |key: &str| {
        field(key).ok_or_else(|| {
            ApiError::BadRequest(format!(
                "{key} is required (kind, name, and cluster or domain)"
            ))
        })
    };
    let namespace = field("namespace").unwrap_or_default();
    let (clusters, domain) = match (field("cluster"), field("domain")) {
        (Some(cluster), None) => (vec![cluster], None),
        (None, Some(domain)) => (
            domain_clusters(&state, &scope, &domain).await?,
            Some(domain),
        ),
        _ => {
            return Err(ApiError::BadRequest(
                "give exactly one of cluster or domain".into(),
            ));
        }
    };
    let key = key_from_path(
        String::new(),
        &required("kind")?,
        &namespace,
        required("name")?,
    )?;
    let view = ImpactView::load(
        &state.store,
        &state.site,
        &scope,
        &clusters,
        (key.kind, &key.namespace, &key.name),
        domain,
        Utc::now(),
    )
    .await?;
    Ok(Json(view))
}

/// Every cluster the domain is evaluated on.
/// The clusters the domain is on; under a team scope, only when it sees them all (a stack's
/// impact on some of them could read "nothing depends on it").
async fn domain_clusters(state: &AppState, scope: &Scope, domain: &str) -> Result<Vec<String>> {
    if !state.site.domains.iter().any(|d| d.name == domain) || !scope.sees_domain(domain) {
        return Err(ApiError::NotFound(format!("no domain named {domain:?}")));
    }
    let (freshness, clusters) = Freshness::load(&state.store, &state.site, Utc::now()).await?;
    let rows = freshness.domain_rows(
        &state.site,
        &clusters,
        state.store.domain_verdicts_of(domain).await?,
    );
    let clusters: Vec<String> = rows
        .into_iter()
        .filter(|row| row.domain == domain)
        .map(|row| row.cluster)
        .collect();
    let unseen = clusters.iter().filter(|c| !scope.sees_cluster(c)).count();
    if unseen > 0 {
        return Err(ApiError::Forbidden(format!(
            "domain {domain:?} is on {unseen} cluster(s) outside your scope: ask with cluster= \
             on one you see"
        )));
    }
    Ok(clusters)
}
