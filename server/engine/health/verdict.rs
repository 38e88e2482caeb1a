//! What the engine returns: a verdict per object, the root causes, and the domain roll-ups.

use super::{Cause, EdgeKind, State};
use crate::model::{Kind, ObjectId, SharedStr};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// One object's verdict. The JSON field names are a contract (the `evaluate` command and the
/// API both print them): `id, cluster, kind, namespace, name, state, since, reason, message,
/// root_causes`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub id: ObjectId,
    /// Shared with the object's own copy, as every object of a namespace shares it.
    pub cluster: SharedStr,
    pub kind: Kind,
    pub namespace: SharedStr,
    pub name: String,
    pub state: State,
    /// When the object entered this state, from the conditions' transition times.
    pub since: Option<DateTime<Utc>>,
    /// Why, as fields (what the product reads; not in the verdict's JSON contract).
    #[serde(skip)]
    pub cause: Cause,
    /// Short classified reason a human can act on ("RBAC Forbidden", "admission denied by …").
    pub reason: String,
    pub message: String,
    /// Ids of the root causes; empty when healthy; its own id when it is its own root cause.
    pub root_causes: Vec<ObjectId>,
    /// The domains the object belongs to on its cluster (its domain's Flux objects and what
    /// they applied), sorted.
    pub domains: Vec<String>,
    /// What the object waits on, as the root-cause walk follows it (sorted). Not part of the
    /// verdict's JSON contract: the collector stores it, pages read it from the store.
    #[serde(skip)]
    pub edges: Vec<ObjectEdge>,
}

/// One prerequisite of an object: the edge the engine walks from it, and where to. The target
/// may be absent from the input (a reference to nothing, a controller Deployment not found):
/// then the edge says what the object needs, and its verdict says it is missing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ObjectEdge {
    pub kind: EdgeKind,
    pub target: ObjectId,
}

/// A problem none of whose prerequisites is a problem: the thing to fix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RootCause {
    pub id: ObjectId,
    pub state: State,
    pub since: Option<DateTime<Utc>>,
    /// Why, as fields: what incidents key on (not in the JSON contract).
    #[serde(skip)]
    pub cause: Cause,
    pub reason: String,
    pub message: String,
    /// Every object whose verdict lists this root cause (itself included).
    pub affected: Vec<ObjectId>,
}

/// A domain on one cluster.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DomainVerdict {
    pub domain: String,
    pub cluster: String,
    /// The version applied, read as configured; None when the version object is missing
    /// (or nothing of it was ever applied).
    pub version: Option<String>,
    /// The version offered and not applied yet (the source moved on, an upgrade attempted):
    /// pending, shown beside the applied one; a cell with one is never fully healthy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offered: Option<String>,
    /// The worst state among the domain's objects on the cluster, at least `blocked` while a
    /// blocker upstream holds it and `unverifiable` without objects or a version read: `healthy`
    /// exactly when `fully_healthy`.
    pub state: State,
    /// Every object of the domain on the cluster is healthy and at the version, and nothing it
    /// depends on is a problem (no blockers).
    pub fully_healthy: bool,
    /// The domain's objects on the cluster: its Flux objects and the workloads and pods they
    /// applied (what the objects page lists for the domain there).
    pub objects: usize,
    /// How many of those are healthy.
    pub healthy: usize,
    /// The root causes keeping the domain from being fully healthy on this cluster.
    pub blockers: Vec<ObjectId>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Evaluation {
    /// Sorted by id.
    pub objects: Vec<Verdict>,
    /// Worst first, then most affected.
    pub root_causes: Vec<RootCause>,
    /// Sorted by domain, then cluster.
    pub domains: Vec<DomainVerdict>,
    /// Cross-stack edges: one Flux object provides what another consumes.
    pub dependencies: Vec<Dependency>,
    /// Objects held by the inventories of more than one Flux object.
    pub co_ownerships: Vec<CoOwnership>,
    /// Which Flux object provides each CRD present now (kept as history by the collector, so a
    /// CRD that vanishes can be traced to who provided it).
    pub crd_providers: Vec<CrdProvider>,
    /// The Flux controller Deployments the engine matched, on every cluster and in whatever
    /// namespace, and those objects need that are absent; sorted. For the cluster pages.
    #[serde(skip)]
    pub controllers: Vec<ObjectId>,
}

