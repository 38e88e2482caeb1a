//! The lease keeper: claims this replica's fair share of the clusters in Postgres, renews the
//! claims every third of the lease period, gives up a surplus when more replicas are alive,
//! and publishes the set it holds (the runner adopts exactly that set).
//!
//! Known window: after a partition from the database longer than the lease, another replica
//! may have taken a cluster; until this replica's next round (a third of the lease) its runner
//! may still write that cluster's pending changes once.

use super::ClusterSet;
use crate::store::{Store, leases};
use std::hash::{Hash, Hasher};
use std::time::Duration;
use tokio::sync::watch;

pub struct LeaseKeeper {
    store: Store,
    holder: String,
    clusters: Vec<String>,
    period: Duration,
}

impl LeaseKeeper {
    pub fn new(store: Store, holder: String, clusters: Vec<String>, period: Duration) -> Self {
        LeaseKeeper {
            store,
            holder,
            clusters,
            period,
        }
    }

    /// A holder id unique to this process: the host (the pod name in Kubernetes), the pid and
    /// a random part, so a restarted process never inherits its predecessor's leases by name.
    pub fn holder_id() -> String {
        let host = std::env::var("HOSTNAME")
            .ok()
            .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "fleetglass".to_string());
        format!(
            "{host}-{}-{:04x}",
            std::process::id(),
            rand::random::<u16>()
        )
    }

    /// Keeps the leases until `stop` resolves, then releases them all.
    pub async fn run(self, held: watch::Sender<ClusterSet>, stop: impl Future<Output = ()>) {
        let mut tick = tokio::time::interval(self.period / 3);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tokio::pin!(stop);
        loop {
            tokio::select! {
                _ = &mut stop => break,
                _ = tick.tick() => {}
            }
            let current = held.borrow().clone();
            match self.round(&current).await {
                Ok(next) => {
                    held.send_if_modified(|set| {
                        let changed = *set != next;
                        *set = next;
                        changed
                    });
                }
                // Keep collecting: while the database is down nobody can take the leases over,
                // and the runner keeps the unwritten changes. The next round that reaches the
                // database finds out whether the leases are still ours.
                Err(error) => tracing::warn!(%error, "cannot renew collector leases; retrying"),
            }
        }
        let mine: Vec<String> = held.borrow().iter().cloned().collect();
        held.send_replace(ClusterSet::new());
        if let Err(error) = self.release_all(&mine).await {
            tracing::warn!(%error, "could not release collector leases; they expire on their own");
        }
    }

    #[tracing::instrument(skip_all, fields(holder = %self.holder))]
    async fn round(&self, current: &ClusterSet) -> Result<ClusterSet, sqlx::Error> {
        let mut conn = self.store.pool().acquire().await?;
        let live = leases::heartbeat(&mut conn, &self.holder, self.period).await?;
        let share = self.clusters.len().div_ceil(live);
        let mut kept = ClusterSet::new();
        let mut surplus = Vec::new();
        for cluster in current.iter().filter(|c| self.clusters.contains(c)) {
            if kept.len() >= share {
                surplus.push(cluster.clone());
            } else if leases::acquire(&mut conn, cluster, &self.holder, self.period).await? {
                kept.insert(cluster.clone());
            }
        }
        if !surplus.is_empty() {
            tracing::info!(?surplus, share, live, "giving clusters to other collectors");
            leases::release(&mut conn, &surplus, &self.holder).await?;
        }
        if kept.len() < share {
            let taken: ClusterSet = leases::held_by_others(&mut conn, &self.holder)
                .await?
                .into_iter()
                .collect();
            for cluster in self.candidates() {
                if kept.len() >= share {
                    break;
                }
                if kept.contains(cluster) || taken.contains(cluster) || surplus.contains(cluster) {
                    continue;
                }
                if leases::acquire(&mut conn, cluster, &self.holder, self.period).await? {
                    kept.insert(cluster.clone());
                }
            }
        }
        Ok(kept)
    }

    /// The clusters in an order of this holder's own, so replicas starting together do not
    /// all race for the same first cluster.
    fn candidates(&self) -> impl Iterator<Item = &String> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.holder.hash(&mut hasher);
        let n = self.clusters.len().max(1);
        let start = (hasher.finish() % n as u64) as usize;
        self.clusters
            .iter()
            .cycle()
            .skip(start)
            .take(self.clusters.len())
    }

    async fn release_all(&self, mine: &[String]) -> Result<(), sqlx::Error> {
        let mut conn = self.store.pool().acquire().await?;
        leases::release(&mut conn, mine, &self.holder).await?;
        leases::retire(&mut conn, &self.holder).await
    }
}
