//! Cluster freshness: whether the evidence collected from a cluster (or for one kind on it)
//! can be trusted at all. A cluster without a ClusterInfo is fresh (files have no age).

use super::{ClusterInfo, InputEvidence};
use crate::model::{Kind, ObjectId, human};
use chrono::{DateTime, TimeDelta, Utc};
use std::collections::HashMap;

pub(super) struct Clusters<'a> {
    infos: HashMap<&'a str, &'a ClusterInfo>,
    freshness: TimeDelta,
    now: DateTime<Utc>,
}

impl<'a> Clusters<'a> {
    pub fn new(infos: &'a [ClusterInfo], freshness: TimeDelta, now: DateTime<Utc>) -> Self {
        let infos = infos
            .iter()
            .map(|info| (info.name.as_str(), info))
            .collect();
        Clusters {
            infos,
            freshness,
            now,
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
        let age = self.now - last_good;
        (age > self.freshness).then(|| {
            format!(
                "cluster {cluster} data is {} old (freshness limit {})",
                human(age),
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
