//! Building a notice from an alert, and what it says: the object, the clusters, the headline
//! reason, which sinks get it. The notice itself is a stored record (`records::Notice`).

use super::{Alert, Event, Notice};
use crate::health::reason_beside_clusters;
use chrono::{DateTime, Utc};

impl Notice {
    /// `before` is the clusters the alert was on when the round began.
    pub fn new(
        alert_id: i64,
        alert: &Alert,
        before: &[String],
        event: Event,
        public_url: Option<&str>,
        at: DateTime<Utc>,
    ) -> Notice {
        let (joined, left) = match event {
            Event::Update => (
                difference(&alert.clusters, before),
                difference(before, &alert.clusters),
            ),
            _ => (Vec::new(), Vec::new()),
        };
        let (kind, namespace, name) =
            alert
                .root_cause
                .parts()
                .map_or_else(Default::default, |(_, kind, namespace, name)| {
                    (kind.to_string(), namespace.to_string(), name.to_string())
                });
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
            key: alert.key.clone(),
            root_cause: alert.root_cause.to_string(),
            cluster: alert.cluster.clone(),
            clusters: alert.clusters.clone(),
            joined,
            left,
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
            evidence: Vec::new(),
            domains: alert.domains.clone(),
            at,
        }
    }

    /// `Kustomization flux-system/gateway-config on staging-1, staging-2` (clusters:
    /// `cluster prod-eu-1`, `clusters prod-eu-1, prod-eu-2`).
    pub fn object(&self) -> String {
        let clusters = self.cluster_list();
        if crate::health::cluster_of_cluster_id(&self.root_cause).is_some() {
            match self.clusters.len() {
                0 | 1 => format!("cluster {clusters}"),
                _ => format!("clusters {clusters}"),
            }
        } else if self.namespace.is_empty() {
            format!("{} {} on {clusters}", self.kind, self.name)
        } else {
            format!(
                "{} {}/{} on {clusters}",
                self.kind, self.namespace, self.name
            )
        }
    }

    /// The clusters, comma-separated (the root cause's own, for a notice without the list).
    pub fn cluster_list(&self) -> String {
        if self.clusters.is_empty() {
            self.cluster.clone()
        } else {
            self.clusters.join(", ")
        }
    }

    /// Whether it says a cluster joined or left.
    pub fn changes_clusters(&self) -> bool {
        !self.joined.is_empty() || !self.left.is_empty()
    }

    /// Whether a sink gets it: one that cannot edit gets an update only when it says a
    /// cluster joined or left (a short follow-up); other growth waits for the re-notify.
    pub fn for_sink(&self, edits: bool) -> bool {
        self.event != Event::Update || edits || self.changes_clusters()
    }

    /// The classified reason, or the state when the engine gave none. Clusters that are
    /// themselves the cause are named in the list, not in the reason ("unreachable: …").
    pub fn headline_reason(&self) -> &str {
        if self.reason.is_empty() {
            return self.state.as_str();
        }
        if self.clusters.len() > 1 {
            reason_beside_clusters(&self.root_cause, &self.reason)
        } else {
            &self.reason
        }
    }
}

/// What is in `a` and not in `b`, in `a`'s order.
fn difference(a: &[String], b: &[String]) -> Vec<String> {
    a.iter().filter(|x| !b.contains(x)).cloned().collect()
}
