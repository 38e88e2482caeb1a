//! Turns the clusters re-evaluated in a round into the rows that changed since the last write:
//! objects whose verdict or body changed, a transition for every state change, and the
//! roll-ups of clusters whose root causes or domain verdicts changed. A cluster not
//! re-evaluated has nothing new to write, so a round costs what changed, not the fleet.

use super::Snapshot;
use super::evaluations::Evaluations;
use super::rollups::{RollupChanges, WrittenRollups};
use crate::health::{ClusterInfo, Evaluation, StateCounts, Verdict};
use crate::model::ObjectId;
use crate::store::{
    ChangeSet, ClusterRow, JsonText, ObjectKey, ObjectRecord, ObjectRow, TransitionRow, key_of_id,
};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// What was last handed to the store, to write only differences.
#[derive(Debug, Default)]
pub struct Written {
    /// Per cluster, the evaluation whose verdicts were last written: the one the round shares
    /// (no copy), or for a cluster taken over, what the store held. Its verdicts are sorted
    /// by id, as a new evaluation's are, so the two are compared in one pass without hashing.
    verdicts: HashMap<String, Arc<Evaluation>>,
    rollups: WrittenRollups,
    clusters: HashMap<String, ClusterRow>,
    /// Per cluster, its objects by state in its latest evaluation (the cluster row's counts).
    counts: HashMap<String, StateCounts>,
    /// Per cluster, the controller Deployments its latest evaluation found (the cluster row's).
    controllers: HashMap<String, Vec<ObjectId>>,
    /// Set when the cluster rows were forgotten: the next round compares every cluster's.
    clusters_forgotten: bool,
}

/// Whether an object's row would be written the same from either verdict of it.
fn same_row(written: &Verdict, next: &Verdict) -> bool {
    written.state == next.state
        && written.since == next.since
        && written.reason == next.reason
        && written.message == next.message
        && written.root_causes == next.root_causes
        && written.domains == next.domains
        && written.edges == next.edges
}

impl Written {
    /// Object rows and transitions of one re-evaluated cluster (None: it is gone) against
    /// what was last written of it; `touched` are the ids of its objects whose body changed,
    /// sorted. It only reads, so each cluster of a round is compared on the thread that
    /// evaluated it (`Evaluations::update_then`). The caller leaves out the clusters it holds
    /// but has not heard from yet: nothing of theirs is written.
    pub fn object_changes(
        &self,
        cluster: &str,
        evaluation: Option<&Evaluation>,
        snapshot: &Snapshot,
        touched: &[&ObjectId],
        now: DateTime<Utc>,
    ) -> ChangeSet {
        let mut changes = ChangeSet::default();
        let written = self
            .verdicts
            .get(cluster)
            .map_or(&[][..], |e| e.objects.as_slice());
        let verdicts = evaluation.map_or(&[][..], |e| e.objects.as_slice());
        debug_assert!(
            verdicts.is_sorted_by(|a, b| a.id < b.id),
            "verdicts sorted by id"
        );
        let mut written = written.iter().peekable();
        let mut touched = touched.iter().peekable();
        for verdict in verdicts {
            // Both lists are sorted by id: written verdicts before this one are gone.
            while let Some(gone) = written.next_if(|w| w.id < verdict.id) {
                // Written from a verdict, so its id always reads back as a key.
                changes.deletes.extend(key_of_id(gone.id.as_str()));
            }
            let before = written.next_if(|w| w.id == verdict.id);
            while touched.next_if(|id| ***id < verdict.id).is_some() {}
            let body_changed = touched.next_if(|id| ***id == verdict.id).is_some();
            if before.is_some_and(|b| same_row(b, verdict)) && !body_changed {
                continue;
            }
            row_changes(before, verdict, snapshot, now, &mut changes);
        }
        for gone in written {
            changes.deletes.extend(key_of_id(gone.id.as_str()));
        }
        changes
    }

    /// Records `evaluation` (None: the cluster is gone) as the one whose verdicts were handed
    /// to the store, once its `object_changes` are on their way.
    pub fn handed_over(&mut self, cluster: &str, evaluation: Option<&Arc<Evaluation>>) {
        match evaluation {
            Some(evaluation) => self
                .verdicts
                .insert(cluster.to_string(), evaluation.clone()),
            None => self.verdicts.remove(cluster),
        };
    }

    /// The roll-up rows of each of `clusters` (re-evaluated this round) that changed.
    pub fn rollup_changes(
        &mut self,
        evaluations: &Evaluations,
        clusters: &[String],
    ) -> RollupChanges {
        self.rollups.changes(evaluations, clusters)
    }

