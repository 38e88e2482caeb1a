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

use crate::common;

mod bed;
pub(crate) mod expect;
pub(crate) mod report;
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

/// Issue 44, family 5: kustomize-controller finds no `spec.path` in the artifact
/// (ArtifactFailed, "kustomization path not found"): the Kustomization is failed and its own
/// root cause, its healthy source none.
#[test]
fn a_path_missing_from_the_source_fails_its_kustomization() {
    if skipped("a_path_missing_from_the_source_fails_its_kustomization") {
        return;
    }
    let _bed = shared();
    let s = Scenario::new("flux-path");
    s.commit(&chain_files(), "the chain, without ./nowhere");
    s.bed.apply(&format!(
        "{}---\n{}",
        scenario::namespace_and_sources(&s),
        scenario::kustomization_at(&s.ns, "lost", "./nowhere", "fleet")
    ));
    s.bed
        .wait_ready(&s.ns, "kustomization/lost", "False", "ArtifactFailed");
    s.expect("path-not-found", |r| expect::path_not_found(r, &s.ns));
}

/// Family 2: kustomize-controller's checkDependencies holds a dependent on the same source
/// until the dependency applied the source's revision. infra is suspended (still Ready) and
/// the source moves on: apps is blocked, infra is the root cause.
#[test]
fn a_suspended_dependency_behind_the_shared_source_holds_its_dependent() {
    if skipped("a_suspended_dependency_behind_the_shared_source_holds_its_dependent") {
        return;
    }
    let _bed = shared();
    let s = Scenario::new("flux-samesource");
    healthy_chain(&s, "apps");
    s.bed.kubectl(&[
        "-n",
        &s.ns,
        "patch",
        "kustomization/infra",
        "--type=merge",
        "-p",
        r#"{"spec":{"suspend":true}}"#,
    ]);
    let mut files = chain_files();
    files.push((
        "apps/extra.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\ndata: {moved: \"on\"}\n".into(),
    ));
    s.commit(&files, "the source moves on");
    s.bed.reconcile(&s.ns, "gitrepository/fleet");
    let message = r#"{.status.conditions[?(@.type=="Ready")].message}"#;
    s.bed.wait_for(&s.ns, "kustomization/apps", message, |m| {
        m.contains("revision is not up to date")
    });
    s.expect("same-source-dependency", |r| {
        expect::held_by_suspended_dependency(r, &s.ns)
    });
}

/// Family 6: GitRepository `app` includes `shared`, which never gets an artifact (its
/// repository does not exist): `shared` is the one root cause, `app` and the Kustomization
/// consuming it are blocked by it.
#[test]
fn an_include_without_artifact_blocks_its_includer_and_consumers() {
    if skipped("an_include_without_artifact_blocks_its_includer_and_consumers") {
        return;
    }
    let _bed = shared();
    let s = Scenario::new("flux-include");
    s.commit(&chain_files(), "the app repository");
    s.bed.apply(&format!(
        "{}---\n{}",
        scenario::including_repositories(&s),
        scenario::kustomization_at(&s.ns, "apps", "./infra", "app")
    ));
    s.bed
        .wait_ready(&s.ns, "gitrepository/app", "False", "NoArtifact");
    s.expect("include-without-artifact", |r| {
        expect::include_without_artifact(r, &s.ns)
    });
}

/// Family 4: the release's Deployment is deleted by hand; helm-controller (no drift
/// detection) leaves it gone and its Ready stays True. The release's inventory lists it:
/// degraded, naming it.
#[test]
fn a_release_missing_an_object_of_its_inventory_is_degraded() {
    if skipped("a_release_missing_an_object_of_its_inventory_is_degraded") {
        return;
    }
    let _bed = shared();
    let s = Scenario::new("flux-inventory");
    s.bed.apply(&format!(
        "{}---\n{}",
        scenario::namespace_and_sources(&s),
        webapp_release(&s.ns)
    ));
    s.bed
        .wait_ready(&s.ns, "helmrelease/webapp", "True", "InstallSucceeded");
    s.expect("inventory-complete", |r| expect::release_healthy(r, &s.ns));
    s.bed
        .kubectl(&["-n", &s.ns, "delete", "deployment/webapp", "--wait=true"]);
    s.expect("inventory-deleted", |r| expect::inventory_deleted(r, &s.ns));
}

