//! Real Flux on the test bed, end to end: source-, kustomize- and helm-controller, built from
//! their modules and run as processes by tests/testbed/flux/flux-testbed, reconcile local Git and
//! Helm repositories on a test bed cluster (real kube-apiserver, kube-controller-manager, kwok);
//! fleetglass's kube collector watches that cluster and writes its verdicts to Postgres, and each
//! step is asserted on what the store holds, with the same expectations (expect.rs) the fixture
//! tests hold the captured objects to. Each scenario has its own namespace, Git repository and
//! database; each step's objects are saved under target/real-flux/ (and, with
//! FLEETGLASS_UPDATE_FIXTURES=1, as tests/fixtures/real-flux/).
//!
//! Skips (printing SKIPPED and how to build them) when the controllers are not built.

#[path = "../common/mod.rs"]
mod common;

mod bed;
mod expect;
mod report;
mod scenario;

use bed::{exclusive, missing_controllers, shared};
use report::Report;
use scenario::{Scenario, chain_files, chain_objects, stalling_release, webapp_release};
use std::io::Write;

/// True (after saying so on the terminal, past the test harness's capture) when the
/// controllers are not built.
fn skipped(test: &str) -> bool {
    let Some(why) = missing_controllers() else {
        return false;
    };
    writeln!(std::io::stderr(), "SKIPPED real_flux::{test}: {why}").ok();
    true
}

/// Commits the healthy chain, applies its objects and waits until Kustomization `name` has
/// reconciled it; returns the commit.
fn healthy_chain(s: &Scenario, name: &str) -> String {
    let commit = s.commit(&chain_files(), "healthy chain");
    s.bed.apply(&chain_objects(s));
    s.bed.wait_ready(
        &s.ns,
        &format!("kustomization/{name}"),
        "True",
        "ReconciliationSucceeded",
    );
    commit
}

/// A Kustomization's revisions as fleetglass stored them (its model of the object):
/// (status.lastAttemptedRevision, status.lastAppliedRevision).
fn revisions(report: &Report, ns: &str, name: &str) -> (String, String) {
    let status = &report.verdict("Kustomization", ns, name)["body"]["status"];
    let text = |key: &str| status[key].as_str().unwrap_or_default().to_string();
    (
        text("last_attempted_revision"),
        text("last_applied_revision"),
    )
}

#[test]
fn a_healthy_chain_is_healthy_with_its_revision_and_chart_version() {
    if skipped("a_healthy_chain_is_healthy_with_its_revision_and_chart_version") {
        return;
    }
    let _bed = shared();
    let s = Scenario::new("flux-healthy");
    let commit = healthy_chain(&s, "apps");
    s.bed
        .wait_ready(&s.ns, "helmrelease/webapp", "True", "InstallSucceeded");
    s.expect("healthy", |r| expect::healthy_chain(r, &s.ns, &commit));
}

#[test]
fn broken_yaml_fails_its_kustomization_and_blocks_the_dependents() {
    if skipped("broken_yaml_fails_its_kustomization_and_blocks_the_dependents") {
        return;
    }
    let _bed = shared();
    let s = Scenario::new("flux-broken");
    healthy_chain(&s, "apps");

    let mut files = chain_files();
    files.push((
        "infra/broken.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: broken\ndata: [\n".into(),
    ));
    s.commit(&files, "broken YAML");
    s.bed.reconcile(&s.ns, "gitrepository/fleet");
    s.bed
        .wait_ready(&s.ns, "kustomization/infra", "False", "BuildFailed");
    // (apps checks its dependencies before it fetches: its lastAttemptedRevision stays old)
    s.bed
        .wait_ready(&s.ns, "kustomization/apps", "False", "DependencyNotReady");
    s.expect("broken-yaml", |r| expect::broken_yaml(r, &s.ns));
}

#[test]
fn health_checks_that_never_pass_are_progressing_then_stuck() {
    if skipped("health_checks_that_never_pass_are_progressing_then_stuck") {
        return;
    }
    let _bed = shared();
    let s = Scenario::new("flux-stuck");
    let first = healthy_chain(&s, "infra");

    let mut files = chain_files();
    files.push(("infra/never-ready.yaml", scenario::never_ready_deployment()));
    let second = s.commit(&files, "a Deployment whose pods never become ready");
    s.bed.reconcile(&s.ns, "gitrepository/fleet");
    // the controller's record of the rollout, as fleetglass stored it: the new commit attempted,
    // the old one still the last applied
    let attempted_not_applied = |r: &Report| {
        let (attempted, applied) = revisions(r, &s.ns, "infra");
        assert!(
            attempted.ends_with(&second) && applied.ends_with(&first),
            "attempted {attempted}, applied {applied}"
        );
    };
    s.expect_stored(
        "rollout-progressing",
        |r| expect::progressing_rollout(r, &s.ns),
        attempted_not_applied,
    );
    s.expect_stored(
        "rollout-stuck",
        |r| expect::stuck_rollout(r, &s.ns),
        attempted_not_applied,
    );
}

