//! An object and its verdict: who it is (the id and its parts) and what the engine said about
//! it (state, since when, why). The one shape the stored rows, the pages and the API carry it
//! in; its JSON fields are the `evaluate` command's (`id, cluster, kind, namespace, name,
//! state, since, reason, message`).
//!
//! It is not the engine's `health::Verdict`, whose kind is a typed `Kind` the engine matches
//! on and which carries root causes, domains and edges, while this kind must also name
//! `Cluster` (a stale cluster is a root cause) and this type carries the API's schema.
//! Embedding either in the other would remove no type and would make every verdict the engine
//! and `evaluate` print serialise through a flattened map, so the two stay apart.

use crate::health::State;
use crate::model::{Kind, ObjectId};
use chrono::{DateTime, Utc};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct ObjectVerdict {
    #[schema(value_type = String)]
    pub id: ObjectId,
    pub cluster: String,
    /// As the id spells it: a kind fleetglass reads, or `Cluster` for a cluster that is itself
    /// a root cause (its data is stale).
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub state: State,
    pub since: Option<DateTime<Utc>>,
    pub reason: String,
    pub message: String,
}

impl ObjectVerdict {
    /// The verdict on `id`, its parts read from the id (an id without four parts is all name).
    pub fn new(
        id: ObjectId,
        state: State,
        since: Option<DateTime<Utc>>,
        reason: String,
        message: String,
    ) -> ObjectVerdict {
        let (cluster, kind, namespace, name) = id.parts().unwrap_or(("", "", "", id.as_str()));
        ObjectVerdict {
            cluster: cluster.to_string(),
            kind: kind.to_string(),
            namespace: namespace.to_string(),
            name: name.to_string(),
            id,
            state,
            since,
            reason,
            message,
        }
    }

    pub fn is_kind(&self, kind: Kind) -> bool {
        self.kind == kind.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parts_are_read_from_the_id_and_a_cluster_is_named_by_its_own() {
        let verdict = |id: &str| {
            ObjectVerdict::new(
                id.parse::<ObjectId>().unwrap(),
                State::Failed,
                None,
                String::new(),
                String::new(),
            )
        };
        let object = verdict("c/HelmRelease/apps/a/b");
        assert_eq!(
            (
                object.cluster.as_str(),
                object.kind.as_str(),
                object.namespace.as_str(),
                object.name.as_str()
            ),
            ("c", "HelmRelease", "apps", "a/b")
        );
        let cluster = verdict("prod/Cluster//prod");
        assert_eq!(
            (
                cluster.cluster.as_str(),
                cluster.kind.as_str(),
                cluster.name.as_str()
            ),
            ("prod", "Cluster", "prod")
        );
    }
}
