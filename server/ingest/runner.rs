//! The collector's heart: applies source events to the snapshot, re-evaluates the clusters
//! that changed as soon as changes arrive (and those whose evaluation falls due, because time
//! alone turns `progressing` into `stuck`), and writes what changed to Postgres. A database
//! outage does not stop it: unwritten changes are kept (bounded) and written when the database
//! answers again. A round's write runs while the next round is prepared (`write_behind`); the
//! next round's own write starts only after it, so rounds are written in order.

use super::changes::Written;
use super::crd_history::CrdHistory;
use super::evaluations::{Evaluations, Redone};
use super::free_aside::FreeAside;
use super::ownership::{ClusterSet, Ownership, leases_changed};
use super::round_log::{RoundLog, RoundRecord};
use super::round_phases::{
    Candidates, RoundSources, RowDiff, TouchedByCluster, collect_changes, diffed_clusters,
    evaluate_candidates, group_by_cluster,
};
use super::schedule::{REFRESH, Schedule, Work};
use super::sightings::Sightings;
use super::write_behind::{Batch, Outcome, WriteBehind, put_back};
use super::{RunnerSettings, Snapshot};
use crate::health::{ClusterInfo, Fleet, Parts};
use crate::metrics;
use crate::sources::{EventReceiver, SourceEvent};
use crate::store::{ChangeSet, ClusterRow, ObjectFilter, ObjectKey, Store};
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
    /// Clusters whose evaluation is no evidence yet (their first full list has not completed,
    /// or a lease brought them and no source has reported on them): neither written nor
    /// alerted on.
    pub held_back: BTreeSet<String>,
}

/// Where a round's time went, phase by phase (read by the growth bench).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RoundTimes {
    /// Re-evaluating the clusters that changed or fell due.
    pub evaluate: Duration,
    /// Turning the evaluations into rows to write, and the publication.
    pub changes: Duration,
    /// The database transaction (it runs beside the next round's evaluate and changes).
    pub write: Duration,
    /// Waiting for the previous round's write to end before this round's could start.
    pub waited: Duration,
}

impl RoundTimes {
    /// The times of a round's phases up to its write: the write's own is filled in once it
    /// ends. Changes counts from the end of evaluating to now, less the wait.
    fn before_write(
        evaluating: Instant,
        diffing: Instant,
        waiting: Instant,
        resumed: Instant,
    ) -> RoundTimes {
        RoundTimes {
            evaluate: diffing - evaluating,
            changes: waiting - diffing + resumed.elapsed(),
            write: Duration::ZERO,
            waited: resumed - waiting,
        }
    }
}

/// A round whose write is under way: published and logged once the write ends, as a round
/// that wrote inline was.
struct Finishing {
    publication: Option<Evaluated>,
    record: RoundRecord,
}

