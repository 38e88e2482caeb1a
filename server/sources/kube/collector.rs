//! A complete collector for real clusters: the lease keeper, the runner (adopting what the
//! keeper holds) and the kube source (collecting what the runner adopted). `fleetglass serve`
//! runs one; tests run two against the same database to exercise sharding.

use super::{KubeSettings, run};
use crate::config::Config;
use crate::ingest::{ClusterSet, Latest, LeaseKeeper, Runner, RunnerSettings};
use crate::sources;
use crate::store::Store;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub struct Collector {
    pub holder: String,
    /// The newest evaluation of the clusters this collector holds.
    pub latest: Latest,
    /// The clusters whose leases this collector holds.
    pub held: watch::Receiver<ClusterSet>,
    stop: watch::Sender<bool>,
    keeper: JoinHandle<()>,
    others: Vec<JoinHandle<()>>,
}

impl Collector {
    pub fn start(config: &Config, store: Store, holder: String) -> Collector {
        let (sender, receiver) = sources::channel();
        let (runner, latest) = Runner::new(RunnerSettings::from_config(config), store.clone());
        let (held_sender, held) = watch::channel(ClusterSet::new());
        let (stop, mut stopping) = watch::channel(false);
        let keeper = LeaseKeeper::new(
            store,
            holder.clone(),
            config.clusters.iter().map(|c| c.name.clone()).collect(),
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
        let others = vec![
            tokio::spawn(runner.run(receiver)),
            tokio::spawn(run(
                config.clusters.clone(),
                collecting,
                sender,
                KubeSettings::from_config(&config.collector),
            )),
        ];
        Collector {
            holder,
            latest,
            held,
            stop,
            keeper,
            others,
        }
    }

    /// Stops collecting and releases the leases so other collectors take over at once.
    pub async fn stop(self) {
        self.stop.send_replace(true);
        if self.keeper.await.is_err() {
            tracing::warn!("lease keeper ended abnormally; its leases expire on their own");
        }
        for task in self.others {
            task.abort();
        }
    }

    /// Stops everything at once without releasing anything, as a crashed process would.
    pub fn crash(self) {
        self.keeper.abort();
        for task in self.others {
            task.abort();
        }
    }
}
