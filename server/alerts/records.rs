//! The alert records: alerts, their members, notices (outbox payloads) and silences, with
//! the serde attributes that fix their stored JSON. `tables` persists them; what they mean
//! and how they change (matching, building a notice, the lifecycle) is the rest of `alerts`.

use crate::config::Severity;
use crate::health::{Cause, State};
use crate::model::ObjectId;
use crate::store::ObjectVerdict;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// A root cause in a problem state on one cluster, as the alerts see it. An open alert stores
/// its members as these (`alerts.members`), so a collector that evaluates only some of an
/// incident's clusters keeps the others' as last seen.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "StoredCandidate<'static>")]
pub struct Candidate {
    /// The root cause and its verdict.
    pub verdict: ObjectVerdict,
    /// Why, as fields: what the incident key is made of.
    pub cause: Cause,
    pub affected_count: usize,
    /// A few of the affected objects (not the cause itself), for the message.
    pub affected_sample: Vec<String>,
    /// Domains whose health this root cause blocks.
    pub domains: Vec<String>,
    /// From the config at every round, never stored.
    pub cluster_labels: BTreeMap<String, String>,
}

/// A member as `alerts.members` has held it since incidents (migration 0010): the root
/// cause's id as `root_cause`, its cluster, and none of the id's other parts (they are read
/// back from the id). Open alerts hold this JSON, so it must not change.
#[derive(Serialize, Deserialize)]
struct StoredCandidate<'a> {
    root_cause: Cow<'a, str>,
    cluster: Cow<'a, str>,
    state: State,
    since: Option<DateTime<Utc>>,
    reason: Cow<'a, str>,
    message: Cow<'a, str>,
    /// Absent from members stored before causes were recorded: `unrecorded`, and written
    /// back as it was.
    #[serde(default, skip_serializing_if = "unrecorded")]
    cause: Cow<'a, Cause>,
    affected_count: usize,
    affected_sample: Cow<'a, [String]>,
    domains: Cow<'a, [String]>,
}

fn unrecorded(cause: &Cause) -> bool {
    *cause == Cause::default()
}

impl Serialize for Candidate {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let verdict = &self.verdict;
        StoredCandidate {
            root_cause: Cow::Borrowed(verdict.id.as_str()),
            cluster: Cow::Borrowed(&verdict.cluster),
            state: verdict.state,
            since: verdict.since,
            reason: Cow::Borrowed(&verdict.reason),
            message: Cow::Borrowed(&verdict.message),
            cause: Cow::Borrowed(&self.cause),
            affected_count: self.affected_count,
            affected_sample: Cow::Borrowed(&self.affected_sample),
            domains: Cow::Borrowed(&self.domains),
        }
        .serialize(serializer)
    }
}

