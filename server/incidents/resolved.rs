//! Recently resolved incidents: root causes that cleared within [`RESOLVED_WINDOW`], grouped
//! like active ones, leaving out any incident that is active again.

use super::{key_of, object_of};
use crate::health::State;
use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};

/// How long a resolved incident stays listed.
pub const RESOLVED_WINDOW: TimeDelta = TimeDelta::hours(24);

/// A root cause that cleared, as the store recorded it when it disappeared.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedCause {
    pub id: String,
    pub cluster: String,
    pub state: State,
    pub since: Option<DateTime<Utc>>,
    pub cause: crate::health::Cause,
    pub reason: String,
    pub resolved_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct ResolvedIncident {
    pub key: String,
    /// The state it was in before it cleared (the worst among its clusters).
    pub state: State,
    pub reason: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    /// By name.
    pub clusters: Vec<String>,
    /// In the order of `clusters`.
    pub root_causes: Vec<String>,
    pub since: Option<DateTime<Utc>>,
    /// When the last of its root causes cleared.
    pub resolved_at: DateTime<Utc>,
}

/// Newest resolution first; `active` are the keys of the incidents active now.
pub fn recently_resolved<'a>(
    resolved: &[ResolvedCause],
    active: impl IntoIterator<Item = &'a str>,
) -> Vec<ResolvedIncident> {
    let active: HashSet<&str> = active.into_iter().collect();
    let mut by_key: BTreeMap<String, ResolvedIncident> = BTreeMap::new();
    for cause in resolved {
        let key = key_of(&cause.id, &cause.cause);
        if active.contains(key.as_str()) {
            continue;
        }
        let (kind, namespace, name) = object_of(&cause.id);
        let entry = by_key
            .entry(key.clone())
            .or_insert_with(|| ResolvedIncident {
                key,
                state: cause.state,
                reason: cause.reason.clone(),
                kind: kind.to_string(),
                namespace: namespace.to_string(),
                name: name.to_string(),
                clusters: Vec::new(),
                root_causes: Vec::new(),
                since: cause.since,
                resolved_at: cause.resolved_at,
            });
        entry.state = entry.state.worst(cause.state);
        entry.resolved_at = entry.resolved_at.max(cause.resolved_at);
        entry.since = entry.since.into_iter().chain(cause.since).min();
        // A cause that cleared twice in the window is listed once.
        if !entry.root_causes.contains(&cause.id) {
            entry.clusters.push(cause.cluster.clone());
            entry.root_causes.push(cause.id.clone());
        }
    }
    let mut incidents: Vec<ResolvedIncident> = by_key.into_values().collect();
    for incident in &mut incidents {
        let mut pairs: Vec<(String, String)> = std::mem::take(&mut incident.clusters)
            .into_iter()
            .zip(std::mem::take(&mut incident.root_causes))
            .collect();
        pairs.sort();
        (incident.clusters, incident.root_causes) = pairs.into_iter().unzip();
    }
    incidents.sort_by(|a, b| b.resolved_at.cmp(&a.resolved_at).then(a.key.cmp(&b.key)));
    incidents
}
