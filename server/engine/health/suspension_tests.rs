//! Rule 15: a suspended object that something waits on, and that is itself not ready, is the
//! root cause of what waits on it; a suspended object nobody waits on stays `suspended` and
//! is not a root cause.

use super::State::*;
use super::testkit::*;
use serde_json::{Value, json};

fn suspend(mut value: Value) -> Value {
    value["spec"]["suspend"] = json!(true);
    value
}

/// infra suspended after a failed run: kustomize-controller keeps the last conditions of a
/// suspended Kustomization.
fn suspended_infra() -> Value {
    suspend(with_conditions(
        kustomization("infra", &[]),
        vec![not_ready(
            "HealthCheckFailed",
            "health check failed after 4m30s: timeout waiting for: [Deployment/infra/ingress status: 'InProgress']",
            300,
        )],
    ))
}

fn waiting_on(name: &str, dependencies: &[&str]) -> Value {
    let list = dependencies
        .iter()
        .map(|d| format!("'flux-system/{d}'"))
        .collect::<Vec<_>>()
        .join(", ");
    with_conditions(
        kustomization(name, dependencies),
        vec![not_ready(
            "DependencyNotReady",
            &format!("dependency {list} is not ready"),
            120,
        )],
    )
}

fn fleet(extra: Vec<Value>) -> Vec<Value> {
    let mut values = flux_controllers();
    values.push(git_repository("flux-system", SHA));
    values.extend(extra);
    values
}

#[test]
fn a_suspension_holding_a_rollout_is_its_root_cause() {
    let run = run(&fleet(vec![
        suspended_infra(),
        waiting_on("apps", &["infra"]),
        waiting_on("tenants", &["apps"]),
    ]));
    let infra = id("Kustomization", "flux-system", "infra");
    let held = run.verdict("Kustomization", "flux-system", "infra");
    assert_eq!(held.state, Suspended, "it stays suspended");
    assert_eq!(as_strs(&held.root_causes), [infra.as_str()]);
    for name in ["apps", "tenants"] {
        let verdict = run.verdict("Kustomization", "flux-system", name);
        assert_eq!(verdict.state, Blocked, "{name}");
        assert_eq!(as_strs(&verdict.root_causes), [infra.as_str()], "{name}");
    }
    assert_eq!(
        run.verdict("Kustomization", "flux-system", "apps").reason,
        "blocked by Kustomization flux-system/infra (suspended: suspended (spec.suspend))"
    );
    assert_eq!(run.evaluation.root_causes.len(), 1);
    let cause = run.root_cause(&infra);
    assert_eq!(cause.state, Suspended);
    assert_eq!(
        as_strs(&cause.affected),
        [
            id("Kustomization", "flux-system", "apps"),
            infra.clone(),
            id("Kustomization", "flux-system", "tenants"),
        ]
    );
}

#[test]
fn a_suspension_nobody_waits_on_is_no_root_cause() {
    let run = run(&fleet(vec![suspended_infra(), kustomization("apps", &[])]));
    let held = run.verdict("Kustomization", "flux-system", "infra");
    assert_eq!(held.state, Suspended);
    assert!(held.root_causes.is_empty());
    assert!(run.evaluation.root_causes.is_empty());
}

/// Suspended while Ready: what depends on it proceeds (Flux checks the dependency's Ready).
#[test]
fn a_ready_suspension_holds_nothing_up() {
    let ready_infra = suspend(kustomization("infra", &[]));
    let run = run(&fleet(vec![ready_infra, kustomization("apps", &["infra"])]));
    assert_eq!(run.state("Kustomization", "flux-system", "apps"), Healthy);
    assert!(run.evaluation.root_causes.is_empty());

    // ... and an object still waiting on it waits on something else: its own wait, no cause
    let run = run_waiting_on_ready_suspension();
    let apps = run.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(apps.state, Stuck);
    assert_eq!(apps.root_causes, std::slice::from_ref(&apps.id));
}

fn run_waiting_on_ready_suspension() -> Run {
    run(&fleet(vec![
        suspend(kustomization("infra", &[])),
        waiting_on("apps", &["infra"]),
    ]))
}

