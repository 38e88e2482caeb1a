//! A fleet's evaluation from its clusters' evaluations. Everything the engine follows stays
//! inside one cluster — dependsOn, sources, controllers, pods, inventories and cross-stack
//! edges are all resolved by (cluster, namespace, name) — and a domain rolls up per cluster,
//! so evaluating each cluster on its own objects and merging equals evaluating the fleet.
//! That is what lets the collector re-evaluate only the clusters that changed.

use super::Evaluation;
use super::output::cause_order;

/// Concatenates the clusters' evaluations (each evaluated on one cluster's objects and info)
/// and restores the fleet-wide orders `evaluate` gives.
pub fn merge<'a>(parts: impl IntoIterator<Item = &'a Evaluation>) -> Evaluation {
    let mut fleet = Evaluation::default();
    for part in parts {
        fleet.objects.extend_from_slice(&part.objects);
        fleet.root_causes.extend_from_slice(&part.root_causes);
        fleet.domains.extend_from_slice(&part.domains);
        fleet.dependencies.extend_from_slice(&part.dependencies);
        fleet.co_ownerships.extend_from_slice(&part.co_ownerships);
        fleet.crd_providers.extend_from_slice(&part.crd_providers);
        fleet.controllers.extend_from_slice(&part.controllers);
    }
    // Stable sorts over runs already in order: close to a linear pass.
    fleet.objects.sort_by(|a, b| a.id.cmp(&b.id));
    fleet.root_causes.sort_by(cause_order);
    fleet
        .domains
        .sort_by(|a, b| (&a.domain, &a.cluster).cmp(&(&b.domain, &b.cluster)));
    fleet.dependencies.sort_by(|a, b| a.cluster.cmp(&b.cluster));
    fleet
        .co_ownerships
        .sort_by(|a, b| (&a.cluster, &a.object).cmp(&(&b.cluster, &b.object)));
    fleet
        .crd_providers
        .sort_by(|a, b| (&a.cluster, &a.crd).cmp(&(&b.cluster, &b.crd)));
    // Sorted and deduplicated by id per cluster; ids lead with the cluster, so no duplicates.
    fleet.controllers.sort_unstable();
    fleet
}