#[test]
fn a_stopped_controller_makes_its_objects_unverifiable_until_it_restarts() {
    if skipped("a_stopped_controller_makes_its_objects_unverifiable_until_it_restarts") {
        return;
    }
    let _bed = exclusive();
    let s = Scenario::new("flux-controller");
    healthy_chain(&s, "apps");
    s.bed
        .wait_ready(&s.ns, "helmrelease/webapp", "True", "InstallSucceeded");

    s.bed.controller("stop", "kustomize-controller");
    let stopped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        s.expect("controller-stopped", |r| {
            expect::controller_stopped(r, &s.ns)
        });
    }));
    // whatever the verdict, the bed's controller runs again for the scenarios after this one
    s.bed.controller("start", "kustomize-controller");
    if let Err(failure) = stopped {
        std::panic::resume_unwind(failure);
    }
    s.expect("controller-restarted", |r| {
        expect::controller_restarted(r, &s.ns)
    });
}

#[test]
fn an_apply_denied_by_admission_policy_fails_naming_the_policy() {
    if skipped("an_apply_denied_by_admission_policy_fails_naming_the_policy") {
        return;
    }
    let _bed = shared();
    let s = Scenario::new("flux-denied");
    let mut files = chain_files();
    files.push((
        "infra/lb.yaml",
        scenario::load_balancer_service("internal-lb"),
    ));
    s.commit(&files, "a LoadBalancer Service outside the allow list");
    s.bed.apply(&chain_objects(&s));
    s.bed.wait_ready(
        &s.ns,
        "kustomization/infra",
        "False",
        "ReconciliationFailed",
    );
    s.expect("admission-denied", |r| expect::admission_denied(r, &s.ns));
}

#[test]
fn a_release_whose_pods_crash_loop_after_install_is_degraded() {
    if skipped("a_release_whose_pods_crash_loop_after_install_is_degraded") {
        return;
    }
    let _bed = shared();
    let s = Scenario::new("flux-crash");
    s.bed.apply(&format!(
        "{}---\n{}",
        scenario::namespace_and_sources(&s),
        webapp_release(&s.ns)
    ));
    s.bed
        .wait_ready(&s.ns, "helmrelease/webapp", "True", "InstallSucceeded");
    s.bed.wait_for(
        &s.ns,
        "deployment/webapp",
        "{.status.availableReplicas}",
        |r| r == "1",
    );
    s.crash_loop_pods("app=webapp");
    s.bed.wait_for(
        &s.ns,
        "deployment/webapp",
        "{.status.unavailableReplicas}",
        |r| r == "1",
    );
    s.expect("crash-loop", |r| expect::crash_looping_release(r, &s.ns));
}

/// Seed 004 on real controllers: the HelmRepository carries the apps shard label, the HelmChart
/// helm-controller creates for the release does not, so the main source-controller cannot find
/// the repository. The chart is the one root cause, naming both shards; the release is blocked.
#[test]
fn a_sharded_repository_fails_the_chart_helm_controller_created() {
    if skipped("a_sharded_repository_fails_the_chart_helm_controller_created") {
        return;
    }
    let _bed = shared();
    let s = Scenario::new("flux-shard");
    s.bed.apply(&format!(
        "{}---\n{}",
        scenario::namespace_and_charts(&s, "{sharding.fluxcd.io/key: apps}"),
        webapp_release(&s.ns)
    ));
    s.bed
        .wait_ready(&s.ns, "helmrepository/charts", "True", "Succeeded");
    let ready = r#"{.status.conditions[?(@.type=="Ready")].status}"#;
    s.bed
        .wait_for(&s.ns, &format!("helmchart/{}-webapp", s.ns), ready, |r| {
            r == "False"
        });
    s.expect("shard-trap", |r| expect::shard_trap(r, &s.ns));
}

/// helm-controller's install waits on a Deployment whose progress deadline passes while its pod
/// crash-loops (written as a kubelet would): the install fails naming the Deployment, which is
/// the one root cause; the release is failed because of it.
#[test]
fn a_release_whose_wait_fails_over_a_crash_looping_pod_names_the_workload() {
    if skipped("a_release_whose_wait_fails_over_a_crash_looping_pod_names_the_workload") {
        return;
    }
    let _bed = shared();
    let s = Scenario::new("flux-wait");
    s.bed.apply(&format!(
        "{}---\n{}",
        scenario::namespace_and_charts(&s, "{}"),
        stalling_release(&s.ns)
    ));
    // kwok writes the new pod's first status (an IP, not ready) before anything else may
    s.bed
        .wait_for(&s.ns, "pods", "{.items[*].status.podIP}", |ip| {
            !ip.is_empty()
        });
    s.crash_loop_pods("app=webapp");
    s.bed
        .wait_ready(&s.ns, "helmrelease/webapp", "False", "InstallFailed");
    s.expect("wait-failed", |r| {
        expect::wait_failed_over_crash_loop(r, &s.ns)
    });
}
