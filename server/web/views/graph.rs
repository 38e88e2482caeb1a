//! The edges the pages walk, read from what the objects themselves say: dependsOn, source,
//! health checks, the controller (and its shard), and Flux's ownership labels.

use crate::model::{Kind, Object, ObjectId};

/// The label Flux uses to assign an object to a controller shard.
pub const SHARD_LABEL: &str = "sharding.fluxcd.io/key";
/// Where the Flux controllers run.
pub const CONTROLLER_NAMESPACE: &str = "flux-system";

/// One prerequisite of an object, and why it is one.
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    pub id: String,
    pub relation: &'static str,
}

/// Which controller reconciles an object, on which shard, as a Deployment name.
#[derive(Debug, Clone, PartialEq)]
pub struct Reconciler {
    pub controller: &'static str,
    pub shard: Option<String>,
    pub deployment: String,
}

pub fn reconciler(object: &Object) -> Option<Reconciler> {
    let controller = object.kind.controller()?;
    let shard = object.label(SHARD_LABEL).map(str::to_string);
    let deployment = match &shard {
        Some(shard) => format!("{controller}-{shard}"),
        None => controller.to_string(),
    };
    Some(Reconciler {
        controller,
        shard,
        deployment,
    })
}

pub fn deployment_id(cluster: &str, deployment: &str) -> String {
    ObjectId::new(cluster, Kind::Deployment, CONTROLLER_NAMESPACE, deployment).0
}

/// What the object depends on (not what it applied: see `applied_by`).
pub fn prerequisites(object: &Object) -> Vec<Edge> {
    let cluster = &object.cluster;
    let id =
        |kind: &str, namespace: &str, name: &str| format!("{cluster}/{kind}/{namespace}/{name}");
    let mut edges: Vec<Edge> = object
        .spec
        .depends_on
        .iter()
        .map(|r| Edge {
            id: id(object.kind.as_str(), &r.namespace, &r.name),
            relation: "depends on",
        })
        .collect();
    if let Some(source) = &object.spec.source_ref {
        edges.push(Edge {
            id: id(&source.kind, &source.namespace, &source.name),
            relation: "source",
        });
    }
    edges.extend(object.spec.health_checks.iter().map(|r| Edge {
        id: id(&r.kind, &r.namespace, &r.name),
        relation: "health check",
    }));
    if let Some(reconciler) = reconciler(object) {
        edges.push(Edge {
            id: deployment_id(cluster, &reconciler.deployment),
            relation: "controller",
        });
    }
    edges
}

/// The Flux object that applied this one, as an id.
pub fn applier_id(object: &Object) -> Option<String> {
    let (kind, namespace, name) = object.applied_by()?;
    Some(ObjectId::new(&object.cluster, kind, namespace, name).0)
}
