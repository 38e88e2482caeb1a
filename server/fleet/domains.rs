//! Which domains each object belongs to, from the configured selections (labels, a root
//! Kustomization, namespaces) on the clusters each domain selects. The engine's domain
//! verdicts do not list members; the store keeps this so objects can be filtered by domain.

use crate::health::{ClusterInfo, DomainSpec};
use crate::model::{Kind, Object, ObjectId};
use std::collections::{BTreeMap, HashMap};

/// Domain names per object id (sorted); objects in no domain are absent.
pub fn domain_members(
    domains: &[DomainSpec],
    clusters: &[ClusterInfo],
    objects: &[Object],
) -> HashMap<ObjectId, Vec<String>> {
    let labels_of: HashMap<&str, &BTreeMap<String, String>> = clusters
        .iter()
        .map(|c| (c.name.as_str(), &c.labels))
        .collect();
    let applied = applied_children(objects);
    let mut members: HashMap<ObjectId, Vec<String>> = HashMap::new();
    for domain in domains {
        let in_scope = |cluster: &str| {
            domain.clusters.iter().all(|(k, v)| {
                labels_of
                    .get(cluster)
                    .and_then(|labels| labels.get(k))
                    .is_some_and(|value| value == v)
            })
        };
        let mut selected: Vec<usize> = objects
            .iter()
            .enumerate()
            .filter(|(_, o)| in_scope(&o.cluster) && directly_selected(domain, o))
            .map(|(i, _)| i)
            .collect();
        // Everything a selected object applied belongs to the domain too, recursively.
        let mut seen: std::collections::HashSet<usize> = selected.iter().copied().collect();
        while let Some(i) = selected.pop() {
            let key = (
                objects[i].cluster.as_str(),
                objects[i].kind,
                objects[i].namespace.as_str(),
                objects[i].name.as_str(),
            );
            for &child in applied.get(&key).into_iter().flatten() {
                if seen.insert(child) {
                    selected.push(child);
                }
            }
        }
        for i in seen {
            members
                .entry(objects[i].id())
                .or_default()
                .push(domain.name.clone());
        }
    }
    for names in members.values_mut() {
        names.sort();
        names.dedup();
    }
    members
}

type Owner<'a> = (&'a str, Kind, &'a str, &'a str);

/// Objects by the Flux object (cluster, kind, namespace, name) whose labels say applied them.
fn applied_children(objects: &[Object]) -> HashMap<Owner<'_>, Vec<usize>> {
    let mut children: HashMap<Owner<'_>, Vec<usize>> = HashMap::new();
    for (i, object) in objects.iter().enumerate() {
        if let Some((kind, namespace, name)) = object.applied_by() {
            children
                .entry((object.cluster.as_str(), kind, namespace, name))
                .or_default()
                .push(i);
        }
    }
    children
}

fn directly_selected(domain: &DomainSpec, object: &Object) -> bool {
    let select = &domain.select;
    if select.is_empty() {
        return false;
    }
    let by_labels = !select.labels.is_empty()
        && select
            .labels
            .iter()
            .all(|(k, v)| object.label(k) == Some(v.as_str()));
    let by_root = select.root.as_deref().is_some_and(|root| {
        object.kind == Kind::Kustomization
            && root == format!("{}/{}", object.namespace, object.name)
    });
    let by_namespace = select.namespaces.contains(&object.namespace);
    by_labels || by_root || by_namespace
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::{Selection, VersionSource};

    fn object(
        cluster: &str,
        kind: Kind,
        namespace: &str,
        name: &str,
        labels: &[(&str, &str)],
    ) -> Object {
        Object {
            cluster: cluster.to_string(),
            kind,
            api_version: String::new(),
            namespace: namespace.to_string(),
            name: name.to_string(),
            generation: None,
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            deleting: false,
            created: None,
            deleting_since: None,
            owners: Vec::new(),
            spec: Default::default(),
            status: Default::default(),
            defects: Vec::new(),
        }
    }

    fn domain(name: &str, select: Selection, clusters: &[(&str, &str)]) -> DomainSpec {
        DomainSpec {
            name: name.to_string(),
            select,
            clusters: clusters
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            version: VersionSource::ChartVersion {
                namespace: "x".into(),
                name: "x".into(),
            },
            stuck_after: None,
        }
    }

    #[test]
    fn root_selection_follows_what_was_applied_and_cluster_scope_applies() {
        let applied = [
            ("kustomize.toolkit.fluxcd.io/name", "gateway"),
            ("kustomize.toolkit.fluxcd.io/namespace", "flux-system"),
        ];
        let by_release = [
            ("helm.toolkit.fluxcd.io/name", "gw"),
            ("helm.toolkit.fluxcd.io/namespace", "gateway-system"),
        ];
        let objects = vec![
            object("dev", Kind::Kustomization, "flux-system", "gateway", &[]),
            object("dev", Kind::HelmRelease, "gateway-system", "gw", &applied),
            object("dev", Kind::Deployment, "gateway-system", "gw", &by_release),
            object("dev", Kind::Kustomization, "flux-system", "other", &[]),
            object("prod", Kind::Kustomization, "flux-system", "gateway", &[]),
            object("dev", Kind::HelmRelease, "tenants", "t", &[]),
        ];
        let clusters = vec![
            ClusterInfo {
                name: "dev".into(),
                labels: [("ring".to_string(), "dev".to_string())].into(),
                ..Default::default()
            },
            ClusterInfo {
                name: "prod".into(),
                labels: [("ring".to_string(), "prod".to_string())].into(),
                ..Default::default()
            },
        ];
        let domains = vec![
            domain(
                "gateway",
                Selection {
                    root: Some("flux-system/gateway".into()),
                    ..Default::default()
                },
                &[("ring", "dev")],
            ),
            domain(
                "tenants",
                Selection {
                    namespaces: vec!["tenants".into()],
                    ..Default::default()
                },
                &[],
            ),
        ];
        let members = domain_members(&domains, &clusters, &objects);
        let of = |i: usize| members.get(&objects[i].id()).cloned().unwrap_or_default();
        assert_eq!(of(0), vec!["gateway"]);
        assert_eq!(of(1), vec!["gateway"]);
        assert_eq!(
            of(2),
            vec!["gateway"],
            "the release's workload is in the domain"
        );
        assert!(of(3).is_empty());
        assert!(of(4).is_empty(), "prod is outside the domain's clusters");
        assert_eq!(of(5), vec!["tenants"]);
    }
}
