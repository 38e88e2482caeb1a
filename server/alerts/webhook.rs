//! The generic webhook's body: a contract with receivers of its own, apart from the outbox row
//! ([`Notice`]), which may change with the store. This is version 1; a change a receiver could
//! trip on is a new version (a new type), never an edit of this one.

use super::Notice;
use super::{AlertStatus, Event};
use crate::config::Severity;
use crate::health::State;
use chrono::{DateTime, Utc};
use serde::Serialize;

/// The version every body of this shape carries.
pub const WEBHOOK_VERSION: u32 = 1;

/// What `alerts.webhooks[]` receive, one POST per notification (header `Idempotency-Key` is
/// `id`).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct WebhookBody<'a> {
    /// The shape's version: 1.
    pub version: u32,
    /// The notification: the same when it is sent again after a crash (delivery is at least
    /// once), so a receiver can drop repeats.
    pub id: i64,
    pub event: Event,
    pub alert: WebhookAlert<'a>,
}

/// The alert as it was when the event happened.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct WebhookAlert<'a> {
    pub alert_id: i64,
    pub event: Event,
    pub status: AlertStatus,
    /// The incident's key: the same cause on every cluster it hits.
    pub key: &'a str,
    /// The first cluster's root cause (`cluster/Kind/namespace/name`), and that cluster.
    pub root_cause: &'a str,
    pub cluster: &'a str,
    /// Every cluster the incident is on (after it cleared, the last ones).
    pub clusters: &'a [String],
    /// For an update: the clusters that joined and left since the alert last changed.
    pub joined: &'a [String],
    pub left: &'a [String],
    pub kind: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    pub rule: &'a str,
    pub severity: Severity,
    pub state: State,
    pub reason: &'a str,
    pub message: &'a str,
    pub since: Option<DateTime<Utc>>,
    pub fired_at: Option<DateTime<Utc>>,
    pub resolved_at: Option<DateTime<Utc>>,
    pub affected_count: usize,
    /// A few of the objects it affects.
    pub affected_sample: &'a [String],
    /// The domains whose health it blocks.
    pub domains: &'a [String],
    /// What speaks for the cause: the version behind it, then its latest Warning events.
    pub evidence: &'a [String],
    /// The root cause's fleetglass page, when `public_url` is configured.
    pub link: Option<&'a str>,
    /// When the event happened.
    pub at: DateTime<Utc>,
}

impl<'a> WebhookBody<'a> {
    pub fn of(id: i64, notice: &'a Notice) -> Self {
        WebhookBody {
            version: WEBHOOK_VERSION,
            id,
            event: notice.event,
            alert: WebhookAlert {
                alert_id: notice.alert_id,
                event: notice.event,
                status: notice.status,
                key: &notice.key,
                root_cause: &notice.root_cause,
                cluster: &notice.cluster,
                clusters: &notice.clusters,
                joined: &notice.joined,
                left: &notice.left,
                kind: &notice.kind,
                namespace: &notice.namespace,
                name: &notice.name,
                rule: &notice.rule,
                severity: notice.severity,
                state: notice.state,
                reason: &notice.reason,
                message: &notice.message,
                since: notice.since,
                fired_at: notice.fired_at,
                resolved_at: notice.resolved_at,
                affected_count: notice.affected_count,
                affected_sample: &notice.affected_sample,
                domains: &notice.domains,
                evidence: &notice.evidence,
                link: notice.link.as_deref(),
                at: notice.at,
            },
        }
    }
}
