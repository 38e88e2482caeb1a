//! Controller liveness and workloads as evidence.

use super::State::*;
use super::testkit::*;
use serde_json::json;

const PULL: &str = "Back-off pulling image \"ghcr.io/flux-iac/tofu-controller:v0.16.0-rc.5\"";

fn healthy_terraform() -> Vec<serde_json::Value> {
    let mut values = flux_controllers();
    values.push(git_repository("flux-system", SHA));
    values.push(terraform("nlb"));
    values
}

#[test]
fn a_dead_controller_makes_its_objects_unverifiable_and_is_their_root_cause() {
    let mut values = healthy_terraform();
    values.push(controller("tofu-controller", 0));
    values.push(pod(
        "flux-system",
        "tofu-controller",
        "x1",
        Some(("ImagePullBackOff", PULL)),
    ));
    let run = run(&values);
    let controller = run.verdict("Deployment", "flux-system", "tofu-controller");
    assert_eq!(controller.state, Failed);
    assert_eq!(controller.reason, format!("ImagePullBackOff: {PULL}"));
    assert!(
        controller.message.contains("tofu-controller-5d9c7b-x1"),
        "{}",
        controller.message
    );
    let terraform = run.verdict("Terraform", "flux-system", "nlb");
    assert_eq!(
        terraform.state, Unverifiable,
        "Ready=True is not evidence from a dead controller"
    );
    assert!(
        terraform
            .reason
            .contains("controller tofu-controller unavailable: ImagePullBackOff"),
        "{}",
        terraform.reason
    );
    assert_eq!(
        run.roots("Terraform", "flux-system", "nlb"),
        [id("Deployment", "flux-system", "tofu-controller")]
    );
    let cause = run.root_cause(&id("Deployment", "flux-system", "tofu-controller"));
    assert_eq!(
        cause.affected.len(),
        3,
        "controller, its pod and the Terraform: {:?}",
        cause.affected
    );
}

#[test]
fn a_running_controller_is_healthy_and_without_controllers_liveness_is_unknown() {
    let mut values = healthy_terraform();
    values.push(controller("tofu-controller", 1));
    let with_controller = run(&values);
    assert_eq!(
        with_controller.state("Deployment", "flux-system", "tofu-controller"),
        Healthy
    );
    assert_eq!(
        with_controller.state("Terraform", "flux-system", "nlb"),
        Healthy
    );
    // no controller Deployment in the input at all: liveness unknown
    let without = run(&[git_repository("flux-system", SHA), terraform("nlb")]);
    assert_eq!(without.state("Terraform", "flux-system", "nlb"), Healthy);
}

#[test]
fn a_controller_scaled_to_zero_is_down() {
    let mut values = healthy_terraform();
    let mut tofu = controller("tofu-controller", 0);
    tofu["spec"]["replicas"] = json!(0);
    values.push(tofu);
    let run = run(&values);
    assert_eq!(
        run.verdict("Deployment", "flux-system", "tofu-controller")
            .reason,
        "scaled to zero"
    );
    assert_eq!(run.state("Terraform", "flux-system", "nlb"), Unverifiable);
}

#[test]
fn sharded_objects_need_their_shard_controller() {
    let sharded = |controllers: Vec<serde_json::Value>| {
        let mut values = controllers;
        values.push(with_label(
            git_repository("flux-system", SHA),
            "sharding.fluxcd.io/key",
            "shard1",
        ));
        values.push(with_label(
            kustomization("apps", &[]),
            "sharding.fluxcd.io/key",
            "shard1",
        ));
        run(&values)
    };
    let no_shard = sharded(flux_controllers());
    let verdict = no_shard.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(verdict.state, Unverifiable);
    assert!(
        verdict
            .reason
            .contains("kustomize-controller-shard1 not found"),
        "{}",
        verdict.reason
    );
    assert_eq!(
        as_strs(&verdict.root_causes),
        [id(
            "Deployment",
            "flux-system",
            "kustomize-controller-shard1"
        )]
    );

    let mut with_shards = flux_controllers();
    with_shards.push(controller("kustomize-controller-shard1", 1));
    with_shards.push(controller("source-controller-shard1", 1));
    assert_eq!(
        sharded(with_shards.clone()).state("Kustomization", "flux-system", "apps"),
        Healthy
    );

    with_shards[3] = controller("kustomize-controller-shard1", 0);
    let shard_down = sharded(with_shards);
    assert_eq!(
        shard_down.state("Kustomization", "flux-system", "apps"),
        Unverifiable
    );
    assert_eq!(
        shard_down.roots("Kustomization", "flux-system", "apps"),
        [id(
            "Deployment",
            "flux-system",
            "kustomize-controller-shard1"
        )]
    );
    assert_eq!(
        shard_down.state("GitRepository", "flux-system", "flux-system"),
        Healthy,
        "its shard of source-controller runs"
    );
}