/// Every field compared, the short lists first. The collector compares each re-evaluated
/// cluster with its kept evaluation; when a verdict that matters changed, the root causes or
/// the domain verdicts usually changed with it, and those lists are a few entries where the
/// verdicts are the whole cluster.
impl PartialEq for Evaluation {
    fn eq(&self, other: &Self) -> bool {
        // Destructured, so a field added later cannot be left out of the comparison.
        let Evaluation {
            objects,
            root_causes,
            domains,
            dependencies,
            co_ownerships,
            crd_providers,
            controllers,
        } = self;
        *root_causes == other.root_causes
            && *domains == other.domains
            && *dependencies == other.dependencies
            && *co_ownerships == other.co_ownerships
            && *crd_providers == other.crd_providers
            && *controllers == other.controllers
            && *objects == other.objects
    }
}

/// `consumer` needs `object` (`CustomResourceDefinition.apiextensions.k8s.io/<name>` or
/// `Namespace/<name>`), which `provider`'s inventory holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dependency {
    pub cluster: String,
    pub provider: ObjectId,
    pub consumer: ObjectId,
    pub object: String,
}

/// One object in several inventories: removing it from one will not delete it, and the other's
/// next change might.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CoOwnership {
    pub cluster: String,
    pub object: String,
    pub providers: Vec<ObjectId>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CrdProvider {
    pub cluster: String,
    pub group: String,
    pub kind: String,
    pub crd: String,
    pub provider: ObjectId,
}

/// The kind in the id of a cluster that is itself the root cause (stale data), and the word
/// alert rules use for it: spelled here only.
pub const CLUSTER_KIND: &str = "Cluster";

/// The id the engine gives a cluster when the cluster itself is the root cause (stale data).
pub fn cluster_id(cluster: &str) -> ObjectId {
    ObjectId(format!("{cluster}/{CLUSTER_KIND}//{cluster}"))
}

/// The cluster an id names when it is [`cluster_id`]'s (`prod/Cluster//prod`), else None.
pub fn cluster_of_cluster_id(id: &str) -> Option<&str> {
    let (cluster, kind, namespace, name) = ObjectId::split(id)?;
    (kind == CLUSTER_KIND && namespace.is_empty() && name == cluster).then_some(cluster)
}

/// What a root cause is about, the same on every cluster it is on: an object by kind,
/// namespace and name, or the cluster itself ([`cluster_id`]: its data cannot be trusted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Subject<'a> {
    Object {
        kind: &'a str,
        namespace: &'a str,
        name: &'a str,
    },
    Cluster,
}

impl<'a> Subject<'a> {
    /// The subject of an id; None for text that is not one.
    pub fn of(id: &'a str) -> Option<Subject<'a>> {
        if cluster_of_cluster_id(id).is_some() {
            return Some(Subject::Cluster);
        }
        let (_, kind, namespace, name) = ObjectId::split(id)?;
        Some(Subject::Object {
            kind,
            namespace,
            name,
        })
    }

    /// The subject on `cluster`: the object there, or that cluster itself.
    pub fn on(self, cluster: &str) -> ObjectId {
        match self {
            Subject::Cluster => cluster_id(cluster),
            Subject::Object {
                kind,
                namespace,
                name,
            } => ObjectId(format!("{cluster}/{kind}/{namespace}/{name}")),
        }
    }
}

/// The same root cause on another cluster: the object of the same kind, namespace and name
/// there, or that cluster itself when `id` is a cluster ([`cluster_id`]).
pub fn same_cause_on(id: &str, cluster: &str) -> ObjectId {
    match Subject::of(id) {
        Some(subject) => subject.on(cluster),
        None => ObjectId(id.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_cause_on_another_cluster_keeps_the_object_or_names_that_cluster() {
        let deployment = "prod-1/Deployment/flux-system/tofu-controller";
        assert_eq!(
            same_cause_on(deployment, "prod-2").as_str(),
            "prod-2/Deployment/flux-system/tofu-controller"
        );
        assert_eq!(
            cluster_of_cluster_id("prod-1/Cluster//prod-1"),
            Some("prod-1")
        );
        assert_eq!(cluster_of_cluster_id("prod-1/Cluster//prod-2"), None);
        assert_eq!(
            same_cause_on("prod-1/Cluster//prod-1", "prod-2"),
            cluster_id("prod-2")
        );
        assert_eq!(same_cause_on("not an id", "prod-2").as_str(), "not an id");
    }
}
