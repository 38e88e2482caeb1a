//! Ninety days of generated delivery history for the demo fleet, so the rollout, delivery and
//! past-time pages have something to show on first run: each domain ships a version every
//! three days, dev first, staging a day later, prod a day after that; about one in eight
//! fails in staging and stops there until the next one, and prod clusters have an occasional
//! outage. Deterministic (no random number generator), and named below the live versions so
//! the two never mix.

use super::fleet::{DEMO_CLUSTERS, RINGS};
use super::hex::unit;
use crate::health::{State, StateCounts};
use crate::store::{DomainRow, OutageRow, RolloutRow, SeededHistory};
use chrono::{DateTime, TimeDelta, Utc};

pub const DAYS: i64 = 90;
const EVERY_DAYS: i64 = 3;
const FAILED_REASON: &str = "HealthCheckFailed";

/// The generated versions of each domain, below its live ones.
const DOMAINS: [(&str, &str); 4] = [
    ("gateway", "1.3"),
    ("networking", "2.11"),
    ("observability", "0.84"),
    ("tenants", "0.15"),
];

/// The history ending at `now`: every version's rows, with its verdicts as they changed.
pub fn generate(now: DateTime<Utc>) -> SeededHistory {
    let start = now - TimeDelta::days(DAYS);
    let mut history = SeededHistory {
        clusters: DEMO_CLUSTERS
            .iter()
            .map(|c| {
                (
                    start,
                    c.name.to_string(),
                    StateCounts::of([State::Healthy; 40]),
                )
            })
            .collect(),
        ..SeededHistory::default()
    };
    for (domain, series) in DOMAINS {
        let mut applied: Vec<Option<String>> = vec![None; DEMO_CLUSTERS.len()];
        for n in 0..DAYS / EVERY_DAYS {
            let version = format!("{series}.{n}");
            let offered = start + TimeDelta::days(n * EVERY_DAYS) + minutes(&version, 0.0, 600.0);
            let fails_in_staging = unit(&format!("{domain}{version}fails")) < 0.125;
            for (at, cluster) in DEMO_CLUSTERS.iter().enumerate() {
                let ring = RINGS.iter().position(|r| Some(*r) == cluster.label("ring"));
                let ring = ring.unwrap_or(0) as i64;
                if fails_in_staging && ring > 1 {
                    continue;
                }
                let offered_at = offered + TimeDelta::days(ring);
                let fails = fails_in_staging && ring == 1;
                let seed = format!("{domain}{version}{}", cluster.name);
                let rollout = rollout(domain, &version, cluster.name, offered_at, fails, &seed);
                verdicts(&mut history, &rollout, applied[at].clone());
                if let Some(problem_at) = rollout.problem_at {
                    let next = offered_at + TimeDelta::days(EVERY_DAYS) + TimeDelta::hours(1);
                    history
                        .outages
                        .push(outage(&rollout, problem_at, Some(next.min(now))));
                } else if ring == 2 && unit(&format!("{seed}outage")) < 0.1 {
                    let opened = offered_at + TimeDelta::days(1);
                    let lasted = minutes(&format!("{seed}lasted"), 10.0, 120.0);
                    let mut down = outage(&rollout, opened, Some(opened + lasted));
                    down.reason = "CrashLoopBackOff".into();
                    down.state = State::Degraded;
                    history.outages.push(down);
                }
                applied[at] = Some(version.clone());
                history.rollouts.push(rollout);
            }
        }
    }
    history
}

fn minutes(seed: &str, low: f64, high: f64) -> TimeDelta {
    TimeDelta::seconds(((low + unit(seed) * (high - low)) * 60.0) as i64)
}