fn release_with_pods(pods: Vec<serde_json::Value>, available: i64) -> Vec<serde_json::Value> {
    let mut values = flux_controllers();
    values.push(helm_repository("charts"));
    values.push(helm_chart("networking", "netop", "charts", "2.14.0"));
    values.push(helm_release("networking", "netop", "charts"));
    values.push(applied_by(
        deployment("networking", "netop", 3, available),
        "helm",
        "networking",
        "netop",
    ));
    values.extend(pods);
    values
}

#[test]
fn crash_looping_pods_degrade_a_ready_release_and_the_workload_is_the_root_cause() {
    let crash = (
        "CrashLoopBackOff",
        "back-off 5m0s restarting failed container=manager",
    );
    let values = release_with_pods(
        vec![
            pod("networking", "netop", "a", None),
            pod("networking", "netop", "b", None),
            pod("networking", "netop", "c", Some(crash)),
        ],
        2,
    );
    let run = run(&values);
    let workload = run.verdict("Deployment", "networking", "netop");
    assert_eq!(workload.state, Failed);
    assert!(
        workload
            .reason
            .starts_with("1/3 pods failing: netop-5d9c7b-c: CrashLoopBackOff"),
        "{}",
        workload.reason
    );
    let release = run.verdict("HelmRelease", "networking", "netop");
    assert_eq!(release.state, Degraded);
    assert!(
        release.message.contains("netop-5d9c7b-c") && release.message.contains("CrashLoopBackOff"),
        "{}",
        release.message
    );
    assert_eq!(release.root_causes, std::slice::from_ref(&workload.id));
    assert_eq!(
        run.roots("Pod", "networking", "netop-5d9c7b-c"),
        [workload.id.as_str()]
    );
    assert_eq!(run.state("Pod", "networking", "netop-5d9c7b-a"), Healthy);
}

