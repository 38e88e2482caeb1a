//! When the version in flight should be fully healthy, from the domain's past rollouts: each
//! cluster's own usual duration (offered to fully healthy) when it has enough history, else its
//! ring's, else the domain's. A cluster past the 90th percentile of that history is "slower
//! than usual" before any `stuck_after` fires.

use super::{RingOf, median, percentile};
use crate::store::ClusterDurations;
use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use std::collections::BTreeMap;

/// Past rollouts a history needs before its median is trusted as a cluster's usual duration.
pub const MIN_SAMPLES: usize = 3;
/// Past rollouts needed before its 90th percentile can call a cluster slower than usual.
pub const MIN_SAMPLES_FOR_SLOW: usize = 5;

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Estimate {
    /// When the last cluster in flight should be fully healthy; None without enough history.
    pub eta: Option<DateTime<Utc>>,
    /// Clusters past the 90th percentile of their usual duration.
    pub slower_than_usual: Vec<String>,
    /// The clusters in flight, each with its own estimate.
    pub clusters: Vec<ClusterEstimate>,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct ClusterEstimate {
    pub cluster: String,
    pub expected_at: Option<DateTime<Utc>>,
    /// What the estimate is read from: "cluster", "ring" or "domain" history.
    pub basis: Option<&'static str>,
    pub usual_seconds: Option<f64>,
    pub slower_than_usual: bool,
}

/// A history's usual duration and its 90th percentile (when it has enough samples).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Usual {
    median: f64,
    p90: Option<f64>,
}

fn usual(samples: &[f64]) -> Option<Usual> {
    if samples.len() < MIN_SAMPLES {
        return None;
    }
    let mut values = samples.to_vec();
    Some(Usual {
        median: median(&mut values)?,
        p90: (samples.len() >= MIN_SAMPLES_FOR_SLOW)
            .then(|| percentile(&mut values, 0.9))
            .flatten(),
    })
}

/// A cluster the version was offered to and is not fully healthy on yet.
#[derive(Debug, Clone, Copy)]
pub struct InFlight<'a> {
    pub cluster: &'a str,
    pub offered_at: DateTime<Utc>,
}

/// The estimate for `in_flight` from `history` (each cluster's past durations of the
/// domain), at `now`.
pub fn estimate(
    in_flight: &[InFlight],
    history: &[ClusterDurations],
    ring_of: RingOf,
    now: DateTime<Utc>,
) -> Estimate {
    let mut by_ring: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for cluster in history {
        by_ring
            .entry(ring_of(&cluster.cluster))
            .or_default()
            .extend(&cluster.seconds);
    }
    let domain: Vec<f64> = by_ring.values().flatten().copied().collect();
    let own = |name: &str| {
        history
            .iter()
            .find(|c| c.cluster == name)
            .map_or(&[][..], |c| c.seconds.as_slice())
    };
    let clusters: Vec<ClusterEstimate> = in_flight
        .iter()
        .map(|row| {
            let ring = by_ring
                .get(&ring_of(row.cluster))
                .map_or(&[][..], Vec::as_slice);
            let found = [
                ("cluster", own(row.cluster)),
                ("ring", ring),
                ("domain", &domain[..]),
            ]
            .into_iter()
            .find_map(|(basis, samples)| Some((basis, usual(samples)?)));
            let elapsed = (now - row.offered_at).num_milliseconds() as f64 / 1000.0;
            ClusterEstimate {
                cluster: row.cluster.to_string(),
                expected_at: found.map(|(_, u)| row.offered_at + seconds(u.median)),
                basis: found.map(|(basis, _)| basis),
                usual_seconds: found.map(|(_, u)| u.median),
                slower_than_usual: found
                    .and_then(|(_, u)| u.p90)
                    .is_some_and(|p90| elapsed > p90),
            }
        })
        .collect();
    let eta = clusters
        .iter()
        .map(|c| c.expected_at)
        .collect::<Option<Vec<_>>>()
        .and_then(|times| times.into_iter().max())
        // An overdue estimate says "now", never a time already past.
        .map(|eta| eta.max(now));
    Estimate {
        eta,
        slower_than_usual: clusters
            .iter()
            .filter(|c| c.slower_than_usual)
            .map(|c| c.cluster.clone())
            .collect(),
        clusters,
    }
}

fn seconds(value: f64) -> TimeDelta {
    TimeDelta::milliseconds((value * 1000.0).round() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delivery::rollout::tests::ring_by_prefix;

    fn t0() -> DateTime<Utc> {
        DateTime::<Utc>::UNIX_EPOCH + TimeDelta::days(20_000)
    }

    fn row(cluster: &str) -> InFlight<'_> {
        InFlight {
            cluster,
            offered_at: t0(),
        }
    }

    fn durations(cluster: &str, minutes: &[i64]) -> ClusterDurations {
        ClusterDurations {
            cluster: cluster.into(),
            seconds: minutes.iter().map(|m| (m * 60) as f64).collect(),
        }
    }

    #[test]
    fn each_cluster_is_read_from_its_own_history_then_its_rings() {
        let a = row("prod-a");
        let b = row("prod-b");
        let history = vec![
            durations("prod-a", &[10, 12, 11]),
            durations("prod-c", &[30, 30]),
            durations("staging-x", &[1, 1, 1, 1]),
        ];
        let now = a.offered_at + TimeDelta::minutes(5);
        let found = estimate(&[a, b], &history, &ring_by_prefix, now);
        let a_est = &found.clusters[0];
        assert_eq!(
            (a_est.basis, a_est.usual_seconds),
            (Some("cluster"), Some(660.0))
        );
        // prod-b has no history: its ring pools prod-a's and prod-c's five samples
        let b_est = &found.clusters[1];
        assert_eq!(
            (b_est.basis, b_est.usual_seconds),
            (Some("ring"), Some(720.0))
        );
        assert_eq!(found.eta, Some(a.offered_at + TimeDelta::minutes(12)));
        assert!(found.slower_than_usual.is_empty());
    }

    #[test]
    fn past_the_90th_percentile_is_slower_than_usual_and_eta_never_lies_in_the_past() {
        let a = row("prod-a");
        let history = vec![durations("prod-a", &[10, 10, 10, 10, 20])];
        // p90 of 10,10,10,10,20 is 16 minutes: 15 is not past it, 17 is
        let at15 = estimate(
            &[a],
            &history,
            &ring_by_prefix,
            a.offered_at + TimeDelta::minutes(15),
        );
        assert!(at15.slower_than_usual.is_empty());
        let now = a.offered_at + TimeDelta::minutes(17);
        let at17 = estimate(&[a], &history, &ring_by_prefix, now);
        assert_eq!(at17.slower_than_usual, vec!["prod-a".to_string()]);
        assert_eq!(at17.eta, Some(now), "overdue: now, not ten minutes ago");
    }

    #[test]
    fn too_little_history_claims_no_eta() {
        let a = row("prod-a");
        let history = vec![durations("prod-a", &[10, 12])];
        let found = estimate(&[a], &history, &ring_by_prefix, a.offered_at);
        assert_eq!(found.eta, None);
        assert_eq!(found.clusters[0].basis, None);
        // four samples are enough for an estimate, not for "slower than usual"
        let history = vec![durations("prod-a", &[1, 1, 1, 1])];
        let late = estimate(
            &[a],
            &history,
            &ring_by_prefix,
            a.offered_at + TimeDelta::hours(1),
        );
        assert!(late.eta.is_some());
        assert!(late.slower_than_usual.is_empty());
    }
}