impl TryFrom<StoredCandidate<'static>> for Candidate {
    type Error = String;

    fn try_from(stored: StoredCandidate<'static>) -> Result<Candidate, String> {
        let verdict = ObjectVerdict::new(
            stored.root_cause.parse()?,
            stored.state,
            stored.since,
            stored.reason.into_owned(),
            stored.message.into_owned(),
        );
        Ok(Candidate {
            // As stored: the member's cluster is the one it was evaluated on.
            verdict: ObjectVerdict {
                cluster: stored.cluster.into_owned(),
                ..verdict
            },
            cause: stored.cause.into_owned(),
            affected_count: stored.affected_count,
            affected_sample: stored.affected_sample.into_owned(),
            domains: stored.domains.into_owned(),
            cluster_labels: BTreeMap::new(),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum AlertStatus {
    /// Seen, waiting out its rule's `for`; nothing sent.
    Pending,
    Firing,
    Resolved,
}

/// A notification about an alert.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
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
    /// The incident's key (`crate::incidents::key_of`).
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

/// What a notification says: the alert as it was when the event happened. Stored as the
/// outbox row's payload and rendered per sink at delivery, so a retry sends exactly what was
/// decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Notice {
    pub alert_id: i64,
    pub event: Event,
    pub status: AlertStatus,
    /// The incident's key. Notices queued before incidents lack it and the three lists below.
    #[serde(default)]
    pub key: String,
    /// The first cluster's root cause, and that cluster.
    pub root_cause: String,
    pub cluster: String,
    /// Every cluster the incident is on (after it cleared, the last ones).
    #[serde(default)]
    pub clusters: Vec<String>,
    /// For an update: the clusters that joined and left since the alert last changed.
    #[serde(default)]
    pub joined: Vec<String>,
    #[serde(default)]
    pub left: Vec<String>,
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
    /// What speaks for the cause: the version behind it when one separates its clusters, then
    /// its latest Warning event reasons ("BackOff (12×, kubelet): …"), newest first. Notices
    /// queued before these were kept have none.
    #[serde(default)]
    pub evidence: Vec<String>,
    /// The root cause's fleetglass page, when `public_url` is configured.
    pub link: Option<String>,
    /// When the event happened.
    pub at: DateTime<Utc>,
}

// A silence as stored (a plain comment: a doc comment would become its OpenAPI description).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Silence {
    pub id: i64,
    pub root_cause: Option<String>,
    pub domain: Option<String>,
    pub cluster: Option<String>,
    pub until: DateTime<Utc>,
    pub comment: String,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
}

/// A silence as asked for through the API or the form.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewSilence {
    #[serde(default)]
    pub root_cause: Option<String>,
    #[serde(default)]
    pub domain: Option<String>,
    #[serde(default)]
    pub cluster: Option<String>,
    pub until: DateTime<Utc>,
    #[serde(default)]
    pub comment: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    /// `alerts.members` as open alerts have stored it since incidents (migration 0010).
    const STORED_MEMBER: &str = r#"{"root_cause":"prod-eu-1/Deployment/flux-system/tofu-controller","cluster":"prod-eu-1","state":"failed","since":"2026-11-20T10:00:00Z","reason":"ImagePullBackOff","message":"Back-off pulling image","affected_count":3,"affected_sample":["prod-eu-1/Kustomization/flux-system/apps"],"domains":["payments"]}"#;

    fn member() -> Candidate {
        serde_json::from_str(STORED_MEMBER).unwrap()
    }

    /// Members stored before causes were recorded read as `unrecorded` and are written back
    /// as they were; a member's cause is stored beside its other fields and reads back.
    #[test]
    fn a_member_is_stored_in_the_json_open_alerts_already_hold_and_its_cause() {
        let old = member();
        assert_eq!(old.cause, Cause::default());
        assert_eq!(serde_json::to_string(&old).unwrap(), STORED_MEMBER);

        let named = Candidate {
            cause: Cause::new(crate::health::CauseCode::ContainerWaiting)
                .with("container", "manager")
                .with("reason", "ImagePullBackOff"),
            ..old
        };
        let stored = serde_json::to_string(&named).unwrap();
        assert!(stored.contains(r#""cause":{"code":"container_waiting","params":{"container":"manager","reason":"ImagePullBackOff"}}"#), "{stored}");
        assert_eq!(serde_json::from_str::<Candidate>(&stored).unwrap(), named);
    }

    #[test]
    fn a_stored_member_reads_back_as_the_root_cause_it_was() {
        let member = member();
        assert_eq!(
            member.verdict,
            ObjectVerdict::new(
                "prod-eu-1/Deployment/flux-system/tofu-controller"
                    .parse::<ObjectId>()
                    .unwrap(),
                State::Failed,
                Some(Utc.with_ymd_and_hms(2026, 11, 20, 10, 0, 0).unwrap()),
                "ImagePullBackOff".into(),
                "Back-off pulling image".into(),
            ),
            "the kind, namespace and name are read from the id"
        );
        assert_eq!(member.affected_count, 3);
        assert_eq!(member.domains, ["payments"]);
        assert!(member.cluster_labels.is_empty());
    }
}
