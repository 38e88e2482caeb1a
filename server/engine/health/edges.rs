//! The graph as the verdicts carry it: each object's edges by id, exactly those the root-cause
//! walk follows, plus references that resolve to nothing and the absent controller an object
//! needs, so the pages show the graph the engine used and never derive their own.

use super::EdgeKind;
use super::controllers::Liveness;
use super::graph::Graph;
use super::index::Index;
use super::verdict::ObjectEdge;
use crate::model::ObjectId;

/// Per object (in input order), its edges sorted by kind, then target.
pub(super) fn of_objects(ids: &[ObjectId], graph: &Graph) -> Vec<Vec<ObjectEdge>> {
    (0..ids.len())
        .map(|i| {
            let walked = graph.edges[i].iter().map(|e| ObjectEdge {
                kind: e.kind,
                target: ids[e.target].clone(),
            });
            let dangling = graph.dangling[i].iter().map(|(kind, target)| ObjectEdge {
                kind: *kind,
                target: target.clone(),
            });
            let absent = match graph.liveness[i] {
                Liveness::Missing(absent) => Some(ObjectEdge {
                    kind: EdgeKind::Controller,
                    target: graph.absent.list[absent].id(),
                }),
                _ => None,
            };
            let mut edges: Vec<ObjectEdge> = walked.chain(dangling).chain(absent).collect();
            edges.sort_unstable();
            edges.dedup();
            edges
        })
        .collect()
}

/// The Flux controller Deployments matched (any namespace, every shard) and those needed but
/// absent, sorted by id.
pub(super) fn controllers(index: &Index, ids: &[ObjectId], graph: &Graph) -> Vec<ObjectId> {
    let mut found: Vec<ObjectId> = index
        .controller_deployments()
        .map(|i| ids[i].clone())
        .chain(graph.absent.list.iter().map(|a| a.id()))
        .collect();
    found.sort_unstable();
    found.dedup();
    found
}