    /// Cluster rows (freshness, counts by state) that changed; the counts of the clusters
    /// re-evaluated this round (`redone`) are taken anew. Only the rows of those and of the
    /// clusters the sources `reported` on can have changed, so only theirs are compared (every
    /// cluster's after the rows were forgotten). A `held` cluster's row is only written once
    /// there is an error to report; until then the previous owner's row stands.
    pub fn cluster_changes(
        &mut self,
        evaluations: &Evaluations,
        redone: &BTreeSet<String>,
        reported: &BTreeSet<String>,
        snapshot: &Snapshot,
        held: &BTreeSet<String>,
        now: DateTime<Utc>,
    ) -> Vec<ClusterRow> {
        for cluster in redone {
            let Some(evaluation) = evaluations.of(cluster) else {
                self.counts.remove(cluster);
                self.controllers.remove(cluster);
                continue;
            };
            let counts = StateCounts::of(evaluation.objects.iter().map(|v| v.state));
            self.counts.insert(cluster.clone(), counts);
            self.controllers
                .insert(cluster.clone(), evaluation.controllers.clone());
        }
        let candidates: Vec<&ClusterInfo> = if std::mem::take(&mut self.clusters_forgotten) {
            snapshot.clusters().collect()
        } else {
            let names: BTreeSet<&String> = redone.iter().chain(reported).collect();
            names
                .into_iter()
                .filter_map(|n| snapshot.cluster(n))
                .collect()
        };
        let mut rows = Vec::new();
        for info in candidates {
            if held.contains(&info.name) && info.error.is_none() {
                continue;
            }
            let row = ClusterRow {
                name: info.name.clone(),
                labels: json!(info.labels),
                last_good: info.last_good,
                error: info.error.clone(),
                kind_errors: json!(info.kind_errors),
                state_counts: self.counts.get(&info.name).cloned().unwrap_or_default(),
                controllers: json!(
                    self.controllers
                        .get(&info.name)
                        .cloned()
                        .unwrap_or_default()
                ),
                updated_at: now,
            };
            let unchanged = self.clusters.get(&info.name).is_some_and(|old| {
                ClusterRow {
                    updated_at: now,
                    ..old.clone()
                } == row
            });
            if !unchanged {
                self.clusters.insert(info.name.clone(), row.clone());
                rows.push(row);
            }
        }
        rows
    }

    /// A cluster's objects per state, as of its latest evaluation.
    pub fn state_counts(&self, cluster: &str) -> &StateCounts {
        static NONE: StateCounts = StateCounts(BTreeMap::new());
        self.counts.get(cluster).unwrap_or(&NONE)
    }

    /// Forgets what was written for a cluster another collector owns now.
    pub fn forget_cluster(&mut self, name: &str) {
        self.verdicts.remove(name);
        self.rollups.forget_cluster(name);
        self.clusters.remove(name);
        self.counts.remove(name);
        self.controllers.remove(name);
    }

    /// Starts from what the store holds for a cluster just taken over, so only real changes
    /// become transitions and rows of objects that vanished meanwhile are deleted.
    pub fn seed(&mut self, records: &[ObjectRecord]) {
        let mut by_cluster: BTreeMap<&str, Vec<Verdict>> = BTreeMap::new();
        for record in records {
            let stored = &record.verdict;
            // Read from a row whose kind was read, so it reads again.
            let Ok(kind) = stored.kind.parse() else {
                continue;
            };
            let root_causes = record
                .root_causes
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str()?.parse::<ObjectId>().ok())
                .collect();
            by_cluster
                .entry(&stored.cluster)
                .or_default()
                .push(Verdict {
                    id: stored.id.clone(),
                    cluster: stored.cluster.as_str().into(),
                    kind,
                    namespace: stored.namespace.as_str().into(),
                    name: stored.name.clone(),
                    state: stored.state,
                    since: stored.since,
                    // Not stored with the object: only its root-cause row keeps it.
                    cause: Default::default(),
                    reason: stored.reason.clone(),
                    message: stored.message.clone(),
                    root_causes,
                    domains: record.domains.clone(),
                    edges: record.edges.0.clone(),
                });
        }
        for (cluster, mut objects) in by_cluster {
            objects.sort_unstable_by(|a, b| a.id.cmp(&b.id));
            let stored = Evaluation {
                objects,
                ..Evaluation::default()
            };
            self.verdicts.insert(cluster.to_string(), Arc::new(stored));
        }
    }

    /// After a failed write, forget the cluster rows so the next round rewrites them all.
    pub fn forget_clusters(&mut self) {
        self.clusters.clear();
        self.clusters_forgotten = true;
    }
}

/// The row (and, when its state changed, the transition) of an object whose verdict or body
/// changed since `before` was written (None: never written).
fn row_changes(
    before: Option<&Verdict>,
    verdict: &Verdict,
    snapshot: &Snapshot,
    now: DateTime<Utc>,
    changes: &mut ChangeSet,
) {
    let key = ObjectKey {
        cluster: verdict.cluster.to_string(),
        kind: verdict.kind,
        namespace: verdict.namespace.to_string(),
        name: verdict.name.clone(),
    };
    if before.map(|b| b.state) != Some(verdict.state) {
        changes.transitions.push(TransitionRow {
            key: key.clone(),
            from: before.map(|b| b.state),
            to: verdict.state,
            reason: verdict.reason.clone(),
            message: verdict.message.clone(),
            // The first sighting dates from the evidence; later changes from now.
            at: match before {
                None => verdict.since.filter(|s| *s <= now).unwrap_or(now),
                Some(_) => now,
            },
        });
    }
    // Straight from the slim object to JSON text: no `Value` tree per changed object.
    let body = match snapshot.get(&verdict.id) {
        Some(object) => JsonText::of(object),
        None => JsonText::of(&Value::Null),
    };
    changes.upserts.push(ObjectRow {
        key,
        state: verdict.state,
        since: verdict.since,
        reason: verdict.reason.clone(),
        message: verdict.message.clone(),
        root_causes: verdict
            .root_causes
            .iter()
            .map(|id| id.to_string())
            .collect(),
        domains: verdict.domains.clone(),
        edges: verdict.edges.clone(),
        body,
    });
}
