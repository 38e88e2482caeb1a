//! A fleet held as its clusters' evaluations (fleet.rs, merge.rs): evaluating each cluster on
//! its own objects and merging gives what one evaluation of every object gives, root causes
//! in the fleet's order (worst first, then most affected) whatever the clusters' order.

use super::testkit::*;
use super::{DomainSpec, Evaluation, Fleet, Parts, Thresholds};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

fn broken(name: &str) -> Value {
    with_conditions(
        kustomization(name, &[]),
        vec![not_ready("BuildFailed", "kustomize build failed", 30)],
    )
}

fn waiting_on(name: &str, dependency: &str) -> Value {
    let message = format!("dependency 'flux-system/{dependency}' is not ready");
    let waiting = with_conditions(
        kustomization(name, &[dependency]),
        vec![not_ready("DependencyNotReady", &message, 30)],
    );
    with_label(waiting, "domain", "shop")
}

/// prod: a broken Kustomization one other waits on; staging (sorting after prod): a broken one
/// three others wait on, so the fleet's first root cause.
fn placed() -> Vec<(&'static str, Value)> {
    let mut placed = Vec::new();
    for (cluster, waiting) in [("prod", 1), ("staging", 3)] {
        let mut values = flux_controllers();
        values.push(git_repository("flux-system", SHA));
        values.push(broken("infra"));
        for n in 0..waiting {
            values.push(waiting_on(&format!("app{n}"), "infra"));
        }
        placed.extend(values.into_iter().map(|v| (cluster, v)));
    }
    placed
}

fn evaluate_clusters(placed: &[(&str, Value)], domains: &[DomainSpec]) -> Evaluation {
    evaluate_on(placed, &[], domains, &Thresholds::default())
}

fn cause_ids<'a>(causes: impl IntoIterator<Item = &'a super::RootCause>) -> Vec<&'a str> {
    causes.into_iter().map(|c| c.id.as_str()).collect()
}

#[test]
fn merging_clusters_evaluated_apart_equals_evaluating_the_fleet() {
    let domains: Vec<DomainSpec> = vec![
        crate::health::testkit::from_yaml(
            "name: shop\nselect: {labels: {domain: shop}}\n\
             version: {from: source_revision, kind: GitRepository, namespace: flux-system, name: flux-system}",
        )
        .expect("valid domain"),
    ];
    let placed = placed();
    let whole = evaluate_clusters(&placed, &domains);
    let fleet = Fleet::new(
        ["prod", "staging"]
            .into_iter()
            .map(|cluster| {
                let own: Vec<(&str, Value)> = placed
                    .iter()
                    .filter(|(c, _)| *c == cluster)
                    .cloned()
                    .collect();
                (
                    cluster.to_string(),
                    Arc::new(evaluate_clusters(&own, &domains)),
                )
            })
            .collect::<BTreeMap<_, _>>(),
    );
    assert_eq!(fleet.merged(), whole);
    assert_eq!(whole.domains.len(), 2, "a shop cell per cluster");

    let in_order = cause_ids(&whole.root_causes);
    assert_eq!(
        in_order,
        [
            "staging/Kustomization/flux-system/infra",
            "prod/Kustomization/flux-system/infra"
        ]
    );
    assert_eq!(cause_ids(fleet.root_causes()), in_order);
    assert_eq!(cause_ids(whole.root_causes()), in_order);

    // Read without a cluster (one whose evaluation is no evidence yet): only the others'.
    let held_back = ["staging".to_string()].into_iter().collect();
    assert_eq!(
        cause_ids(fleet.except(&held_back).root_causes()),
        ["prod/Kustomization/flux-system/infra"]
    );
    let nobody = Default::default();
    assert_eq!(cause_ids(fleet.except(&nobody).root_causes()), in_order);
}
