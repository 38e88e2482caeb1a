//! Turns an evaluation into the rows that changed since the last write: objects whose verdict
//! or body changed, a transition for every state change, and the roll-ups of clusters whose
//! root causes or domain verdicts changed.

use super::Snapshot;
use crate::health::{CoOwnership, Dependency, Evaluation, ObjectEdge, State, Verdict};
use crate::model::ObjectId;
use crate::store::{
    ChangeSet, ClusterRow, DomainRow, ObjectKey, ObjectRecord, ObjectRow, RootCauseRow,
    TransitionRow,
};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// What was last handed to the store, to write only differences.
#[derive(Debug, Default)]
pub struct Written {
    verdicts: HashMap<ObjectId, WrittenVerdict>,
    rollups: HashMap<String, ClusterRollup>,
    clusters: HashMap<String, ClusterRow>,
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

/// What one cluster's evaluation rolls up to: its root causes, domain verdicts and cross-stack
/// edges. Replaced as a whole when any part changes.
#[derive(Debug, Default, PartialEq)]
struct ClusterRollup {
    causes: Vec<RootCauseRow>,
    domains: Vec<DomainRow>,
    dependencies: Vec<Dependency>,
    co_ownerships: Vec<CoOwnership>,
}

/// Roll-ups to replace, for the clusters whose roll-ups changed.
#[derive(Debug, Default)]
pub struct RollupChanges {
    pub clusters: Vec<String>,
    pub causes: Vec<RootCauseRow>,
    pub domains: Vec<DomainRow>,
    pub dependencies: Vec<Dependency>,
    pub co_ownerships: Vec<CoOwnership>,
}

impl RollupChanges {
    pub fn is_empty(&self) -> bool {
        self.clusters.is_empty()
    }

    /// Drops what was pending for a cluster another collector owns now.
    pub fn forget(&mut self, cluster: &str) {
        self.causes.retain(|r| r.cluster != cluster);
        self.domains.retain(|r| r.cluster != cluster);
        self.dependencies.retain(|r| r.cluster != cluster);
        self.co_ownerships.retain(|r| r.cluster != cluster);
        self.clusters.retain(|c| c != cluster);
    }

    /// Merges a later set in; the later rows win for the clusters they cover.
    pub fn absorb(&mut self, later: RollupChanges) {
        let covered: HashSet<&String> = later.clusters.iter().collect();
        self.causes.retain(|r| !covered.contains(&r.cluster));
        self.domains.retain(|r| !covered.contains(&r.cluster));
        self.dependencies.retain(|r| !covered.contains(&r.cluster));
        self.co_ownerships.retain(|r| !covered.contains(&r.cluster));
        self.clusters.retain(|c| !covered.contains(c));
        self.clusters.extend(later.clusters);
        self.causes.extend(later.causes);
        self.domains.extend(later.domains);
        self.dependencies.extend(later.dependencies);
        self.co_ownerships.extend(later.co_ownerships);
    }
}

pub fn key_of(id: &ObjectId) -> ObjectKey {
    let (cluster, kind, namespace, name) = id.parts().unwrap_or_default();
    ObjectKey {
        cluster: cluster.to_string(),
        kind: kind.to_string(),
        namespace: namespace.to_string(),
        name: name.to_string(),
    }
}

impl Written {
    /// Object rows and transitions; `touched` are the ids whose object body changed. Nothing
    /// is written for the `held` clusters (taken over, but not yet heard from).
    pub fn object_changes(
        &mut self,
        evaluation: &Evaluation,
        snapshot: &Snapshot,
        touched: &HashSet<ObjectId>,
        held: &BTreeSet<String>,
        now: DateTime<Utc>,
    ) -> ChangeSet {
        let mut changes = ChangeSet::default();
        // Written verdicts still in the evaluation; when all are, nothing is gone and the
        // round costs a lookup per object, no copies.
        let mut still_present = 0;
        for verdict in &evaluation.objects {
            let previous = self.verdicts.get(&verdict.id);
            if previous.is_some() {
                still_present += 1;
            }
            if held.contains(&verdict.cluster)
                || (previous.is_some_and(|p| p.matches(verdict)) && !touched.contains(&verdict.id))
            {
                continue;
            }
            let next = WrittenVerdict::new(verdict);
            if previous.is_none() {
                // Counted as present from here on, like the verdicts written before.
                still_present += 1;
            }
            let key = key_of(&verdict.id);
            if previous.map(|p| p.state) != Some(verdict.state) {
                changes.transitions.push(TransitionRow {
                    key: key.clone(),
                    from: previous.map(|p| p.state.as_str().to_string()),
                    to: verdict.state.as_str().to_string(),
                    reason: verdict.reason.clone(),
                    message: verdict.message.clone(),
                    // The first sighting dates from the evidence; later changes from now.
                    at: match previous {
                        None => verdict.since.filter(|s| *s <= now).unwrap_or(now),
                        Some(_) => now,
                    },
                });
            }
            let body = snapshot
                .get(&verdict.id)
                .and_then(|o| serde_json::to_value(o).ok())
                .unwrap_or(Value::Null);
            changes.upserts.push(ObjectRow {
                key,
                state: verdict.state.as_str().to_string(),
                since: verdict.since,
                reason: verdict.reason.clone(),
                message: verdict.message.clone(),
                root_causes: verdict.root_causes.iter().map(|id| id.0.clone()).collect(),
                domains: next.domains.clone(),
                edges: next.edges.clone(),
                body,
            });
            self.verdicts.insert(verdict.id.clone(), next);
        }
        if still_present == self.verdicts.len() {
            return changes;
        }
        let present: HashSet<&ObjectId> = evaluation.objects.iter().map(|v| &v.id).collect();
        let gone: Vec<ObjectId> = self
            .verdicts
            .keys()
            .filter(|id| !present.contains(id))
            .filter(|id| id.parts().is_none_or(|p| !held.contains(p.0)))
            .cloned()
            .collect();
        for id in gone {
            self.verdicts.remove(&id);
            changes.deletes.push(key_of(&id));
        }
        changes
    }

