//! A complete collector, the same for any source: the lease keeper, the runner (adopting
//! what the keeper holds), the source (collecting what the runner adopted) and history
//! retention. `fleetglass serve` runs one; tests run two against the same database to exercise
//! sharding.

use super::Source;
use crate::config::Config;
use crate::ingest::{self, ClusterSet, Latest, LeaseKeeper, RoundLog, Runner, RunnerSettings};
use crate::sources;
use crate::store::Store;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How long stopping waits for the runner's last write before giving the unwritten up.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(3);

pub struct Collector {
    pub holder: String,
    /// The newest evaluation of the clusters this collector holds.
    pub latest: Latest,
    /// The clusters whose leases this collector holds.
    pub held: watch::Receiver<ClusterSet>,
    /// What the runner's rounds did.
    pub rounds: watch::Receiver<RoundLog>,
    stop_keeper: watch::Sender<bool>,
    keeper: JoinHandle<()>,
    source: JoinHandle<()>,
    runner: JoinHandle<()>,
    retention: JoinHandle<()>,
}

impl Collector {
    pub fn start(config: &Config, store: Store, source: Source, holder: String) -> Collector {
        let (sender, receiver) = sources::channel();
        let (runner, latest) = Runner::new(RunnerSettings::from_config(config), store.clone());
        let rounds = runner.rounds();
        let (held_sender, held) = watch::channel(ClusterSet::new());
        let (stop_keeper, mut stopping) = watch::channel(false);
        let keeper = LeaseKeeper::new(
            store.clone(),
            holder.clone(),
            source.clusters(config),
            config
                .collector
                .lease
                .to_std()
                .unwrap_or(Duration::from_secs(15)),
        );
        let keeper = tokio::spawn(keeper.run(held_sender, async move {
            let _ = stopping.wait_for(|stopped| *stopped).await;
        }));
        let (runner, collecting) = runner.with_leases(held.clone());
        Collector {
            holder,
            latest,
            held,
            rounds,
            stop_keeper,
            keeper,
            source: source.spawn(config, collecting, sender),
            runner: tokio::spawn(runner.run(receiver)),
            retention: tokio::spawn(ingest::retention::run(store, config.retention.clone())),
        }
    }

    /// Stops collecting, writes what the sources said last (the runner's final round once
    /// their events end) and only then releases the leases, so other collectors take over at
    /// once without a late write of ours landing over theirs.
    pub async fn stop(self) {
        self.source.abort();
        let _ = self.source.await;
        let runner = self.runner.abort_handle();
        if tokio::time::timeout(FLUSH_TIMEOUT, self.runner)
            .await
            .is_err()
        {
            tracing::warn!("the last changes were not written in time; giving them up");
            runner.abort();
        }
        self.stop_keeper.send_replace(true);
        if self.keeper.await.is_err() {
            tracing::warn!("lease keeper ended abnormally; its leases expire on their own");
        }
        self.retention.abort();
    }

    /// Stops everything at once without writing or releasing anything, as a crashed process
    /// would.
    pub fn crash(self) {
        // The runner first: with its sources or keeper gone first it would write a last round.
        for task in [self.runner, self.source, self.keeper, self.retention] {
            task.abort();
        }
    }
}
