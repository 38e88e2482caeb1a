//! Cluster freshness: whether the evidence collected from a cluster (or for one kind on it)
//! can be trusted at all. A cluster without a ClusterInfo is fresh (files have no age).

use super::deadlines::Clock;
use super::{ClusterInfo, InputEvidence};
use crate::model::{Kind, ObjectId, human};
use chrono::{DateTime, TimeDelta, Utc};
use std::collections::HashMap;

pub(super) struct Clusters<'a> {
    infos: HashMap<&'a str, &'a ClusterInfo>,
    freshness: TimeDelta,
    clock: Clock<'a>,
}

impl<'a> Clusters<'a> {
    pub fn new(infos: &'a [ClusterInfo], freshness: TimeDelta, clock: Clock<'a>) -> Self {
        let infos = infos
            .iter()
            .map(|info| (info.name.as_str(), info))
            .collect();
        Clusters {
            infos,
            freshness,
            clock,
        }
    }

    pub fn info(&self, cluster: &str) -> Option<&'a ClusterInfo> {
        self.infos.get(cluster).copied()
    }

    /// Why the whole cluster's data cannot be trusted, if it cannot.
    pub fn data_problem(&self, cluster: &str) -> Option<String> {
        let info = self.info(cluster)?;
        if let Some(error) = &info.error {
            return Some(format!("cluster {cluster} unreachable: {error}"));
        }
        let last_good = info.last_good?;
        self.clock.past(last_good, self.freshness).then(|| {
            format!(
                "cluster {cluster} data is {} old (freshness limit {})",
                self.clock.age(last_good),
                human(self.freshness)
            )
        })
    }

    /// Why one kind on the cluster cannot be read (e.g. RBAC Forbidden on HelmRelease).
    pub fn kind_error(&self, cluster: &str, kind: Kind) -> Option<&'a str> {
        self.info(cluster)?
            .kind_errors
            .get(&kind)
            .map(String::as_str)
    }

    /// Whether the absence of an object of `kind` is evidence: always for what the collector
    /// lists, only for the kinds an input holds.
    pub fn covers(&self, cluster: &str, kind: Kind) -> bool {
        self.input(cluster)
            .is_none_or(|input| input.kinds.contains(&kind))
    }

    /// Where the input gives differing copies of `id`, if it does.
    pub fn conflicting_copies(&self, cluster: &str, id: &ObjectId) -> Option<&'a [String]> {
        self.input(cluster)?.conflicting.get(id).map(Vec::as_slice)
    }

    fn input(&self, cluster: &str) -> Option<&'a InputEvidence> {
        self.info(cluster)?.input.as_ref()
    }

    /// The reason shown on the cluster's own root-cause entry.
    pub fn root_reason(&self, cluster: &str) -> String {
        if let Some(problem) = self.data_problem(cluster) {
            return problem;
        }
        let errors: Vec<String> = self
            .info(cluster)
            .into_iter()
            .flat_map(|info| &info.kind_errors)
            .map(|(kind, error)| format!("cannot read {kind}: {error}"))
            .collect();
        errors.join("; ")
    }

    /// When the cluster's data was last known good: the start of its unverifiable period.
    pub fn last_good(&self, cluster: &str) -> Option<DateTime<Utc>> {
        self.info(cluster)?.last_good
    }
}

/// Whether evaluating with `after` instead of `before` gives the same result at `now`: they
/// differ at most in `last_good`, and `after` is fresh with nothing unreadable. `last_good` is
/// read only for a cluster whose data is stale, unreachable or partly unreadable (the
/// unverifiable verdicts and their cluster root cause), so a probe that only moves it forward
/// changes nothing. (`before` having gone stale since is a deadline its evaluation carries.)
pub fn interchangeable(
    before: &ClusterInfo,
    after: &ClusterInfo,
    freshness: TimeDelta,
    now: DateTime<Utc>,
) -> bool {
    let fresh = |info: &ClusterInfo| {
        info.error.is_none()
            && info.kind_errors.is_empty()
            && info.last_good.is_some_and(|at| now - at <= freshness)
    };
    let same_but_last_good = ClusterInfo {
        last_good: after.last_good,
        ..before.clone()
    } == *after;
    same_but_last_good && fresh(before) && fresh(after)
}
