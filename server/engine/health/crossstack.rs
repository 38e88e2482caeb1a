//! Cross-stack dependencies, read from the inventories Flux keeps (`status.inventory.entries`):
//! a Flux object *provides* what its inventory holds (CRDs, Namespaces, ClusterRoles…) and
//! *consumes* a CRD when it applies objects of that CRD's kind, and a Namespace when it applies
//! objects into it. The Day-0 rule (seed 000, incident 2): when a consumed CRD or Namespace is
//! gone, the consumer is failed at once, naming what vanished and who provided it — even though
//! its own conditions still say Ready.

use super::finding::Finding;
use super::index::{HashMap, Index};
use super::{Cause, CauseCode, ClusterInfo, CoOwnership, CrdProvider, Dependency, State};
use crate::model::{Kind, Object, ObjectId};
use chrono::SecondsFormat;
use std::collections::BTreeMap;

/// One entry of `status.inventory.entries[].id`: `<namespace>_<name>_<group>_<kind>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InventoryEntry<'a> {
    pub namespace: &'a str,
    pub name: &'a str,
    pub group: &'a str,
    pub kind: &'a str,
}

impl<'a> InventoryEntry<'a> {
    /// Names, namespaces and groups cannot hold `_`, so the id splits unambiguously.
    pub fn parse(id: &'a str) -> Option<Self> {
        let mut parts = id.splitn(4, '_');
        let entry = InventoryEntry {
            namespace: parts.next()?,
            name: parts.next()?,
            group: parts.next()?,
            kind: parts.next()?,
        };
        (!entry.name.is_empty() && !entry.kind.is_empty() && !entry.kind.contains('_'))
            .then_some(entry)
    }
}

/// API groups Kubernetes serves itself; every other group is served by a CRD (or an
/// aggregated API, listed here too).
const BUILT_IN_GROUPS: &[&str] = &[
    "",
    "apps",
    "batch",
    "autoscaling",
    "policy",
    "networking.k8s.io",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "apiextensions.k8s.io",
    "admissionregistration.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "certificates.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "events.k8s.io",
    "apiregistration.k8s.io",
    "resource.k8s.io",
    "internal.apiserver.k8s.io",
    "storagemigration.k8s.io",
    "metrics.k8s.io",
];

/// Whether the CRD named `crd` (`<plural>.<group>`) serves `kind` in `group`, when the CRD
/// object itself is not at hand: its group matches and its plural is the kind's.
fn name_serves(crd: &str, group: &str, kind: &str) -> bool {
    let Some((plural, crd_group)) = crd.split_once('.') else {
        return false;
    };
    let singular = kind.to_ascii_lowercase();
    crd_group == group
        && (plural == format!("{singular}s")
            || plural == format!("{singular}es")
            || singular
                .strip_suffix('y')
                .is_some_and(|stem| plural == format!("{stem}ies")))
}

pub(super) struct CrossStack {
    /// Per object: what it consumes that is gone, as a finding (failed).
    pub broken: Vec<Option<Finding>>,
    pub dependencies: Vec<Dependency>,
    pub co_ownerships: Vec<CoOwnership>,
    pub crd_providers: Vec<CrdProvider>,
}

/// What one cluster holds, for the rule and the edges.
#[derive(Default)]
struct ClusterView<'a> {
    has_crds: bool,
    has_namespaces: bool,
    crd_by_kind: HashMap<(&'a str, &'a str), usize>,
    crd_by_name: HashMap<&'a str, usize>,
    namespaces: HashMap<&'a str, usize>,
    /// Inventory object key (`Kind/namespace/name` with group) → the Flux objects holding it.
    providers: BTreeMap<String, Vec<usize>>,
}

fn entry_key(entry: &InventoryEntry) -> String {
    let group = if entry.group.is_empty() {
        String::new()
    } else {
        format!(".{}", entry.group)
    };
    if entry.namespace.is_empty() {
        format!("{}{group}/{}", entry.kind, entry.name)
    } else {
        format!("{}{group}/{}/{}", entry.kind, entry.namespace, entry.name)
    }
}

