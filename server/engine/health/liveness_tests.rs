//! Rule 9: a Flux controller that is absent, or whose only pod crash-loops while its
//! Deployment still counts it available, makes its objects unverifiable with that controller
//! as their one root cause.

use super::State::*;
use super::testkit::*;
use serde_json::{Value, json};

/// A pod of Deployment `app` crash-looping, as the kubelet writes it: phase Running, the
/// container waiting in CrashLoopBackOff with its last exit, Ready=False.
pub(super) fn crash_looping_pod(namespace: &str, app: &str, suffix: &str) -> Value {
    let mut value = pod(namespace, app, suffix, None);
    let name = format!("{app}-5d9c7b-{suffix}");
    value["status"] = json!({
        "phase": "Running", "startTime": ago(30),
        "conditions": [
            {"type": "Ready", "status": "False", "reason": "ContainersNotReady",
             "message": "containers with unready status: [manager]", "lastTransitionTime": ago(29)},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": ago(30)}],
        "containerStatuses": [{
            "name": "manager", "ready": false, "restartCount": 7, "started": false,
            "image": format!("ghcr.io/example/{app}:v1.0.0"),
            "state": {"waiting": {"reason": "CrashLoopBackOff",
                "message": format!("back-off 5m0s restarting failed container=manager pod={name}_{namespace}({name}-uid)")}},
            "lastState": {"terminated": {"exitCode": 1, "reason": "Error",
                "startedAt": ago(6), "finishedAt": ago(6)}}}]});
    value
}

/// Two releases from one repository, with the given controllers.
fn releases(controllers: Vec<Value>) -> Vec<Value> {
    let mut values = controllers;
    values.extend([
        helm_repository("charts"),
        helm_chart("apps", "podinfo", "charts", "2.14.0"),
        helm_release("apps", "podinfo", "charts"),
        helm_chart("apps", "redis", "charts", "2.14.0"),
        helm_release("apps", "redis", "charts"),
    ]);
    values
}

fn without(name: &str) -> Vec<Value> {
    flux_controllers()
        .into_iter()
        .filter(|c| c["metadata"]["name"] != name)
        .collect()
}

#[test]
fn an_absent_controller_is_the_one_root_cause_of_its_kinds_objects() {
    let run = run(&releases(without("helm-controller")));
    let helm_controller = id("Deployment", "flux-system", "helm-controller");
    for name in ["podinfo", "redis"] {
        let release = run.verdict("HelmRelease", "apps", name);
        assert_eq!(release.state, Unverifiable, "{release:?}");
        assert_eq!(
            release.reason,
            "no controller: Deployment flux-system/helm-controller not found"
        );
        assert_eq!(as_strs(&release.root_causes), [helm_controller.as_str()]);
    }
    // source-controller runs: its objects keep their own verdicts
    assert_eq!(
        run.state("HelmChart", "flux-system", "apps-podinfo"),
        Healthy
    );
    assert_eq!(
        run.state("HelmRepository", "flux-system", "charts"),
        Healthy
    );
    assert_eq!(run.evaluation.root_causes.len(), 1);
    let cause = run.root_cause(&helm_controller);
    assert_eq!(cause.state, Failed);
    assert_eq!(
        cause.reason,
        "controller Deployment flux-system/helm-controller not found: nothing reconciles its objects"
    );
    assert_eq!(
        as_strs(&cause.affected),
        [
            id("HelmRelease", "apps", "podinfo"),
            id("HelmRelease", "apps", "redis")
        ]
    );
}

#[test]
fn without_any_controller_in_the_input_liveness_is_unknown() {
    let run = run(&releases(Vec::new()));
    assert_eq!(run.state("HelmRelease", "apps", "podinfo"), Healthy);
    assert!(run.evaluation.root_causes.is_empty());
}

#[test]
fn an_absent_controller_is_named_where_the_others_run() {
    let moved: Vec<Value> = without("helm-controller")
        .into_iter()
        .map(|mut c| {
            c["metadata"]["namespace"] = json!("gitops");
            c
        })
        .collect();
    let run = run(&releases(moved));
    assert_eq!(
        run.roots("HelmRelease", "apps", "podinfo"),
        [id("Deployment", "gitops", "helm-controller")]
    );
}

/// A stray copy elsewhere does not move the controllers: flux-system wins.
#[test]
fn an_absent_controller_is_named_in_flux_system_when_it_holds_the_others() {
    let mut stray = controller("kustomize-controller", 1);
    stray["metadata"]["namespace"] = json!("tenant-a");
    let mut values = vec![stray];
    values.extend(without("helm-controller"));
    let run = run(&releases(values));
    assert_eq!(
        run.roots("HelmRelease", "apps", "podinfo"),
        [id("Deployment", "flux-system", "helm-controller")]
    );
}

#[test]
fn an_absent_optional_controller_counts_once_flux_is_in_the_input() {
    let mut values = flux_controllers();
    values.extend([git_repository("flux-system", SHA), terraform("nlb")]);
    let run = run(&values);
    let verdict = run.verdict("Terraform", "flux-system", "nlb");
    assert_eq!(verdict.state, Unverifiable);
    assert_eq!(
        as_strs(&verdict.root_causes),
        [id("Deployment", "flux-system", "tofu-controller")]
    );
    assert_eq!(
        run.state("GitRepository", "flux-system", "flux-system"),
        Healthy
    );
}

/// The Deployment still says availableReplicas: 1 (the kubelet restarts the container and the
/// ReplicaSet counts it available between crashes), but its only pod crash-loops.
#[test]
fn a_controller_whose_only_pod_crash_loops_is_down_whatever_its_count() {
    let mut values = releases(flux_controllers());
    values.push(crash_looping_pod("flux-system", "helm-controller", "x1"));
    let run = run(&values);
    let release = run.verdict("HelmRelease", "apps", "podinfo");
    assert_eq!(release.state, Unverifiable);
    assert!(
        release
            .reason
            .starts_with("controller helm-controller unavailable: CrashLoopBackOff"),
        "{}",
        release.reason
    );
    assert_eq!(
        as_strs(&release.root_causes),
        [id("Deployment", "flux-system", "helm-controller")]
    );
}

#[test]
fn a_controller_with_one_good_pod_of_two_is_alive() {
    let mut values = releases(flux_controllers());
    values.push(crash_looping_pod("flux-system", "helm-controller", "x1"));
    values.push(pod("flux-system", "helm-controller", "x2", None));
    let run = run(&values);
    assert_eq!(run.state("HelmRelease", "apps", "podinfo"), Healthy);
}

#[test]
fn a_controller_counting_no_available_replica_is_down_even_without_pods() {
    let mut values = without("helm-controller");
    values.push(controller("helm-controller", 0));
    let run = run(&releases(values));
    let release = run.verdict("HelmRelease", "apps", "podinfo");
    assert_eq!(
        (release.state, release.reason.as_str()),
        (
            Unverifiable,
            "controller helm-controller unavailable: 0/1 replicas available"
        )
    );
}

/// Rule 10's last clause: a shard controller that is absent or down makes only its shard's
/// objects unverifiable; the main shard stays green.
#[test]
fn an_absent_or_dead_shard_controller_is_the_root_cause_of_its_shard_only() {
    let sharded = |controllers: Vec<Value>| {
        let mut values = controllers;
        values.push(git_repository("flux-system", SHA));
        values.push(kustomization("infra", &[]));
        values.push(with_label(
            kustomization("apps", &[]),
            "sharding.fluxcd.io/key",
            "shard1",
        ));
        run(&values)
    };
    let shard_controller = id("Deployment", "flux-system", "kustomize-controller-shard1");

    let absent = sharded(flux_controllers());
    let apps = absent.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(apps.state, Unverifiable);
    assert_eq!(
        apps.reason,
        "no controller for its shard \"shard1\": Deployment flux-system/kustomize-controller-shard1 not found"
    );
    assert_eq!(as_strs(&apps.root_causes), [shard_controller.as_str()]);
    assert_eq!(
        absent.root_cause(&shard_controller).reason,
        "controller Deployment flux-system/kustomize-controller-shard1 not found for shard \"shard1\": nothing reconciles its objects"
    );
    assert_eq!(
        absent.state("Kustomization", "flux-system", "infra"),
        Healthy
    );

    let mut dead = flux_controllers();
    dead.push(controller("kustomize-controller-shard1", 0));
    let dead = sharded(dead);
    assert_eq!(
        dead.state("Kustomization", "flux-system", "apps"),
        Unverifiable
    );
    assert_eq!(
        dead.roots("Kustomization", "flux-system", "apps"),
        [shard_controller.as_str()]
    );
    assert_eq!(dead.state("Kustomization", "flux-system", "infra"), Healthy);

    let mut running = flux_controllers();
    running.push(controller("kustomize-controller-shard1", 1));
    let running = sharded(running);
    assert_eq!(
        running.state("Kustomization", "flux-system", "apps"),
        Healthy
    );
    assert!(running.evaluation.root_causes.is_empty());
}

/// A blocked object downstream of an absent controller names it as its root cause too.
#[test]
fn what_waits_on_an_object_without_controller_is_blocked_by_the_absent_controller() {
    let mut values = without("source-controller");
    values.push(helm_repository("charts"));
    values.push(with_conditions(
        helm_chart("apps", "podinfo", "charts", "2.14.0"),
        vec![not_ready("ChartPullFailed", "chart pull failed", 20)],
    ));
    values.push(with_conditions(
        helm_release("apps", "podinfo", "charts"),
        vec![not_ready(
            "SourceNotReady",
            "HelmChart 'flux-system/apps-podinfo' is not ready: chart pull failed",
            20,
        )],
    ));
    let run = run(&values);
    let release = run.verdict("HelmRelease", "apps", "podinfo");
    assert_eq!(release.state, Blocked);
    assert_eq!(
        release.reason,
        "blocked by Deployment flux-system/source-controller (not found)"
    );
    assert_eq!(
        as_strs(&release.root_causes),
        [id("Deployment", "flux-system", "source-controller")]
    );
}
