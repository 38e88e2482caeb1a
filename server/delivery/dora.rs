//! DORA's four per domain and ring over a window, computed exactly as docs/delivery.md
//! defines them:
//!
//! - a version is *deployed* in a scope (a ring, or the whole fleet) when every cluster of the
//!   scope it was offered to (rows fleetglass watched, not baselines) is fully healthy on it;
//!   its deployment time is the last of those first-fully-healthy times;
//! - *deployment frequency*: versions whose deployment time falls in the window, per day;
//! - *lead time*: deployment time minus the version's first offer anywhere in the fleet (when
//!   its source revision first appeared), the median over the window's deployments;
//! - *change failure rate*: of the versions first applied in the scope within the window, the
//!   share during whose rollout (offered, and not yet replaced) the domain entered a known
//!   problem on a cluster of the scope;
//! - *time to restore*: outages of the domain on the scope's clusters resolved within the
//!   window, from entering a known problem to fully healthy again, the median.

use super::{RingOf, median};
use crate::store::{OutageRow, RolloutRow};
use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use std::collections::BTreeMap;

/// The window the figures cover: `[from, to)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
}

impl Window {
    pub fn holds(&self, at: DateTime<Utc>) -> bool {
        self.from <= at && at < self.to
    }

    fn days(&self) -> f64 {
        (self.to - self.from).num_seconds() as f64 / 86_400.0
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct DeliveryFigures {
    pub domain: String,
    /// The ring the figures are of; None: the whole fleet.
    pub ring: Option<String>,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    /// Versions deployed (fully healthy on every cluster of the scope they were offered to)
    /// within the window, oldest first.
    pub deployments: Vec<Deployment>,
    pub deployments_per_day: f64,
    /// Median seconds from a deployed version's first offer in the fleet to its deployment.
    pub lead_time_seconds: Option<f64>,
    /// Versions first applied in the scope within the window, and those of them whose rollout
    /// raised a known problem there.
    pub rolled_out: usize,
    pub failed_versions: Vec<String>,
    /// `failed_versions / rolled_out`; None when nothing rolled out.
    pub change_failure_rate: Option<f64>,
    /// Outages resolved within the window, and the median seconds each took to restore.
    pub restored: usize,
    pub time_to_restore_seconds: Option<f64>,
    /// Outages still open at the window's end.
    pub open_outages: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Deployment {
    pub version: String,
    pub first_offered: DateTime<Utc>,
    pub deployed_at: DateTime<Utc>,
    pub lead_time_seconds: i64,
}

/// The figures of `domain` on `ring` (None: every cluster) over `window`, from the domain's
/// rollout rows (every cluster's, for first offers) and outages.
pub fn figures(
    domain: &str,
    ring: Option<&str>,
    rows: &[RolloutRow],
    outages: &[OutageRow],
    ring_of: RingOf,
    window: Window,
) -> DeliveryFigures {
    let in_scope = |cluster: &str| ring.is_none_or(|r| ring_of(cluster) == r);
    let mut versions: BTreeMap<&str, Vec<&RolloutRow>> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.domain == domain) {
        versions.entry(row.version.as_str()).or_default().push(row);
    }
    let mut deployments = Vec::new();
    let (mut rolled_out, mut failed_versions) = (0, Vec::new());
    for (version, rows) in &versions {
        let first_offered = rows.iter().map(|r| r.offered_at).min();
        let scoped: Vec<&&RolloutRow> = rows
            .iter()
            .filter(|r| !r.baseline && in_scope(&r.cluster))
            .collect();
        if let (Some(first_offered), Some(deployed_at)) = (first_offered, deployed_at(&scoped))
            && window.holds(deployed_at)
        {
            deployments.push(Deployment {
                version: version.to_string(),
                first_offered,
                deployed_at,
                lead_time_seconds: (deployed_at - first_offered).num_seconds(),
            });
        }
        let first_applied = scoped.iter().filter_map(|r| r.applied_at).min();
        if first_applied.is_some_and(|at| window.holds(at)) {
            rolled_out += 1;
            if scoped.iter().any(|r| r.problem_at.is_some()) {
                failed_versions.push(version.to_string());
            }
        }
    }
    deployments.sort_by_key(|d| d.deployed_at);
    let mut lead_times: Vec<f64> = deployments
        .iter()
        .map(|d| d.lead_time_seconds as f64)
        .collect();
    let scoped_outages = outages
        .iter()
        .filter(|o| o.domain == domain && in_scope(&o.cluster));
    let mut restore_times: Vec<f64> = scoped_outages
        .clone()
        .filter_map(|o| Some((o.resolved_at?, o.opened_at)))
        .filter(|(resolved, _)| window.holds(*resolved))
        .map(|(resolved, opened)| seconds(resolved - opened))
        .collect();
    let open_outages = scoped_outages
        .filter(|o| o.opened_at < window.to && o.resolved_at.is_none_or(|r| r >= window.to))
        .count();
    DeliveryFigures {
        domain: domain.to_string(),
        ring: ring.map(str::to_string),
        from: window.from,
        to: window.to,
        deployments_per_day: deployments.len() as f64 / window.days(),
        lead_time_seconds: median(&mut lead_times),
        change_failure_rate: (rolled_out > 0)
            .then(|| failed_versions.len() as f64 / rolled_out as f64),
        rolled_out,
        failed_versions,
        restored: restore_times.len(),
        time_to_restore_seconds: median(&mut restore_times),
        open_outages,
        deployments,
    }
}

/// The last first-fully-healthy time, when every row has one.
fn deployed_at(rows: &[&&RolloutRow]) -> Option<DateTime<Utc>> {
    rows.iter()
        .map(|r| r.healthy_at)
        .collect::<Option<Vec<_>>>()?
        .into_iter()
        .max()
}

fn seconds(delta: TimeDelta) -> f64 {
    delta.num_milliseconds() as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delivery::rollout::tests::{ring_by_prefix, row};
    use crate::health::State;

    fn outage(cluster: &str, opened: DateTime<Utc>, minutes: Option<i64>) -> OutageRow {
        OutageRow {
            domain: "payments".into(),
            cluster: cluster.into(),
            version: None,
            state: State::Failed,
            reason: String::new(),
            opened_at: opened,
            resolved_at: minutes.map(|m| opened + TimeDelta::minutes(m)),
        }
    }

    #[test]
    fn the_four_figures_of_a_known_history() {
        // 1.0: staging healthy at 20, prod at 60 and 90 -> deployed in prod at 90 (lead 90m)
        // 1.1: prod-b never healthy (failed) -> not deployed in prod, a failed rollout there
        // 1.2: prod-a healthy, prod-b baseline (skipped) -> deployed at 300 (lead 100m)
        let mut stuck = row("1.1", "prod-b", 130, None);
        stuck.problem_at = Some(stuck.offered_at + TimeDelta::minutes(5));
        let mut baseline = row("1.2", "prod-b", 200, None);
        baseline.baseline = true;
        let rows = vec![
            row("1.0", "staging-a", 0, Some(20)),
            row("1.0", "prod-a", 30, Some(60)),
            row("1.0", "prod-b", 30, Some(90)),
            row("1.1", "prod-a", 130, Some(150)),
            stuck,
            row("1.2", "staging-a", 200, Some(210)),
            row("1.2", "prod-a", 250, Some(300)),
            baseline,
        ];
        let t0 = rows[0].offered_at;
        let at = |m: i64| t0 + TimeDelta::minutes(m);
        let outages = vec![
            outage("prod-b", at(135), Some(40)),
            outage("prod-a", at(400), Some(10)),
            outage("staging-a", at(10), Some(1)),
            outage("prod-a", at(500), None),
        ];
        let window = Window {
            from: at(-1440),
            to: at(1440),
        };
        let prod = figures(
            "payments",
            Some("prod"),
            &rows,
            &outages,
            &ring_by_prefix,
            window,
        );
        let deployed: Vec<(&str, i64)> = prod
            .deployments
            .iter()
            .map(|d| (d.version.as_str(), d.lead_time_seconds / 60))
            .collect();
        assert_eq!(deployed, vec![("1.0", 90), ("1.2", 100)]);
        assert_eq!(prod.lead_time_seconds, Some(95.0 * 60.0));
        assert!((prod.deployments_per_day - 1.0).abs() < 1e-9, "2 in 2 days");
        assert_eq!(prod.rolled_out, 3);
        assert_eq!(prod.failed_versions, vec!["1.1".to_string()]);
        assert_eq!(prod.change_failure_rate, Some(1.0 / 3.0));
        assert_eq!(
            (prod.restored, prod.time_to_restore_seconds),
            (2, Some(25.0 * 60.0))
        );
        assert_eq!(prod.open_outages, 1);

        let fleet = figures("payments", None, &rows, &outages, &ring_by_prefix, window);
        assert_eq!(fleet.deployments.len(), 2, "1.1 never healthy on prod-b");
        assert_eq!(fleet.restored, 3);

        // a window ending before 1.0 reached prod-b (90m) holds no prod deployment yet
        let early = Window {
            from: at(-60),
            to: at(80),
        };
        let prod = figures(
            "payments",
            Some("prod"),
            &rows,
            &outages,
            &ring_by_prefix,
            early,
        );
        assert!(prod.deployments.is_empty());
        assert_eq!(
            prod.change_failure_rate,
            Some(0.0),
            "1.0 rolled out, nothing failed"
        );
        assert_eq!(prod.lead_time_seconds, None);
    }
}
