//! `/domains/{name}/rollouts[/{version}]`: a version's rollout drawn across rings, with the
//! expected time to fully healthy while it is in flight; `/domains/{name}/delivery`: the
//! domain's DORA figures per ring over a window.

use super::render;
use crate::delivery::dora::Deployment;
use crate::store::VersionSummary;
use crate::web::AppState;
use crate::web::error::{ApiError, PageResult};
use crate::web::scope::Scope;
use crate::web::views::delivery::{
    Delivery, RolloutOfVersion, duration_text, rows_seen, share_text, versions_of,
};
use crate::web::views::icons::Icon as _;
use crate::web::views::present::{Live, Moment, encode};
use crate::web::views::timeline::Timeline;
use askama::Template;
use axum::extract::{Extension, OriginalUri, Path, Query, State};
use axum::response::Response;
use chrono::{DateTime, Utc};
use std::collections::HashMap;

/// Versions listed beside the drawing.
const VERSIONS_LISTED: i64 = 20;

#[derive(Template)]
#[template(path = "rollouts.html")]
struct RolloutsPage {
    domain: String,
    view: Option<RolloutOfVersion>,
    timeline: Option<Timeline>,
    versions: Vec<VersionSummary>,
    now: DateTime<Utc>,
    live: Live,
    access: &'static str,
}

impl RolloutsPage {
    fn moment(&self, at: &DateTime<Utc>) -> Moment {
        Moment::new(*at, self.now)
    }

    fn version_href(&self, version: &str) -> String {
        format!(
            "/domains/{}/rollouts/{}",
            encode(&self.domain),
            encode(version)
        )
    }
}

pub async fn newest(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    OriginalUri(uri): OriginalUri,
    Path(name): Path<String>,
) -> PageResult<Response> {
    rollout_page(state, scope, uri, name, None).await
}

pub async fn of_version(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    OriginalUri(uri): OriginalUri,
    Path((name, version)): Path<(String, String)>,
) -> PageResult<Response> {
    rollout_page(state, scope, uri, name, Some(version)).await
}

async fn rollout_page(
    state: AppState,
    scope: Scope,
    uri: axum::http::Uri,
    domain: String,
    version: Option<String>,
) -> PageResult<Response> {
    let now = Utc::now();
    let (store, site) = (&state.store, &scope.site(&state.site));
    if !scope.sees_domain(&domain) {
        return Err(ApiError::NotFound(format!("no domain named {domain:?}")).into());
    }
    // A team's versions are counted on its own clusters.
    let versions = match scope.is_everything() {
        true => store.rollout_versions(&domain, VERSIONS_LISTED).await?,
        false => {
            let rows = store.rollouts_of(&domain, None, VERSIONS_LISTED).await?;
            versions_of(&rows_seen(&scope, rows))
        }
    };
    let shown = version.or_else(|| versions.first().map(|v| v.version.clone()));
    let view = match shown {
        Some(version) => {
            Some(RolloutOfVersion::load(store, site, &scope, &domain, &version, now).await?)
        }
        None if site.domains.iter().any(|d| d.name == domain) => None,
        None => return Err(ApiError::NotFound(format!("no domain named {domain:?}")).into()),
    };
    render(&RolloutsPage {
        timeline: view.as_ref().map(|v| v.timeline(now)),
        view,
        versions,
        domain,
        now,
        live: Live::new(&uri, now),
        access: site.access_note(),
    })
}

#[derive(Template)]
#[template(path = "delivery.html")]
struct DeliveryPage {
    view: Delivery,
    live: Live,
    access: &'static str,
}

impl DeliveryPage {
    fn duration(&self, seconds: &Option<f64>) -> String {
        duration_text(*seconds)
    }

    fn share(&self, share: &Option<f64>) -> String {
        share_text(*share)
    }

    fn lead_time(&self, deployment: &Deployment) -> String {
        duration_text(Some(deployment.lead_time_seconds as f64))
    }
}

pub async fn delivery(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    OriginalUri(uri): OriginalUri,
    Path(name): Path<String>,
    Query(params): Query<HashMap<String, String>>,
) -> PageResult<Response> {
    let now = Utc::now();
    let window = params.get("window").map(String::as_str);
    let view = Delivery::load(&state.store, &state.site, &scope, &name, window, now).await?;
    render(&DeliveryPage {
        view,
        live: Live::new(&uri, now),
        access: state.site.access_note(),
    })
}
