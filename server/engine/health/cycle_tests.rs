//! dependsOn cycles and their edges to objects outside the cycle: the cycle is exactly its
//! members, its path stays inside it, and what lies outside still counts upstream.

use super::State::*;
use super::testkit::*;
use super::{DomainSpec, Thresholds};
use crate::model::ObjectId;
use serde_json::Value;

fn waiting_on(name: &str, dependencies: &[&str]) -> Value {
    let message = format!("dependency 'flux-system/{}' is not ready", dependencies[0]);
    with_conditions(
        kustomization(name, dependencies),
        vec![not_ready("DependencyNotReady", &message, 90)],
    )
}

fn broken(name: &str) -> Value {
    with_conditions(
        kustomization(name, &[]),
        vec![not_ready(
            "BuildFailed",
            "kustomize build failed: accumulating resources",
            30,
        )],
    )
}

/// x (outside, failing) comes first in the input, so the cycle search meets it before the
/// cycle a → b → a that also depends on it; c depends on the cycle from outside.
fn cycle_next_to_outsiders() -> Vec<Value> {
    let mut values = flux_controllers();
    values.push(git_repository("flux-system", SHA));
    values.extend([
        broken("x"),
        with_label(waiting_on("a", &["x", "b"]), "domain", "cyc"),
        waiting_on("b", &["a"]),
        waiting_on("c", &["a"]),
    ]);
    values
}

#[test]
fn a_cycle_is_its_members_only_whatever_else_they_depend_on() {
    let run = run(&cycle_next_to_outsiders());
    for name in ["a", "b"] {
        let verdict = run.verdict("Kustomization", "flux-system", name);
        assert_eq!(verdict.state, Failed, "{name}");
        assert_eq!(
            verdict.reason, "dependency cycle: flux-system/a → flux-system/b → flux-system/a",
            "the path stays inside the cycle"
        );
        assert_eq!(verdict.root_causes, std::slice::from_ref(&verdict.id));
    }
    let x = run.verdict("Kustomization", "flux-system", "x");
    assert_eq!((x.state, x.reason.as_str()), (Failed, "build failed"));
    let c = run.verdict("Kustomization", "flux-system", "c");
    assert_eq!(c.state, Blocked);
    assert_eq!(
        as_strs(&c.root_causes),
        [id("Kustomization", "flux-system", "a")]
    );
}

/// A member's edge to an outside problem still counts for what depends on the member (its
/// domain is blocked by x too); edges between members add nothing (each is its own cause).
#[test]
fn a_cycles_edges_to_the_outside_count_upstream_and_its_inner_edges_do_not() {
    let domain: DomainSpec = crate::health::testkit::from_yaml(
        "{name: cyc, select: {labels: {domain: cyc}}, version: {from: source_revision, kind: GitRepository, namespace: flux-system, name: flux-system}}",
    )
    .unwrap();
    let run = run_with(
        &cycle_next_to_outsiders(),
        &[],
        &[domain],
        &Thresholds::default(),
    );
    let cell = &run.evaluation.domains[0];
    assert_eq!(cell.objects, 1);
    assert_eq!(
        cell.blockers,
        [
            ObjectId(id("Kustomization", "flux-system", "a")),
            ObjectId(id("Kustomization", "flux-system", "x")),
        ]
    );
}

fn ring(size: usize, first: usize) -> Vec<Value> {
    let mut values = flux_controllers();
    values.push(git_repository("flux-system", SHA));
    // start the input mid-ring: the path still starts at the smallest name
    for k in (first..size).chain(0..first) {
        let next = format!("k{}", (k + 1) % size);
        values.push(waiting_on(&format!("k{k}"), &[&next]));
    }
    values
}

#[test]
fn long_cycles_are_shortened_from_their_smallest_member() {
    let six = run(&ring(6, 3));
    assert_eq!(
        six.verdict("Kustomization", "flux-system", "k4").reason,
        "dependency cycle: flux-system/k0 → flux-system/k1 → flux-system/k2 → flux-system/k3 → \
         flux-system/k4 → flux-system/k5 → flux-system/k0"
    );
    let eight = run(&ring(8, 5));
    assert_eq!(
        eight.verdict("Kustomization", "flux-system", "k4").reason,
        "dependency cycle: flux-system/k0 → flux-system/k1 → flux-system/k2 → flux-system/k3 → \
         flux-system/k4 → flux-system/k5 → … (2 more) → flux-system/k0"
    );
    assert_eq!(eight.evaluation.root_causes.len(), 8);
}

/// c depends back on b and on a: the path walks each member once and closes at the start,
/// whatever else the members depend on inside the cycle.
#[test]
fn a_cycle_whose_members_depend_back_on_each_other_is_walked_once() {
    let mut values = flux_controllers();
    values.push(git_repository("flux-system", SHA));
    values.extend([
        waiting_on("a", &["b"]),
        waiting_on("b", &["c"]),
        waiting_on("c", &["b", "a"]),
    ]);
    let run = run(&values);
    for name in ["a", "b", "c"] {
        assert_eq!(
            run.verdict("Kustomization", "flux-system", name).reason,
            "dependency cycle: flux-system/a → flux-system/b → flux-system/c → flux-system/a",
            "{name}"
        );
    }
}
