//! A round's database write, run as its own task: Postgres works on it on its core while the
//! runner applies events and prepares the next round on ours. What a write carries, and how a
//! failed one is put back in front of what was prepared meanwhile, so nothing is lost and each
//! row's latest change wins.

use super::rollups::RollupChanges;
use crate::health::CrdProvider;
use crate::model::Warning;
use crate::store::{
    ChangeSet, ClusterRow, SightingChanges, Store, record_crd_providers, upsert_clusters,
    write_changes, write_rollups, write_seen_in_progress, write_warnings,
};
use chrono::{DateTime, Utc};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// Everything one transaction writes.
#[derive(Debug, Default)]
pub struct Batch {
    pub changes: ChangeSet,
    pub rollups: RollupChanges,
    /// CRD providers seen but not yet recorded.
    pub providers: Vec<CrdProvider>,
    pub clusters: Vec<ClusterRow>,
    pub sightings: SightingChanges,
    /// Warning events heard since the last write.
    pub warnings: Vec<Warning>,
    pub now: DateTime<Utc>,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
            && self.rollups.is_empty()
            && self.providers.is_empty()
            && self.clusters.is_empty()
            && self.sightings.is_empty()
            && self.warnings.is_empty()
    }

    /// Rows counted in the write metrics (objects, transitions, clusters).
    pub fn rows(&self) -> usize {
        self.changes.len() + self.clusters.len()
    }
}

/// What a write that ended brings back.
pub struct Outcome {
    pub batch: Batch,
    pub result: Result<(), sqlx::Error>,
    pub took: Duration,
    /// When the write ended (committed, when it succeeded).
    pub ended: Instant,
}

/// The write under way, if any.
#[derive(Default)]
pub struct WriteBehind {
    task: Option<JoinHandle<Outcome>>,
}

impl WriteBehind {
    /// Starts writing `batch` in one transaction; the previous write must have been finished.
    pub fn start(&mut self, store: Store, batch: Batch) {
        debug_assert!(self.task.is_none(), "one write at a time, in round order");
        self.task = Some(tokio::spawn(async move {
            let started = Instant::now();
            let result = write(&store, &batch).await;
            let ended = Instant::now();
            Outcome {
                batch,
                result,
                took: ended - started,
                ended,
            }
        }));
    }

    pub fn is_running(&self) -> bool {
        self.task.is_some()
    }

    /// Waits for the write under way to end (none: `None` at once).
    pub async fn finish(&mut self) -> Option<Outcome> {
        let task = self.task.as_mut()?;
        let joined = task.await;
        self.task = None;
        match joined {
            Ok(outcome) => Some(outcome),
            // A panic in the write is the runner's panic, as when it wrote inline.
            Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            Err(error) => panic!("the round's write task was cancelled: {error}"),
        }
    }
}

/// The rows of `failed` followed by those prepared after it (`later`): an object's, a roll-up
/// row's, a CRD provider's or a cluster row's later change replaces the earlier one; all
/// transitions are kept, in order. Sightings are not carried: the runner derives them anew
/// from what it knows was stored.
pub fn put_back(failed: Batch, later: &mut Batch) {
    let Batch {
        mut changes,
        mut rollups,
        mut providers,
        mut clusters,
        mut warnings,
        ..
    } = failed;
    changes.absorb(std::mem::take(&mut later.changes));
    later.changes = changes;
    rollups.absorb(std::mem::take(&mut later.rollups));
    later.rollups = rollups;
    providers.retain(|old| {
        !later.providers.iter().any(|new| {
            (&new.cluster, &new.group, &new.kind) == (&old.cluster, &old.group, &old.kind)
        })
    });
    providers.append(&mut later.providers);
    later.providers = providers;
    clusters.retain(|old| !later.clusters.iter().any(|new| new.name == old.name));
    clusters.append(&mut later.clusters);
    later.clusters = clusters;
    // In order: a later copy of an event is written after (and over) the earlier one.
    warnings.append(&mut later.warnings);
    later.warnings = warnings;
}

async fn write(store: &Store, batch: &Batch) -> Result<(), sqlx::Error> {
    let mut tx = store.pool().begin().await?;
    write_changes(&mut tx, &batch.changes, batch.now).await?;
    if !batch.rollups.is_empty() {
        write_rollups(&mut tx, &batch.rollups.to_write(), batch.now).await?;
    }
    record_crd_providers(&mut tx, &batch.providers, batch.now).await?;
    upsert_clusters(&mut tx, &batch.clusters).await?;
    write_seen_in_progress(&mut tx, &batch.sightings).await?;
    write_warnings(&mut tx, &batch.warnings).await?;
    tx.commit().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::State;
    use crate::model::Kind;
    use crate::store::{JsonText, ObjectKey, ObjectRow, TransitionRow};

    fn key(name: &str) -> ObjectKey {
        ObjectKey {
            cluster: "c".into(),
            kind: Kind::Kustomization,
            namespace: "flux-system".into(),
            name: name.into(),
        }
    }

    fn row(name: &str, state: State) -> ObjectRow {
        ObjectRow {
            key: key(name),
            state,
            since: None,
            reason: String::new(),
            message: String::new(),
            root_causes: vec![],
            domains: vec![],
            body: JsonText::of(&()),
            edges: vec![],
        }
    }

    fn transition(name: &str, to: State) -> TransitionRow {
        TransitionRow {
            key: key(name),
            from: None,
            to,
            reason: String::new(),
            message: String::new(),
            at: Utc::now(),
        }
    }

    fn cluster(name: &str, error: &str) -> ClusterRow {
        ClusterRow {
            name: name.into(),
            labels: serde_json::json!({}),
            last_good: None,
            error: Some(error.into()),
            kind_errors: serde_json::json!({}),
            state_counts: crate::health::StateCounts::default(),
            controllers: serde_json::json!([]),
            updated_at: Utc::now(),
        }
    }

    #[test]
    fn a_failed_batch_goes_back_before_the_later_one_and_the_later_change_of_a_row_wins() {
        let mut failed = Batch::default();
        failed.changes.upserts = vec![row("a", State::Failed), row("b", State::Failed)];
        failed.changes.transitions = vec![transition("a", State::Failed)];
        failed.clusters = vec![cluster("c", "old"), cluster("d", "old")];
        let mut later = Batch::default();
        later.changes.upserts = vec![row("a", State::Healthy)];
        later.changes.transitions = vec![transition("a", State::Healthy)];
        later.clusters = vec![cluster("c", "new")];

        put_back(failed, &mut later);

        let upserts: Vec<_> = later
            .changes
            .upserts
            .iter()
            .map(|r| (r.key.name.as_str(), r.state))
            .collect();
        assert_eq!(upserts, [("b", State::Failed), ("a", State::Healthy)]);
        let transitions: Vec<_> = later.changes.transitions.iter().map(|t| t.to).collect();
        assert_eq!(
            transitions,
            [State::Failed, State::Healthy],
            "in round order"
        );
        let clusters: Vec<_> = later
            .clusters
            .iter()
            .map(|c| (c.name.as_str(), c.error.as_deref()))
            .collect();
        assert_eq!(clusters, [("d", Some("old")), ("c", Some("new"))]);
    }
}
