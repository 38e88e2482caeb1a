//! Each cluster's roll-ups (root causes, domain verdicts, cross-stack edges) as last handed to
//! the store, and the rows that changed since: a round writes the roll-up rows that differ,
//! not every re-evaluated cluster's roll-ups again.

use super::evaluations::Evaluations;
use crate::health::{CoOwnership, Dependency, Evaluation};
use crate::model::ObjectId;
use crate::store::{DomainRow, ObjectVerdict, RollupWrite, RootCauseRow, RowChanges};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What each cluster's roll-ups were last handed to the store as.
#[derive(Debug, Default)]
pub struct WrittenRollups {
    clusters: HashMap<String, ClusterRollup>,
}

/// One cluster's roll-up rows, from its evaluation.
#[derive(Debug, Default, PartialEq)]
struct ClusterRollup {
    causes: Vec<RootCauseRow>,
    domains: Vec<DomainRow>,
    dependencies: Vec<Dependency>,
    co_ownerships: Vec<CoOwnership>,
}

/// A pending row: to write (new or changed), or gone (deleted when written).
#[derive(Debug, Clone, PartialEq)]
enum Change<T> {
    Write(T),
    Gone(T),
}

/// Rows of one table not yet written, by key: a later change of a row replaces an earlier one,
/// so after a failed write the next carries each row's latest change.
type Pending<K, T> = BTreeMap<K, Change<T>>;

/// Roll-up rows not yet written.
#[derive(Debug, Default)]
pub struct RollupChanges {
    /// Clusters whose stored rows the runner does not know (first written by it): their stored
    /// rows not written now are deleted.
    replaced: BTreeSet<String>,
    /// By (cluster, root cause id).
    causes: Pending<(String, String), RootCauseRow>,
    /// By (cluster, domain).
    domains: Pending<(String, String), DomainRow>,
    /// By (cluster, provider, consumer, object): the edge is its own key.
    dependencies: Pending<(String, String, String, String), Dependency>,
    /// By (cluster, object).
    co_ownerships: Pending<(String, String), CoOwnership>,
}

impl RollupChanges {
    pub fn is_empty(&self) -> bool {
        self.replaced.is_empty()
            && self.causes.is_empty()
            && self.domains.is_empty()
            && self.dependencies.is_empty()
            && self.co_ownerships.is_empty()
    }

    /// Drops what was pending for a cluster another collector owns now.
    pub fn forget(&mut self, cluster: &str) {
        self.replaced.remove(cluster);
        self.causes.retain(|(c, _), _| c != cluster);
        self.domains.retain(|(c, _), _| c != cluster);
        self.dependencies.retain(|(c, ..), _| c != cluster);
        self.co_ownerships.retain(|(c, _), _| c != cluster);
    }

    /// Merges a later set in; the later change of a row wins.
    pub fn absorb(&mut self, later: RollupChanges) {
        self.replaced.extend(later.replaced);
        self.causes.extend(later.causes);
        self.domains.extend(later.domains);
        self.dependencies.extend(later.dependencies);
        self.co_ownerships.extend(later.co_ownerships);
    }

    /// The rows to write, borrowed.
    pub fn to_write(&self) -> RollupWrite<'_> {
        RollupWrite {
            replaced: self.replaced.iter().cloned().collect(),
            causes: row_changes(&self.causes),
            domains: row_changes(&self.domains),
            dependencies: row_changes(&self.dependencies),
            co_ownerships: row_changes(&self.co_ownerships),
        }
    }
}

fn row_changes<K, T>(pending: &Pending<K, T>) -> RowChanges<'_, T> {
    let mut rows = RowChanges::default();
    for change in pending.values() {
        match change {
            Change::Write(row) => rows.write.push(row),
            Change::Gone(row) => rows.gone.push(row),
        }
    }
    rows
}

impl WrittenRollups {
    /// The roll-up rows of each of `clusters` (re-evaluated this round) that changed since
    /// they were last handed to the store; a cluster never handed over is written whole.
    pub fn changes(&mut self, evaluations: &Evaluations, clusters: &[String]) -> RollupChanges {
        let mut changes = RollupChanges::default();
        let unknown = ClusterRollup::default();
        for cluster in clusters {
            let rollup = evaluations
                .of(cluster)
                .map(|e| rollup_of(cluster, e))
                .unwrap_or_default();
            let before = match self.clusters.get(cluster) {
                Some(before) if *before == rollup => continue,
                Some(before) => before,
                None => {
                    changes.replaced.insert(cluster.clone());
                    &unknown
                }
            };
            diff(
                &before.causes,
                &rollup.causes,
                |r| (r.verdict.cluster.clone(), r.verdict.id.to_string()),
                &mut changes.causes,
            );
            diff(
                &before.domains,
                &rollup.domains,
                |r| (r.cluster.clone(), r.domain.clone()),
                &mut changes.domains,
            );
            diff(
                &before.dependencies,
                &rollup.dependencies,
                |d| {
                    let (provider, consumer) = (d.provider.to_string(), d.consumer.to_string());
                    (d.cluster.clone(), provider, consumer, d.object.clone())
                },
                &mut changes.dependencies,
            );
            diff(
                &before.co_ownerships,
                &rollup.co_ownerships,
                |c| (c.cluster.clone(), c.object.clone()),
                &mut changes.co_ownerships,
            );
            self.clusters.insert(cluster.clone(), rollup);
        }
        changes
    }

