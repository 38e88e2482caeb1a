//! Domains: which Flux objects belong to each (labels, a root Kustomization and everything it
//! applied, namespaces), on which clusters (cluster labels), and the roll-up per cluster:
//! version, worst state, counts, and the root causes keeping it from being fully healthy.

use super::index::Index;
use super::roots::{Resolved, Root};
use super::{ClusterInfo, DomainSpec, DomainVerdict, Selection, State, versions};
use crate::model::{Kind, ObjectId};
use chrono::TimeDelta;
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub(super) struct Membership {
    /// Per domain, its Flux objects (all clusters).
    pub members: Vec<Vec<usize>>,
    /// Per object, the strictest stuck_after of the domains it belongs to.
    pub stuck_after: Vec<Option<TimeDelta>>,
}

pub(super) fn membership(index: &Index, domains: &[DomainSpec]) -> Membership {
    let mut stuck_after: Vec<Option<TimeDelta>> = vec![None; index.objects.len()];
    let members: Vec<Vec<usize>> = domains
        .iter()
        .map(|domain| {
            let members = select(index, &domain.select);
            if let Some(limit) = domain.stuck_after {
                for &m in &members {
                    stuck_after[m] = Some(stuck_after[m].map_or(limit, |l| l.min(limit)));
                }
            }
            members
        })
        .collect();
    Membership {
        members,
        stuck_after,
    }
}

fn select(index: &Index, selection: &Selection) -> Vec<usize> {
    let mut chosen = vec![false; index.objects.len()];
    let root = selection.root.as_deref().and_then(|r| r.split_once('/'));
    let mut pending = Vec::new();
    for (i, object) in index.objects.iter().enumerate() {
        if !object.kind.is_flux() {
            continue;
        }
        let by_labels = !selection.labels.is_empty()
            && selection
                .labels
                .iter()
                .all(|(k, v)| object.label(k) == Some(v.as_str()));
        let by_namespace = selection
            .namespaces
            .iter()
            .any(|ns| *ns == object.namespace);
        let is_root = object.kind == Kind::Kustomization
            && root.is_some_and(|(ns, name)| object.namespace == ns && object.name == name);
        if is_root {
            pending.push(i);
        }
        chosen[i] = by_labels || by_namespace || is_root;
    }
    // Everything a root applied, recursively, through Flux objects only.
    let mut visited = vec![false; index.objects.len()];
    while let Some(parent) = pending.pop() {
        if std::mem::replace(&mut visited[parent], true) {
            continue;
        }
        chosen[parent] = true;
        pending.extend(
            index
                .applied_by(parent)
                .filter(|&c| index.objects[c].kind.is_flux()),
        );
    }
    (0..chosen.len()).filter(|&i| chosen[i]).collect()
}

/// What the evaluation found that the roll-up reads besides the index.
pub(super) struct Findings<'f, 'a> {
    pub resolved: &'f [Resolved<'a>],
    pub root_id: &'f dyn Fn(Root) -> ObjectId,
    /// Clusters whose whole data cannot be trusted (each blocks its cells).
    pub untrusted: &'f BTreeSet<&'a str>,
    /// Per object, the object whose artifact it consumes (the graph's source edges).
    pub sources: &'f [Option<usize>],
}

pub(super) fn roll_up(
    index: &Index,
    domains: &[DomainSpec],
    membership: &Membership,
    clusters: &[ClusterInfo],
    findings: &Findings,
) -> Vec<DomainVerdict> {
    let infos: HashMap<&str, &ClusterInfo> =
        clusters.iter().map(|c| (c.name.as_str(), c)).collect();
    let all_clusters: BTreeSet<&str> = index
        .objects
        .iter()
        .map(|o| o.cluster.as_str())
        .chain(infos.keys().copied())
        .collect();
    let mut verdicts = Vec::new();
    for (domain, members) in domains.iter().zip(&membership.members) {
        let mut by_cluster: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for &m in members {
            by_cluster
                .entry(index.objects[m].cluster.as_str())
                .or_default()
                .push(m);
        }
        for &cluster in &all_clusters {
            if selects(domain, &infos, cluster) {
                let on_cluster = by_cluster.get(cluster).map_or(&[][..], Vec::as_slice);
                let mut verdict = cell(index, domain, cluster, on_cluster, findings);
                if findings.untrusted.contains(cluster) {
                    // Even a cell with nothing listed yet names why nothing is proven there.
                    let id = (findings.root_id)(Root::Cluster(cluster));
                    if let Err(at) = verdict.blockers.binary_search(&id) {
                        verdict.blockers.insert(at, id);
                    }
                }
                verdicts.push(verdict);
            }
        }
    }
    verdicts.sort_by(|a, b| (&a.domain, &a.cluster).cmp(&(&b.domain, &b.cluster)));
    verdicts
}

