//! A domain's delivery: the rollouts of its versions (with the expected time to fully healthy
//! of the one in flight) and its DORA figures, read from the store's rollout history for
//! the pages, `/api/v1/domains/{name}/rollouts…` and `…/delivery`.

use super::timeline::Timeline;
use crate::delivery::{
    DeliveryFigures, Estimate, InFlight, RolloutTimeline, Window, estimate, figures,
};
use crate::health::State;
use crate::incidents::RingOrder;
use crate::model::parse_go_duration;
use crate::store::{OutageRow, RolloutRow, Store, VersionSummary};
use crate::web::error::ApiError;
use crate::web::scope::Scope;
use crate::web::state::Site;
use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;

/// Versions `/rollouts` lists when not told how many.
pub const DEFAULT_VERSIONS: i64 = 10;
/// The most versions one read lists.
pub const MAX_VERSIONS: i64 = 100;
/// The window DORA figures cover when not told.
pub const DEFAULT_WINDOW: TimeDelta = TimeDelta::days(30);
const MAX_WINDOW: TimeDelta = TimeDelta::days(366);

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Rollouts {
    pub domain: String,
    pub generated_at: DateTime<Utc>,
    /// Newest first offered first.
    pub rollouts: Vec<RolloutTimeline>,
    /// For the newest version while it is not fully healthy everywhere it was offered: when
    /// it should be, from the domain's past rollouts.
    pub estimate: Option<Estimate>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct RolloutOfVersion {
    #[serde(flatten)]
    pub rollout: RolloutTimeline,
    pub generated_at: DateTime<Utc>,
    /// While this version is the newest and not fully healthy everywhere it was offered.
    pub estimate: Option<Estimate>,
}

impl Site {
    /// A cluster's ring: its `group_by` label as configured, "ungrouped" without one.
    pub fn ring_of(&self, cluster: &str) -> String {
        self.cluster_labels
            .get(cluster)
            .and_then(|labels| labels.get(&self.group_by))
            .cloned()
            .unwrap_or_else(|| "ungrouped".to_string())
    }

    /// Every ring a configured cluster is in, in rollout order.
    pub fn rings(&self) -> Vec<String> {
        let rings: Vec<String> = self.cluster_order.iter().map(|c| self.ring_of(c)).collect();
        let mut rings: Vec<String> = RingOrder::new(&self.group_order)
            .rollout_order(rings.iter().map(String::as_str))
            .into_iter()
            .map(str::to_string)
            .collect();
        rings.dedup();
        rings
    }
}

/// 404 unless the domain is configured or has history, and `scope` sees it.
async fn known(store: &Store, site: &Site, scope: &Scope, domain: &str) -> Result<(), ApiError> {
    let exists = site.domains.iter().any(|d| d.name == domain)
        || !store.rollouts_of(domain, None, 1).await?.is_empty();
    if exists && scope.sees_domain(domain) {
        return Ok(());
    }
    Err(ApiError::NotFound(format!("no domain named {domain:?}")))
}

/// Rollout rows on the clusters `scope` sees, without root causes outside it.
pub fn rows_seen(scope: &Scope, mut rows: Vec<RolloutRow>) -> Vec<RolloutRow> {
    if !scope.is_everything() {
        rows.retain(|row| scope.sees_cluster(&row.cluster));
        for row in &mut rows {
            row.cause = row.cause.take().filter(|id| scope.sees_id(id));
        }
    }
    rows
}

/// The versions of these rows, newest first offered first, as the rollout page lists them.
pub fn versions_of(rows: &[RolloutRow]) -> Vec<VersionSummary> {
    let mut versions: Vec<VersionSummary> = Vec::new();
    for row in rows {
        let healthy = i64::from(row.healthy_at.is_some() && row.state == State::Healthy);
        match versions.iter_mut().find(|v| v.version == row.version) {
            Some(v) => {
                v.first_offered = v.first_offered.min(row.offered_at);
                v.clusters += 1;
                v.fully_healthy += healthy;
            }
            None => versions.push(VersionSummary {
                version: row.version.clone(),
                first_offered: row.offered_at,
                clusters: 1,
                fully_healthy: healthy,
            }),
        }
    }
    versions.sort_by(|a, b| {
        (b.first_offered.cmp(&a.first_offered)).then_with(|| a.version.cmp(&b.version))
    });
    versions
}

impl Rollouts {
    /// The newest rollouts of a domain `scope` sees, on its clusters.
    pub async fn load(
        store: &Store,
        site: &Site,
        scope: &Scope,
        domain: &str,
        limit: i64,
        now: DateTime<Utc>,
    ) -> Result<Rollouts, ApiError> {
        let site = &scope.site(site);
        known(store, site, scope, domain).await?;
        let rows = rows_seen(scope, store.rollouts_of(domain, None, limit).await?);
        let rollouts = crate::delivery::timelines(rows, &|c| site.ring_of(c), &order(site));
        let estimate = match rollouts.first() {
            Some(newest) => in_flight_estimate(store, site, newest, now).await?,
            None => None,
        };
        Ok(Rollouts {
            domain: domain.to_string(),
            generated_at: now,
            rollouts,
            estimate,
        })
    }
}

impl RolloutOfVersion {
    /// One version's rollout of a domain `scope` sees, on its clusters.
    pub async fn load(
        store: &Store,
        site: &Site,
        scope: &Scope,
        domain: &str,
        version: &str,
        now: DateTime<Utc>,
    ) -> Result<RolloutOfVersion, ApiError> {
        let site = &scope.site(site);
        known(store, site, scope, domain).await?;
        let (rows, newest) = tokio::try_join!(
            store.rollouts_of(domain, Some(version), 1),
            store.rollouts_of(domain, None, 1),
        )?;
        let rows = rows_seen(scope, rows);
        let Some(rollout) = crate::delivery::timelines(rows, &|c| site.ring_of(c), &order(site))
            .into_iter()
            .next()
        else {
            return Err(ApiError::NotFound(format!(
                "no rollout of {domain} {version} is recorded"
            )));
        };
        let is_newest = newest.first().is_some_and(|row| row.version == version);
        let estimate = match is_newest {
            true => in_flight_estimate(store, site, &rollout, now).await?,
            false => None,
        };
        Ok(RolloutOfVersion {
            rollout,
            generated_at: now,
            estimate,
        })
    }

    pub fn timeline(&self, now: DateTime<Utc>) -> Timeline {
        Timeline::of(&self.rollout, self.estimate.as_ref(), now)
    }
}

fn order(site: &Site) -> RingOrder {
    RingOrder::new(&site.group_order)
}

/// The estimate for `rollout` when some cluster offered it is not fully healthy yet.
async fn in_flight_estimate(
    store: &Store,
    site: &Site,
    rollout: &RolloutTimeline,
    now: DateTime<Utc>,
) -> Result<Option<Estimate>, sqlx::Error> {
    let in_flight: Vec<InFlight> = rollout
        .rings
        .iter()
        .flat_map(|lane| &lane.clusters)
        .filter(|c| c.healthy_at.is_none())
        .map(|c| InFlight {
            cluster: &c.cluster,
            offered_at: c.offered_at,
        })
        .collect();
    estimate_in_flight(
        store,
        site,
        &rollout.domain,
        &rollout.version,
        &in_flight,
        now,
    )
    .await
}

/// The estimate for `version` of `domain` on the clusters `in_scope` admits (the CI gate's).
pub async fn estimate_of_version(
    store: &Store,
    site: &Site,
    domain: &str,
    version: &str,
    in_scope: impl Fn(&str) -> bool,
    now: DateTime<Utc>,
) -> Result<Option<Estimate>, sqlx::Error> {
    let rows = store.rollouts_of(domain, Some(version), 1).await?;
    let in_flight: Vec<InFlight> = rows
        .iter()
        .filter(|r| r.healthy_at.is_none() && in_scope(&r.cluster))
        .map(|r| InFlight {
            cluster: &r.cluster,
            offered_at: r.offered_at,
        })
        .collect();
    estimate_in_flight(store, site, domain, version, &in_flight, now).await
}

async fn estimate_in_flight(
    store: &Store,
    site: &Site,
    domain: &str,
    version: &str,
    in_flight: &[InFlight<'_>],
    now: DateTime<Utc>,
) -> Result<Option<Estimate>, sqlx::Error> {
    if in_flight.is_empty() {
        return Ok(None);
    }
    let history = store.rollout_durations(domain, version).await?;
    Ok(Some(estimate(
        in_flight,
        &history,
        &|c| site.ring_of(c),
        now,
    )))
}

/// DORA figures of one domain: the whole fleet's and each ring's.
#[derive(Debug, Serialize)]
pub struct Delivery {
    pub domain: String,
    pub window: String,
    pub fleet: DeliveryFigures,
    pub rings: Vec<DeliveryFigures>,
}

/// `30d`, `12h`, `90m`: whole days or a Go duration, from an hour to 366 days.
pub fn window_of(text: Option<&str>, now: DateTime<Utc>) -> Result<Window, ApiError> {
    let length = match text.map(str::trim).filter(|t| !t.is_empty()) {
        None => DEFAULT_WINDOW,
        Some(text) => match text.strip_suffix('d').map(str::parse::<i64>) {
            Some(Ok(days)) => TimeDelta::try_days(days).unwrap_or(TimeDelta::MAX),
            _ => parse_go_duration(text).map_err(|e| {
                ApiError::BadRequest(format!(
                    "window is whole days (30d) or a Go duration (12h): {e}"
                ))
            })?,
        },
    };
    if length < TimeDelta::hours(1) || length > MAX_WINDOW {
        return Err(ApiError::BadRequest(format!(
            "window is from 1h to 366d, not {}",
            text.unwrap_or_default()
        )));
    }
    Ok(Window {
        from: now - length,
        to: now,
    })
}

/// The figures of `domain` on `ring` (None: the whole fleet) over `window`. A ring no
/// configured cluster is in is a 400, never figures of nothing.
pub async fn figures_of(
    store: &Store,
    site: &Site,
    scope: &Scope,
    domain: &str,
    ring: Option<&str>,
    window: Window,
) -> Result<DeliveryFigures, ApiError> {
    let site = &scope.site(site);
    known(store, site, scope, domain).await?;
    if let Some(ring) = ring
        && !site.rings().iter().any(|r| r == ring)
    {
        return Err(ApiError::BadRequest(format!(
            "no cluster is in ring {ring:?} (rings: {})",
            site.rings().join(", ")
        )));
    }
    let (rows, outages) = history(store, scope, domain, window).await?;
    Ok(figures(
        domain,
        ring,
        &rows,
        &outages,
        &|c| site.ring_of(c),
        window,
    ))
}

/// What a window's figures are computed from: the rollouts that moved in it and the outages
/// open in it, on the clusters `scope` sees.
async fn history(
    store: &Store,
    scope: &Scope,
    domain: &str,
    window: Window,
) -> Result<(Vec<RolloutRow>, Vec<OutageRow>), sqlx::Error> {
    let (rows, mut outages) = tokio::try_join!(
        store.rollouts_since(domain, window.from),
        store.outages_since(domain, window.from),
    )?;
    outages.retain(|o| scope.sees_cluster(&o.cluster));
    Ok((rows_seen(scope, rows), outages))
}

impl Delivery {
    /// A domain's delivery figures on the clusters `scope` sees (its own figures).
    pub async fn load(
        store: &Store,
        site: &Site,
        scope: &Scope,
        domain: &str,
        window_text: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Delivery, ApiError> {
        let window = window_of(window_text, now)?;
        let site = &scope.site(site);
        known(store, site, scope, domain).await?;
        let (rows, outages) = history(store, scope, domain, window).await?;
        let ring_of = |c: &str| site.ring_of(c);
        let of = |ring: Option<&str>| figures(domain, ring, &rows, &outages, &ring_of, window);
        Ok(Delivery {
            domain: domain.to_string(),
            window: window_text.unwrap_or("30d").to_string(),
            fleet: of(None),
            rings: site.rings().iter().map(|r| of(Some(r))).collect(),
        })
    }
}

/// "12m", "3h 5m", "—": a duration in seconds as the pages show it.
pub fn duration_text(seconds: Option<f64>) -> String {
    match seconds {
        Some(s) if s < 60.0 => format!("{}s", s.round() as i64),
        Some(s) => crate::model::human(TimeDelta::seconds(s.round() as i64)),
        None => "—".to_string(),
    }
}

/// "33%", "—".
pub fn share_text(share: Option<f64>) -> String {
    share.map_or_else(|| "—".to_string(), |s| format!("{:.0}%", s * 100.0))
}

/// How often the DORA gauges of `/metrics` are computed again.
pub const GAUGES_EVERY: std::time::Duration = std::time::Duration::from_secs(300);

/// Computes every configured domain's figures per ring over the default window and sets the
/// DORA gauges; a domain whose read fails keeps its last figures and is logged.
pub async fn refresh_gauges(store: &Store, site: &Site) {
    for domain in &site.domains {
        match Delivery::load(
            store,
            site,
            &Scope::Everything,
            &domain.name,
            None,
            Utc::now(),
        )
        .await
        {
            Ok(delivery) => delivery
                .rings
                .iter()
                .for_each(crate::metrics::record_delivery),
            Err(error) => {
                tracing::warn!(domain = %domain.name, ?error, "could not compute the DORA gauges")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(version: &str, cluster: &str, offered: i64, healthy: bool) -> RolloutRow {
        let at = DateTime::from_timestamp(offered, 0).unwrap();
        RolloutRow {
            domain: "d".into(),
            version: version.into(),
            cluster: cluster.into(),
            offered_at: at,
            applied_at: Some(at),
            healthy_at: healthy.then_some(at),
            problem_at: None,
            state: if healthy {
                State::Healthy
            } else {
                State::Progressing
            },
            cause: None,
            reason: String::new(),
            baseline: false,
            updated_at: at,
        }
    }

    /// As `Store::rollout_versions` counts them: first offer, clusters, fully healthy ones.
    #[test]
    fn versions_are_counted_newest_first_offered_first() {
        let rows = [
            row("1.0", "a", 100, true),
            row("2.0", "a", 300, false),
            row("1.0", "b", 50, true),
            row("2.0", "b", 200, true),
        ];
        let versions = versions_of(&rows);
        let seen: Vec<(&str, i64, i64, i64)> = versions
            .iter()
            .map(|v| {
                (
                    v.version.as_str(),
                    v.first_offered.timestamp(),
                    v.clusters,
                    v.fully_healthy,
                )
            })
            .collect();
        assert_eq!(seen, [("2.0", 200, 2, 1), ("1.0", 50, 2, 2)]);
    }
}