    /// Forgets what was written for a cluster another collector owns now.
    pub fn forget_cluster(&mut self, name: &str) {
        self.clusters.remove(name);
    }
}

/// Adds to `pending` the rows of `after` not equal to their key's row in `before`, and the
/// rows of `before` whose key is not in `after`.
fn diff<K: Ord + std::hash::Hash, T: Clone + PartialEq>(
    before: &[T],
    after: &[T],
    key: impl Fn(&T) -> K,
    pending: &mut Pending<K, T>,
) {
    let mut old: HashMap<K, &T> = before.iter().map(|row| (key(row), row)).collect();
    for row in after {
        let key = key(row);
        if old.remove(&key) != Some(row) {
            pending.insert(key, Change::Write(row.clone()));
        }
    }
    for (key, row) in old {
        pending.insert(key, Change::Gone(row.clone()));
    }
}

/// One cluster's roll-up rows, from its evaluation.
fn rollup_of(cluster: &str, evaluation: &Evaluation) -> ClusterRollup {
    let causes = evaluation
        .root_causes
        .iter()
        .filter(|cause| cause.id.parts().map_or("", |p| p.0) == cluster)
        .map(|cause| RootCauseRow {
            verdict: ObjectVerdict::new(
                cause.id.clone(),
                cause.state,
                cause.since,
                cause.reason.clone(),
                cause.message.clone(),
            ),
            cause: cause.cause.clone(),
            affected: id_strings(&cause.affected),
        })
        .collect();
    let domains = evaluation
        .domains
        .iter()
        .filter(|domain| domain.cluster == cluster)
        .map(|domain| DomainRow {
            domain: domain.domain.clone(),
            cluster: domain.cluster.clone(),
            version: domain.version.clone(),
            offered: domain.offered.clone(),
            state: domain.state,
            fully_healthy: domain.fully_healthy,
            objects: domain.objects as i32,
            healthy: domain.healthy as i32,
            blockers: id_strings(&domain.blockers),
        })
        .collect();
    ClusterRollup {
        causes,
        domains,
        dependencies: evaluation
            .dependencies
            .iter()
            .filter(|edge| edge.cluster == cluster)
            .cloned()
            .collect(),
        co_ownerships: evaluation
            .co_ownerships
            .iter()
            .filter(|shared| shared.cluster == cluster)
            .cloned()
            .collect(),
    }
}

fn id_strings(ids: &[ObjectId]) -> Vec<String> {
    ids.iter().map(|id| id.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::State;

    fn cause(name: &str, message: &str) -> RootCauseRow {
        RootCauseRow {
            verdict: ObjectVerdict::new(
                format!("a/Kustomization/flux-system/{name}")
                    .parse::<ObjectId>()
                    .unwrap(),
                State::Failed,
                None,
                "BuildFailed".into(),
                message.into(),
            ),
            cause: Default::default(),
            affected: Vec::new(),
        }
    }

    fn causes_of(changes: &[Vec<RootCauseRow>]) -> RollupChanges {
        let mut pending = RollupChanges::default();
        for pair in changes.windows(2) {
            let mut later = RollupChanges::default();
            diff(
                &pair[0],
                &pair[1],
                |r| (r.verdict.cluster.clone(), r.verdict.id.to_string()),
                &mut later.causes,
            );
            pending.absorb(later);
        }
        pending
    }

    fn messages(rows: &[&RootCauseRow]) -> Vec<String> {
        rows.iter()
            .map(|r| format!("{} {}", r.verdict.id, r.verdict.message))
            .collect()
    }

    /// Writes that failed pile up: the retried write carries each row's latest change.
    #[test]
    fn a_retried_write_carries_each_rows_latest_change() {
        let (one, two) = (cause("one", "m"), cause("two", "m"));
        let pending = causes_of(&[
            vec![],
            vec![one.clone(), two.clone()],
            vec![cause("two", "changed")],
            vec![cause("two", "changed"), cause("three", "m")],
        ]);
        let write = pending.to_write();
        assert_eq!(
            messages(&write.causes.write),
            vec![
                "a/Kustomization/flux-system/three m",
                "a/Kustomization/flux-system/two changed"
            ]
        );
        assert_eq!(
            messages(&write.causes.gone),
            vec!["a/Kustomization/flux-system/one m"]
        );
    }

    #[test]
    fn an_unchanged_row_is_not_written_and_a_forgotten_cluster_writes_nothing() {
        let rows = vec![cause("one", "m")];
        let mut pending = causes_of(&[rows.clone(), rows]);
        assert!(pending.is_empty());
        pending.absorb(causes_of(&[vec![], vec![cause("one", "m")]]));
        pending.replaced.insert("a".into());
        assert!(!pending.is_empty());
        pending.forget("a");
        assert!(pending.is_empty());
    }
}
