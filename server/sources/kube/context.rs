//! What every task of one cluster shares: its name, the event channel, whether its first full
//! list is complete (the cluster is not declared alive before that, so a half-listed cluster
//! is never taken for the truth), and the namespaces whose pods are worth watching.

use crate::model::Kind;
use crate::sources::{EventSender, SourceEvent};
use chrono::Utc;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, watch};

/// Watch events prove the cluster alive, but one `ClusterAlive` a second is plenty.
const ALIVE_EVERY: Duration = Duration::from_secs(1);

pub struct ClusterContext {
    pub cluster: String,
    events: EventSender,
    unsynced: AtomicUsize,
    synced: AtomicBool,
    reachable: AtomicBool,
    last_alive: Mutex<Option<Instant>>,
    /// Namespaces of the Flux-labelled workloads, per workload kind.
    pub namespaces: watch::Sender<BTreeMap<Kind, BTreeSet<String>>>,
    /// A Flux CRD was created, changed or deleted: discover the served kinds now rather than
    /// at the next periodic rediscovery.
    pub flux_crds_changed: Notify,
}

impl ClusterContext {
    pub fn new(cluster: String, events: EventSender) -> ClusterContext {
        ClusterContext {
            cluster,
            events,
            unsynced: AtomicUsize::new(usize::MAX),
            synced: AtomicBool::new(false),
            reachable: AtomicBool::new(false),
            last_alive: Mutex::new(None),
            namespaces: watch::Sender::new(BTreeMap::new()),
            flux_crds_changed: Notify::new(),
        }
    }

    pub async fn send(&self, event: SourceEvent) {
        // A closed channel means the process is stopping; nothing left to tell.
        let _ = self.events.send(event).await;
    }

    /// The number of watches whose first list must complete before the cluster is alive.
    pub fn expect_first_lists(&self, watches: usize) {
        self.unsynced.store(watches, Ordering::SeqCst);
        if watches == 0 {
            self.synced.store(true, Ordering::SeqCst);
        }
    }

    /// One watch finished its first list (or learned it may not list at all).
    pub fn first_list_done(&self) {
        let before = self
            .unsynced
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if before == Ok(1) {
            self.synced.store(true, Ordering::SeqCst);
            tracing::info!(cluster = %self.cluster, "first full list complete");
        }
    }

    /// Gives up waiting for slow first lists; those watches report their own errors.
    pub fn stop_waiting_for_first_lists(&self) {
        if !self.synced.swap(true, Ordering::SeqCst) {
            tracing::warn!(cluster = %self.cluster, "some watches have not listed yet; declaring the cluster alive anyway");
        }
    }

    pub fn set_reachable(&self, reachable: bool) {
        self.reachable.store(reachable, Ordering::SeqCst);
    }

    pub fn reachable(&self) -> bool {
        self.reachable.load(Ordering::SeqCst)
    }

    /// Tells the fleet the cluster answered, at most once a second, and only once its first
    /// full list is complete.
    pub async fn alive(&self) {
        if !self.synced.load(Ordering::SeqCst) {
            return;
        }
        let now = Instant::now();
        {
            let mut last = self
                .last_alive
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if last.is_some_and(|t| now.duration_since(t) < ALIVE_EVERY) {
                return;
            }
            *last = Some(now);
        }
        self.send(SourceEvent::ClusterAlive {
            cluster: self.cluster.clone(),
            at: Utc::now(),
        })
        .await;
    }

    pub async fn kind_error(&self, kind: Kind, error: Option<String>) {
        self.send(SourceEvent::KindError {
            cluster: self.cluster.clone(),
            kind,
            error,
        })
        .await;
    }
}