fn crd_key(name: &str) -> String {
    format!("CustomResourceDefinition.apiextensions.k8s.io/{name}")
}

fn namespace_key(name: &str) -> String {
    format!("Namespace/{name}")
}

pub(super) fn analyse(index: &Index, infos: &[ClusterInfo], ids: &[ObjectId]) -> CrossStack {
    let objects = index.objects;
    let mut views: HashMap<&str, ClusterView> = HashMap::default();
    for (i, object) in objects.iter().enumerate() {
        let view = views.entry(object.cluster.as_str()).or_default();
        match object.kind {
            Kind::CustomResourceDefinition => {
                view.has_crds = true;
                view.crd_by_name.insert(&object.name, i);
                if let (Some(group), Some(kind)) = (&object.spec.crd.group, &object.spec.crd.kind) {
                    view.crd_by_kind.insert((group, kind), i);
                }
            }
            Kind::Namespace => {
                view.has_namespaces = true;
                view.namespaces.insert(&object.name, i);
            }
            _ => {}
        }
        for entry in object
            .status
            .flux
            .inventory
            .iter()
            .filter_map(|id| InventoryEntry::parse(id))
        {
            view.providers.entry(entry_key(&entry)).or_default().push(i);
        }
    }
    let formers: HashMap<&str, &ClusterInfo> = infos.iter().map(|c| (c.name.as_str(), c)).collect();
    let mut result = CrossStack {
        broken: vec![None; objects.len()],
        dependencies: Vec::new(),
        co_ownerships: Vec::new(),
        crd_providers: Vec::new(),
    };
    for (i, consumer) in objects.iter().enumerate() {
        if consumer.status.flux.inventory.is_empty() {
            continue;
        }
        let view = &views[consumer.cluster.as_str()];
        let former = formers.get(consumer.cluster.as_str()).copied();
        let mut problems = Vec::new();
        let mut kinds_seen = std::collections::BTreeSet::new();
        let mut namespaces_seen = std::collections::BTreeSet::new();
        for entry in consumer
            .status
            .flux
            .inventory
            .iter()
            .filter_map(|id| InventoryEntry::parse(id))
        {
            if !BUILT_IN_GROUPS.contains(&entry.group)
                && kinds_seen.insert((entry.group, entry.kind))
            {
                consume_crd(
                    view,
                    former,
                    objects,
                    ids,
                    i,
                    &entry,
                    &mut problems,
                    &mut result.dependencies,
                );
            }
            if !entry.namespace.is_empty() && namespaces_seen.insert(entry.namespace) {
                consume_namespace(
                    view,
                    objects,
                    ids,
                    i,
                    entry.namespace,
                    &mut problems,
                    &mut result.dependencies,
                );
            }
        }
        if let Some((cause, first)) = problems.first() {
            let more = problems.len() - 1;
            let reason = if more > 0 {
                format!("{first} (and {more} more)")
            } else {
                first.clone()
            };
            let all: Vec<&str> = problems.iter().map(|(_, p)| p.as_str()).collect();
            result.broken[i] = Some(Finding::new(
                State::Failed,
                cause.clone(),
                reason,
                all.join("; "),
            ));
        }
    }
    for (cluster, view) in &views {
        for (object, holders) in &view.providers {
            if holders.len() > 1 {
                result.co_ownerships.push(CoOwnership {
                    cluster: cluster.to_string(),
                    object: object.clone(),
                    providers: holders.iter().map(|&h| ids[h].clone()).collect(),
                });
            }
        }
        for (&name, &crd) in &view.crd_by_name {
            let crd_object = &objects[crd];
            let (Some(group), Some(kind)) = (&crd_object.spec.crd.group, &crd_object.spec.crd.kind)
            else {
                continue;
            };
            for &provider in view.providers.get(&crd_key(name)).into_iter().flatten() {
                result.crd_providers.push(CrdProvider {
                    cluster: cluster.to_string(),
                    group: group.clone(),
                    kind: kind.clone(),
                    crd: name.to_string(),
                    provider: ids[provider].clone(),
                });
            }
        }
    }
    // Grouped by cluster (stable: by consumer within one), so a fleet's edges are its
    // clusters' edges one after the other, however its objects are ordered.
    result
        .dependencies
        .sort_by(|a, b| a.cluster.cmp(&b.cluster));
    result
        .co_ownerships
        .sort_by(|a, b| (&a.cluster, &a.object).cmp(&(&b.cluster, &b.object)));
    result
        .crd_providers
        .sort_by(|a, b| (&a.cluster, &a.crd).cmp(&(&b.cluster, &b.crd)));
    result
}