/// Whether the domain's cluster selector picks `cluster` (clusters without info only when the
/// selector is empty).
fn selects(domain: &DomainSpec, infos: &HashMap<&str, &ClusterInfo>, cluster: &str) -> bool {
    match infos.get(cluster) {
        Some(info) => domain
            .clusters
            .iter()
            .all(|(k, v)| info.labels.get(k) == Some(v)),
        None => domain.clusters.is_empty(),
    }
}

/// Per object, the domains it belongs to: the domain's Flux objects on the clusters it selects,
/// and the workloads and pods they applied, so objects can be filtered by domain.
pub(super) fn names_by_object(
    index: &Index,
    domains: &[DomainSpec],
    membership: &Membership,
    clusters: &[ClusterInfo],
) -> Vec<Vec<String>> {
    let infos: HashMap<&str, &ClusterInfo> =
        clusters.iter().map(|c| (c.name.as_str(), c)).collect();
    let mut names: Vec<Vec<String>> = vec![Vec::new(); index.objects.len()];
    for (domain, members) in domains.iter().zip(&membership.members) {
        let selected: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&m| selects(domain, &infos, &index.objects[m].cluster))
            .collect();
        for object in with_applied(index, &selected) {
            names[object].push(domain.name.clone());
        }
    }
    for list in &mut names {
        list.sort();
        list.dedup();
    }
    names
}

/// A domain's objects: its Flux objects and the workloads and pods they applied. The one
/// definition behind both the objects listed for a domain and its "healthy n/m" counts.
fn with_applied(index: &Index, members: &[usize]) -> Vec<usize> {
    let mut objects: Vec<usize> = members.to_vec();
    for &m in members {
        for applied in index.applied_by(m) {
            if !index.objects[applied].kind.is_flux() {
                objects.push(applied);
                objects.extend(index.pods_of(applied));
            }
        }
    }
    objects.sort_unstable();
    objects.dedup();
    objects
}

/// One domain on one cluster. No objects there means no evidence it is deployed: unverifiable.
fn cell(
    index: &Index,
    domain: &DomainSpec,
    cluster: &str,
    members: &[usize],
    findings: &Findings,
) -> DomainVerdict {
    let Findings {
        resolved,
        root_id,
        sources,
        ..
    } = *findings;
    // Counted over what the objects page lists for the domain; the state stays the Flux
    // objects' (a workload's problem already shows in the Flux object that applied it).
    let listed = with_applied(index, members);
    let healthy = listed
        .iter()
        .filter(|&&o| resolved[o].finding.state == State::Healthy)
        .count();
    let blockers: BTreeSet<ObjectId> = members
        .iter()
        .flat_map(|&m| resolved[m].roots.iter().chain(&resolved[m].upstream))
        .map(|&root| root_id(root))
        .collect();
    let versions::Versions { applied, offered } =
        versions::read(index, &domain.version, cluster, members, sources);
    let state = cell_state(
        members.iter().map(|&m| known_state(resolved, m)),
        !blockers.is_empty(),
        applied.is_some() || offered.is_some(),
    );
    // A version offered and not applied is work under way, whatever the objects say.
    let state = match offered {
        Some(_) => state.worst(State::Progressing),
        None => state,
    };
    DomainVerdict {
        domain: domain.name.clone(),
        cluster: cluster.to_string(),
        fully_healthy: state == State::Healthy,
        version: applied,
        offered,
        state,
        objects: listed.len(),
        healthy,
        blockers: blockers.into_iter().collect(),
    }
}

/// A member's state as a cell rolls it up: an unverifiable member whose root cause is a known
/// problem (a failed controller, a Deployment that is gone) counts as that problem, so the cell
/// shows the failure, not the grey it causes (issue 43, f).
fn known_state(resolved: &[Resolved], member: usize) -> State {
    let own = resolved[member].finding.state;
    if own != State::Unverifiable {
        return own;
    }
    resolved[member]
        .roots
        .iter()
        .map(|&root| match root {
            Root::Object(i) => resolved[i].finding.state,
            Root::Absent(_) => State::Failed,
            Root::Cluster(_) => State::Unverifiable,
        })
        .filter(|&state| state != State::Unverifiable)
        .reduce(State::worst)
        .unwrap_or(own)
}

/// The one decision on a cell's state, so state, `fully_healthy` and blockers cannot disagree:
/// `healthy` (fully healthy) only when it has objects, all healthy, nothing upstream blocks it
/// and its version was read. A blocker outside the cell's own objects (a Kustomization of
/// another domain it depends on) makes an otherwise healthy cell `blocked`, its symptom; no
/// objects or no version read leaves nothing proven: `unverifiable`.
pub(super) fn cell_state(
    members: impl Iterator<Item = State>,
    blocked: bool,
    version_read: bool,
) -> State {
    let mut state = members.reduce(State::worst).unwrap_or(State::Unverifiable);
    if blocked {
        state = state.worst(State::Blocked);
    }
    if !version_read {
        state = state.worst(State::Unverifiable);
    }
    state
}
