//! What a notification says: the alert as it was when the event happened. Stored as the outbox
//! row's payload and rendered per sink at delivery, so a retry sends exactly what was decided.

use super::{Alert, AlertStatus, Event};
use crate::config::Severity;
use crate::health::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Notice {
    pub alert_id: i64,
    pub event: Event,
    pub status: AlertStatus,
    pub root_cause: String,
    pub cluster: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub rule: String,
    pub severity: Severity,
    pub state: State,
    pub reason: String,
    pub message: String,
    pub since: Option<DateTime<Utc>>,
    pub fired_at: Option<DateTime<Utc>>,
    pub resolved_at: Option<DateTime<Utc>>,
    pub affected_count: usize,
    pub affected_sample: Vec<String>,
    pub domains: Vec<String>,
    /// The root cause's fleetglass page, when `public_url` is configured.
    pub link: Option<String>,
    /// When the event happened.
    pub at: DateTime<Utc>,
}

impl Notice {
    pub fn new(
        alert_id: i64,
        alert: &Alert,
        event: Event,
        public_url: Option<&str>,
        at: DateTime<Utc>,
    ) -> Notice {
        let mut parts = alert.root_cause.splitn(4, '/').skip(1);
        let mut part = || parts.next().unwrap_or("").to_string();
        let (kind, namespace, name) = (part(), part(), part());
        Notice {
            alert_id,
            event,
            status: alert.status,
            link: public_url.map(|base| {
                format!(
                    "{}/objects/{}",
                    base.trim_end_matches('/'),
                    alert.root_cause
                )
            }),
            root_cause: alert.root_cause.clone(),
            cluster: alert.cluster.clone(),
            kind,
            namespace,
            name,
            rule: alert.rule.clone(),
            severity: alert.severity,
            state: alert.state,
            reason: alert.reason.clone(),
            message: alert.message.clone(),
            since: alert.since,
            fired_at: alert.fired_at,
            resolved_at: alert.resolved_at,
            affected_count: alert.affected_count,
            affected_sample: alert.affected_sample.clone(),
            domains: alert.domains.clone(),
            at,
        }
    }

    /// `Kustomization flux-system/gateway-config on staging-1` (a cluster: `cluster prod-eu-1`).
    pub fn object(&self) -> String {
        if self.namespace.is_empty() && self.kind == crate::config::CLUSTER_KIND {
            format!("cluster {}", self.cluster)
        } else if self.namespace.is_empty() {
            format!("{} {} on {}", self.kind, self.name, self.cluster)
        } else {
            format!(
                "{} {}/{} on {}",
                self.kind, self.namespace, self.name, self.cluster
            )
        }
    }

    /// The classified reason, or the state when the engine gave none.
    pub fn headline_reason(&self) -> &str {
        if self.reason.is_empty() {
            self.state.as_str()
        } else {
            &self.reason
        }
    }
}