    /// Root causes and domain verdicts of every cluster whose set changed.
    pub fn rollup_changes(
        &mut self,
        evaluation: &Evaluation,
        clusters: &[String],
    ) -> RollupChanges {
        let mut by_cluster: BTreeMap<&str, ClusterRollup> = clusters
            .iter()
            .map(|c| (c.as_str(), Default::default()))
            .collect();
        for cause in &evaluation.root_causes {
            let cluster = cause.id.parts().map_or("", |p| p.0);
            if let Some(entry) = by_cluster.get_mut(cluster) {
                entry.causes.push(RootCauseRow {
                    id: cause.id.0.clone(),
                    cluster: cluster.to_string(),
                    state: cause.state.as_str().to_string(),
                    since: cause.since,
                    reason: cause.reason.clone(),
                    message: cause.message.clone(),
                    affected: json!(cause.affected),
                });
            }
        }
        for domain in &evaluation.domains {
            if let Some(entry) = by_cluster.get_mut(domain.cluster.as_str()) {
                entry.domains.push(DomainRow {
                    domain: domain.domain.clone(),
                    cluster: domain.cluster.clone(),
                    version: domain.version.clone(),
                    state: domain.state.as_str().to_string(),
                    fully_healthy: domain.fully_healthy,
                    objects: domain.objects as i32,
                    healthy: domain.healthy as i32,
                    blockers: json!(domain.blockers),
                });
            }
        }
        for edge in &evaluation.dependencies {
            if let Some(entry) = by_cluster.get_mut(edge.cluster.as_str()) {
                entry.dependencies.push(edge.clone());
            }
        }
        for shared in &evaluation.co_ownerships {
            if let Some(entry) = by_cluster.get_mut(shared.cluster.as_str()) {
                entry.co_ownerships.push(shared.clone());
            }
        }
        let mut changes = RollupChanges::default();
        for (cluster, rollup) in by_cluster {
            if self.rollups.get(cluster) == Some(&rollup) {
                continue;
            }
            changes.clusters.push(cluster.to_string());
            changes.causes.extend(rollup.causes.iter().cloned());
            changes.domains.extend(rollup.domains.iter().cloned());
            changes
                .dependencies
                .extend(rollup.dependencies.iter().cloned());
            changes
                .co_ownerships
                .extend(rollup.co_ownerships.iter().cloned());
            self.rollups.insert(cluster.to_string(), rollup);
        }
        changes
    }

    /// Cluster rows (freshness, counts by state) that changed. A `held` cluster's row is only
    /// written once there is an error to report; until then the previous owner's row stands.
    pub fn cluster_changes(
        &mut self,
        evaluation: &Evaluation,
        snapshot: &Snapshot,
        held: &BTreeSet<String>,
        now: DateTime<Utc>,
    ) -> Vec<ClusterRow> {
        let mut counts: HashMap<&str, BTreeMap<&str, u64>> = HashMap::new();
        for verdict in &evaluation.objects {
            *counts
                .entry(verdict.cluster.as_str())
                .or_default()
                .entry(verdict.state.as_str())
                .or_default() += 1;
        }
        let mut controllers: HashMap<&str, Vec<&ObjectId>> = HashMap::new();
        for id in &evaluation.controllers {
            let cluster = id.parts().map_or("", |p| p.0);
            controllers.entry(cluster).or_default().push(id);
        }
        let mut rows = Vec::new();
        for info in snapshot.clusters() {
            if held.contains(&info.name) && info.error.is_none() {
                continue;
            }
            let row = ClusterRow {
                name: info.name.clone(),
                labels: json!(info.labels),
                last_good: info.last_good,
                error: info.error.clone(),
                kind_errors: json!(info.kind_errors),
                state_counts: json!(counts.get(info.name.as_str()).cloned().unwrap_or_default()),
                controllers: json!(
                    controllers
                        .get(info.name.as_str())
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

    /// Forgets what was written for a cluster another collector owns now.
    pub fn forget_cluster(&mut self, name: &str) {
        self.verdicts
            .retain(|id, _| id.parts().is_none_or(|p| p.0 != name));
        self.rollups.remove(name);
        self.clusters.remove(name);
    }

    /// Starts from what the store holds for a cluster just taken over, so only real changes
    /// become transitions and rows of objects that vanished meanwhile are deleted.
    pub fn seed(&mut self, records: &[ObjectRecord]) {
        for record in records {
            let Ok(kind) = record.kind.parse() else {
                continue;
            };
            let Ok(state) = record.state.parse() else {
                continue;
            };
            let root_causes = record
                .root_causes
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(|s| ObjectId(s.to_string())))
                .collect();
            let id = ObjectId::new(&record.cluster, kind, &record.namespace, &record.name);
            self.verdicts.insert(
                id,
                WrittenVerdict {
                    state,
                    since: record.since,
                    reason: record.reason.clone(),
                    message: record.message.clone(),
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
    }
}
