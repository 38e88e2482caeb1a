//! Real Flux on the test bed: source-, kustomize- and helm-controller, built from their modules
//! and run as processes by tests/testbed/flux/flux-testbed, reconcile local Git and Helm
//! repositories; `fleetglass evaluate` judges the objects exactly as they wrote them. Each
//! scenario has its own namespace and Git repository; each captured step is saved under
//! target/real-flux/ (and, with FLEETGLASS_UPDATE_FIXTURES=1, as tests/fixtures/real-flux/).

mod bed;
mod expect;
mod report;
mod scenario;

use bed::{exclusive, shared};
use scenario::{Scenario, chain_files, chain_objects, webapp_release};

#[test]
fn a_healthy_chain_is_healthy_with_its_revision_and_chart_version() {
    let _bed = shared();
    let s = Scenario::new("flux-healthy");
    let commit = s.commit(&chain_files(), "healthy chain");
    s.bed.apply(&chain_objects(&s));
    s.bed
        .wait_ready(&s.ns, "helmrelease/webapp", "True", "InstallSucceeded");
    s.bed.wait_ready(
        &s.ns,
        "kustomization/apps",
        "True",
        "ReconciliationSucceeded",
    );
    expect::healthy_chain(&s.capture("healthy"), &s.ns, &commit);
}

#[test]
fn broken_yaml_fails_its_kustomization_and_blocks_the_dependents() {
    let _bed = shared();
    let s = Scenario::new("flux-broken");
    s.commit(&chain_files(), "healthy chain");
    s.bed.apply(&chain_objects(&s));
    s.bed.wait_ready(
        &s.ns,
        "kustomization/apps",
        "True",
        "ReconciliationSucceeded",
    );

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
    expect::broken_yaml(&s.capture("broken-yaml"), &s.ns);
}

#[test]
fn health_checks_that_never_pass_are_progressing_then_stuck() {
    let _bed = shared();
    let s = Scenario::new("flux-stuck");
    s.commit(&chain_files(), "healthy chain");
    s.bed.apply(&chain_objects(&s));
    s.bed.wait_ready(
        &s.ns,
        "kustomization/infra",
        "True",
        "ReconciliationSucceeded",
    );

    let mut files = chain_files();
    files.push(("infra/never-ready.yaml", scenario::never_ready_deployment()));
    let second = s.commit(&files, "a Deployment whose pods never become ready");
    s.bed.reconcile(&s.ns, "gitrepository/fleet");
    s.bed
        .wait_ready(&s.ns, "kustomization/infra", "Unknown", "Progressing");
    s.bed.wait_for(
        &s.ns,
        "kustomization/infra",
        "{.status.lastAttemptedRevision}",
        |r| r.ends_with(&second),
    );
    expect::progressing_rollout(&s.capture("rollout-progressing"), &s.ns);
    let stuck = s.wait_for_state("rollout-stuck", "Deployment", "never-ready", "stuck");
    expect::stuck_rollout(&stuck, &s.ns);
    // the controller's own record of the rollout: the new commit attempted, the old one applied
    let revisions = s.bed.kubectl(&[
        "-n",
        &s.ns,
        "get",
        "kustomization/infra",
        "-o",
        "jsonpath={.status.lastAttemptedRevision} {.status.lastAppliedRevision}",
    ]);
    let (attempted, applied) = revisions.split_once(' ').expect("both revisions");
    assert!(
        attempted.ends_with(&second) && !applied.ends_with(&second),
        "{revisions}"
    );
}

#[test]
fn a_stopped_controller_makes_its_objects_unverifiable_until_it_restarts() {
    let _bed = exclusive();
    let s = Scenario::new("flux-controller");
    s.commit(&chain_files(), "healthy chain");
    s.bed.apply(&chain_objects(&s));
    s.bed.wait_ready(
        &s.ns,
        "kustomization/apps",
        "True",
        "ReconciliationSucceeded",
    );
    s.bed
        .wait_ready(&s.ns, "helmrelease/webapp", "True", "InstallSucceeded");

    s.bed.controller("stop", "kustomize-controller");
    let stopped = s.capture("controller-stopped");
    s.bed.controller("start", "kustomize-controller");
    expect::controller_stopped(&stopped, &s.ns);
    let restarted = s.capture("controller-restarted");
    expect::controller_restarted(&restarted, &s.ns);
}

#[test]
fn an_apply_denied_by_admission_policy_fails_naming_the_policy() {
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
    expect::admission_denied(&s.capture("admission-denied"), &s.ns);
}

#[test]
fn a_release_whose_pods_crash_loop_after_install_is_degraded() {
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
    expect::crash_looping_release(&s.capture("crash-loop"), &s.ns);
}
