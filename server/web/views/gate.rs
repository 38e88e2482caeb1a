//! The CI gate: is version V of a domain fully healthy on every cluster in its scope? Looks
//! again whenever the roll-ups may have changed (woken through [`Waits`], never polling the
//! database on its own) until it is, or until the timeout passes, and answers with the blockers.

use super::delivery::estimate_of_version;
use super::domain::{Blocker, blockers, blockers_of};
use crate::health::State;
use crate::model::parse_go_duration;
use crate::store::ClusterRow;
use crate::web::AppState;
use crate::web::error::ApiError;
use crate::web::freshness::Freshness;
use crate::web::scope::Scope;
use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use std::time::Instant;

/// Longest a request may wait; CI can call again.
pub const MAX_WAIT: TimeDelta = TimeDelta::hours(1);
pub const DEFAULT_WAIT: TimeDelta = TimeDelta::minutes(5);

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct GateVerdict {
    pub domain: String,
    pub version: String,
    pub healthy: bool,
    pub clusters: Vec<GateCluster>,
    /// The clusters in scope where the version has failed: applied or attempted there, and
    /// the domain failed or degraded on it.
    pub failed_on: Vec<String>,
    /// Until it is healthy: when the clusters in flight should be fully healthy on the
    /// version, from the domain's past rollouts (None without enough history).
    pub eta: Option<DateTime<Utc>>,
    /// Clusters in flight past the 90th percentile of their usual rollout duration.
    pub slower_than_usual: Vec<String>,
    /// How long the request waited, e.g. "12.5s".
    pub waited: String,
}

/// What a wait asks for.
pub struct Asked<'a> {
    pub domain: &'a str,
    pub version: &'a str,
    pub timeout: TimeDelta,
    pub label: Option<(&'a str, &'a str)>,
    /// Answer as soon as `failed_on` is not empty.
    pub fail_fast: bool,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct GateCluster {
    pub cluster: String,
    /// The version applied.
    pub version: Option<String>,
    /// Offered and not applied yet: pending.
    pub offered: Option<String>,
    pub state: State,
    pub fully_healthy: bool,
    /// Fully healthy at exactly the version asked for.
    pub at_version: bool,
    pub blockers: Vec<Blocker>,
}

/// Parses `timeout` (Go duration, at most an hour).
pub fn timeout(text: Option<&str>) -> Result<TimeDelta, ApiError> {
    let Some(text) = text.filter(|t| !t.is_empty()) else {
        return Ok(DEFAULT_WAIT);
    };
    let delta =
        parse_go_duration(text).map_err(|e| ApiError::BadRequest(format!("timeout: {e}")))?;
    if delta < TimeDelta::zero() || delta > MAX_WAIT {
        return Err(ApiError::BadRequest(format!(
            "timeout {text:?} must be between 0s and 1h"
        )));
    }
    Ok(delta)
}

/// The clusters a `label` (`ring`, `prod`) selects (None: every cluster); a label that selects
/// no cluster is a mistake, said at once.
fn scope(
    clusters: &[ClusterRow],
    label: Option<(&str, &str)>,
) -> Result<Option<Vec<String>>, ApiError> {
    let Some((key, value)) = label else {
        return Ok(None);
    };
    let names: Vec<String> = clusters
        .iter()
        .filter(|c| c.labels.get(key).and_then(|v| v.as_str()) == Some(value))
        .map(|c| c.name.clone())
        .collect();
    if names.is_empty() {
        return Err(ApiError::BadRequest(format!(
            "no cluster has the label {key}={value}"
        )));
    }
    Ok(Some(names))
}

