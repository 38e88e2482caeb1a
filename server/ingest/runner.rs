//! The collector's heart: applies source events to the snapshot, evaluates when something
//! changed (and every few seconds, because time alone turns `progressing` into `stuck`), and
//! writes what changed to Postgres. A database outage does not stop it: unwritten changes are
//! kept (bounded) and written when the database answers again.

use super::changes::{RollupChanges, Written};
use super::crd_history::CrdHistory;
use super::ownership::{ClusterSet, Ownership, leases_changed};
use super::sightings::Sightings;
use super::{RunnerSettings, Snapshot};
use crate::health::CrdProvider;
use crate::health::{self, ClusterInfo, Evaluation, Input};
use crate::metrics;
use crate::sources::{EventReceiver, SourceEvent};
use crate::store::{
    ChangeSet, ObjectFilter, SightingChanges, Store, record_crd_providers, replace_dependencies,
    replace_rollups, upsert_clusters, write_changes, write_seen_in_progress,
};
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
    settings: RunnerSettings,
    store: Store,
    written: Written,
    pending: ChangeSet,
    pending_rollups: RollupChanges,
    latest: watch::Sender<Arc<Evaluated>>,
    /// Set when collectors share the fleet: only leased clusters are collected and written.
    ownership: Option<Ownership>,
    crd_history: CrdHistory,
    /// CRD providers seen but not yet recorded.
    pending_providers: Vec<CrdProvider>,
    /// When each object now in progress was first seen so (for work without a start time).
    sightings: Sightings,
}

impl Runner {
    pub fn new(settings: RunnerSettings, store: Store) -> (Runner, Latest) {
        let (latest, receiver) = watch::channel(Arc::new(Evaluated::default()));
        let runner = Runner {
            snapshot: Snapshot::new(settings.cluster_infos()),
            settings,
            store,
            written: Written::default(),
            pending: ChangeSet::default(),
            pending_rollups: RollupChanges::default(),
            latest,
            ownership: None,
            crd_history: CrdHistory::default(),
            pending_providers: Vec::new(),
            sightings: Sightings::default(),
        };
        (runner, receiver)
    }

    /// Collects and writes only the clusters in `leases` (kept up to date by the lease keeper).
    /// Returns the clusters the sources should collect: each is adopted here first.
    pub fn with_leases(
        mut self,
        leases: watch::Receiver<ClusterSet>,
    ) -> (Runner, watch::Receiver<ClusterSet>) {
        let (ownership, collect) = Ownership::new(leases);
        self.snapshot = Snapshot::default();
        self.ownership = Some(ownership);
        (self, collect)
    }

