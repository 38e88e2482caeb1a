//! The collector's evaluations, kept per cluster. A round re-evaluates only the clusters whose
//! objects or evidence changed and those whose evaluation fell due (a threshold passing, an
//! age in a reason moving on), and merges them with the others' kept results: the same
//! evaluation as the whole fleet's (health::merge), for a fraction of the work.

use crate::health::{
    self, ClusterInfo, DomainSpec, Evaluation, Fleet, Input, SeenInProgress, Thresholds, Timed,
};
use crate::model::Object;
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Debug, Default)]
pub struct Evaluations {
    clusters: BTreeMap<String, Kept>,
    /// The kept evaluations that fall due, by when: a round finds those due without looking
    /// at the others.
    due: BTreeSet<(DateTime<Utc>, String)>,
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
    /// Every cluster holding objects, with its objects (with `only`: those of its clusters).
    pub objects: BTreeMap<&'a str, &'a [Object]>,
    /// Every cluster's info (with `only`: those of its clusters).
    pub infos: &'a [ClusterInfo],
    /// The clusters whose objects or info may have changed since the last update; the others
    /// are known unchanged, so only these and those falling due are looked at. None: every
    /// cluster is compared.
    pub only: Option<&'a BTreeSet<String>>,
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
        self.update_then(round, changed, |_, _| ()).0
    }

    /// As `update`, and runs `then` on each cluster's new evaluation on the thread that made
    /// it, right after: its verdicts are still in that core's cache, and the calls share the
    /// cores as the evaluations do. What each call returned, by cluster.
    pub fn update_then<T: Send>(
        &mut self,
        round: &Round,
        changed: &BTreeSet<String>,
        then: impl Fn(&str, &Evaluation) -> T + Sync,
    ) -> (Redone, BTreeMap<String, T>) {
        let infos: BTreeMap<&str, &ClusterInfo> =
            round.infos.iter().map(|i| (i.name.as_str(), i)).collect();
        // Owned: the kept evaluations change below.
        let looked_at: BTreeSet<String> = match round.only {
            Some(only) => only
                .iter()
                .map(String::as_str)
                .chain(self.due_by(round.now))
                .map(str::to_string)
                .collect(),
            None => round
                .objects
                .keys()
                .copied()
                .chain(infos.keys().copied())
                .chain(self.clusters.keys().map(String::as_str))
                .map(str::to_string)
                .collect(),
        };
        let present =
            |cluster: &str| round.objects.contains_key(cluster) || infos.contains_key(cluster);
        let gone: BTreeSet<String> = looked_at
            .iter()
            .filter(|c| !present(c) && self.clusters.contains_key(c.as_str()))
            .cloned()
            .collect();
        let mut redone = Redone {
            evaluated: gone.clone(),
            changed: gone,
        };
        let stale: Vec<(&str, Option<&ClusterInfo>)> = looked_at
            .iter()
            .map(String::as_str)
            .filter(|&cluster| present(cluster))
            .map(|cluster| (cluster, infos.get(cluster).copied()))
            .filter(|&(cluster, info)| match self.clusters.get(cluster) {
                None => true,
                Some(kept) => {
                    changed.contains(cluster)
                        || kept.due.is_some_and(|due| due <= round.now)
                        || !same_info(kept.info.as_ref(), info, round)
                }
            })
            .collect();
        for cluster in &redone.evaluated {
            self.forget(cluster);
        }
        let before: Vec<Option<&Evaluation>> = stale
            .iter()
            .map(|(cluster, _)| self.clusters.get(*cluster).map(|k| k.evaluation.as_ref()))
            .collect();
        let evaluated = evaluate_each(round, &stale, &before, &then);
        let mut results = BTreeMap::new();
        for ((cluster, info), fresh) in stale.into_iter().zip(evaluated) {
            let kept = Kept {
                evaluation: Arc::new(fresh.timed.evaluation),
                due: fresh.timed.due,
                info: info.cloned(),
            };
            self.forget(cluster);
            if let Some(due) = kept.due {
                self.due.insert((due, cluster.to_string()));
            }
            self.clusters.insert(cluster.to_string(), kept);
            if fresh.differs {
                redone.changed.insert(cluster.to_string());
            }
            redone.evaluated.insert(cluster.to_string());
            results.insert(cluster.to_string(), fresh.then);
        }
        (redone, results)
    }

    /// The clusters whose kept evaluation is due by `now`.
    pub fn due_by(&self, now: DateTime<Utc>) -> impl Iterator<Item = &str> {
        self.due
            .iter()
            .take_while(move |(due, _)| *due <= now)
            .map(|(_, cluster)| cluster.as_str())
    }

    /// Drops a cluster's kept evaluation (and its place among those due).
    fn forget(&mut self, cluster: &str) -> Option<Kept> {
        let kept = self.clusters.remove(cluster)?;
        if let Some(due) = kept.due {
            self.due.remove(&(due, cluster.to_string()));
        }
        Some(kept)
    }

    /// One cluster's current evaluation.
    pub fn of(&self, cluster: &str) -> Option<&Evaluation> {
        self.shared(cluster).map(Arc::as_ref)
    }

    /// One cluster's current evaluation, to keep beside the round's without a copy.
    pub fn shared(&self, cluster: &str) -> Option<&Arc<Evaluation>> {
        self.clusters.get(cluster).map(|kept| &kept.evaluation)
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
        self.due.first().map(|(due, _)| *due)
    }
}

