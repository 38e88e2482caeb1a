//! The collector's heart: applies source events to the snapshot, re-evaluates the clusters
//! that changed as soon as changes arrive (and those whose evaluation falls due, because time
//! alone turns `progressing` into `stuck`), and writes what changed to Postgres. A database
//! outage does not stop it: unwritten changes are kept (bounded) and written when the database
//! answers again.

use super::changes::Written;
use super::crd_history::CrdHistory;
use super::evaluations::{Evaluations, Round};
use super::ownership::{ClusterSet, Ownership, leases_changed};
use super::rollups::RollupChanges;
use super::round_log::{RoundLog, RoundRecord};
use super::schedule::{REFRESH, Schedule, Work};
use super::sightings::Sightings;
use super::{RunnerSettings, Snapshot};
use crate::health::CrdProvider;
use crate::health::{ClusterInfo, Fleet, Parts};
use crate::metrics;
use crate::sources::{EventReceiver, SourceEvent};
use crate::store::{
    ChangeSet, ObjectFilter, SightingChanges, Store, record_crd_providers, upsert_clusters,
    write_changes, write_rollups, write_seen_in_progress,
};
use chrono::{DateTime, Utc};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Most events applied before yielding to evaluation, so a flood cannot starve it.
const EVENTS_PER_ROUND: usize = 50_000;
/// Unwritten transitions kept while the database is down; beyond this the oldest are dropped
/// (and counted in the log), so an outage cannot exhaust memory.
const MAX_PENDING_TRANSITIONS: usize = 1_000_000;

/// The newest evaluation, for in-process readers (alerts, tests).
pub type Latest = watch::Receiver<Arc<Evaluated>>;

#[derive(Debug, Default)]
pub struct Evaluated {
    /// Every cluster's evaluation, shared with the runner (`Fleet::merged` gives the fleet's
    /// as one). The same `Arc` from one publication to the next while no verdict changed.
    pub fleet: Arc<Fleet>,
    pub at: Option<DateTime<Utc>>,
    /// The clusters re-evaluated for this publication (none when only time moved on).
    pub reevaluated: BTreeSet<String>,
}

