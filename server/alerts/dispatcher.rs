//! The alert dispatcher: after every evaluation the runner publishes, moves each alert through
//! its lifecycle and queues the notifications, all in one transaction.
//!
//! Why in-process from the runner's evaluations rather than polling the `root_causes` table:
//! the runner publishes a fresh evaluation every few seconds, so alerts are as current as the
//! verdicts, and only the collector that evaluated a cluster has the whole picture of it. With
//! several collector replicas each decides for the clusters its evaluation covers: alerts are
//! keyed by incident, an alert's members on other clusters are kept as stored (see
//! [`grouping::merged`]), opening one is guarded by a unique index on open alerts' keys, and
//! the open alerts a round touches are locked `FOR UPDATE` while it decides, so two replicas
//! that evaluate clusters of the same incident take turns instead of paging twice.

use super::Notice;
use super::candidates::candidates;
use super::grouping::{self, CauseGroup, adopted_key, merged};
use super::lifecycle::{Context, Step, step};
use super::rules::Policy;
use super::sinks::Route;
use super::tables::alerts as records;
use super::tables::{outbox, silences};
use crate::health::{Parts, same_cause_on};
use crate::incidents::{REASONS_SHOWN, alert_version_split, by_reason};
use crate::ingest::Latest;
use crate::model::ObjectId;
use crate::store::Store;
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, BTreeSet};

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
            // A cluster not listed in full yet proves nothing: it neither raises nor clears.
            let listed = evaluated.fleet.except(&evaluated.held_back);
            if let Err(error) = self.round(&listed, at).await {
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
        let mut groups = grouping::by_incident(causes, &self.policy);
        let clusters: Vec<String> = covered.iter().cloned().collect();
        let keys: Vec<String> = groups.keys().cloned().collect();
        let mut tx = self.store.pool().begin().await?;
        let open = records::lock_open(&mut tx, &clusters, &keys).await?;
        let silences = silences::active(&mut tx, now).await?;
        let ctx = Context {
            policy: &self.policy,
            silences: &silences,
            now,
        };
        let mut held: BTreeSet<String> = open.iter().map(|a| a.key.clone()).collect();
        for mut alert in open {
            let before = alert.clone();
            if !groups.contains_key(&alert.key) {
                let ids: Vec<&str> = alert
                    .members
                    .iter()
                    .map(|m| m.verdict.id.as_str())
                    .chain([alert.root_cause.as_str()])
                    .collect();
                if let Some(key) = adopted_key(&ids, &groups, &held) {
                    held.insert(key.clone());
                    alert.key = key;
                }
            }
            let seen = groups.remove(&alert.key).unwrap_or_default();
            let members = merged(&alert.members, seen, &covered, &self.cluster_labels);
            let group = (!members.is_empty()).then(|| CauseGroup {
                key: alert.key.clone(),
                members,
            });
            let id = alert.id;
            let step = step(Some(alert), group.as_ref(), &ctx);
            self.store_step(&mut tx, id, Some(&before), step, now)
                .await?;
        }
        for (key, members) in groups {
            let step = step(None, Some(&CauseGroup { key, members }), &ctx);
            self.store_step(&mut tx, None, None, step, now).await?;
        }
        tx.commit().await
    }

    /// The version behind the alert when one separates its clusters ("failed on 2/2 clusters
    /// that applied networking 2.13.0, 0/1 that did not"), then the latest Warning event
    /// reasons of its root cause on each of its clusters (and of its pods). Evidence only: a
    /// failed read sends the alert without it.
    async fn evidence_of(&self, alert: &super::Alert) -> Vec<String> {
        if alert.root_cause.parts().is_none() {
            return Vec::new();
        }
        let ids: Vec<ObjectId> = alert
            .clusters
            .iter()
            .map(|cluster| same_cause_on(alert.root_cause.as_str(), cluster))
            .collect();
        let read = tokio::try_join!(self.store.warnings_of(&ids), self.store.domain_verdicts());
        match read {
            Ok((found, domains)) => {
                let split = alert_version_split(&alert.clusters, &alert.domains, &domains)
                    .map(|split| format!("{} {}", alert.state, split.text()));
                let reasons = by_reason(found.iter().map(|(_, w)| w), REASONS_SHOWN);
                split
                    .into_iter()
                    .chain(reasons.iter().map(|reason| reason.line()))
                    .collect()
            }
            Err(error) => {
                tracing::warn!(%error, incident = %alert.key, "cannot read Warning events or domain versions; alerting without them");
                Vec::new()
            }
        }
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
        let clusters_before = before.map_or(&[][..], |b| b.clusters.as_slice());
        let evidence = if step.events.is_empty() {
            Vec::new()
        } else {
            self.evidence_of(alert).await
        };
        for event in &step.events {
            let mut notice = Notice::new(
                id,
                alert,
                clusters_before,
                *event,
                self.public_url.as_deref(),
                now,
            );
            notice.evidence.clone_from(&evidence);
            let mut queued = 0;
            for route in self.routes.iter().filter(|r| notice.for_sink(r.updates)) {
                outbox::enqueue(tx, &route.sink, &notice, !step.recorded_only).await?;
                queued += 1;
            }
            // With no sink configured nothing goes out, whatever the rules say.
            let sent = !step.recorded_only && queued > 0;
            tracing::info!(incident = %alert.key, clusters = ?alert.clusters, event = %event, sent, sinks = queued, "alert");
        }
        Ok(())
    }
}