/// Fewer objects than this are evaluated on the calling thread: starting threads would cost
/// more than they save. The unit tests share out every round, so the property test checks the
/// threaded path against the whole fleet's evaluation.
const SHARED_OUT_FROM_OBJECTS: usize = if cfg!(test) { 1 } else { 2_000 };

/// One cluster evaluated again: the evaluation, whether it differs from the one kept (none
/// kept: it does), and what the caller's `then` made of it.
struct Fresh<T> {
    timed: Timed,
    differs: bool,
    then: T,
}

/// Evaluates each of `clusters` on its own (`before`: each one's kept evaluation), results in
/// their order. A cluster's evaluation reads nothing of another's, so with several cores a big
/// round (a flood touching most of the fleet) is shared out between scoped threads, each
/// taking the next cluster when done.
fn evaluate_each<T: Send>(
    round: &Round,
    clusters: &[(&str, Option<&ClusterInfo>)],
    before: &[Option<&Evaluation>],
    then: &(impl Fn(&str, &Evaluation) -> T + Sync),
) -> Vec<Fresh<T>> {
    let one = |i: usize| {
        let (cluster, info) = clusters[i];
        let timed = health::evaluate_timed(&Input {
            objects: round.objects.get(cluster).copied().unwrap_or_default(),
            clusters: info.map(std::slice::from_ref).unwrap_or_default(),
            domains: round.domains,
            thresholds: round.thresholds,
            now: round.now,
            seen_in_progress: round.seen_in_progress,
        });
        Fresh {
            differs: before[i].is_none_or(|kept| *kept != timed.evaluation),
            then: then(cluster, &timed.evaluation),
            timed,
        }
    };
    let objects: usize = clusters
        .iter()
        .map(|(cluster, _)| round.objects.get(cluster).map_or(0, |o| o.len()))
        .sum();
    let threads = health::cores().min(clusters.len());
    if threads < 2 || objects < SHARED_OUT_FROM_OBJECTS {
        return (0..clusters.len()).map(one).collect();
    }
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, Fresh<T>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= clusters.len() {
                            return mine;
                        }
                        mine.push((i, one(i)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| {
                worker
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p))
            })
            .collect()
    });
    done.sort_unstable_by_key(|&(i, _)| i);
    done.into_iter().map(|(_, fresh)| fresh).collect()
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