/// Where a round's time went, phase by phase (read by the growth bench).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RoundTimes {
    /// Re-evaluating the clusters that changed or fell due.
    pub evaluate: Duration,
    /// Turning the evaluations into rows to write, and publishing.
    pub changes: Duration,
    /// The database transaction.
    pub write: Duration,
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
    /// Each cluster's latest evaluation.
    evaluations: Evaluations,
    /// Clusters whose first sightings changed in the last round: the engine reads them.
    resighted: BTreeSet<String>,
    /// Clusters to look at again next round although no source reported on them: their
    /// recorded CRD providers changed, or their lease was lost.
    revisit: BTreeSet<String>,
    /// When the evaluation was last published.
    published: Option<Instant>,
    /// The last round's phases.
    last_round: RoundTimes,
    /// Time spent applying events since the last round began.
    applying: Duration,
    /// When the first event since the last round began was taken up.
    first_event: Option<Instant>,
    rounds: watch::Sender<RoundLog>,
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
            evaluations: Evaluations::default(),
            resighted: BTreeSet::new(),
            revisit: BTreeSet::new(),
            published: None,
            last_round: RoundTimes::default(),
            applying: Duration::ZERO,
            first_event: None,
            rounds: watch::channel(RoundLog::default()).0,
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

    /// What the rounds did, updated after each.
    pub fn rounds(&self) -> watch::Receiver<RoundLog> {
        self.rounds.subscribe()
    }

    /// Runs until every event sender is gone.
    pub async fn run(mut self, mut events: EventReceiver) {
        let mut schedule = Schedule::new();
        let mut dirty = true;
        self.follow_leases().await;
        loop {
            let work = Work {
                changed: dirty,
                unwritten: !self.pending.is_empty(),
                due: self.evaluations.next_due().map(instant_of),
            };
            let next = schedule.next(work, Instant::now());
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
                    let applying = Instant::now();
                    self.first_event.get_or_insert(applying);
                    dirty |= self.apply(event);
                    let mut budget = EVENTS_PER_ROUND;
                    while budget > 0 {
                        let Ok(event) = events.try_recv() else { break };
                        dirty |= self.apply(event);
                        budget -= 1;
                    }
                    self.applying += applying.elapsed();
                }
                _ = tokio::time::sleep_until(next.into()) => {
                    schedule.started(Instant::now());
                    dirty = false;
                    self.run_round(Utc::now()).await;
                    schedule.ended(Instant::now());
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
            // Its evaluation is forgotten next round.
            self.revisit.insert(cluster.clone());
            self.written.forget_cluster(&cluster);
            let pending = &mut self.pending;
            pending.upserts.retain(|r| r.key.cluster != cluster);
            pending.deletes.retain(|k| k.cluster != cluster);
            pending.transitions.retain(|t| t.key.cluster != cluster);
            self.pending_rollups.forget(&cluster);
            self.sightings.forget_cluster(&cluster);
            metrics::set_cluster_held(&cluster, false);
            metrics::set_objects_tracked(&cluster, |_| 0);
            metrics::cluster_evaluated(&cluster, None);
            metrics::set_cluster_last_good(&cluster, None);
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

    /// Where the last round's time went.
    pub fn last_round(&self) -> RoundTimes {
        self.last_round
    }

    /// Re-evaluates the clusters that changed or fell due, writes what changed and publishes
    /// the evaluation when a verdict may have changed or `REFRESH` has passed since the last.
    #[tracing::instrument(skip_all)]
    pub async fn run_round(&mut self, now: DateTime<Utc>) {
        let round_started = Instant::now();
        self.crd_history.load_once(&self.store).await;
        if self.ownership.is_none() {
            self.sightings.load_all_once(&self.store).await;
        }
        let touched = self.snapshot.take_touched();
        let mut changed = std::mem::take(&mut self.resighted);
        // Each cluster's name copied once, not once per touched object.
        let touched_clusters: BTreeSet<&str> = touched
            .iter()
            .filter_map(|id| id.parts())
            .map(|(cluster, ..)| cluster)
            .collect();
        for &cluster in &touched_clusters {
            metrics::set_objects_tracked(cluster, |kind| self.snapshot.tracked(cluster, kind));
        }
        changed.extend(touched_clusters.into_iter().map(str::to_string));
        let reported = self.snapshot.take_reported();
        // Only these clusters' objects or infos can have changed (or their evaluation fell
        // due): the round looks at them alone, however many clusters are held.
        let candidates: BTreeSet<String> = changed
            .iter()
            .chain(&reported)
            .chain(&std::mem::take(&mut self.revisit))
            .map(String::as_str)
            .chain(self.evaluations.due_by(now))
            .map(str::to_string)
            .collect();
        let evaluating = Instant::now();
        let redone = tokio::task::block_in_place(|| {
            let mut clusters: Vec<_> = candidates
                .iter()
                .filter_map(|c| self.snapshot.cluster(c).cloned())
                .collect();
            self.crd_history.inject(&mut clusters);
            let round = Round {
                objects: candidates
                    .iter()
                    .filter_map(|c| Some((c.as_str(), self.snapshot.objects_of(c)?)))
                    .collect(),
                infos: &clusters,
                only: Some(&candidates),
                domains: &self.settings.domains,
                thresholds: &self.settings.thresholds,
                seen_in_progress: self.sightings.seen(),
                now,
            };
            self.evaluations.update(&round, &changed)
        });
        let diffing = Instant::now();
        let held = self
            .ownership
            .as_ref()
            .map(|o| o.held.clone())
            .unwrap_or_default();
        let mut changes = ChangeSet::default();
        for cluster in redone.evaluated.iter().filter(|c| !held.contains(*c)) {
            let evaluation = self.evaluations.of(cluster);
            self.written.object_changes(
                cluster,
                evaluation,
                &self.snapshot,
                &touched,
                now,
                &mut changes,
            );
        }
        let evaluations = &self.evaluations;
        let reevaluated = redone.evaluated.iter().filter_map(|c| evaluations.of(c));
        self.resighted = self.sightings.observe(reevaluated, &changes.deletes, now);
        let ready: Vec<String> = redone
            .evaluated
            .iter()
            .filter(|c| self.snapshot.cluster(c).is_some() && !held.contains(*c))
            .cloned()
            .collect();
        let rollups = self.written.rollup_changes(&self.evaluations, &ready);
        let clusters = self.written.cluster_changes(
            &self.evaluations,
            &redone.evaluated,
            &reported,
            &self.snapshot,
            &held,
            now,
        );
        self.pending.absorb(changes);
        self.pending_rollups.absorb(rollups);
        let fleet = if redone.changed.is_empty() {
            self.latest.borrow().fleet.clone()
        } else {
            Arc::new(self.evaluations.fleet())
        };
        let providers = fleet.parts().flat_map(|e| &e.crd_providers);
        // One row per CRD in a batch: a newer sighting replaces an unwritten older one.
        for provider in self.crd_history.observe(providers, now) {
            // The history the engine is given for that cluster changed.
            self.revisit.insert(provider.cluster.clone());
            self.pending_providers.retain(|p| {
                (&p.cluster, &p.group, &p.kind)
                    != (&provider.cluster, &provider.group, &provider.kind)
            });
            self.pending_providers.push(provider);
        }
        self.bound_pending();
        for cluster in &redone.evaluated {
            let found = self
                .evaluations
                .of(cluster)
                .map(|e| (self.written.state_counts(cluster), e.domains.as_slice()));
            metrics::cluster_evaluated(cluster, found);
        }
        for cluster in &reported {
            let last_good = self.snapshot.cluster(cluster).and_then(|i| i.last_good);
            metrics::set_cluster_last_good(cluster, last_good);
        }
        let rows = self.pending.len() + clusters.len();
        let sightings = self.sightings.changes();
        let started = Instant::now();
        let written = self.write(&clusters, &sightings, now).await;
        let write_ended = Instant::now();
        let write = write_ended - started;
        let wrote = rows > 0 || !self.pending_rollups.is_empty();
        let committed = (wrote && written.is_ok()).then_some(write_ended);
        if wrote {
            metrics::write_batch(rows, write, written.is_ok());
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
        let publishing = Instant::now();
        let evaluated = redone.evaluated.len();
        let refresh = self.published.is_none_or(|at| at.elapsed() >= REFRESH);
        if !redone.changed.is_empty() || refresh {
            self.published = Some(Instant::now());
            self.latest.send_replace(Arc::new(Evaluated {
                fleet,
                at: Some(now),
                reevaluated: redone.evaluated,
            }));
        }
        self.last_round = RoundTimes {
            evaluate: diffing - evaluating,
            changes: started - diffing + publishing.elapsed(),
            write,
        };
        let record = RoundRecord {
            times: self.last_round,
            apply: std::mem::take(&mut self.applying),
            objects: touched.len(),
            clusters: evaluated,
            first_event: self.first_event.take(),
            started: Some(round_started),
            committed,
        };
        self.rounds.send_modify(|log| log.push(record));
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
            write_rollups(&mut tx, &self.pending_rollups.to_write(), now).await?;
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

/// The instant on the runtime's clock for a UTC time (now when it is past).
fn instant_of(at: DateTime<Utc>) -> Instant {
    let ahead = (at - Utc::now()).to_std().unwrap_or_default();
    Instant::now() + ahead
}
