//! Cluster freshness: whether the evidence collected from a cluster (or for one kind on it)
//! can be trusted at all. A cluster without a ClusterInfo is fresh (files have no age).
//! [`untrusted_data`] is the one rule: the engine applies it in every evaluation, and every
//! reader of stored verdicts applies it again when it reads them, so data a stopped collector
//! left behind is judged at the time it is read.

use super::deadlines::Clock;
use super::{Cause, CauseCode, ClusterInfo, InputEvidence, cluster_of_cluster_id};
use crate::model::{Kind, ObjectId, human};
use chrono::{DateTime, TimeDelta, Utc};
use std::collections::HashMap;

pub(super) struct Clusters<'a> {
    infos: HashMap<&'a str, &'a ClusterInfo>,
    freshness: TimeDelta,
    clock: Clock<'a>,
}

impl<'a> Clusters<'a> {
    pub fn new(infos: &'a [ClusterInfo], freshness: TimeDelta, clock: Clock<'a>) -> Self {
        let infos = infos
            .iter()
            .map(|info| (info.name.as_str(), info))
            .collect();
        Clusters {
            infos,
            freshness,
            clock,
        }
    }

    pub fn info(&self, cluster: &str) -> Option<&'a ClusterInfo> {
        self.infos.get(cluster).copied()
    }

    /// Why the whole cluster's data cannot be trusted, if it cannot: the cause and its reason.
    pub fn data_problem(&self, cluster: &str) -> Option<(Cause, String)> {
        let info = self.info(cluster)?;
        if info.input.is_some() {
            return None;
        }
        if let Some(last_good) = info.last_good
            && info.error.is_none()
            && self.clock.past(last_good, self.freshness)
        {
            // Due again when the age in the reason would read differently.
            self.clock.age(last_good);
        }
        untrusted_data(
            info.last_good,
            info.error.as_deref(),
            self.freshness,
            self.clock.now,
        )
        .map(|why| (why.cause(), why.reason(cluster)))
    }

    /// Clusters given an info whose whole data cannot be trusted: each is a root cause even
    /// when none of its objects is held (never reached, not yet listed).
    pub fn untrusted(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.infos
            .keys()
            .copied()
            .filter(|cluster| self.data_problem(cluster).is_some())
    }

    /// Why one kind on the cluster cannot be read (e.g. RBAC Forbidden on HelmRelease), or
    /// that its first list has not completed.
    pub fn kind_error(&self, cluster: &str, kind: Kind) -> Option<&'a str> {
        let info = self.info(cluster)?;
        info.kind_errors
            .get(&kind)
            .map(String::as_str)
            .or_else(|| info.unlisted.contains(&kind).then_some(NOT_YET_LISTED))
    }

    /// Whether the absence of an object of `kind` is evidence: always for what the collector
    /// lists, only for the kinds an input holds.
    pub fn covers(&self, cluster: &str, kind: Kind) -> bool {
        self.input(cluster)
            .is_none_or(|input| input.kinds.contains(&kind))
    }

    /// Where the input gives differing copies of `id`, if it does.
    pub fn conflicting_copies(&self, cluster: &str, id: &ObjectId) -> Option<&'a [String]> {
        self.input(cluster)?.conflicting.get(id).map(Vec::as_slice)
    }

    fn input(&self, cluster: &str) -> Option<&'a InputEvidence> {
        self.info(cluster)?.input.as_ref()
    }

    /// The cause and reason on the cluster's own root-cause entry: its data untrusted, else
    /// the kinds it cannot read (named in the cause; their errors only in the reason).
    pub fn root_cause_of(&self, cluster: &str) -> (Cause, String) {
        if let Some(problem) = self.data_problem(cluster) {
            return problem;
        }
        let kind_errors = self
            .info(cluster)
            .into_iter()
            .flat_map(|info| &info.kind_errors);
        let kinds: Vec<&str> = kind_errors.clone().map(|(kind, _)| kind.as_str()).collect();
        let errors: Vec<String> = kind_errors
            .map(|(kind, error)| format!("cannot read {kind}: {error}"))
            .collect();
        (
            Cause::new(CauseCode::KindUnreadable).with("kind", kinds.join(",")),
            errors.join("; "),
        )
    }

    /// When the cluster's data was last known good: the start of its unverifiable period.
    pub fn last_good(&self, cluster: &str) -> Option<DateTime<Utc>> {
        self.info(cluster)?.last_good
    }
}

/// What a kind whose first list has not completed is said to be.
pub const NOT_YET_LISTED: &str = "not yet listed";

