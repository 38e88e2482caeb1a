//! The collector's evaluations, kept per cluster. A round re-evaluates only the clusters whose
//! objects or evidence changed and those whose evaluation fell due (a threshold passing, an
//! age in a reason moving on), and merges them with the others' kept results: the same
//! evaluation as the whole fleet's (health::merge), for a fraction of the work.

use crate::health::{
    self, ClusterInfo, DomainSpec, Evaluation, Fleet, Input, SeenInProgress, Thresholds,
};
use crate::model::Object;
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct Evaluations {
    clusters: BTreeMap<String, Kept>,
}

#[derive(Debug)]
struct Kept {
    /// Shared with the published fleets until the cluster is evaluated again.
    evaluation: Arc<Evaluation>,
    /// When time alone may change it (`health::Timed::due`).
    due: Option<DateTime<Utc>>,
    /// The cluster's info the evaluation was given (None: the cluster had none).
    info: Option<ClusterInfo>,
}

/// What a round did, by cluster.
#[derive(Debug, Default)]
pub struct Redone {
    /// Evaluated again (or forgotten): their objects' rows are compared with what was written.
    pub evaluated: BTreeSet<String>,
    /// Those whose evaluation came out different (new and forgotten ones included).
    pub changed: BTreeSet<String>,
}

/// What one round evaluates: the fleet's objects by cluster and what the engine needs beside.
pub struct Round<'a> {
    /// Every cluster holding objects, with its objects.
    pub objects: BTreeMap<&'a str, &'a [Object]>,
    pub infos: &'a [ClusterInfo],
    pub domains: &'a [DomainSpec],
    pub thresholds: &'a Thresholds,
    pub seen_in_progress: &'a SeenInProgress,
    pub now: DateTime<Utc>,
}

impl Evaluations {
    /// Re-evaluates the clusters in `changed` (their objects or first sightings changed), those
    /// whose info changed in a way that can matter, those due by now and those new; forgets
    /// clusters that have neither objects nor info.
    pub fn update(&mut self, round: &Round, changed: &BTreeSet<String>) -> Redone {
        let infos: BTreeMap<&str, &ClusterInfo> =
            round.infos.iter().map(|i| (i.name.as_str(), i)).collect();
        let present: BTreeSet<&str> = round
            .objects
            .keys()
            .copied()
            .chain(infos.keys().copied())
            .collect();
        let gone: BTreeSet<String> = self
            .clusters
            .keys()
            .filter(|c| !present.contains(c.as_str()))
            .cloned()
            .collect();
        for cluster in &gone {
            self.clusters.remove(cluster);
        }
        let mut redone = Redone {
            evaluated: gone.clone(),
            changed: gone,
        };
        for &cluster in &present {
            let info = infos.get(cluster).copied();
            let stale = match self.clusters.get(cluster) {
                None => true,
                Some(kept) => {
                    changed.contains(cluster)
                        || kept.due.is_some_and(|due| due <= round.now)
                        || !same_info(kept.info.as_ref(), info, round)
                }
            };
            if !stale {
                continue;
            }
            let timed = health::evaluate_timed(&Input {
                objects: round.objects.get(cluster).copied().unwrap_or_default(),
                clusters: info.map(std::slice::from_ref).unwrap_or_default(),
                domains: round.domains,
                thresholds: round.thresholds,
                now: round.now,
                seen_in_progress: round.seen_in_progress,
            });
            let kept = Kept {
                evaluation: Arc::new(timed.evaluation),
                due: timed.due,
                info: info.cloned(),
            };
            let before = self.clusters.insert(cluster.to_string(), kept);
            let after = &self.clusters[cluster].evaluation;
            if before.is_none_or(|b| b.evaluation != *after) {
                redone.changed.insert(cluster.to_string());
            }
            redone.evaluated.insert(cluster.to_string());
        }
        redone
    }

    /// One cluster's current evaluation.
    pub fn of(&self, cluster: &str) -> Option<&Evaluation> {
        self.clusters
            .get(cluster)
            .map(|kept| kept.evaluation.as_ref())
    }

    /// The fleet's evaluation, as `health::evaluate` over every object would give it once
    /// merged: every cluster's evaluation shared, nothing copied.
    pub fn fleet(&self) -> Fleet {
        Fleet::new(
            self.clusters
                .iter()
                .map(|(cluster, kept)| (cluster.clone(), kept.evaluation.clone()))
                .collect(),
        )
    }

    /// The earliest instant at which a kept evaluation falls due.
    pub fn next_due(&self) -> Option<DateTime<Utc>> {
        self.clusters.values().filter_map(|kept| kept.due).min()
    }
}

fn same_info(before: Option<&ClusterInfo>, after: Option<&ClusterInfo>, round: &Round) -> bool {
    match (before, after) {
        (None, None) => true,
        (Some(before), Some(after)) => {
            before == after
                || health::interchangeable(before, after, round.thresholds.freshness, round.now)
        }
        _ => false,
    }
}