/// The CRD serving `entry`'s kind: records the edges to its providers and, when it is gone or
/// not usable, the problem.
#[allow(clippy::too_many_arguments)]
fn consume_crd(
    view: &ClusterView,
    former: Option<&ClusterInfo>,
    objects: &[Object],
    ids: &[ObjectId],
    consumer: usize,
    entry: &InventoryEntry,
    problems: &mut Vec<(Cause, String)>,
    dependencies: &mut Vec<Dependency>,
) {
    let crd = view
        .crd_by_kind
        .get(&(entry.group, entry.kind))
        .map(|&c| objects[c].name.as_str())
        .or_else(|| {
            // Only the CRDs among what inventories hold (a range of the sorted keys): scanning
            // every key per consumer was quadratic in the size of the cluster.
            let prefix = crd_key("");
            view.providers
                .range(prefix.clone()..)
                .map_while(|(key, _)| key.strip_prefix(prefix.as_str()))
                .find(|name| name_serves(name, entry.group, entry.kind))
        });
    if let Some(name) = crd {
        for &provider in view.providers.get(&crd_key(name)).into_iter().flatten() {
            if provider != consumer {
                dependencies.push(Dependency {
                    cluster: objects[consumer].cluster.to_string(),
                    provider: ids[provider].clone(),
                    consumer: ids[consumer].clone(),
                    object: crd_key(name),
                });
            }
        }
    }
    if !view.has_crds {
        return; // nothing is inferred from an input that holds no CRDs
    }
    let served = view
        .crd_by_kind
        .get(&(entry.group, entry.kind))
        .map(|&c| &objects[c]);
    let provided_by = |name: &str| {
        let holders: Vec<String> = view
            .providers
            .get(&crd_key(name))
            .into_iter()
            .flatten()
            .map(|&p| ids[p].to_string())
            .collect();
        if holders.is_empty() {
            String::new()
        } else {
            format!(" (provided by {})", holders.join(", "))
        }
    };
    match served {
        Some(crd) if crd.deleting => problems.push((
            consumed("crd", &crd.name, "deleting"),
            format!(
                "CRD {} is being deleted{}",
                crd.name,
                provided_by(&crd.name)
            ),
        )),
        Some(crd) if crd.condition("Established").is_some_and(|c| !c.is_true()) => problems.push((
            consumed("crd", &crd.name, "not_established"),
            format!("CRD {} is not established", crd.name),
        )),
        Some(_) => {}
        None => problems.push((
            consumed("kind", &format!("{}.{}", entry.kind, entry.group), "gone"),
            gone_crd(former, crd, entry),
        )),
    }
}

fn gone_crd(former: Option<&ClusterInfo>, name: Option<&str>, entry: &InventoryEntry) -> String {
    let history = former.and_then(|info| {
        info.former_crd_providers
            .iter()
            .find(|f| f.group == entry.group && f.kind == entry.kind)
    });
    let crd = history
        .map(|h| h.crd.clone())
        .or(name.map(str::to_string))
        .unwrap_or_else(|| format!("for {}.{}", entry.kind, entry.group));
    match history {
        Some(h) => format!(
            "CRD {crd} is gone ({} {}): it was provided by {}, last seen {}",
            entry.kind,
            entry.group,
            h.provider,
            h.last_seen.to_rfc3339_opts(SecondsFormat::Secs, true)
        ),
        None => format!(
            "CRD {crd} is gone: this stack applies {} objects ({}) that no CRD serves",
            entry.kind, entry.group
        ),
    }
}