/// Waits until the domain is healthy at `version` or `timeout` passes; refused (503) when
/// `waits` has no room. With `label` (`ring`, `prod`) only the clusters carrying that label
/// count: one ring can be gated on its own.
///
/// Under a team scope the gate needs to see every cluster the domain is on (in `label`): a
/// verdict on part of them could say healthy without proof, so it is refused instead.
pub async fn wait(
    state: &AppState,
    seen: &Scope,
    client: &str,
    asked: Asked<'_>,
) -> Result<GateVerdict, ApiError> {
    let Asked {
        domain,
        version,
        timeout,
        label,
        fail_fast,
    } = asked;
    let (store, site, waits) = (&state.store, &*state.site, &*state.waits);
    if !seen.sees_domain(domain) {
        return Err(ApiError::NotFound(format!("no domain named {domain:?}")));
    }
    let _place = waits.admit(client)?;
    let closed = waits.closed();
    tokio::pin!(closed);
    let started = Instant::now();
    let deadline = tokio::time::Instant::from_std(started + timeout.to_std().unwrap_or_default());
    let mut changes = waits.subscribe();
    loop {
        let generation = *changes.borrow_and_update();
        let stored = waits.domain_rows(store, domain, generation).await?;
        if stored.is_empty() && !site.domains.iter().any(|d| d.name == domain) {
            return Err(ApiError::NotFound(format!("no domain named {domain:?}")));
        }
        // Judged anew each time it looks: a cluster whose data went stale while the wait
        // waited is no longer proof.
        let clusters = waits.cluster_rows(store, generation).await?;
        let (freshness, clusters) = Freshness::judge(site, clusters.as_ref().clone(), Utc::now());
        let in_scope = scope(&clusters, label)?;
        let mut all = freshness.domain_rows(site, &clusters, stored.as_ref().clone());
        all.retain(|r| r.domain == domain);
        let rows: Vec<_> = all
            .into_iter()
            .filter(|r| {
                in_scope
                    .as_ref()
                    .is_none_or(|names| names.contains(&r.cluster))
            })
            .collect();
        let unseen = rows
            .iter()
            .filter(|r| !seen.sees_cluster(&r.cluster))
            .count();
        if unseen > 0 {
            return Err(ApiError::Forbidden(format!(
                "domain {domain:?} is on {unseen} cluster(s) outside your scope: a verdict on the \
                 others alone could say healthy without proof (gate with label= on clusters you \
                 see, or ask an admin)"
            )));
        }
        if rows.is_empty() {
            // Nothing in scope can ever make it healthy: an error now, not a timeout later.
            return Err(ApiError::BadRequest(match label {
                Some((key, value)) => format!(
                    "no cluster with {key}={value} reports domain {domain:?}: nothing to wait for"
                ),
                None => format!("no cluster reports domain {domain:?}: nothing to wait for"),
            }));
        }
        let healthy = !rows.is_empty()
            && rows
                .iter()
                .all(|r| r.fully_healthy && r.version.as_deref() == Some(version));
        let failed_on: Vec<String> = rows
            .iter()
            .filter(|r| {
                let has_it =
                    r.version.as_deref() == Some(version) || r.offered.as_deref() == Some(version);
                has_it && matches!(r.state, State::Failed | State::Degraded)
            })
            .map(|r| r.cluster.clone())
            .collect();
        let failed = fail_fast && !failed_on.is_empty();
        if healthy || failed || tokio::time::Instant::now() >= deadline {
            let causes = blockers_of(store, &freshness, &rows).await?;
            let clusters = rows
                .iter()
                .cloned()
                .map(|row| GateCluster {
                    at_version: row.fully_healthy && row.version.as_deref() == Some(version),
                    blockers: blockers(&seen.ids(&row.blockers), &causes),
                    state: row.state,
                    cluster: row.cluster,
                    version: row.version,
                    offered: row.offered,
                    fully_healthy: row.fully_healthy,
                })
                .collect();
            let estimate = match healthy {
                true => None,
                false => {
                    let scoped = |cluster: &str| rows.iter().any(|r| r.cluster == cluster);
                    estimate_of_version(store, site, domain, version, scoped, Utc::now()).await?
                }
            };
            return Ok(GateVerdict {
                domain: domain.to_string(),
                version: version.to_string(),
                healthy,
                clusters,
                failed_on,
                eta: estimate.as_ref().and_then(|e| e.eta),
                slower_than_usual: estimate.map(|e| e.slower_than_usual).unwrap_or_default(),
                waited: format!("{:.1}s", started.elapsed().as_secs_f64()),
            });
        }
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() {
                    tokio::time::sleep_until(deadline).await;
                }
            }
            () = tokio::time::sleep_until(deadline) => {}
            refusal = &mut closed => return Err(refusal),
        }
    }
}
