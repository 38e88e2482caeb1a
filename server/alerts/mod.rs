//! Alerts: one notification per incident (the same cause on every cluster it hits), never
//! lost, quiet when it should be.
//!
//! The [`Dispatcher`] reads each evaluation the runner publishes, groups its root causes into
//! incidents ([`grouping`]), runs the pure [`lifecycle`] for every incident and open alert,
//! and writes the alert changes together with their
//! notifications (the outbox) in one transaction. The [`Worker`] drains the outbox to Slack and
//! webhooks with retries, claiming rows with `FOR UPDATE SKIP LOCKED` so that with several
//! replicas exactly one delivers each notification. Silences are matched in the lifecycle:
//! silenced notifications are recorded, not sent.

mod blocks;
mod candidates;
mod delivery;
mod dispatcher;
pub mod grouping;
pub mod lifecycle;
mod notice;
pub mod records;
pub mod rules;
pub mod silences;
mod sinks;
mod slack;
pub mod tables;
mod webhook;

// A rule may name only alertable states, so the config owns the test.
pub use crate::config::alertable;
pub use blocks::render_slack;
pub use candidates::candidates;
pub use delivery::{DeliverySettings, Outcome, Worker};
pub use dispatcher::Dispatcher;
pub use grouping::CauseGroup;
pub use records::{Alert, AlertStatus, Candidate, Event, NewSilence, Notice, Silence};
pub use sinks::{Route, Sinks};
pub use tables::alerts::{AlertView, Delivery, list_alerts};
pub use webhook::{WEBHOOK_VERSION, WebhookAlert, WebhookBody};

use crate::config::{AlertRule, Config};
use crate::health::State;
use crate::ingest::Latest;
use crate::store::Store;
use chrono::{DateTime, Utc};
use std::sync::Arc;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The alert tasks of a collecting process, owned by it so that stopping loses no decision.
pub struct Alerts {
    dispatcher: JoinHandle<()>,
    worker: JoinHandle<()>,
    stop_worker: watch::Sender<bool>,
}

impl Alerts {
    /// Call once the collector has stopped: its runner's end closes `latest`, so the
    /// dispatcher ends after deciding the last evaluation; then the worker finishes the send
    /// in flight and stops. What is still pending stays in the outbox for the next process.
    pub async fn stop(self) {
        if self.dispatcher.await.is_err() {
            tracing::warn!("alert dispatcher ended abnormally");
        }
        self.stop_worker.send_replace(true);
        if self.worker.await.is_err() {
            tracing::warn!("alert delivery ended abnormally");
        }
    }
}

/// Starts the dispatcher (following `latest`) and the delivery worker, with the sinks the
/// config and the environment name. Fails on a sink that is configured but unusable.
pub fn start(config: &Config, store: Store, latest: Latest) -> anyhow::Result<Alerts> {
    let alerts = &config.alerts;
    let slack = alerts.slack_target(|name| std::env::var(name).ok())?;
    let webhooks = alerts.webhook_targets()?;
    let timeout = alerts.delivery.timeout.to_std()?;
    let sinks = Arc::new(Sinks::new(slack, webhooks, timeout)?);
    let routes = sinks.routes();
    tracing::info!(
        sinks = ?routes.iter().map(|r| r.sink.as_str()).collect::<Vec<_>>(),
        rules = alerts.rules.len(),
        "alerts enabled"
    );
    let dispatcher = Dispatcher::new(
        store.clone(),
        rules::Policy::from_config(alerts),
        routes,
        config
            .clusters
            .iter()
            .map(|c| (c.name.clone(), c.labels.clone()))
            .collect(),
        config.public_url.clone(),
    );
    let worker = Worker::new(
        store,
        sinks,
        DeliverySettings::from_config(&alerts.delivery),
    );
    let (stop_worker, stop) = watch::channel(false);
    Ok(Alerts {
        dispatcher: tokio::spawn(dispatcher.run(latest)),
        worker: tokio::spawn(worker.run_until(stop)),
        stop_worker,
    })
}

impl Alert {
    fn open(group: &CauseGroup, rule: &AlertRule, now: DateTime<Utc>) -> Alert {
        let mut alert = Alert {
            id: None,
            key: String::new(),
            root_cause: group.members[0].verdict.id.clone(),
            cluster: String::new(),
            clusters: Vec::new(),
            members: Vec::new(),
            rule: String::new(),
            severity: rule.severity,
            status: AlertStatus::Pending,
            state: State::Failed,
            reason: String::new(),
            message: String::new(),
            since: None,
            affected_count: 0,
            affected_sample: Vec::new(),
            domains: Vec::new(),
            first_seen: now,
            fired_at: None,
            cleared_at: None,
            resolved_at: None,
            notified: false,
            last_notified_at: None,
            silence_id: None,
        };
        alert.refresh(group, rule);
        alert
    }

    /// Takes what the newest evaluation says about the incident: the first member names it,
    /// the worst state and earliest `since` of all members describe it, and what they affect
    /// adds up (object ids start with their cluster, so no object is counted twice).
    fn refresh(&mut self, group: &CauseGroup, rule: &AlertRule) {
        let first = &group.members[0];
        self.key = group.key.clone();
        self.root_cause = first.verdict.id.clone();
        self.cluster = first.verdict.cluster.clone();
        self.clusters = group
            .members
            .iter()
            .map(|m| m.verdict.cluster.clone())
            .collect();
        self.members = group.members.clone();
        self.rule = rule.name.clone();
        self.severity = rule.severity;
        self.state = group
            .members
            .iter()
            .map(|m| m.verdict.state)
            .reduce(State::worst)
            .unwrap_or(first.verdict.state);
        self.reason = first.verdict.reason.clone();
        self.message = first.verdict.message.clone();
        self.since = group.members.iter().filter_map(|m| m.verdict.since).min();
        self.affected_count = group.members.iter().map(|m| m.affected_count).sum();
        self.affected_sample = group
            .members
            .iter()
            .flat_map(|m| &m.affected_sample)
            .take(candidates::SAMPLE)
            .cloned()
            .collect();
        let domains: std::collections::BTreeSet<&String> =
            group.members.iter().flat_map(|m| &m.domains).collect();
        self.domains = domains.into_iter().cloned().collect();
        self.cleared_at = None;
    }
}