pub struct Runner {
    snapshot: Snapshot,
    settings: RunnerSettings,
    store: Store,
    written: Written,
    /// What is not written yet: changes, roll-ups, CRD providers and cluster rows of rounds
    /// whose write failed, and of the round being prepared.
    unwritten: Batch,
    /// The last round's write, while it runs.
    writing: WriteBehind,
    finishing: Option<Finishing>,
    latest: watch::Sender<Arc<Evaluated>>,
    /// Frees replaced publications off the runner's thread.
    free_aside: FreeAside<Arc<Evaluated>>,
    /// The fleet as last evaluated (published once its round's write ends).
    fleet: Arc<Fleet>,
    /// Set when collectors share the fleet: only leased clusters are collected and written.
    ownership: Option<Ownership>,
    crd_history: CrdHistory,
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
            unwritten: Batch::default(),
            writing: WriteBehind::default(),
            finishing: None,
            latest,
            free_aside: FreeAside::start(),
            fleet: Arc::default(),
            ownership: None,
            crd_history: CrdHistory::default(),
            sightings: Sightings::default(),
            evaluations: Evaluations::default(),
            resighted: BTreeSet::new(),
            revisit: BTreeSet::new(),
            published: None,
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
                unwritten: !self.unwritten.changes.is_empty()
                    || !self.unwritten.warnings.is_empty(),
                due: self.evaluations.next_due().map(instant_of),
            };
            let next = schedule.next(work, Instant::now());
            tokio::select! {
                Some(outcome) = self.writing.finish(), if self.writing.is_running() => {
                    self.finished(outcome);
                }
                alive = leases_changed(&mut self.ownership) => {
                    if !alive {
                        self.ownership = None;
                        break;
                    }
                    // A lost cluster's rows are not written after its lease is let go.
                    self.finish_write().await;
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
                    self.start_round(Utc::now()).await;
                    schedule.ended(Instant::now());
                }
            }
        }
        // Flush what the sources said before they stopped (after the write under way).
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
        if let SourceEvent::Warning(warning) = event {
            // Evidence to write, not a change to evaluate.
            self.unwritten.warnings.push(*warning);
            return changed;
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
            let pending = &mut self.unwritten.changes;
            pending.upserts.retain(|r| r.key.cluster != cluster);
            pending.deletes.retain(|k| k.cluster != cluster);
            pending.transitions.retain(|t| t.key.cluster != cluster);
            self.unwritten.rollups.forget(&cluster);
            self.unwritten.clusters.retain(|row| row.name != cluster);
            self.unwritten.warnings.retain(|w| w.cluster() != cluster);
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

    /// Re-evaluates the clusters that changed or fell due, writes what changed and publishes
    /// the evaluation when a verdict may have changed or `REFRESH` has passed since the last;
    /// returns once the write has ended.
    #[tracing::instrument(skip_all)]
    pub async fn run_round(&mut self, now: DateTime<Utc>) {
        self.start_round(now).await;
        self.finish_write().await;
    }

    /// A round whose write is left running: the next round (or `finish_write`) waits for it,
    /// and it is published once written. The collector's loop runs its rounds so, so the
    /// write of one round and the evaluation of the next proceed together.
    #[tracing::instrument(skip_all)]
    pub async fn start_round(&mut self, now: DateTime<Utc>) {
        let round_started = Instant::now();
        self.load_history_once().await;
        let touched = self.snapshot.take_touched();
        let resighted = std::mem::take(&mut self.resighted);
        let touched_by_cluster = group_by_cluster(&touched);
        self.count_tracked_objects(&touched_by_cluster);
        let candidates = self.candidates(resighted, &touched_by_cluster, now);
        let held = self.held_back();
        let evaluating = Instant::now();
        // Each cluster's rows are diffed on the thread that evaluated it, right after.
        let diff = RowDiff {
            written: &self.written,
            snapshot: &self.snapshot,
            touched: &touched_by_cluster,
            now,
        };
        let sources = RoundSources {
            snapshot: &self.snapshot,
            crd_history: &self.crd_history,
            settings: &self.settings,
            sightings: &self.sightings,
        };
        let (redone, diffs) = evaluate_candidates(
            &mut self.evaluations,
            &sources,
            &candidates,
            &held,
            &diff,
            now,
        );
        let diffing = Instant::now();
        let diffed = diffed_clusters(&redone.evaluated, &held);
        let changes = collect_changes(&diff, &self.evaluations, &diffed, diffs);
        self.hand_over(&diffed);
        self.observe_sightings(&redone.evaluated, &changes.deletes, now);
        let clusters =
            self.queue_rows(changes, &redone.evaluated, &candidates.reported, &held, now);
        let fleet = self.refresh_fleet(&redone.changed);
        self.record_crd_providers(&fleet, now);
        self.bound_pending();
        self.report_cluster_metrics(&redone.evaluated, &candidates.reported);
        let evaluated = redone.evaluated.len();
        let publication = self.publication(fleet, redone, &held, now);
        let waiting = Instant::now();
        // The previous round's write first: what it failed to write goes before this round's.
        self.finish_write().await;
        let resumed = Instant::now();
        let batch = self.take_batch(clusters, now);
        let times = RoundTimes::before_write(evaluating, diffing, waiting, resumed);
        let record = self.round_record(times, round_started, touched.len(), evaluated);
        self.finishing = Some(Finishing {
            publication,
            record,
        });
        self.start_write(batch);
    }

    /// Reads the stored CRD history and (without leases) the stored sightings the first time
    /// they are needed; an outage leaves them for the next round.
    async fn load_history_once(&mut self) {
        self.crd_history.load_once(&self.store).await;
        if self.ownership.is_none() {
            self.sightings.load_all_once(&self.store).await;
        }
    }

    /// Updates the tracked-object gauges of the clusters whose objects changed.
    fn count_tracked_objects(&self, touched_by_cluster: &TouchedByCluster) {
        for &cluster in touched_by_cluster.keys() {
            metrics::set_objects_tracked(cluster, |kind| self.snapshot.tracked(cluster, kind));
        }
    }

    /// The clusters to look at this round: those whose first sightings (`resighted`) or
    /// objects changed, those the sources reported on, those to revisit and those due.
    fn candidates(
        &mut self,
        mut changed: BTreeSet<String>,
        touched_by_cluster: &TouchedByCluster,
        now: DateTime<Utc>,
    ) -> Candidates {
        changed.extend(touched_by_cluster.keys().map(|c| c.to_string()));
        let reported = self.snapshot.take_reported();
        // Only these clusters' objects or infos can have changed (or their evaluation fell
        // due): the round looks at them alone, however many clusters are held.
        let all: BTreeSet<String> = changed
            .iter()
            .chain(&reported)
            .chain(&std::mem::take(&mut self.revisit))
            .map(String::as_str)
            .chain(self.evaluations.due_by(now))
            .map(str::to_string)
            .collect();
        Candidates {
            changed,
            reported,
            all,
        }
    }

    /// Records the evaluations whose rows are on their way to the store, so the next round's
    /// rows are diffed against them.
    fn hand_over(&mut self, diffed: &[&String]) {
        for &cluster in diffed {
            self.written
                .handed_over(cluster, self.evaluations.shared(cluster));
        }
    }

    /// Keeps the first sightings in step with the re-evaluated clusters and the deleted rows;
    /// the clusters whose sightings changed are evaluated again next round.
    fn observe_sightings(
        &mut self,
        evaluated: &BTreeSet<String>,
        deletes: &[ObjectKey],
        now: DateTime<Utc>,
    ) {
        let evaluations = &self.evaluations;
        let reevaluated = evaluated.iter().filter_map(|c| evaluations.of(c));
        self.resighted = self.sightings.observe(reevaluated, deletes, now);
    }

    /// Adds the round's object and roll-up rows to the unwritten ones; returns its cluster
    /// rows, which join them once the previous round's write has ended.
    fn queue_rows(
        &mut self,
        changes: ChangeSet,
        evaluated: &BTreeSet<String>,
        reported: &BTreeSet<String>,
        held: &BTreeSet<String>,
        now: DateTime<Utc>,
    ) -> Vec<ClusterRow> {
        let ready: Vec<String> = evaluated
            .iter()
            .filter(|c| self.snapshot.cluster(c).is_some() && !held.contains(*c))
            .cloned()
            .collect();
        let rollups = self.written.rollup_changes(&self.evaluations, &ready);
        let clusters = self.written.cluster_changes(
            &self.evaluations,
            evaluated,
            reported,
            &self.snapshot,
            held,
            now,
        );
        self.unwritten.changes.absorb(changes);
        self.unwritten.rollups.absorb(rollups);
        clusters
    }

    /// The fleet as evaluated now: merged anew only when an evaluation changed, so readers
    /// keep the same `Arc` while none did.
    fn refresh_fleet(&mut self, changed: &BTreeSet<String>) -> Arc<Fleet> {
        if !changed.is_empty() {
            self.fleet = Arc::new(self.evaluations.fleet());
        }
        self.fleet.clone()
    }

    /// Queues the CRD providers seen now that are new, changed or due a refresh; their
    /// clusters are looked at again next round, as the history they are given changed.
    fn record_crd_providers(&mut self, fleet: &Fleet, now: DateTime<Utc>) {
        let providers = fleet.parts().flat_map(|e| &e.crd_providers);
        // One row per CRD in a batch: a newer sighting replaces an unwritten older one.
        for provider in self.crd_history.observe(providers, now) {
            // The history the engine is given for that cluster changed.
            self.revisit.insert(provider.cluster.clone());
            let providers = &mut self.unwritten.providers;
            providers.retain(|p| {
                (&p.cluster, &p.group, &p.kind)
                    != (&provider.cluster, &provider.group, &provider.kind)
            });
            providers.push(provider);
        }
    }

    /// Updates the evaluation gauges of the re-evaluated clusters and the last-good time of
    /// those the sources reported on.
    fn report_cluster_metrics(&self, evaluated: &BTreeSet<String>, reported: &BTreeSet<String>) {
        for cluster in evaluated {
            let found = self
                .evaluations
                .of(cluster)
                .map(|e| (self.written.state_counts(cluster), e.domains.as_slice()));
            metrics::cluster_evaluated(cluster, found);
        }
        for cluster in reported {
            let last_good = self.snapshot.cluster(cluster).and_then(|i| i.last_good);
            metrics::set_cluster_last_good(cluster, last_good);
        }
    }

    /// What to publish once the round is written: None unless a verdict may have changed or
    /// `REFRESH` has passed since the last publication.
    fn publication(
        &mut self,
        fleet: Arc<Fleet>,
        redone: Redone,
        held: &BTreeSet<String>,
        now: DateTime<Utc>,
    ) -> Option<Evaluated> {
        let refresh = self.published.is_none_or(|at| at.elapsed() >= REFRESH);
        (!redone.changed.is_empty() || refresh).then(|| {
            self.published = Some(Instant::now());
            Evaluated {
                fleet,
                at: Some(now),
                reevaluated: redone.evaluated,
                held_back: held.clone(),
            }
        })
    }

    /// Everything unwritten, to write now: the round's cluster rows replace older unwritten
    /// rows of the same clusters, and the sightings the store lacks go with them.
    fn take_batch(&mut self, clusters: Vec<ClusterRow>, now: DateTime<Utc>) -> Batch {
        self.unwritten
            .clusters
            .retain(|old| !clusters.iter().any(|new| new.name == old.name));
        self.unwritten.clusters.extend(clusters);
        let mut batch = std::mem::take(&mut self.unwritten);
        batch.sightings = self.sightings.changes();
        batch.now = now;
        batch
    }

    /// The round's entry in the log, but for its write (filled in once the write ends).
    fn round_record(
        &mut self,
        times: RoundTimes,
        started: Instant,
        objects: usize,
        clusters: usize,
    ) -> RoundRecord {
        RoundRecord {
            times,
            apply: std::mem::take(&mut self.applying),
            objects,
            clusters,
            first_event: self.first_event.take(),
            started: Some(started),
            committed: None,
        }
    }

    /// Starts writing the batch beside the next round; with nothing to write, the round is
    /// finished at once.
    fn start_write(&mut self, batch: Batch) {
        if batch.is_empty() {
            self.finished(Outcome {
                batch,
                result: Ok(()),
                took: Duration::ZERO,
                ended: Instant::now(),
            });
        } else {
            self.writing.start(self.store.clone(), batch);
        }
    }

    /// Clusters whose rows are not written yet: those a lease brought but no source has
    /// reported on, and those whose first full list has not completed (what the store holds
    /// of them, written before a restart or by the previous owner, stands until then and is
    /// judged by its age; a cluster that cannot be reached at all is written, with why).
    fn held_back(&self) -> BTreeSet<String> {
        let leased = self.ownership.iter().flat_map(|o| o.held.iter().cloned());
        let unlisted = self
            .snapshot
            .clusters()
            .filter(|info| info.last_good.is_none() && info.error.is_none())
            .map(|info| info.name.clone());
        leased.chain(unlisted).collect()
    }

    /// Waits for the write under way, if any, and finishes its round.
    pub async fn finish_write(&mut self) {
        if let Some(outcome) = self.writing.finish().await {
            self.finished(outcome);
        }
    }

    /// A round's write ended: on failure its rows go back in front of those prepared since;
    /// then the round is published and logged.
    fn finished(&mut self, outcome: Outcome) {
        let Outcome {
            batch,
            result,
            took,
            ended,
        } = outcome;
        let rows = batch.rows();
        let wrote = rows > 0 || !batch.rollups.is_empty();
        if wrote {
            metrics::write_batch(rows, took, result.is_ok());
        }
        let committed = (wrote && result.is_ok()).then_some(ended);
        if wrote {
            // Only a write tried says whether writes go through (a quiet round tries none).
            self.store.record_write(result.as_ref().map(|_| ()));
        }
        match result {
            Ok(()) => self.sightings.written(batch.sightings),
            Err(error) => {
                tracing::warn!(%error, pending = batch.changes.len() + self.unwritten.changes.len(), "database write failed; keeping changes to retry");
                self.written.forget_clusters();
                put_back(batch, &mut self.unwritten);
            }
        }
        if let Some(Finishing {
            publication,
            mut record,
        }) = self.finishing.take()
        {
            if let Some(publication) = publication {
                self.free_aside
                    .free(self.latest.send_replace(Arc::new(publication)));
            }
            record.times.write = took;
            record.committed = committed;
            self.rounds.send_modify(|log| log.push(record));
        }
    }

    fn bound_pending(&mut self) {
        let excess = self
            .unwritten
            .changes
            .transitions
            .len()
            .saturating_sub(MAX_PENDING_TRANSITIONS);
        if excess > 0 {
            self.unwritten.changes.transitions.drain(..excess);
            tracing::error!(
                dropped = excess,
                "database down too long: dropped the oldest unwritten transitions"
            );
        }
        // Warning events are evidence, not history: the oldest go first, quietly.
        let warnings = &mut self.unwritten.warnings;
        warnings.drain(..warnings.len().saturating_sub(MAX_PENDING_WARNINGS));
    }
}

/// The instant on the runtime's clock for a UTC time (now when it is past).
/// Warning events held while the database is down, at most.
const MAX_PENDING_WARNINGS: usize = 10_000;

fn instant_of(at: DateTime<Utc>) -> Instant {
    let ahead = (at - Utc::now()).to_std().unwrap_or_default();
    Instant::now() + ahead
}