fn consume_namespace(
    view: &ClusterView,
    objects: &[Object],
    ids: &[ObjectId],
    consumer: usize,
    namespace: &str,
    problems: &mut Vec<(Cause, String)>,
    dependencies: &mut Vec<Dependency>,
) {
    let key = namespace_key(namespace);
    let providers = view
        .providers
        .get(&key)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for &provider in providers.iter().filter(|&&p| p != consumer) {
        dependencies.push(Dependency {
            cluster: objects[consumer].cluster.to_string(),
            provider: ids[provider].clone(),
            consumer: ids[consumer].clone(),
            object: key.clone(),
        });
    }
    if !view.has_namespaces {
        return;
    }
    let provided_by = providers
        .iter()
        .find(|&&p| p != consumer)
        .map(|&p| format!(" (provided by {})", ids[p]))
        .unwrap_or_default();
    match view.namespaces.get(namespace).map(|&n| &objects[n]) {
        None => problems.push((
            consumed("namespace", namespace, "gone"),
            format!("namespace {namespace} is gone{provided_by}"),
        )),
        Some(ns) if ns.status.phase.as_deref() == Some("Terminating") || ns.deleting => problems
            .push((
                consumed("namespace", namespace, "terminating"),
                format!("namespace {namespace} is terminating{provided_by}"),
            )),
        Some(_) => {}
    }
}

/// A consumed CRD, kind or namespace (`what` names it) in a state that breaks its consumers.
fn consumed(what: &'static str, name: &str, state: &str) -> Cause {
    Cause::new(CauseCode::CrossStack)
        .with(what, name)
        .with("state", state)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inventory_ids_split_into_their_parts() {
        let entry = InventoryEntry::parse("default_podinfo_apps_Deployment").unwrap();
        assert_eq!(
            (entry.namespace, entry.name, entry.group, entry.kind),
            ("default", "podinfo", "apps", "Deployment")
        );
        let service = InventoryEntry::parse("default_podinfo__Service").unwrap();
        assert_eq!(service.group, "");
        let crd = InventoryEntry::parse(
            "_ratelimitconfigs.ratelimit.solo.io_apiextensions.k8s.io_CustomResourceDefinition",
        )
        .unwrap();
        assert_eq!(
            entry_key(&crd),
            crd_key("ratelimitconfigs.ratelimit.solo.io")
        );
        let namespace = InventoryEntry::parse("_gateway__Namespace").unwrap();
        assert_eq!(entry_key(&namespace), namespace_key("gateway"));
        assert!(InventoryEntry::parse("garbage").is_none());
        // Kubernetes names hold no `_`: an id with an empty name or kind, or one part too
        // many, is no inventory entry kustomize-controller or helm-controller wrote.
        for malformed in [
            "default__apps_Deployment",
            "default_podinfo_apps_",
            "default_pod_info_apps_Deployment",
        ] {
            assert!(InventoryEntry::parse(malformed).is_none(), "{malformed}");
        }
    }

    #[test]
    fn crd_names_match_kinds_by_plural() {
        assert!(name_serves(
            "ratelimitconfigs.ratelimit.solo.io",
            "ratelimit.solo.io",
            "RateLimitConfig"
        ));
        assert!(name_serves(
            "networkpolicies.crd.projectcalico.org",
            "crd.projectcalico.org",
            "NetworkPolicy"
        ));
        assert!(name_serves("ingresses.example.io", "example.io", "Ingress"));
        assert!(!name_serves(
            "ratelimitconfigs.ratelimit.solo.io",
            "other.io",
            "RateLimitConfig"
        ));
    }
}
