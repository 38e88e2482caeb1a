//! The collector's heart: applies source events to the snapshot, evaluates when something
//! changed (and every few seconds, because time alone turns `progressing` into `stuck`), and
//! writes what changed to Postgres. A database outage does not stop it: unwritten changes are
//! kept (bounded) and written when the database answers again.

use super::changes::{RollupChanges, Written};
use super::domains::domain_members;
use super::{FleetSettings, Snapshot};
use crate::health::{self, Evaluation, Input};
use crate::sources::{EventReceiver, SourceEvent};
use crate::store::{ChangeSet, Store, replace_rollups, upsert_clusters, write_changes};
use chrono::{DateTime, Utc};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How often the runner looks for work; bounds how long a change waits to be evaluated.
const TICK: Duration = Duration::from_millis(200);
/// Re-evaluate at least this often even when nothing arrived (thresholds expire with time).
const IDLE_EVALUATION: Duration = Duration::from_secs(5);
/// Most events applied before yielding to evaluation, so a flood cannot starve it.
const EVENTS_PER_ROUND: usize = 50_000;
/// Unwritten transitions kept while the database is down; beyond this the oldest are dropped
/// (and counted in the log), so an outage cannot exhaust memory.
const MAX_PENDING_TRANSITIONS: usize = 1_000_000;

/// The newest evaluation, for in-process readers (alerts, tests).
pub type Latest = watch::Receiver<Arc<Evaluated>>;

#[derive(Debug, Default)]
pub struct Evaluated {
    pub evaluation: Evaluation,
    pub at: Option<DateTime<Utc>>,
}

pub struct Runner {
    snapshot: Snapshot,
    settings: FleetSettings,
    store: Store,
    written: Written,
    pending: ChangeSet,
    pending_rollups: RollupChanges,
    latest: watch::Sender<Arc<Evaluated>>,
}

impl Runner {
    pub fn new(settings: FleetSettings, store: Store) -> (Runner, Latest) {
        let (latest, receiver) = watch::channel(Arc::new(Evaluated::default()));
        let runner = Runner {
            snapshot: Snapshot::new(settings.cluster_infos()),
            settings,
            store,
            written: Written::default(),
            pending: ChangeSet::default(),
            pending_rollups: RollupChanges::default(),
            latest,
        };
        (runner, receiver)
    }

    /// Runs until every event sender is gone.
    pub async fn run(mut self, mut events: EventReceiver) {
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut dirty = true;
        let mut last_evaluation = Instant::now();
        loop {
            tokio::select! {
                event = events.recv() => {
                    let Some(event) = event else { break };
                    dirty |= self.apply(event);
                    let mut budget = EVENTS_PER_ROUND;
                    while budget > 0 {
                        let Ok(event) = events.try_recv() else { break };
                        dirty |= self.apply(event);
                        budget -= 1;
                    }
                }
                _ = tick.tick() => {
                    if dirty || last_evaluation.elapsed() >= IDLE_EVALUATION || !self.pending.is_empty() {
                        self.evaluate_and_write(Utc::now()).await;
                        dirty = false;
                        last_evaluation = Instant::now();
                    }
                }
            }
        }
        // Flush what the sources said before they stopped.
        self.evaluate_and_write(Utc::now()).await;
    }

    /// Applies one source event to the snapshot; returns whether anything changed.
    pub fn apply(&mut self, event: SourceEvent) -> bool {
        self.snapshot.apply(event)
    }

    #[tracing::instrument(skip_all)]
    pub async fn evaluate_and_write(&mut self, now: DateTime<Utc>) {
        let evaluation = tokio::task::block_in_place(|| {
            let clusters: Vec<_> = self.snapshot.clusters().cloned().collect();
            health::evaluate(&Input {
                objects: self.snapshot.objects(),
                clusters: &clusters,
                domains: &self.settings.domains,
                thresholds: &self.settings.thresholds,
                now,
            })
        });
        let touched = self.snapshot.take_touched();
        let members = tokio::task::block_in_place(|| {
            let clusters: Vec<_> = self.snapshot.clusters().cloned().collect();
            domain_members(&self.settings.domains, &clusters, self.snapshot.objects())
        });
        let changes =
            self.written
                .object_changes(&evaluation, &self.snapshot, &touched, &members, now);
        let rollups = self
            .written
            .rollup_changes(&evaluation, &self.snapshot.cluster_names());
        let clusters = self
            .written
            .cluster_changes(&evaluation, &self.snapshot, now);
        self.pending.absorb(changes);
        self.pending_rollups.absorb(rollups);
        self.bound_pending();
        match self.write(&clusters, now).await {
            Ok(()) => {
                self.pending = ChangeSet::default();
                self.pending_rollups = RollupChanges::default();
            }
            Err(error) => {
                tracing::warn!(%error, pending = self.pending.len(), "database write failed; keeping changes to retry");
                self.written.forget_clusters();
            }
        }
        self.latest.send_replace(Arc::new(Evaluated {
            evaluation,
            at: Some(now),
        }));
    }

    async fn write(
        &self,
        clusters: &[crate::store::ClusterRow],
        now: DateTime<Utc>,
    ) -> Result<(), sqlx::Error> {
        if self.pending.is_empty() && self.pending_rollups.is_empty() && clusters.is_empty() {
            return Ok(());
        }
        let mut tx = self.store.pool().begin().await?;
        write_changes(&mut tx, &self.pending, now).await?;
        if !self.pending_rollups.is_empty() {
            let r = &self.pending_rollups;
            replace_rollups(&mut tx, &r.clusters, &r.causes, &r.domains, now).await?;
        }
        upsert_clusters(&mut tx, clusters).await?;
        tx.commit().await
    }

    fn bound_pending(&mut self) {
        let excess = self
            .pending
            .transitions
            .len()
            .saturating_sub(MAX_PENDING_TRANSITIONS);
        if excess > 0 {
            self.pending.transitions.drain(..excess);
            tracing::error!(
                dropped = excess,
                "database down too long: dropped the oldest unwritten transitions"
            );
        }
    }
}