/// Why a cluster's collected data cannot be trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Untrusted {
    /// No list ever completed and the API server does not answer.
    NeverReached(String),
    /// Listed once, and the API server stopped answering.
    Unreachable(String),
    /// Reached, but its first full list has not completed.
    NotYetListed,
    /// The last good list is older than the freshness limit.
    Stale { age: TimeDelta, limit: TimeDelta },
}

impl Untrusted {
    /// What is wrong, without naming the cluster ("data is 5m old (freshness limit 2m)").
    pub fn describe(&self) -> String {
        match self {
            Untrusted::NeverReached(error) => format!("never reached: {error}"),
            Untrusted::Unreachable(error) => format!("unreachable: {error}"),
            Untrusted::NotYetListed => {
                format!("{NOT_YET_LISTED}: its first full list has not completed")
            }
            Untrusted::Stale { age, limit } => {
                format!(
                    "data is {} old (freshness limit {})",
                    human(*age),
                    human(*limit)
                )
            }
        }
    }

    /// The cause as data: which of the four, and for an API server that does not answer the
    /// class of its error, never the error's details or the age.
    pub fn cause(&self) -> Cause {
        match self {
            Untrusted::NeverReached(error) => {
                Cause::new(CauseCode::ClusterNeverReached).with("error", error_class(error))
            }
            Untrusted::Unreachable(error) => {
                Cause::new(CauseCode::ClusterUnreachable).with("error", error_class(error))
            }
            Untrusted::NotYetListed => Cause::new(CauseCode::ClusterNotYetListed),
            Untrusted::Stale { .. } => Cause::new(CauseCode::ClusterStale),
        }
    }

    /// The reason a verdict or root cause gives: "cluster prod-eu-1 data is 5m old …".
    pub fn reason(&self, cluster: &str) -> String {
        format!("cluster {cluster} {}", self.describe())
    }
}

/// A root cause's reason where its clusters are listed beside it (an incident on several):
/// for a cluster that is itself the cause, without the cluster [`Untrusted::reason`] names
/// ("data is 5m old …"); any other reason as it is.
pub fn reason_beside_clusters<'r>(id: &str, reason: &'r str) -> &'r str {
    match cluster_of_cluster_id(id) {
        Some(cluster) => reason
            .strip_prefix("cluster ")
            .and_then(|rest| rest.strip_prefix(cluster))
            .and_then(|rest| rest.strip_prefix(' '))
            .unwrap_or(reason),
        None => reason,
    }
}

/// The collector words a cluster's error as its class, then the details after a colon
/// ("401 Unauthorized: credentials rejected", "TLS: certificate expired", "connection
/// refused": sources/kube/errors.rs `classify`): the class.
fn error_class(error: &str) -> &str {
    error
        .split_once(':')
        .map_or(error, |(class, _)| class)
        .trim()
}

/// Whether the data collected from a cluster can be trusted at `now`: it was never listed in
/// full (or never reached), its API server stopped answering, or its last good list is older
/// than `freshness`. Nothing is proven about a cluster whose collector never finished a list,
/// so no `last_good` is never fresh.
pub fn untrusted_data(
    last_good: Option<DateTime<Utc>>,
    error: Option<&str>,
    freshness: TimeDelta,
    now: DateTime<Utc>,
) -> Option<Untrusted> {
    match (last_good, error) {
        (None, Some(error)) => Some(Untrusted::NeverReached(error.to_string())),
        (Some(_), Some(error)) => Some(Untrusted::Unreachable(error.to_string())),
        (None, None) => Some(Untrusted::NotYetListed),
        (Some(last_good), None) => (now - last_good > freshness).then_some(Untrusted::Stale {
            age: now - last_good,
            limit: freshness,
        }),
    }
}

/// Whether evaluating with `after` instead of `before` gives the same result at `now`: they
/// differ at most in `last_good`, and `after` is fresh with nothing unreadable. `last_good` is
/// read only for a cluster whose data is stale, unreachable or partly unreadable (the
/// unverifiable verdicts and their cluster root cause), so a probe that only moves it forward
/// changes nothing. (`before` having gone stale since is a deadline its evaluation carries.)
pub fn interchangeable(
    before: &ClusterInfo,
    after: &ClusterInfo,
    freshness: TimeDelta,
    now: DateTime<Utc>,
) -> bool {
    let fresh = |info: &ClusterInfo| {
        info.error.is_none()
            && info.kind_errors.is_empty()
            && info.unlisted.is_empty()
            && info.last_good.is_some_and(|at| now - at <= freshness)
    };
    let same_but_last_good = ClusterInfo {
        last_good: after.last_good,
        ..before.clone()
    } == *after;
    same_but_last_good && fresh(before) && fresh(after)
}
