//! The alert dispatcher: after every evaluation the runner publishes, moves each alert through
//! its lifecycle and queues the notifications, all in one transaction.
//!
//! Why in-process from the runner's evaluations rather than polling the `root_causes` table:
//! the runner publishes a fresh evaluation every few seconds, so alerts are as current as the
//! verdicts, and only the collector that evaluated a cluster has the whole picture of it. With
//! several collector replicas each manages the alerts of the clusters its evaluation covers;
//! alerts are keyed by root-cause id (which starts with the cluster), opening one is guarded by
//! a unique index on open alerts, and open alerts are locked `FOR UPDATE` while a round decides,
//! so two replicas that briefly evaluate the same cluster take turns instead of paging twice.

use super::candidates::candidates;
use super::lifecycle::{Context, Step, step};
use super::rules::Policy;
use super::sinks::Route;
use super::{Notice, outbox, records, silences};
use crate::health::Parts;
use crate::ingest::Latest;
use crate::store::Store;
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, HashMap};

pub struct Dispatcher {
    store: Store,
    policy: Policy,
    routes: Vec<Route>,
    cluster_labels: BTreeMap<String, BTreeMap<String, String>>,
    public_url: Option<String>,
}

impl Dispatcher {
    pub fn new(
        store: Store,
        policy: Policy,
        routes: Vec<Route>,
        cluster_labels: BTreeMap<String, BTreeMap<String, String>>,
        public_url: Option<String>,
    ) -> Dispatcher {
        Dispatcher {
            store,
            policy,
            routes,
            cluster_labels,
            public_url,
        }
    }

    /// Follows the runner's evaluations until the runner is gone. A failed round changes
    /// nothing; the next one decides again from what is stored.
    pub async fn run(self, mut latest: Latest) {
        while latest.changed().await.is_ok() {
            let evaluated = latest.borrow_and_update().clone();
            let Some(at) = evaluated.at else { continue };
            if let Err(error) = self.round(evaluated.fleet.as_ref(), at).await {
                tracing::warn!(%error, "alert evaluation failed; will retry on the next evaluation");
            }
        }
    }

    /// One evaluation's worth of alert changes and notifications, in one transaction: a
    /// fleet's shared per-cluster evaluations, or one `Evaluation`.
    #[tracing::instrument(skip_all)]
    pub async fn round(
        &self,
        evaluation: &(impl Parts + Sync),
        now: DateTime<Utc>,
    ) -> Result<(), sqlx::Error> {
        let (causes, covered) = candidates(evaluation, &self.cluster_labels);
        let covered: Vec<String> = covered.into_iter().collect();
        let mut tx = self.store.pool().begin().await?;
        let open = records::lock_open(&mut tx, &covered).await?;
        let silences = silences::active(&mut tx, now).await?;
        let ctx = Context {
            policy: &self.policy,
            silences: &silences,
            now,
        };
        let mut by_cause: HashMap<&str, &super::Candidate> =
            causes.iter().map(|c| (c.root_cause.as_str(), c)).collect();
        for alert in open {
            let candidate = by_cause.remove(alert.root_cause.as_str());
            let id = alert.id;
            let before = alert.clone();
            let step = step(Some(alert), candidate, &ctx);
            self.store_step(&mut tx, id, Some(&before), step, now)
                .await?;
        }
        for candidate in causes
            .iter()
            .filter(|c| by_cause.contains_key(c.root_cause.as_str()))
        {
            let step = step(None, Some(candidate), &ctx);
            self.store_step(&mut tx, None, None, step, now).await?;
        }
        tx.commit().await
    }

    async fn store_step(
        &self,
        tx: &mut sqlx::PgConnection,
        id: Option<i64>,
        before: Option<&super::Alert>,
        step: Step,
        now: DateTime<Utc>,
    ) -> Result<(), sqlx::Error> {
        let id = match (&step.alert, id) {
            (None, Some(id)) => return records::delete(tx, id).await,
            (None, None) => return Ok(()),
            (Some(alert), Some(id)) => {
                if before != Some(alert) {
                    records::update(tx, id, alert, now).await?;
                }
                id
            }
            (Some(alert), None) => match records::insert(tx, alert, now).await? {
                Some(id) => id,
                // Another collector opened it first; it owns the notifications.
                None => return Ok(()),
            },
        };
        let Some(alert) = &step.alert else {
            return Ok(());
        };
        for event in &step.events {
            let notice = Notice::new(id, alert, *event, self.public_url.as_deref(), now);
            for route in self.routes.iter().filter(|r| event.for_sink(r.updates)) {
                outbox::enqueue(tx, &route.sink, &notice, !step.recorded_only).await?;
            }
            tracing::info!(root_cause = %alert.root_cause, event = %event, sent = !step.recorded_only, "alert");
        }
        Ok(())
    }
}
