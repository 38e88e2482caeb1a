//! Turns resolved findings into the public verdicts and the root-cause list (each root cause
//! with every object that names it).

use super::clusters::Clusters;
use super::index::HashMap;
use super::roots::{Resolved, Root};
use super::verdict::ObjectEdge;
use super::{RootCause, State, Verdict, cluster_id};
use crate::model::{Object, ObjectId};

pub(super) fn root_id(ids: &[ObjectId]) -> impl Fn(Root) -> ObjectId + '_ {
    move |root| match root {
        Root::Object(i) => ids[i].clone(),
        Root::Cluster(name) => cluster_id(name),
        Root::Absent(absent) => absent.id(),
    }
}

/// Worst first, then most affected, then by id; `affected` sorted by id.
pub(super) fn root_causes(
    ids: &[ObjectId],
    resolved: &[Resolved],
    clusters: &Clusters,
) -> Vec<RootCause> {
    let mut affected: HashMap<Root, Vec<ObjectId>> = HashMap::default();
    for (i, r) in resolved.iter().enumerate() {
        for &root in &r.roots {
            affected.entry(root).or_default().push(ids[i].clone());
        }
    }
    // A cluster never reached or not yet listed holds no objects, and is a cause all the same.
    for cluster in clusters.untrusted() {
        affected.entry(Root::Cluster(cluster)).or_default();
    }
    let to_id = root_id(ids);
    let mut causes: Vec<RootCause> = affected
        .into_iter()
        .map(|(root, mut affected)| {
            affected.sort_unstable();
            match root {
                Root::Object(i) => {
                    let finding = &resolved[i].finding;
                    RootCause {
                        id: to_id(root),
                        state: finding.state,
                        since: finding.since,
                        cause: finding.cause.clone(),
                        reason: finding.reason.clone(),
                        message: finding.message.clone(),
                        affected,
                    }
                }
                // Failed like a controller scaled to zero: nothing runs where something must.
                Root::Absent(absent) => RootCause {
                    id: to_id(root),
                    state: State::Failed,
                    since: None,
                    cause: absent.cause(),
                    reason: absent.reason(),
                    message: String::new(),
                    affected,
                },
                Root::Cluster(cluster) => {
                    let (cause, reason) = clusters.root_cause_of(cluster);
                    RootCause {
                        id: to_id(root),
                        state: State::Unverifiable,
                        since: clusters.last_good(cluster),
                        cause,
                        reason,
                        message: String::new(),
                        affected,
                    }
                }
            }
        })
        .collect();
    causes.sort_by(cause_order);
    causes
}

/// Worst first, then most affected, then by id.
pub(super) fn cause_order(a: &RootCause, b: &RootCause) -> std::cmp::Ordering {
    let key = |c: &RootCause| (c.state.severity_rank(), std::cmp::Reverse(c.affected.len()));
    key(a).cmp(&key(b)).then_with(|| a.id.cmp(&b.id))
}

/// Verdicts sorted by id; consumes the findings so their text moves instead of being copied.
pub(super) fn verdicts(
    objects: &[Object],
    ids: Vec<ObjectId>,
    resolved: Vec<Resolved>,
    mut domains: Vec<Vec<String>>,
    mut edges: Vec<Vec<ObjectEdge>>,
) -> Vec<Verdict> {
    let root_lists: Vec<Vec<ObjectId>> = {
        let to_id = root_id(&ids);
        resolved
            .iter()
            .map(|r| r.roots.iter().map(|&root| to_id(root)).collect())
            .collect()
    };
    // Sort a permutation, not the verdicts: comparing ids is the cost, moving big structs needn't be.
    let mut order: Vec<usize> = (0..ids.len()).collect();
    order.sort_unstable_by(|&a, &b| ids[a].cmp(&ids[b]));
    // Each verdict is built once, in its sorted place: with 100,000 objects a second array of
    // verdicts would be 25 MB more of fresh pages. (Option adds nothing to these sizes.)
    let mut ids: Vec<Option<ObjectId>> = ids.into_iter().map(Some).collect();
    let mut resolved: Vec<Option<Resolved>> = resolved.into_iter().map(Some).collect();
    let mut root_lists: Vec<Option<Vec<ObjectId>>> = root_lists.into_iter().map(Some).collect();
    // Sized once: grown by doubling, the reallocations of a cluster's verdicts were a tenth of
    // a collector's round in fresh pages the kernel zeroed.
    let mut verdicts = Vec::with_capacity(order.len());
    verdicts.extend(order.into_iter().filter_map(|i| {
        let object = &objects[i];
        let (id, r, root_causes) = (ids[i].take()?, resolved[i].take()?, root_lists[i].take()?);
        Some(Verdict {
            id,
            cluster: object.cluster.clone(),
            kind: object.kind,
            namespace: object.namespace.clone(),
            name: object.name.clone(),
            state: r.finding.state,
            since: r.finding.since,
            cause: r.finding.cause,
            reason: r.finding.reason,
            message: r.finding.message,
            root_causes,
            domains: std::mem::take(&mut domains[i]),
            edges: std::mem::take(&mut edges[i]),
        })
    }));
    verdicts
}
