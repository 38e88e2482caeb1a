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
pub mod rules;
pub mod silences;
mod sinks;
mod slack;

pub use crate::store::{AlertView, Delivery, list_alerts};
pub use blocks::render_slack;
pub use candidates::candidates;
pub use delivery::{DeliverySettings, Outcome, Worker};
pub use dispatcher::Dispatcher;
pub use grouping::CauseGroup;
pub use notice::Notice;
pub use sinks::{Route, Sinks};

use crate::config::{AlertRule, Config, Severity};
use crate::health::State;
use crate::ingest::Latest;
use crate::model::ObjectId;
use crate::store::Store;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
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

/// Whether a root cause in this state is worth an alert: a problem, or a suspension (the
/// engine names a suspended object as a root cause only while it holds something up that
/// waits on it).
pub fn alertable(state: State) -> bool {
    state.is_problem() || state == State::Suspended
}

/// A root cause in a problem state on one cluster, as the alerts see it. An open alert stores
/// its members as these (`alerts.members`), so a collector that evaluates only some of an
/// incident's clusters keeps the others' as last seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The root cause's object id: `cluster/Kind/namespace/name`.
    pub root_cause: ObjectId,
    pub cluster: String,
    pub state: State,
    pub since: Option<DateTime<Utc>>,
    pub reason: String,
    pub message: String,
    pub affected_count: usize,
    /// A few of the affected objects (not the cause itself), for the message.
    pub affected_sample: Vec<String>,
    /// Domains whose health this root cause blocks.
    pub domains: Vec<String>,
    /// From the config at every round, never stored.
    #[serde(skip)]
    pub cluster_labels: BTreeMap<String, String>,
}

impl Candidate {
    pub fn kind_and_name(&self) -> (&str, &str) {
        self.root_cause
            .parts()
            .map_or(("", ""), |(_, kind, _, name)| (kind, name))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AlertStatus {
    /// Seen, waiting out its rule's `for`; nothing sent.
    Pending,
    Firing,
    Resolved,
}

/// A notification about an alert.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Event {
    Firing,
    /// What it affects (or its state or reason) changed while firing.
    Update,
    /// Still firing after the re-notify interval.
    Renotify,
    Resolved,
}

macro_rules! words {
    ($ty:ident { $($variant:ident => $word:literal),* $(,)? }) => {
        impl $ty {
            pub fn as_str(self) -> &'static str {
                match self { $($ty::$variant => $word),* }
            }
        }
        impl FromStr for $ty {
            type Err = String;
            fn from_str(text: &str) -> Result<Self, String> {
                match text {
                    $($word => Ok($ty::$variant),)*
                    other => Err(format!("unknown {} {other:?}", stringify!($ty))),
                }
            }
        }
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

words!(AlertStatus { Pending => "pending", Firing => "firing", Resolved => "resolved" });
words!(Event { Firing => "firing", Update => "update", Renotify => "renotify", Resolved => "resolved" });

/// One incident episode, the part the lifecycle owns.
#[derive(Debug, Clone, PartialEq)]
pub struct Alert {
    /// None until stored.
    pub id: Option<i64>,
    /// The incident's key ([`crate::incidents::key_of`]).
    pub key: String,
    /// The first member's root cause and cluster.
    pub root_cause: ObjectId,
    pub cluster: String,
    /// The clusters it is on, in the order they joined; after it cleared, the last ones.
    pub clusters: Vec<String>,
    /// The root cause on each of `clusters`; empty once it cleared.
    pub members: Vec<Candidate>,
    pub rule: String,
    pub severity: Severity,
    pub status: AlertStatus,
    pub state: State,
    pub reason: String,
    pub message: String,
    pub since: Option<DateTime<Utc>>,
    pub affected_count: usize,
    pub affected_sample: Vec<String>,
    pub domains: Vec<String>,
    pub first_seen: DateTime<Utc>,
    pub fired_at: Option<DateTime<Utc>>,
    pub cleared_at: Option<DateTime<Utc>>,
    pub resolved_at: Option<DateTime<Utc>>,
    /// A firing notification was queued for sending (false while it fired silenced).
    pub notified: bool,
    pub last_notified_at: Option<DateTime<Utc>>,
    pub silence_id: Option<i64>,
}

impl Alert {
    fn open(group: &CauseGroup, rule: &AlertRule, now: DateTime<Utc>) -> Alert {
        let mut alert = Alert {
            id: None,
            key: String::new(),
            root_cause: group.members[0].root_cause.clone(),
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
        self.root_cause = first.root_cause.clone();
        self.cluster = first.cluster.clone();
        self.clusters = group.members.iter().map(|m| m.cluster.clone()).collect();
        self.members = group.members.clone();
        self.rule = rule.name.clone();
        self.severity = rule.severity;
        self.state = group
            .members
            .iter()
            .map(|m| m.state)
            .reduce(State::worst)
            .unwrap_or(first.state);
        self.reason = first.reason.clone();
        self.message = first.message.clone();
        self.since = group.members.iter().filter_map(|m| m.since).min();
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
