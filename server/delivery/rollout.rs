//! A version's rollout as a picture: per ring (in the order versions reach them), per
//! cluster, when it was offered, applied and fully healthy, or where it stopped and why.

use super::RingOf;
use crate::health::State;
use crate::incidents::RingOrder;
use crate::store::RolloutRow;
use chrono::{DateTime, Utc};
use serde::Serialize;

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct RolloutTimeline {
    pub domain: String,
    pub version: String,
    /// When any cluster was first offered the version.
    pub first_offered: DateTime<Utc>,
    /// The latest offer, apply or health among its clusters: where the picture ends.
    pub last_moved: DateTime<Utc>,
    /// Clusters offered the version, and those of them fully healthy on it.
    pub clusters: usize,
    pub fully_healthy: usize,
    /// Rings in rollout order (the least important first, as `group_order` reads).
    pub rings: Vec<RingLane>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct RingLane {
    pub ring: String,
    /// Slowest or stopped first, so what held the ring leads.
    pub clusters: Vec<ClusterRollout>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ClusterRollout {
    pub cluster: String,
    pub offered_at: DateTime<Utc>,
    pub applied_at: Option<DateTime<Utc>>,
    pub healthy_at: Option<DateTime<Utc>>,
    /// The state it is in on this version, or stopped in once another version replaced it.
    pub state: State,
    /// The root cause that held it, and its reason.
    pub cause: Option<String>,
    pub reason: String,
    /// Found already applied when fleetglass first saw the cluster: its times are when
    /// fleetglass looked, not when the rollout happened.
    pub baseline: bool,
    /// Seconds from offered to fully healthy.
    pub seconds_to_healthy: Option<i64>,
}

impl ClusterRollout {
    fn of(row: RolloutRow) -> ClusterRollout {
        ClusterRollout {
            seconds_to_healthy: row.healthy_at.map(|h| (h - row.offered_at).num_seconds()),
            cluster: row.cluster,
            offered_at: row.offered_at,
            applied_at: row.applied_at,
            healthy_at: row.healthy_at,
            state: row.state,
            cause: row.cause,
            reason: row.reason,
            baseline: row.baseline,
        }
    }

    /// The last time it moved: healthy, else applied, else offered.
    pub fn last_moved(&self) -> DateTime<Utc> {
        self.healthy_at
            .or(self.applied_at)
            .unwrap_or(self.offered_at)
    }
}

/// The timelines of the versions in `rows`, in the order their first rows come (the store
/// reads newest first offered first).
pub fn timelines(
    rows: Vec<RolloutRow>,
    ring_of: RingOf,
    order: &RingOrder,
) -> Vec<RolloutTimeline> {
    let mut versions: Vec<(String, String, Vec<RolloutRow>)> = Vec::new();
    for row in rows {
        match versions
            .iter_mut()
            .find(|(d, v, _)| *d == row.domain && *v == row.version)
        {
            Some((_, _, rows)) => rows.push(row),
            None => versions.push((row.domain.clone(), row.version.clone(), vec![row])),
        }
    }
    versions
        .into_iter()
        .map(|(domain, version, rows)| timeline(domain, version, rows, ring_of, order))
        .collect()
}

fn timeline(
    domain: String,
    version: String,
    rows: Vec<RolloutRow>,
    ring_of: RingOf,
    order: &RingOrder,
) -> RolloutTimeline {
    let clusters: Vec<(String, ClusterRollout)> = rows
        .into_iter()
        .map(|row| (ring_of(&row.cluster), ClusterRollout::of(row)))
        .collect();
    let first_offered = clusters.iter().map(|(_, c)| c.offered_at).min();
    let last_moved = clusters.iter().map(|(_, c)| c.last_moved()).max();
    let fully_healthy = clusters
        .iter()
        .filter(|(_, c)| c.healthy_at.is_some() && c.state == State::Healthy)
        .count();
    let ring_names: Vec<String> = clusters.iter().map(|(ring, _)| ring.clone()).collect();
    let rings = order
        .rollout_order(ring_names.iter().map(String::as_str))
        .into_iter()
        .map(|ring| RingLane {
            ring: ring.to_string(),
            clusters: slowest_first(
                clusters
                    .iter()
                    .filter(|(r, _)| r == ring)
                    .map(|(_, c)| c.clone())
                    .collect(),
            ),
        })
        .collect();
    let epoch = DateTime::<Utc>::UNIX_EPOCH;
    RolloutTimeline {
        domain,
        version,
        first_offered: first_offered.unwrap_or(epoch),
        last_moved: last_moved.unwrap_or(epoch),
        clusters: clusters.len(),
        fully_healthy,
        rings,
    }
}

/// Not yet healthy first (worst state first), then the slowest; ties by name.
fn slowest_first(mut clusters: Vec<ClusterRollout>) -> Vec<ClusterRollout> {
    clusters.sort_by(|a, b| {
        a.healthy_at
            .is_some()
            .cmp(&b.healthy_at.is_some())
            .then(a.state.severity_rank().cmp(&b.state.severity_rank()))
            .then(b.seconds_to_healthy.cmp(&a.seconds_to_healthy))
            .then(a.cluster.cmp(&b.cluster))
    });
    clusters
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use chrono::TimeDelta;

    pub fn row(version: &str, cluster: &str, offered: i64, healthy: Option<i64>) -> RolloutRow {
        let t0 = DateTime::<Utc>::UNIX_EPOCH + TimeDelta::days(20_000);
        let at = |minutes: i64| t0 + TimeDelta::minutes(minutes);
        RolloutRow {
            domain: "payments".into(),
            version: version.into(),
            cluster: cluster.into(),
            offered_at: at(offered),
            applied_at: Some(at(offered + 1)),
            healthy_at: healthy.map(at),
            problem_at: None,
            state: if healthy.is_some() {
                State::Healthy
            } else {
                State::Progressing
            },
            cause: None,
            reason: String::new(),
            baseline: false,
            updated_at: at(healthy.unwrap_or(offered + 1)),
        }
    }

    pub fn ring_by_prefix(cluster: &str) -> String {
        cluster.split('-').next().unwrap_or("").to_string()
    }

    #[test]
    fn rings_come_in_rollout_order_and_what_held_a_ring_leads() {
        let mut failed = row("2.0", "prod-b", 30, None);
        failed.state = State::Failed;
        failed.reason = "ImagePullBackOff".into();
        let rows = vec![
            row("2.0", "prod-a", 30, Some(45)),
            failed,
            row("2.0", "staging-a", 0, Some(20)),
            row("2.0", "staging-b", 0, Some(10)),
            row("1.9", "staging-a", -500, Some(-490)),
        ];
        let order = RingOrder::new(&["prod".to_string(), "staging".to_string()]);
        let found = timelines(rows, &ring_by_prefix, &order);
        assert_eq!(found.len(), 2);
        let v2 = &found[0];
        assert_eq!(v2.version, "2.0");
        assert_eq!((v2.clusters, v2.fully_healthy), (4, 3));
        let lanes: Vec<(&str, Vec<&str>)> = v2
            .rings
            .iter()
            .map(|l| {
                (
                    l.ring.as_str(),
                    l.clusters.iter().map(|c| c.cluster.as_str()).collect(),
                )
            })
            .collect();
        assert_eq!(
            lanes,
            vec![
                ("staging", vec!["staging-a", "staging-b"]),
                ("prod", vec!["prod-b", "prod-a"]),
            ]
        );
        assert_eq!(v2.rings[0].clusters[0].seconds_to_healthy, Some(1200));
        assert_eq!(v2.last_moved - v2.first_offered, TimeDelta::minutes(45));
        assert_eq!(found[1].version, "1.9");
    }
}