#[test]
fn a_first_rollout_without_failing_pods_is_in_progress_until_its_threshold() {
    // as real kube-controller-manager writes it while the new ReplicaSet's pods start
    let rolling = json!([
        {"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated", "message": "ReplicaSet \"netop-5d9c7b\" is progressing.", "lastTransitionTime": ago(1)},
        {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable", "message": "Deployment does not have minimum availability.", "lastTransitionTime": ago(1)}]);
    let mut values = release_with_pods(vec![], 0);
    values.last_mut().unwrap()["status"]["conditions"] = rolling.clone();
    let fresh = run(&values);
    let verdict = fresh.verdict("Deployment", "networking", "netop");
    assert_eq!(
        (verdict.state, verdict.reason.as_str()),
        (Progressing, "rolling out: 0/3 available, 3 updated")
    );

    // No progress for 90 minutes (lastUpdateTime is when the controller last saw progress).
    let mut stale = rolling;
    stale[0]["lastTransitionTime"] = json!(ago(90));
    stale[0]["lastUpdateTime"] = json!(ago(90));
    stale[1]["lastTransitionTime"] = json!(ago(90));
    values.last_mut().unwrap()["status"]["conditions"] = stale;
    assert_eq!(
        run(&values).state("Deployment", "networking", "netop"),
        Stuck
    );

    // a finished rollout that lost its replicas 90 minutes ago is not in progress: it fails
    let mut done = release_with_pods(vec![], 0);
    done.last_mut().unwrap()["status"]["conditions"] = json!([
        {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "message": "", "lastTransitionTime": ago(900)},
        {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable", "message": "Deployment does not have minimum availability.", "lastTransitionTime": ago(90)}]);
    assert_eq!(
        run(&done)
            .verdict("Deployment", "networking", "netop")
            .reason,
        "unavailable for 1h 30m: 0/3 available, 3 updated"
    );
}

#[test]
fn unavailable_and_deadline_exceeded_workloads_fail() {
    let mut values = release_with_pods(vec![], 0);
    values.last_mut().unwrap()["status"]["conditions"] = json!([{"type": "Available", "status": "False",
        "reason": "MinimumReplicasUnavailable", "message": "Deployment does not have minimum availability.",
        "lastTransitionTime": ago(30)}]);
    let none_available = run(&values);
    let verdict = none_available.verdict("Deployment", "networking", "netop");
    assert_eq!(
        (verdict.state, verdict.reason.as_str()),
        (Failed, "unavailable for 30m: 0/3 available, 3 updated")
    );
    assert_eq!(
        none_available.state("HelmRelease", "networking", "netop"),
        Degraded
    );

    let mut values = release_with_pods(vec![], 3);
    let workload = values.last_mut().unwrap();
    workload["status"]["conditions"] = json!([{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
        "message": "ReplicaSet \"netop-5d9c7b\" has timed out progressing.", "lastTransitionTime": ago(30)}]);
    let deadline = workload["status"]["conditions"].clone();
    let stalled = run(&values);
    assert_eq!(
        stalled.verdict("Deployment", "networking", "netop").reason,
        "rollout stalled (ProgressDeadlineExceeded)"
    );

    // With a crash-looping pod, the reason names the pod and why, not just the deadline.
    let crash = (
        "CrashLoopBackOff",
        "back-off 5m0s restarting failed container=manager",
    );
    let mut values = release_with_pods(vec![pod("networking", "netop", "c", Some(crash))], 2);
    let workload = values
        .iter_mut()
        .find(|v| v["kind"] == "Deployment" && v["metadata"]["name"] == "netop")
        .unwrap();
    workload["status"]["conditions"] = deadline;
    let reason = run(&values)
        .verdict("Deployment", "networking", "netop")
        .reason
        .clone();
    assert!(
        reason.starts_with("rollout stalled: pod netop-5d9c7b-c: CrashLoopBackOff"),
        "{reason}"
    );
}

#[test]
fn pods_are_found_by_selector_when_they_have_no_owner_reference() {
    let mut orphan = pod(
        "networking",
        "netop",
        "z",
        Some(("ImagePullBackOff", "Back-off pulling image")),
    );
    orphan["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("ownerReferences");
    let run = run(&release_with_pods(vec![orphan], 0));
    assert_eq!(
        run.verdict("Deployment", "networking", "netop").reason,
        "ImagePullBackOff: Back-off pulling image"
    );
}

/// The `apps` Kustomization (Ready, kustomize-controller without `wait`) and the netop release
/// it applied, whose status is `release_conditions`.
fn kustomization_over_release(release_conditions: Vec<serde_json::Value>) -> Run {
    let mut values = release_with_pods(vec![], 3);
    values.push(git_repository("flux-system", SHA));
    values.push(kustomization("apps", &[]));
    let release = values
        .iter_mut()
        .find(|v| v["kind"] == "HelmRelease")
        .unwrap();
    *release = with_conditions(
        applied_by(release.clone(), "kustomize", "flux-system", "apps"),
        release_conditions,
    );
    run(&values)
}

#[test]
fn a_kustomization_depends_on_the_release_it_applied() {
    let run = kustomization_over_release(vec![not_ready("InstallFailed", "install failed", 5)]);
    let apps = run.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(apps.state, Degraded);
    assert_eq!(
        run.roots("Kustomization", "flux-system", "apps"),
        [id("HelmRelease", "networking", "netop")]
    );
}

/// helm-controller marks a release Reconciling with "Running '<action>' action with timeout of
/// <timeout>" and mirrors it in Ready=Unknown while the action runs
/// (fluxcd/helm-controller internal/reconcile/atomic_release.go). The Kustomization that applied
/// the release is Ready the moment the apply succeeded, but what it deployed is still upgrading:
/// not fully deployed, so progressing and naming the release, with no root cause (nothing failed).
#[test]
fn a_kustomization_over_a_release_still_upgrading_is_progressing_not_healthy() {
    let running = "Running 'upgrade' action with timeout of 5m0s";
    let run = kustomization_over_release(vec![
        condition("Ready", "Unknown", "Progressing", running, 1),
        condition("Reconciling", "True", "Progressing", running, 1),
    ]);
    assert_eq!(run.state("HelmRelease", "networking", "netop"), Progressing);
    let apps = run.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(apps.state, Progressing);
    assert!(
        apps.reason.starts_with("HelmRelease networking/netop: "),
        "{}",
        apps.reason
    );
    assert!(run.roots("Kustomization", "flux-system", "apps").is_empty());
}

/// kustomize-controller marks a Kustomization Ready=Unknown "Reconciliation in progress" and
/// Reconciling=True "Fetching manifests for revision <rev> with a timeout of <timeout>", both
/// with reason Progressing, when it starts applying
/// (fluxcd/kustomize-controller internal/controller/kustomization_controller.go, `reconcile`).
/// The parent that applied that child is Ready, but the child has not applied yet: the parent is
/// progressing and names the child, with no root cause.
#[test]
fn a_kustomization_over_a_child_kustomization_still_applying_is_progressing_not_healthy() {
    let fetching = format!("Fetching manifests for revision {SHA} with a timeout of 5m0s");
    let mut values = flux_controllers();
    values.push(git_repository("flux-system", SHA));
    values.push(kustomization("flux-system", &[]));
    values.push(with_conditions(
        applied_by(
            kustomization("apps", &[]),
            "kustomize",
            "flux-system",
            "flux-system",
        ),
        vec![
            condition(
                "Ready",
                "Unknown",
                "Progressing",
                "Reconciliation in progress",
                1,
            ),
            condition("Reconciling", "True", "Progressing", &fetching, 1),
        ],
    ));
    let run = run(&values);
    assert_eq!(
        run.state("Kustomization", "flux-system", "apps"),
        Progressing
    );
    let parent = run.verdict("Kustomization", "flux-system", "flux-system");
    assert_eq!(parent.state, Progressing);
    assert!(
        parent
            .reason
            .starts_with("Kustomization flux-system/apps: "),
        "{}",
        parent.reason
    );
    assert!(
        run.roots("Kustomization", "flux-system", "flux-system")
            .is_empty()
    );
}

/// A Flux controller's own Recreate rollout: the old pod is gone, the new one not yet ready.
/// Younger than the threshold it is progressing and its objects keep the verdict their status
/// gives; past it, the objects are unverifiable with the controller as root cause.
#[test]
fn a_controller_recreated_for_less_than_the_threshold_keeps_its_objects_verdicts() {
    let recreating = |minutes: i64| {
        let mut kustomize = controller("kustomize-controller", 0);
        kustomize["spec"]["strategy"] = json!({"type": "Recreate"});
        kustomize["status"]["conditions"] = json!([
            {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
             "message": "Deployment does not have minimum availability.", "lastTransitionTime": ago(minutes), "lastUpdateTime": ago(minutes)},
            {"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated",
             "message": "ReplicaSet \"kustomize-controller-7f9c\" is progressing.", "lastTransitionTime": ago(400), "lastUpdateTime": ago(minutes)}]);
        let mut values = vec![
            controller("source-controller", 1),
            controller("helm-controller", 1),
            kustomize,
            git_repository("flux-system", SHA),
            kustomization("apps", &[]),
        ];
        let mut new_pod = pod(
            "flux-system",
            "kustomize-controller",
            "n1",
            Some(("ContainerCreating", "")),
        );
        new_pod["metadata"]["creationTimestamp"] = json!(ago(minutes));
        new_pod["status"]["startTime"] = json!(ago(minutes));
        values.push(new_pod);
        run(&values)
    };
    let fresh = recreating(2);
    assert_eq!(
        fresh.state("Deployment", "flux-system", "kustomize-controller"),
        Progressing
    );
    assert_eq!(fresh.state("Kustomization", "flux-system", "apps"), Healthy);
    assert!(
        fresh.evaluation.root_causes.is_empty(),
        "{:?}",
        fresh.evaluation.root_causes
    );

    let late = recreating(60);
    assert_eq!(
        late.state("Deployment", "flux-system", "kustomize-controller"),
        Stuck
    );
    assert_eq!(
        late.state("Kustomization", "flux-system", "apps"),
        Unverifiable
    );
    assert_eq!(
        late.roots("Kustomization", "flux-system", "apps"),
        [id("Deployment", "flux-system", "kustomize-controller")]
    );
}