/// Family 13: a readyExpr that does not compile (kustomize-controller evalReadyExpr:
/// InvalidCELExpression, Stalled) is reported as such, naming the dependency.
#[test]
fn an_invalid_ready_expr_is_reported_naming_the_dependency() {
    if skipped("an_invalid_ready_expr_is_reported_naming_the_dependency") {
        return;
    }
    let _bed = shared();
    let s = Scenario::new("flux-readyexpr");
    s.commit(&chain_files(), "healthy chain");
    let objects = chain_objects(&s).replace(
        "dependsOn: [{name: infra}]",
        "dependsOn: [{name: infra, readyExpr: \"dep.status.conditions.filter(\"}]",
    );
    s.bed.apply(&objects);
    s.bed
        .wait_ready(&s.ns, "kustomization/apps", "False", "InvalidCELExpression");
    s.expect("invalid-ready-expr", |r| {
        expect::invalid_ready_expr(r, &s.ns)
    });
}

/// Family 12: an upgrade denied by a ValidatingAdmissionPolicy is rolled back; Ready says
/// "RollbackSucceeded". The release is failed, its reason naming the policy from Released.
#[test]
fn a_rolled_back_upgrade_is_failed_naming_what_failed_it() {
    if skipped("a_rolled_back_upgrade_is_failed_naming_what_failed_it") {
        return;
    }
    let _bed = shared();
    let s = Scenario::new("flux-rollback");
    s.bed.apply(&format!(
        "{}---\n{}---\n{}",
        scenario::namespace_and_charts(&s, "{}"),
        scenario::at_most_two_replicas(&s.ns),
        scenario::remediated_release(&s.ns, None)
    ));
    s.bed
        .wait_ready(&s.ns, "helmrelease/webapp", "True", "InstallSucceeded");
    s.bed.kubectl(&[
        "-n",
        &s.ns,
        "patch",
        "helmrelease/webapp",
        "--type=merge",
        "-p",
        r#"{"spec":{"values":{"replicas":5}}}"#,
    ]);
    s.bed
        .wait_ready(&s.ns, "helmrelease/webapp", "False", "RollbackSucceeded");
    s.expect("rollback-hides-failure", |r| {
        expect::rollback_hides_failure(r, &s.ns)
    });
}

/// Family 8: the release's uninstall is forbidden (its service account may not delete
/// Deployments); the release stays, being deleted, saying why, and is stuck past the threshold.
#[test]
fn a_release_whose_uninstall_is_forbidden_says_so_and_is_stuck() {
    if skipped("a_release_whose_uninstall_is_forbidden_says_so_and_is_stuck") {
        return;
    }
    let _bed = shared();
    let s = Scenario::new("flux-uninstall");
    s.bed.apply(&format!(
        "{}---\n{}---\n{}",
        scenario::namespace_and_charts(&s, "{}"),
        scenario::deployer_without_delete(&s.ns),
        scenario::remediated_release(&s.ns, Some("deployer"))
    ));
    s.bed
        .wait_ready(&s.ns, "helmrelease/webapp", "True", "InstallSucceeded");
    s.bed
        .kubectl(&["-n", &s.ns, "delete", "helmrelease/webapp", "--wait=false"]);
    s.bed
        .wait_ready(&s.ns, "helmrelease/webapp", "False", "UninstallFailed");
    let stuck = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        s.expect("uninstall-forbidden", |r| {
            expect::uninstall_forbidden(r, &s.ns)
        });
    }));
    // the release's finalizer would hold the namespace on the next run
    s.bed.kubectl(&[
        "-n",
        &s.ns,
        "patch",
        "helmrelease/webapp",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    if let Err(failure) = stuck {
        std::panic::resume_unwind(failure);
    }
}

/// Family 7: infra applies a Job whose one attempt fails (backoffLimit 0): the Job is the one
/// root cause, carrying its pod's last words; infra, whose health check waits on it, is
/// blocked by it.
#[test]
fn a_job_past_its_backoff_limit_is_the_root_cause_with_its_pods_words() {
    if skipped("a_job_past_its_backoff_limit_is_the_root_cause_with_its_pods_words") {
        return;
    }
    let _bed = shared();
    let s = Scenario::new("flux-job");
    let mut files = chain_files();
    files.push(("infra/migrate.yaml", scenario::migration_job()));
    s.commit(&files, "a migration Job");
    s.bed.apply(&chain_objects(&s));
    s.bed
        .wait_for(&s.ns, "pods", "{.items[*].metadata.labels.job-name}", |v| {
            v.contains("migrate")
        });
    s.fail_pods("job-name=migrate", "relation \"users\" already exists");
    let failed = r#"{.status.conditions[?(@.type=="Failed")].status}"#;
    s.bed
        .wait_for(&s.ns, "job/migrate", failed, |v| v == "True");
    s.expect("job-failed", |r| expect::job_failed(r, &s.ns));
}
