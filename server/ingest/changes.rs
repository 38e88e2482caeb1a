//! Turns the clusters re-evaluated in a round into the rows that changed since the last write:
//! objects whose verdict or body changed, a transition for every state change, and the
//! roll-ups of clusters whose root causes or domain verdicts changed. A cluster not
//! re-evaluated has nothing new to write, so a round costs what changed, not the fleet.

use super::Snapshot;
use super::evaluations::Evaluations;
use super::rollups::{RollupChanges, WrittenRollups};
use crate::health::{ClusterInfo, Evaluation, ObjectEdge, State, Verdict};
use crate::model::ObjectId;
use crate::store::{
    ChangeSet, ClusterRow, JsonText, ObjectKey, ObjectRecord, ObjectRow, TransitionRow, key_of_id,
};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// What was last handed to the store, to write only differences.
#[derive(Debug, Default)]
pub struct Written {
    /// Per cluster, per object.
    verdicts: HashMap<String, HashMap<ObjectId, WrittenVerdict>>,
    rollups: WrittenRollups,
    clusters: HashMap<String, ClusterRow>,
    /// Per cluster, its objects by state in its latest evaluation (the cluster row's counts).
    counts: HashMap<String, BTreeMap<&'static str, u64>>,
    /// Per cluster, the controller Deployments its latest evaluation found (the cluster row's).
    controllers: HashMap<String, Vec<ObjectId>>,
    /// Set when the cluster rows were forgotten: the next round compares every cluster's.
    clusters_forgotten: bool,
}

#[derive(Debug, PartialEq)]
struct WrittenVerdict {
    state: State,
    since: Option<DateTime<Utc>>,
    reason: String,
    message: String,
    root_causes: Vec<ObjectId>,
    domains: Vec<String>,
    edges: Vec<ObjectEdge>,
}

impl WrittenVerdict {
    /// Compares without copying: most verdicts are unchanged every round.
    fn matches(&self, v: &Verdict) -> bool {
        self.state == v.state
            && self.since == v.since
            && self.reason == v.reason
            && self.message == v.message
            && self.root_causes == v.root_causes
            && self.domains == v.domains
            && self.edges == v.edges
    }

    fn new(v: &Verdict) -> Self {
        WrittenVerdict {
            state: v.state,
            since: v.since,
            reason: v.reason.clone(),
            message: v.message.clone(),
            root_causes: v.root_causes.clone(),
            domains: v.domains.clone(),
            edges: v.edges.clone(),
        }
    }
}

impl Written {
    /// Object rows and transitions of one re-evaluated cluster (None: it is gone); `touched`
    /// are the ids whose object body changed. The caller leaves out the clusters it holds but
    /// has not heard from yet: nothing of theirs is written.
    pub fn object_changes(
        &mut self,
        cluster: &str,
        evaluation: Option<&Evaluation>,
        snapshot: &Snapshot,
        touched: &HashSet<ObjectId>,
        now: DateTime<Utc>,
        changes: &mut ChangeSet,
    ) {
        let verdicts = evaluation.map_or(&[][..], |e| e.objects.as_slice());
        let written = self.verdicts.entry(cluster.to_string()).or_default();
        // Written verdicts still in the evaluation; when all are, nothing is gone and the
        // cluster costs a lookup per object, no copies.
        let mut still_present = 0;
        for verdict in verdicts {
            let previous = written.get(&verdict.id);
            if previous.is_some() {
                still_present += 1;
            }
            if previous.is_some_and(|p| p.matches(verdict)) && !touched.contains(&verdict.id) {
                continue;
            }
            let next = WrittenVerdict::new(verdict);
            if previous.is_none() {
                // Counted as present from here on, like the verdicts written before.
                still_present += 1;
            }
            let key = ObjectKey {
                cluster: verdict.cluster.to_string(),
                kind: verdict.kind,
                namespace: verdict.namespace.to_string(),
                name: verdict.name.clone(),
            };
            if previous.map(|p| p.state) != Some(verdict.state) {
                changes.transitions.push(TransitionRow {
                    key: key.clone(),
                    from: previous.map(|p| p.state),
                    to: verdict.state,
                    reason: verdict.reason.clone(),
                    message: verdict.message.clone(),
                    // The first sighting dates from the evidence; later changes from now.
                    at: match previous {
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
                root_causes: verdict.root_causes.iter().map(|id| id.0.clone()).collect(),
                domains: next.domains.clone(),
                edges: next.edges.clone(),
                body,
            });
            written.insert(verdict.id.clone(), next);
        }
        if still_present < written.len() {
            let present: HashSet<&ObjectId> = verdicts.iter().map(|v| &v.id).collect();
            written.retain(|id, _| {
                let keep = present.contains(id);
                if !keep {
                    // Written from a verdict, so its id always reads back as a key.
                    changes.deletes.extend(key_of_id(id.as_str()));
                }
                keep
            });
        }
        if written.is_empty() {
            self.verdicts.remove(cluster);
        }
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
            let mut counts = BTreeMap::new();
            for verdict in &evaluation.objects {
                *counts.entry(verdict.state.as_str()).or_default() += 1;
            }
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
                state_counts: json!(self.counts.get(&info.name).cloned().unwrap_or_default()),
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
    pub fn state_counts(&self, cluster: &str) -> &BTreeMap<&'static str, u64> {
        static NONE: BTreeMap<&'static str, u64> = BTreeMap::new();
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
        for record in records {
            let verdict = &record.verdict;
            let root_causes = record
                .root_causes
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(|s| ObjectId(s.to_string())))
                .collect();
            self.verdicts
                .entry(verdict.cluster.clone())
                .or_default()
                .insert(
                    verdict.id.clone(),
                    WrittenVerdict {
                        state: verdict.state,
                        since: verdict.since,
                        reason: verdict.reason.clone(),
                        message: verdict.message.clone(),
                        root_causes,
                        domains: record.domains.clone(),
                        edges: record.edges.0.clone(),
                    },
                );
        }
    }

    /// After a failed write, forget the cluster rows so the next round rewrites them all.
    pub fn forget_clusters(&mut self) {
        self.clusters.clear();
        self.clusters_forgotten = true;
    }
}