/// A failure of the waiter's own (its build) is no wait: the suspension is not its cause.
#[test]
fn an_independent_failure_next_to_a_suspension_stays_its_own() {
    let run = run(&fleet(vec![
        suspended_infra(),
        with_conditions(
            kustomization("apps", &["infra"]),
            vec![not_ready(
                "BuildFailed",
                "kustomize build failed: accumulating resources",
                60,
            )],
        ),
    ]));
    let apps = run.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(apps.state, Failed);
    assert_eq!(apps.root_causes, std::slice::from_ref(&apps.id));
    assert!(
        run.verdict("Kustomization", "flux-system", "infra")
            .root_causes
            .is_empty()
    );
}

/// A suspended source without an artifact holds up its consumers.
#[test]
fn a_suspended_source_that_never_became_ready_holds_its_consumers() {
    let repository = suspend(with_conditions(
        git_repository("flux-system", SHA),
        vec![condition(
            "Ready",
            "Unknown",
            "Progressing",
            "building artifact",
            200,
        )],
    ));
    let apps = with_conditions(
        kustomization("apps", &[]),
        vec![not_ready(
            "ArtifactFailed",
            "Source artifact not found, retrying in 30s",
            200,
        )],
    );
    let mut values = flux_controllers();
    values.extend([repository, apps]);
    let run = run(&values);
    assert_eq!(
        run.roots("Kustomization", "flux-system", "apps"),
        [id("GitRepository", "flux-system", "flux-system")]
    );
    assert_eq!(
        run.state("GitRepository", "flux-system", "flux-system"),
        Suspended
    );
}

/// A Ready parent that applied a suspended, not-ready child is not waiting on it: the child
/// is shown suspended, the parent stays healthy, nothing is a root cause.
#[test]
fn a_ready_parent_does_not_wait_on_a_suspended_child() {
    let child = applied_by(
        suspend(with_conditions(
            helm_release("apps", "podinfo", "charts"),
            vec![not_ready("UpgradeFailed", "Helm upgrade failed", 300)],
        )),
        "kustomize",
        "flux-system",
        "apps",
    );
    let run = run(&fleet(vec![
        kustomization("apps", &[]),
        helm_repository("charts"),
        helm_chart("apps", "podinfo", "charts", "2.14.0"),
        child,
    ]));
    assert_eq!(run.state("Kustomization", "flux-system", "apps"), Healthy);
    assert!(run.evaluation.root_causes.is_empty());
}

/// checkDependencies (kustomize-controller@v1.9.6) also holds a dependent on the same source
/// until the dependency has applied the source's current revision: a suspended dependency
/// that is still Ready holds it once the source moves on.
#[test]
fn a_ready_suspended_dependency_behind_the_shared_source_holds_its_dependents() {
    let moved = || git_repository("flux-system", NEW_SHA);
    let held = with_conditions(
        kustomization("apps", &["infra"]),
        vec![not_ready(
            "DependencyNotReady",
            "dependency 'flux-system/infra' revision is not up to date",
            90,
        )],
    );
    let mut values = flux_controllers();
    values.extend([moved(), suspend(kustomization("infra", &[])), held]);
    let run = run(&values);
    let infra = id("Kustomization", "flux-system", "infra");
    let apps = run.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(apps.state, Blocked, "{apps:?}");
    assert_eq!(
        run.roots("Kustomization", "flux-system", "apps"),
        [infra.as_str()]
    );
    let suspended = run.verdict("Kustomization", "flux-system", "infra");
    assert_eq!(suspended.state, Suspended);
    assert_eq!(as_strs(&suspended.root_causes), [infra.as_str()]);
    assert!(suspended.message.contains(NEW_SHA), "{}", suspended.message);

    // On the source's current revision it holds nothing.
    let mut current = flux_controllers();
    current.extend([
        git_repository("flux-system", SHA),
        suspend(kustomization("infra", &[])),
        kustomization("apps", &["infra"]),
    ]);
    let run = super::testkit::run(&current);
    assert_eq!(run.state("Kustomization", "flux-system", "apps"), Healthy);
    assert!(run.evaluation.root_causes.is_empty());
}