    /// Runs until every event sender is gone.
    pub async fn run(mut self, mut events: EventReceiver) {
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut dirty = true;
        let mut last_evaluation = Instant::now();
        self.follow_leases().await;
        loop {
            tokio::select! {
                alive = leases_changed(&mut self.ownership) => {
                    if !alive {
                        self.ownership = None;
                        break;
                    }
                    self.follow_leases().await;
                    dirty = true;
                }
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
                        self.run_round(Utc::now()).await;
                        dirty = false;
                        last_evaluation = Instant::now();
                    }
                }
            }
        }
        // Flush what the sources said before they stopped.
        self.run_round(Utc::now()).await;
    }

    /// Applies one source event to the snapshot; returns whether anything changed.
    pub fn apply(&mut self, event: SourceEvent) -> bool {
        let mut changed = false;
        if let Some(ownership) = &mut self.ownership {
            if !ownership.accepts(&event) {
                return false;
            }
            if let Some(cluster) = ownership.heard_from(&event) {
                self.snapshot.touch_cluster(&cluster);
                changed = true;
            }
        }
        self.snapshot.apply(event) || changed
    }

    /// Adopts clusters whose lease was won and drops those whose lease was lost.
    #[tracing::instrument(skip_all)]
    async fn follow_leases(&mut self) {
        let Some(ownership) = &mut self.ownership else {
            return;
        };
        let change = ownership.change();
        for cluster in change.lost {
            tracing::info!(%cluster, "lease lost: no longer collecting");
            ownership.drop_cluster(&cluster);
            self.snapshot.drop_cluster(&cluster);
            self.written.forget_cluster(&cluster);
            let pending = &mut self.pending;
            pending.upserts.retain(|r| r.key.cluster != cluster);
            pending.deletes.retain(|k| k.cluster != cluster);
            pending.transitions.retain(|t| t.key.cluster != cluster);
            self.pending_rollups.forget(&cluster);
            self.sightings.forget_cluster(&cluster);
            metrics::set_cluster_held(&cluster, false);
        }
        for cluster in change.gained {
            tracing::info!(%cluster, "lease won: collecting");
            let filter = ObjectFilter {
                cluster: Some(cluster.clone()),
                limit: i64::MAX,
                ..ObjectFilter::default()
            };
            match self.store.objects(&filter).await {
                Ok(page) => self.written.seed(&page.items),
                Err(error) => {
                    tracing::warn!(%cluster, %error, "cannot read what the previous collector wrote; starting afresh");
                }
            }
            self.sightings.restore(&self.store, Some(&cluster)).await;
            self.snapshot.add_cluster(ClusterInfo {
                name: cluster.clone(),
                labels: self
                    .settings
                    .cluster_labels
                    .get(&cluster)
                    .cloned()
                    .unwrap_or_default(),
                ..ClusterInfo::default()
            });
            ownership.adopt(&cluster);
            metrics::set_cluster_held(&cluster, true);
        }
    }

    #[tracing::instrument(skip_all)]
    pub async fn run_round(&mut self, now: DateTime<Utc>) {
        self.crd_history.load_once(&self.store).await;
        if self.ownership.is_none() {
            self.sightings.load_all_once(&self.store).await;
        }
        let evaluation = tokio::task::block_in_place(|| {
            let mut clusters: Vec<_> = self.snapshot.clusters().cloned().collect();
            self.crd_history.inject(&mut clusters);
            health::evaluate(&Input {
                objects: self.snapshot.objects(),
                clusters: &clusters,
                domains: &self.settings.domains,
                thresholds: &self.settings.thresholds,
                now,
                seen_in_progress: self.sightings.seen(),
            })
        });
        let touched = self.snapshot.take_touched();
        let held = self
            .ownership
            .as_ref()
            .map(|o| o.held.clone())
            .unwrap_or_default();
        let changes =
            self.written
                .object_changes(&evaluation, &self.snapshot, &touched, &held, now);
        self.sightings.observe(&evaluation, &changes.deletes, now);
        let mut ready = self.snapshot.cluster_names();
        ready.retain(|c| !held.contains(c));
        let rollups = self.written.rollup_changes(&evaluation, &ready);
        let clusters = self
            .written
            .cluster_changes(&evaluation, &self.snapshot, &held, now);
        self.pending.absorb(changes);
        self.pending_rollups.absorb(rollups);
        // One row per CRD in a batch: a newer sighting replaces an unwritten older one.
        for provider in self.crd_history.observe(&evaluation.crd_providers, now) {
            self.pending_providers.retain(|p| {
                (&p.cluster, &p.group, &p.kind)
                    != (&provider.cluster, &provider.group, &provider.kind)
            });
            self.pending_providers.push(provider);
        }
        self.bound_pending();
        metrics::set_objects_tracked(self.snapshot.tracked());
        metrics::evaluated(&evaluation, self.snapshot.clusters());
        let rows = self.pending.len() + clusters.len();
        let sightings = self.sightings.changes();
        let started = Instant::now();
        let written = self.write(&clusters, &sightings, now).await;
        if rows > 0 || !self.pending_rollups.is_empty() {
            metrics::write_batch(rows, started.elapsed(), written.is_ok());
        }
        match written {
            Ok(()) => {
                self.sightings.written(sightings);
                self.pending = ChangeSet::default();
                self.pending_rollups = RollupChanges::default();
                self.pending_providers.clear();
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
        sightings: &SightingChanges,
        now: DateTime<Utc>,
    ) -> Result<(), sqlx::Error> {
        if self.pending.is_empty()
            && self.pending_rollups.is_empty()
            && clusters.is_empty()
            && self.pending_providers.is_empty()
            && sightings.is_empty()
        {
            return Ok(());
        }
        let mut tx = self.store.pool().begin().await?;
        write_changes(&mut tx, &self.pending, now).await?;
        if !self.pending_rollups.is_empty() {
            let r = &self.pending_rollups;
            replace_rollups(&mut tx, &r.clusters, &r.causes, &r.domains, now).await?;
            replace_dependencies(&mut tx, &r.clusters, &r.dependencies, &r.co_ownerships).await?;
        }
        record_crd_providers(&mut tx, &self.pending_providers, now).await?;
        upsert_clusters(&mut tx, clusters).await?;
        write_seen_in_progress(&mut tx, sightings).await?;
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
