//! The phases of a round that read only parts of the runner: each is given the fields it
//! reads, so the evaluations can be updated while the written rows and the snapshot are read.

use super::changes::Written;
use super::crd_history::CrdHistory;
use super::evaluations::{Evaluations, Redone, Round};
use super::sightings::Sightings;
use super::{RunnerSettings, Snapshot};
use crate::health::Evaluation;
use crate::model::ObjectId;
use crate::store::ChangeSet;
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// The ids of the objects whose body changed, by cluster.
pub type TouchedByCluster<'a> = BTreeMap<&'a str, Vec<&'a ObjectId>>;

/// The clusters a round looks at, and why.
pub struct Candidates {
    /// Their objects or first sightings changed: re-evaluated whatever their kept evaluation.
    pub changed: BTreeSet<String>,
    /// The sources reported on them: their cluster rows may have changed.
    pub reported: BTreeSet<String>,
    /// Every cluster whose objects or info can have changed, or whose evaluation fell due.
    pub all: BTreeSet<String>,
}

/// What the engine is given beside the kept evaluations, read while those are updated.
pub struct RoundSources<'a> {
    pub snapshot: &'a Snapshot,
    pub crd_history: &'a CrdHistory,
    pub settings: &'a RunnerSettings,
    pub sightings: &'a Sightings,
}

/// Compares a re-evaluated cluster's rows with what was last written of it. It only reads, so
/// it runs on the thread that evaluated the cluster while the evaluations are updated.
pub struct RowDiff<'a> {
    pub written: &'a Written,
    pub snapshot: &'a Snapshot,
    pub touched: &'a TouchedByCluster<'a>,
    pub now: DateTime<Utc>,
}

impl RowDiff<'_> {
    /// The object rows and transitions of `cluster` that changed (evaluation None: it is gone).
    pub fn rows(&self, cluster: &str, evaluation: Option<&Evaluation>) -> ChangeSet {
        let touched = self.touched.get(cluster).map_or(&[][..], Vec::as_slice);
        self.written
            .object_changes(cluster, evaluation, self.snapshot, touched, self.now)
    }
}

/// Each cluster's name copied once, not once per touched object; its ids sorted, as its
/// verdicts are, so they are matched to them without hashing.
pub fn group_by_cluster(touched: &HashSet<ObjectId>) -> TouchedByCluster<'_> {
    let mut touched_by_cluster: TouchedByCluster = BTreeMap::new();
    for id in touched {
        if let Some((cluster, ..)) = id.parts() {
            touched_by_cluster.entry(cluster).or_default().push(id);
        }
    }
    for ids in touched_by_cluster.values_mut() {
        ids.sort_unstable();
    }
    touched_by_cluster
}

/// Re-evaluates the candidates and the clusters due, on this thread (the runtime moves its
/// other tasks off it); each cluster not held is diffed right after. The diffs, by cluster.
pub fn evaluate_candidates(
    evaluations: &mut Evaluations,
    sources: &RoundSources,
    candidates: &Candidates,
    held: &BTreeSet<String>,
    diff: &RowDiff,
    now: DateTime<Utc>,
) -> (Redone, BTreeMap<String, Option<ChangeSet>>) {
    tokio::task::block_in_place(|| {
        let mut clusters: Vec<_> = candidates
            .all
            .iter()
            .filter_map(|c| sources.snapshot.cluster(c).cloned())
            .collect();
        sources.crd_history.inject(&mut clusters);
        let round = Round {
            objects: candidates
                .all
                .iter()
                .filter_map(|c| Some((c.as_str(), sources.snapshot.objects_of(c)?)))
                .collect(),
            infos: &clusters,
            only: Some(&candidates.all),
            domains: &sources.settings.domains,
            thresholds: &sources.settings.thresholds,
            seen_in_progress: sources.sightings.seen(),
            now,
        };
        evaluations.update_then(&round, &candidates.changed, |cluster, evaluation| {
            (!held.contains(cluster)).then(|| diff.rows(cluster, Some(evaluation)))
        })
    })
}

/// The clusters re-evaluated whose rows are written: all but those held back.
pub fn diffed_clusters<'a>(
    evaluated: &'a BTreeSet<String>,
    held: &BTreeSet<String>,
) -> Vec<&'a String> {
    evaluated.iter().filter(|c| !held.contains(*c)).collect()
}

/// The round's object rows and transitions: those diffed beside the evaluations, and those of
/// the clusters gone, diffed here.
pub fn collect_changes(
    diff: &RowDiff,
    evaluations: &Evaluations,
    diffed: &[&String],
    mut diffs: BTreeMap<String, Option<ChangeSet>>,
) -> ChangeSet {
    let mut changes = ChangeSet::default();
    for &cluster in diffed {
        // A cluster gone was not evaluated: its rows are diffed here.
        let rows = diffs.remove(cluster).flatten();
        changes.append(rows.unwrap_or_else(|| diff.rows(cluster, evaluations.of(cluster))));
    }
    changes
}