fn rollout(
    domain: &str,
    version: &str,
    cluster: &str,
    offered_at: DateTime<Utc>,
    fails: bool,
    seed: &str,
) -> RolloutRow {
    let applied_at = offered_at + minutes(&format!("{seed}apply"), 0.5, 3.0);
    // Each cluster has its own pace (some are slower), with some noise around it.
    let pace = 4.0 + unit(cluster) * 16.0;
    let healthy_at = applied_at + minutes(&format!("{seed}healthy"), pace * 0.8, pace * 1.2);
    let problem_at = applied_at + minutes(&format!("{seed}problem"), 2.0, 8.0);
    RolloutRow {
        domain: domain.into(),
        version: version.into(),
        cluster: cluster.into(),
        offered_at,
        applied_at: Some(applied_at),
        healthy_at: (!fails).then_some(healthy_at),
        problem_at: fails.then_some(problem_at),
        state: if fails { State::Failed } else { State::Healthy },
        cause: None,
        reason: if fails {
            FAILED_REASON.into()
        } else {
            String::new()
        },
        baseline: false,
        updated_at: if fails { problem_at } else { healthy_at },
    }
}

fn outage(
    rollout: &RolloutRow,
    opened_at: DateTime<Utc>,
    resolved_at: Option<DateTime<Utc>>,
) -> OutageRow {
    OutageRow {
        domain: rollout.domain.clone(),
        cluster: rollout.cluster.clone(),
        version: Some(rollout.version.clone()),
        state: State::Failed,
        reason: FAILED_REASON.into(),
        opened_at,
        resolved_at,
    }
}

/// The domain verdicts the rollout went through: offered, applied, then fully healthy or
/// failed.
fn verdicts(history: &mut SeededHistory, rollout: &RolloutRow, before: Option<String>) {
    let verdict = |version: Option<String>, offered: Option<String>, state: State| DomainRow {
        domain: rollout.domain.clone(),
        cluster: rollout.cluster.clone(),
        version,
        offered,
        state,
        fully_healthy: state == State::Healthy,
        objects: 10,
        healthy: if state == State::Healthy { 10 } else { 9 },
        blockers: Vec::new(),
    };
    let version = Some(rollout.version.clone());
    history.domains.push((
        rollout.offered_at,
        verdict(before, version.clone(), State::Progressing),
    ));
    if let Some(applied_at) = rollout.applied_at {
        history.domains.push((
            applied_at,
            verdict(version.clone(), None, State::Progressing),
        ));
    }
    let end = rollout
        .healthy_at
        .or(rollout.problem_at)
        .unwrap_or(rollout.updated_at);
    history
        .domains
        .push((end, verdict(version, None, rollout.state)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delivery::{Window, figures};

    #[test]
    fn ninety_days_of_releases_with_some_failed_in_staging() {
        let now = DateTime::<Utc>::UNIX_EPOCH + TimeDelta::days(20_000);
        let history = generate(now);
        let gateway: Vec<&RolloutRow> = history
            .rollouts
            .iter()
            .filter(|r| r.domain == "gateway")
            .collect();
        let versions: std::collections::BTreeSet<&str> =
            gateway.iter().map(|r| r.version.as_str()).collect();
        assert_eq!(versions.len(), (DAYS / EVERY_DAYS) as usize);
        assert!(
            history
                .rollouts
                .iter()
                .all(|r| r.offered_at >= now - TimeDelta::days(DAYS)
                    && r.updated_at <= now + TimeDelta::days(3))
        );
        let failed: Vec<&&RolloutRow> = gateway.iter().filter(|r| r.problem_at.is_some()).collect();
        assert!(!failed.is_empty(), "some version fails in staging");
        assert!(failed.iter().all(|r| r.cluster == "staging-1"));
        // a version failed in staging never reached prod
        for f in &failed {
            assert!(
                !gateway
                    .iter()
                    .any(|r| r.version == f.version && r.cluster.starts_with("prod"))
            );
        }
        let ring_of = |c: &str| {
            DEMO_CLUSTERS
                .iter()
                .find(|d| d.name == c)
                .and_then(|d| d.label("ring"))
                .unwrap_or("")
                .to_string()
        };
        let window = Window {
            from: now - TimeDelta::days(30),
            to: now,
        };
        let prod = figures(
            "gateway",
            Some("prod"),
            &history.rollouts,
            &history.outages,
            &ring_of,
            window,
        );
        assert!(!prod.deployments.is_empty() && prod.lead_time_seconds.is_some());
        let staging = figures(
            "gateway",
            Some("staging"),
            &history.rollouts,
            &history.outages,
            &ring_of,
            window,
        );
        assert!(staging.change_failure_rate.is_some_and(|r| r > 0.0));
    }
}
