//! Incidents: the fleet's view of root causes. Root causes are per cluster; the same cause on
//! several clusters (same kind, namespace and name, same cause code and parameters: see
//! [`key_of`]) is one incident, ordered by impact. Pure: no I/O, no clock.

mod evidence;
mod flaps;
mod key;
mod order;
mod resolved;
mod split;

pub use evidence::{REASONS_SHOWN, ReasonSeen, by_reason};
pub use flaps::{ENTRIES_COUNTED, FLAP_WINDOW, Flap, flapping};
pub use key::{key_of, object_of};
pub use order::RingOrder;
pub use resolved::{RESOLVED_WINDOW, ResolvedCause, ResolvedIncident, recently_resolved};
pub use split::{VersionSplit, alert_version_split, version_split};

use crate::health::State;
use chrono::{DateTime, Utc};
use rustc_hash::FxHashSet;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One root cause on one cluster, with what grouping reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Cause {
    /// `cluster/Kind/namespace/name`.
    pub id: String,
    pub cluster: String,
    /// The cluster's `group_by` label value (its ring).
    pub group: String,
    pub state: State,
    pub since: Option<DateTime<Utc>>,
    /// What it is, as fields: what the incident key is made of.
    pub cause: crate::health::Cause,
    pub reason: String,
    /// Objects whose verdict names this cause (itself included when it is an object).
    pub affected: Vec<String>,
    /// The domain versions this cause keeps from being fully healthy on its cluster.
    pub blocks: Vec<DomainVersion>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, utoipa::ToSchema)]
pub struct DomainVersion {
    pub domain: String,
    /// The version applied; None when the domain's version object is missing.
    pub version: Option<String>,
    /// Offered and not applied yet (pending); null when nothing is.
    pub offered: Option<String>,
}

/// One cause on every cluster it hits. The JSON fields are a contract (`/api/v1/fleet` and
/// `/api/v1/problems`): exactly these.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Incident {
    /// Stable: kind, namespace, name and a digest of the cause's code and parameters.
    pub key: String,
    /// The worst state among its root causes.
    pub state: State,
    /// The reason as the first of its clusters words it.
    pub reason: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    /// In ring order, then by name.
    pub clusters: Vec<String>,
    /// The per-cluster root-cause ids, in the order of `clusters`.
    pub root_causes: Vec<String>,
    /// Distinct objects its root causes affect (see [`affected_total`]).
    pub affected_total: usize,
    /// The earliest of its root causes' `since`.
    pub since: Option<DateTime<Utc>>,
    /// The domain versions it blocks, on any of its clusters.
    pub domains: Vec<DomainVersion>,
}

/// How many objects the causes affect: each object once, however many causes name it, and a
/// cause that is an object counts as affected (it is not healthy either). Every page and API
/// that says "affecting N objects" counts with this.
pub fn affected_total<'a>(affected: impl IntoIterator<Item = &'a [String]>) -> usize {
    // Hashed with Fx into a set sized once, not ordered: the fleet page counts some 10,000
    // ids on every request, and ids share long prefixes (`cluster/Kind/namespace/`) that
    // make each ordered comparison slow.
    let lists: Vec<&[String]> = affected.into_iter().collect();
    let mut seen = FxHashSet::with_capacity_and_hasher(
        lists.iter().map(|list| list.len()).sum(),
        Default::default(),
    );
    seen.extend(lists.into_iter().flatten().map(String::as_str));
    seen.len()
}

/// Groups root causes into incidents, most impact first: the highest ring (in `rings` order),
/// then most domain versions blocked, most objects affected, oldest.
pub fn group(causes: &[Cause], rings: &RingOrder) -> Vec<Incident> {
    let mut by_key: BTreeMap<String, Vec<&Cause>> = BTreeMap::new();
    for cause in causes {
        by_key
            .entry(key_of(&cause.id, &cause.cause))
            .or_default()
            .push(cause);
    }
    let mut incidents: Vec<(usize, Incident)> = by_key
        .into_iter()
        .map(|(key, mut members)| {
            members.sort_by(|a, b| {
                (rings.rank(&a.group), &a.cluster).cmp(&(rings.rank(&b.group), &b.cluster))
            });
            let top_ring = rings.rank(&members[0].group);
            (top_ring, incident(key, &members))
        })
        .collect();
    incidents.sort_by(|(ring_a, a), (ring_b, b)| {
        ring_a
            .cmp(ring_b)
            .then(b.domains.len().cmp(&a.domains.len()))
            .then(b.affected_total.cmp(&a.affected_total))
            .then(order::older_first(a.since, b.since))
            .then(a.key.cmp(&b.key))
    });
    incidents
        .into_iter()
        .map(|(_, incident)| incident)
        .collect()
}

fn incident(key: String, members: &[&Cause]) -> Incident {
    let first = members[0];
    let (kind, namespace, name) = object_of(&first.id);
    let domains: BTreeSet<&DomainVersion> = members.iter().flat_map(|c| &c.blocks).collect();
    Incident {
        key,
        state: members
            .iter()
            .map(|c| c.state)
            .reduce(State::worst)
            .unwrap_or(first.state),
        reason: first.reason.clone(),
        kind: kind.to_string(),
        namespace: namespace.to_string(),
        name: name.to_string(),
        clusters: members.iter().map(|c| c.cluster.clone()).collect(),
        root_causes: members.iter().map(|c| c.id.clone()).collect(),
        affected_total: affected_total(members.iter().map(|c| c.affected.as_slice())),
        since: members.iter().filter_map(|c| c.since).min(),
        domains: domains.into_iter().cloned().collect(),
    }
}

#[cfg(test)]
mod tests;
