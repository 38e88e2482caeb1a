//! Workloads and pods, rule by rule (docs/WORKLOADS.md), with status and conditions shaped as
//! kube-controller-manager and the kubelet write them: Deployment conditions carry both
//! lastUpdateTime and lastTransitionTime, zero counters are left out (`omitempty`).

use super::State::*;
use super::testkit::*;
use super::{DomainSpec, SeenInProgress, State, Thresholds};
use chrono::TimeDelta;
use serde_json::{Value, json};

const NS: &str = "shop";
const APP: &str = "web";

/// An RFC 3339 time `seconds` before [`now`].
fn secs_ago(seconds: i64) -> String {
    (now() - TimeDelta::seconds(seconds)).to_rfc3339()
}

const MIN: i64 = 60;
const HOUR: i64 = 3600;
const DAY: i64 = 86_400;

/// A Deployment condition as the deployment controller writes it.
fn cond(type_: &str, status: &str, reason: &str, transition: i64, update: i64) -> Value {
    json!({"type": type_, "status": status, "reason": reason, "message": format!("{reason} message"),
           "lastTransitionTime": secs_ago(transition), "lastUpdateTime": secs_ago(update)})
}

/// A finished rollout long ago that still has minimum availability.
fn settled() -> Vec<Value> {
    vec![
        cond(
            "Available",
            "True",
            "MinimumReplicasAvailable",
            10 * DAY,
            10 * DAY,
        ),
        cond(
            "Progressing",
            "True",
            "NewReplicaSetAvailable",
            150 * DAY,
            10 * DAY,
        ),
    ]
}

/// Deployment shop/web applied by HelmRelease shop/web, with the given status counters.
fn deployment_with(replicas: i64, status: Value, conditions: Vec<Value>) -> Value {
    let mut status = status;
    status["observedGeneration"] = json!(1);
    status["conditions"] = Value::Array(conditions);
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": APP, "namespace": NS, "generation": 1, "creationTimestamp": secs_ago(200 * DAY),
                        "labels": {"helm.toolkit.fluxcd.io/name": APP, "helm.toolkit.fluxcd.io/namespace": NS}},
           "spec": {"replicas": replicas, "progressDeadlineSeconds": 600, "selector": {"matchLabels": {"app": APP}},
                    "template": {"metadata": {"labels": {"app": APP}},
                                 "spec": {"containers": [{"name": "app", "image": "ghcr.io/example/web:v2"}]}}},
           "status": status})
}

/// Counters with zeros left out, as the API server serialises them.
fn counts(total: i64, updated: i64, ready: i64, available: i64) -> Value {
    let mut status = serde_json::Map::new();
    for (key, value) in [
        ("replicas", total),
        ("updatedReplicas", updated),
        ("readyReplicas", ready),
        ("availableReplicas", available),
    ] {
        if value != 0 {
            status.insert(key.into(), json!(value));
        }
    }
    Value::Object(status)
}

/// A pod of shop/web (ReplicaSet web-6f7d8), created `age` seconds ago.
fn app_pod(suffix: &str, age: i64, ready: bool, container: Value) -> Value {
    let status = if ready { "True" } else { "False" };
    let reason = if ready { "" } else { "ContainersNotReady" };
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": format!("web-6f7d8-{suffix}"), "namespace": NS, "labels": {"app": APP},
                        "creationTimestamp": secs_ago(age),
                        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-6f7d8", "controller": true}]},
           "spec": {"restartPolicy": "Always", "containers": [{"name": "app", "image": "ghcr.io/example/web:v2"}]},
           "status": {"phase": "Running", "startTime": secs_ago(age),
                      "conditions": [{"type": "Ready", "status": status, "reason": reason, "lastTransitionTime": secs_ago(age)},
                                     {"type": "PodScheduled", "status": "True", "lastTransitionTime": secs_ago(age)}],
                      "containerStatuses": [container]}})
}

fn running(restarts: i64) -> Value {
    json!({"name": "app", "ready": true, "restartCount": restarts, "started": true,
           "state": {"running": {"startedAt": secs_ago(30)}}})
}

fn waiting(reason: &str, message: &str) -> Value {
    json!({"name": "app", "ready": false, "restartCount": 0, "started": false,
           "state": {"waiting": {"reason": reason, "message": message}}})
}

fn terminated(reason: &str, exit_code: i64, finished: i64) -> Value {
    json!({"reason": reason, "exitCode": exit_code, "startedAt": secs_ago(finished + 5), "finishedAt": secs_ago(finished)})
}

fn ready_pod(suffix: &str) -> Value {
    app_pod(suffix, 10 * DAY, true, running(0))
}

/// Pod `web-6f7d8-<suffix>` in `phase`, its container ended a day ago (`reason`, `exit_code`).
fn ended_pod(suffix: &str, reason: &str, exit_code: i64, phase: &str) -> Value {
    let mut pod = app_pod(
        suffix,
        DAY,
        false,
        json!({"name": "app", "ready": false, "restartCount": 0,
        "state": {"terminated": {"reason": reason, "exitCode": exit_code, "finishedAt": secs_ago(DAY)}}}),
    );
    pod["status"]["phase"] = json!(phase);
    pod
}

/// Pod `web-6f7d8-e`, evicted a day ago for `message`.
fn evicted_pod(message: &str) -> Value {
    let mut pod = ended_pod("e", "ContainerStatusUnknown", 137, "Failed");
    pod["status"]["reason"] = json!("Evicted");
    pod["status"]["message"] = json!(message);
    pod
}

/// The Flux side: controllers, a chart source and a Ready HelmRelease shop/web, plus `extra`.
fn release_over(extra: Vec<Value>) -> Vec<Value> {
    let mut values = flux_controllers();
    values.push(helm_repository("charts"));
    values.push(helm_chart(NS, APP, "charts", "2.14.0"));
    values.push(helm_release(NS, APP, "charts"));
    values.extend(extra);
    values
}

fn web(run: &Run) -> &super::Verdict {
    run.verdict("Deployment", NS, APP)
}

fn release(run: &Run) -> State {
    run.state("HelmRelease", NS, APP)
}

/// The web Deployment's state and reason.
#[track_caller]
fn assert_reason(run: &Run, state: State, reason: &str) {
    run.assert_verdict("Deployment", NS, APP, state, reason);
}

fn shop_domain() -> DomainSpec {
    crate::health::testkit::from_yaml(
        "{name: shop, select: {namespaces: [shop]}, version: {from: chart_version, namespace: shop, name: web}}",
    )
    .expect("valid domain")
}

// Rule 1: a shortfall is in progress only while a rollout makes progress.

#[test]
fn one_of_three_available_for_two_days_fails_and_degrades_the_ready_release_and_its_domain() {
    let unavailable = vec![
        cond(
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            2 * DAY,
            2 * DAY,
        ),
        cond(
            "Progressing",
            "True",
            "NewReplicaSetAvailable",
            150 * DAY,
            150 * DAY,
        ),
    ];
    let values = release_over(vec![
        deployment_with(3, counts(3, 3, 1, 1), unavailable),
        ready_pod("a"),
        app_pod("b", 2 * DAY, false, waiting("ContainerCreating", "")),
        app_pod("c", 2 * DAY, false, waiting("ContainerCreating", "")),
    ]);
    let run = run_with(&values, &[], &[shop_domain()], &Thresholds::default());
    assert_reason(&run, Failed, "unavailable for 2d: 1/3 available, 3 updated");
    assert_eq!(
        web(&run).message,
        "not ready: pod web-6f7d8-b, pod web-6f7d8-c"
    );
    assert_eq!(release(&run), Degraded);
    assert_eq!(
        run.roots("HelmRelease", NS, APP),
        [id("Deployment", NS, APP)]
    );
    assert_eq!(
        run.roots("Pod", NS, "web-6f7d8-b"),
        [id("Deployment", NS, APP)],
        "the pods are evidence, not causes"
    );
    assert_eq!(run.evaluation.root_causes.len(), 1);
    let cell = &run.evaluation.domains[0];
    assert!(!cell.fully_healthy, "{cell:?}");
}

#[test]
fn a_shortfall_is_failed_one_second_past_the_threshold_not_at_it() {
    let at = |seconds: i64| {
        let unavailable = vec![
            cond(
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                seconds,
                seconds,
            ),
            cond(
                "Progressing",
                "True",
                "NewReplicaSetAvailable",
                150 * DAY,
                150 * DAY,
            ),
        ];
        run(&release_over(vec![deployment_with(
            3,
            counts(3, 3, 1, 1),
            unavailable,
        )]))
    };
    let exactly = at(15 * MIN);
    assert_reason(&exactly, Progressing, "1/3 available, 3 updated");
    assert_eq!(
        release(&exactly),
        Progressing,
        "not green before it is fully deployed"
    );
    let past = at(15 * MIN + 1);
    assert_reason(
        &past,
        Failed,
        "unavailable for 15m: 1/3 available, 3 updated",
    );
    assert_eq!(
        web(&past).since,
        Some(now() - TimeDelta::seconds(15 * MIN + 1))
    );
    assert_eq!(release(&past), Degraded);
}

#[test]
fn a_partial_shortfall_with_minimum_availability_is_stuck_once_its_pod_has_waited_too_long() {
    // 9 of 10 available keeps Available=True (maxUnavailable 25%); the unready pod dates it.
    let values = |unready_for: i64| {
        release_over(vec![
            deployment_with(10, counts(10, 10, 9, 9), settled()),
            app_pod("late", unready_for, false, running(0)),
            app_pod("older", unready_for - 60, false, running(0)),
            ready_pod("ok"),
        ])
    };
    let fresh = run(&values(5 * MIN));
    assert_reason(&fresh, Progressing, "9/10 available, 10 updated");
    assert_eq!(
        web(&fresh).since,
        Some(now() - TimeDelta::seconds(5 * MIN)),
        "dated by the longest-unready pod"
    );
    let day = run(&values(DAY));
    assert_reason(&day, Stuck, "stuck for 1d: 9/10 available, 10 updated");
    assert_eq!(release(&day), Degraded);
    assert_eq!(
        day.roots("Pod", NS, "web-6f7d8-late"),
        [id("Deployment", NS, APP)],
        "a pod Running but not Ready for a day is its workload's problem"
    );
    assert_eq!(day.state("Pod", NS, "web-6f7d8-late"), Stuck);
    assert_eq!(day.state("Pod", NS, "web-6f7d8-ok"), Healthy);
}

#[test]
fn a_rollout_is_in_progress_while_it_makes_progress_and_stuck_when_it_stops() {
    let rollout = |last_progress: i64| {
        let conditions = vec![
            cond(
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                3 * HOUR,
                3 * HOUR,
            ),
            cond(
                "Progressing",
                "True",
                "ReplicaSetUpdated",
                150 * DAY,
                last_progress,
            ),
        ];
        run(&release_over(vec![deployment_with(
            20,
            counts(21, 12, 11, 11),
            conditions,
        )]))
    };
    let moving = rollout(2 * MIN);
    assert_reason(
        &moving,
        Progressing,
        "rolling out: 11/20 available, 12 updated, 1 pending termination",
    );
    // Ready says the upgrade was applied, not that it is fully deployed: the release rolls out
    // with its Deployment and is never green before it has finished.
    moving.assert_verdict(
        "HelmRelease",
        NS,
        APP,
        Progressing,
        "Deployment shop/web: rolling out: 11/20 available, 12 updated, 1 pending termination",
    );
    assert!(moving.roots("HelmRelease", NS, APP).is_empty());
    assert_eq!(release(&rollout(15 * MIN + 1)), Degraded);
    assert_reason(
        &rollout(15 * MIN + 1),
        Stuck,
        "stuck for 15m: rolling out: 11/20 available, 12 updated, 1 pending termination",
    );
    assert_eq!(web(&rollout(15 * MIN)).state, Progressing);
}

#[test]
fn past_its_progress_deadline_a_rollout_fails_and_degrades_the_release() {
    let conditions = vec![
        cond(
            "Available",
            "True",
            "MinimumReplicasAvailable",
            10 * DAY,
            10 * DAY,
        ),
        json!({"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
               "message": "ReplicaSet \"web-6f7d8\" has timed out progressing.",
               "lastTransitionTime": secs_ago(MIN), "lastUpdateTime": secs_ago(MIN)}),
    ];
    let run = run(&release_over(vec![deployment_with(
        3,
        counts(4, 1, 3, 3),
        conditions,
    )]));
    assert_reason(&run, Failed, "rollout stalled (ProgressDeadlineExceeded)");
    assert_eq!(release(&run), Degraded);
}

// Rule 2: one root cause per broken workload; pods are evidence named in its reason.

#[test]
fn several_failing_pods_make_one_root_cause_named_after_the_first() {
    let mut unschedulable = app_pod("u", 5 * MIN, false, waiting("ContainerCreating", ""));
    unschedulable["status"]["phase"] = json!("Pending");
    unschedulable["status"]["conditions"][1] = json!({"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
        "message": "0/3 nodes are available: 3 Insufficient cpu.", "lastTransitionTime": secs_ago(5 * MIN)});
    let values = release_over(vec![
        deployment_with(4, counts(4, 4, 1, 1), settled()),
        ready_pod("a"),
        app_pod(
            "p",
            HOUR,
            false,
            waiting(
                "ImagePullBackOff",
                "Back-off pulling image \"ghcr.io/example/web:v2\"",
            ),
        ),
        app_pod(
            "s",
            HOUR,
            false,
            waiting("CreateContainerConfigError", "secret \"web-db\" not found"),
        ),
        unschedulable,
    ]);
    let run = run(&values);
    assert_reason(
        &run,
        Failed,
        "3/4 pods failing: web-6f7d8-p: ImagePullBackOff: Back-off pulling image \"ghcr.io/example/web:v2\"",
    );
    assert_eq!(
        web(&run).message,
        "1/4 available; pod web-6f7d8-p: ImagePullBackOff: Back-off pulling image \"ghcr.io/example/web:v2\"; \
         pod web-6f7d8-s: CreateContainerConfigError: secret \"web-db\" not found; \
         pod web-6f7d8-u: Unschedulable: 0/3 nodes are available: 3 Insufficient cpu."
    );
    assert_eq!(
        run.evaluation
            .root_causes
            .iter()
            .map(|c| c.id.as_str())
            .collect::<Vec<_>>(),
        [id("Deployment", NS, APP)]
    );
    for pod in ["web-6f7d8-p", "web-6f7d8-s", "web-6f7d8-u"] {
        assert_eq!(run.state("Pod", NS, pod), Failed, "{pod}");
        assert_eq!(run.roots("Pod", NS, pod), [id("Deployment", NS, APP)]);
    }
}

#[test]
fn with_no_replica_available_the_reason_is_the_pods_failure_itself() {
    let values = release_over(vec![
        deployment_with(
            1,
            counts(1, 1, 0, 0),
            vec![cond(
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                HOUR,
                HOUR,
            )],
        ),
        app_pod(
            "p",
            HOUR,
            false,
            waiting("ErrImagePull", "manifest unknown"),
        ),
    ]);
    let run = run(&values);
    assert_reason(&run, Failed, "ErrImagePull: manifest unknown");
    assert_eq!(web(&run).since, Some(now() - TimeDelta::hours(1)));
}

#[test]
fn a_crash_looping_init_container_and_an_oom_killed_container_are_named() {
    let mut init = app_pod("i", HOUR, false, running(0));
    init["status"]["phase"] = json!("Pending");
    init["status"]["containerStatuses"][0] = json!({"name": "app", "ready": false, "restartCount": 0,
        "state": {"waiting": {"reason": "PodInitializing"}}});
    init["status"]["initContainerStatuses"] = json!([{"name": "migrate", "ready": false, "restartCount": 6,
        "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 2m40s restarting failed container=migrate"}},
        "lastState": {"terminated": {"reason": "Error", "exitCode": 1, "message": "relation \"orders\" does not exist\nat migrate.go:42",
                                     "finishedAt": secs_ago(MIN)}}}]);
    let run_init = run(&release_over(vec![
        deployment_with(1, counts(1, 1, 0, 0), settled()),
        init,
    ]));
    assert_reason(
        &run_init,
        Failed,
        "Init:CrashLoopBackOff: relation \"orders\" does not exist",
    );
    assert_eq!(
        run_init.verdict("Pod", NS, "web-6f7d8-i").message,
        "migrate (init): CrashLoopBackOff, 6 restarts, last exit Error; app: PodInitializing, 0 restarts"
    );

    let mut oom = waiting(
        "CrashLoopBackOff",
        "back-off 5m0s restarting failed container=app",
    );
    oom["restartCount"] = json!(9);
    oom["lastState"] = json!({"terminated": terminated("OOMKilled", 137, 2 * MIN)});
    let run_oom = run(&release_over(vec![
        deployment_with(2, counts(2, 2, 1, 1), settled()),
        ready_pod("a"),
        app_pod("o", HOUR, false, oom),
    ]));
    assert_reason(
        &run_oom,
        Failed,
        "1/2 pods failing: web-6f7d8-o: CrashLoopBackOff: OOMKilled",
    );
    assert_eq!(
        run_oom.verdict("Pod", NS, "web-6f7d8-o").message,
        "app: CrashLoopBackOff, 9 restarts, last exit OOMKilled"
    );
}

#[test]
fn an_unschedulable_pod_fails_only_after_the_scheduling_window() {
    let pending = |age: i64| {
        let mut pod = app_pod("u", age, false, waiting("ContainerCreating", ""));
        pod["status"]["phase"] = json!("Pending");
        pod["status"]["conditions"][1] = json!({"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
            "message": "0/3 nodes are available: 3 node(s) had untolerated taint.", "lastTransitionTime": secs_ago(age)});
        run(&release_over(vec![
            deployment_with(
                1,
                counts(1, 1, 0, 0),
                vec![cond(
                    "Available",
                    "False",
                    "MinimumReplicasUnavailable",
                    age,
                    age,
                )],
            ),
            pod,
        ]))
    };
    assert_reason(&pending(15), Progressing, "0/1 available, 1 updated");
    assert_reason(
        &pending(16),
        Failed,
        "Unschedulable: 0/3 nodes are available: 3 node(s) had untolerated taint.",
    );
}

// Rules 3 and 8: crash loops seen between restarts.

fn crashing(container: Value) -> Run {
    run(&release_over(vec![
        deployment_with(2, counts(2, 2, 2, 2), settled()),
        ready_pod("a"),
        app_pod("c", HOUR, true, container),
    ]))
}

#[test]
fn a_running_container_whose_restarts_keep_rising_is_crash_looping() {
    let up_again = |restarts: i64, last: Value| {
        let mut container = running(restarts);
        container["lastState"] = json!({"terminated": last});
        crashing(container)
    };
    let run = up_again(5, terminated("OOMKilled", 137, 30));
    assert_reason(
        &run,
        Failed,
        "1/2 pods failing: web-6f7d8-c: CrashLoopBackOff: OOMKilled (exit code 137), 5 restarts",
    );
    assert_eq!(release(&run), Degraded);
    assert_eq!(
        web(&up_again(2, terminated("Error", 1, 10 * MIN))).state,
        Failed,
        "the back-off window is ten minutes"
    );
    assert_eq!(
        web(&up_again(2, terminated("Error", 1, 10 * MIN + 1))).state,
        Healthy
    );
    assert_eq!(
        web(&up_again(1, terminated("Error", 1, 30))).state,
        Healthy,
        "one restart is an incident, not a loop"
    );
    assert_eq!(
        web(&up_again(5, terminated("Completed", 0, 30))).state,
        Healthy
    );
    let mut no_time = terminated("Error", 1, 30);
    no_time.as_object_mut().unwrap().remove("finishedAt");
    assert_eq!(web(&up_again(5, no_time)).state, Healthy);
}

#[test]
fn a_container_terminated_with_an_error_between_restarts_is_crash_looping() {
    let mut exited = json!({"name": "app", "ready": false, "restartCount": 3,
        "state": {"terminated": {"reason": "Error", "exitCode": 2, "message": "panic: nil map\ngoroutine 1",
                                 "finishedAt": secs_ago(2)}}});
    let run = crashing(exited.clone());
    assert_reason(
        &run,
        Failed,
        "1/2 pods failing: web-6f7d8-c: CrashLoopBackOff: Error (exit code 2): panic: nil map, 3 restarts",
    );
    assert_eq!(
        run.verdict("Pod", NS, "web-6f7d8-c").message,
        "app: Error, 3 restarts"
    );
    exited["state"]["terminated"]["exitCode"] = json!(0);
    exited["state"]["terminated"]["reason"] = json!("Completed");
    assert_eq!(web(&crashing(exited)).state, Healthy);
}

#[test]
fn an_error_exit_is_not_a_loop_when_the_pod_never_restarts_or_is_being_deleted() {
    let exited = json!({"name": "app", "ready": false, "restartCount": 0,
        "state": {"terminated": {"reason": "Error", "exitCode": 143, "finishedAt": secs_ago(2)}}});
    let mut never = app_pod("n", HOUR, false, exited.clone());
    never["spec"]["restartPolicy"] = json!("Never");
    let mut terminating = app_pod("t", HOUR, false, exited.clone());
    terminating["metadata"]["deletionTimestamp"] = json!(secs_ago(5));
    let run = run(&release_over(vec![
        deployment_with(1, counts(1, 1, 1, 1), settled()),
        ready_pod("a"),
        never,
        terminating,
    ]));
    assert_reason(&run, Healthy, "1/1 available");
    assert_ne!(run.state("Pod", NS, "web-6f7d8-n"), Failed);
    assert_eq!(
        run.verdict("Pod", NS, "web-6f7d8-t").reason,
        "being deleted (finalizers pending)"
    );
    let mut on_failure = app_pod("f", HOUR, false, exited);
    on_failure["spec"]["restartPolicy"] = json!("OnFailure");
    let due = super::deadlines::Due::default();
    let clock = super::deadlines::Clock::new(now(), &due);
    let on_failure = super::pods::pod_failure(&parse(&on_failure), clock);
    assert_eq!(
        on_failure.as_ref().map(|(_, words)| words.as_str()),
        Some("CrashLoopBackOff: Error (exit code 143), 0 restarts")
    );
}

// Rule 4: fresh rollouts are progressing, measured from when this rollout began.

#[test]
fn a_recreate_rollout_with_nothing_available_yet_is_progressing() {
    let conditions = vec![
        cond("Available", "False", "MinimumReplicasUnavailable", 20, 20),
        cond("Progressing", "True", "NewReplicaSetCreated", 150 * DAY, 20),
    ];
    let mut deployment = deployment_with(3, counts(3, 3, 0, 0), conditions);
    deployment["spec"]["strategy"] = json!({"type": "Recreate"});
    let run = run(&release_over(vec![
        deployment,
        app_pod("a", 10, false, waiting("ContainerCreating", "")),
    ]));
    assert_reason(&run, Progressing, "rolling out: 0/3 available, 3 updated");
    assert_eq!(web(&run).since, Some(now() - TimeDelta::seconds(20)));
    assert_eq!(
        release(&run),
        Progressing,
        "rolling out, neither failed nor green"
    );
}

#[test]
fn an_old_progressing_transition_does_not_age_a_new_rollout() {
    // A hand-written or older status without lastUpdateTime: the newest evidence dates it.
    let progressing = |pods_age: i64| {
        let conditions = vec![
            json!({"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated",
            "message": "ReplicaSet \"web-6f7d8\" is progressing.", "lastTransitionTime": secs_ago(150 * DAY)}),
        ];
        run(&release_over(vec![
            deployment_with(2, counts(2, 2, 0, 0), conditions),
            app_pod("old", 2 * DAY, false, waiting("ContainerCreating", "")),
            app_pod("new", pods_age, false, waiting("ContainerCreating", "")),
        ]))
    };
    let fresh = progressing(30);
    assert_reason(&fresh, Progressing, "rolling out: 0/2 available, 2 updated");
    assert_eq!(web(&fresh).since, Some(now() - TimeDelta::seconds(30)));
    assert_reason(
        &progressing(3 * HOUR),
        Stuck,
        "stuck for 3h: rolling out: 0/2 available, 2 updated",
    );
}

#[test]
fn scaling_up_from_zero_is_progressing_not_failed() {
    // KEDA or hibernation scales 0 → 3: the rollout stays complete, Available turns False now.
    let conditions = vec![
        cond("Available", "False", "MinimumReplicasUnavailable", 10, 10),
        cond(
            "Progressing",
            "True",
            "NewReplicaSetAvailable",
            150 * DAY,
            150 * DAY,
        ),
    ];
    let run = run(&release_over(vec![
        deployment_with(3, counts(3, 3, 0, 0), conditions),
        app_pod("a", 8, false, waiting("ContainerCreating", "")),
    ]));
    assert_reason(&run, Progressing, "0/3 available, 3 updated");
    assert_eq!(
        release(&run),
        Progressing,
        "rolling out, neither failed nor green"
    );
}

fn statefulset(replicas: i64, status: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": {"name": "db", "namespace": NS, "generation": 4, "creationTimestamp": secs_ago(90 * DAY),
                        "labels": {"helm.toolkit.fluxcd.io/name": APP, "helm.toolkit.fluxcd.io/namespace": NS}},
           "spec": {"replicas": replicas, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                    "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                    "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "db", "image": "postgres:17"}]}}},
           "status": status})
}

fn db_pod(ordinal: i64, age: i64, ready: bool) -> Value {
    let mut pod = app_pod(&ordinal.to_string(), age, ready, running(0));
    pod["metadata"]["name"] = json!(format!("db-{ordinal}"));
    pod["metadata"]["labels"] = json!({"app": "db"});
    pod["metadata"]["ownerReferences"] =
        json!([{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "controller": true}]);
    pod
}

#[test]
fn a_single_replica_statefulset_pod_being_recreated_is_progressing_then_stuck() {
    let status = json!({"observedGeneration": 4, "replicas": 1, "currentReplicas": 1, "updatedReplicas": 1,
        "availableReplicas": 0, "currentRevision": "db-7c9f", "updateRevision": "db-7c9f"});
    let recreated = |age: i64| {
        let mut pod = db_pod(0, age, false);
        pod["status"]["phase"] = json!("Pending");
        run(&release_over(vec![statefulset(1, status.clone()), pod]))
    };
    let fresh = recreated(5);
    fresh.assert_verdict(
        "StatefulSet",
        NS,
        "db",
        Progressing,
        "0/1 available, 1 updated",
    );
    let long = recreated(2 * HOUR);
    // Nothing available for two hours is down.
    long.assert_verdict(
        "StatefulSet",
        NS,
        "db",
        Failed,
        "unavailable for 2h: 0/1 available, 1 updated",
    );
    assert_eq!(release(&long), Degraded);
}

// Rule 5: leftover pods of a healthy ReplicaSet.

#[test]
fn evicted_and_completed_pods_do_not_fail_a_healthy_workload() {
    let evicted = evicted_pod("The node was low on resource: ephemeral-storage.");
    let completed = ended_pod("d", "Completed", 0, "Succeeded");
    let values = release_over(vec![
        deployment_with(2, counts(2, 2, 2, 2), settled()),
        ready_pod("a"),
        ready_pod("b"),
        evicted.clone(),
        completed,
    ]);
    let run = run(&values);
    assert_reason(&run, Healthy, "2/2 available");
    assert_eq!(release(&run), Healthy);
    run.assert_verdict(
        "Pod",
        NS,
        "web-6f7d8-e",
        Healthy,
        "Evicted: The node was low on resource: ephemeral-storage. (left over, replaced)",
    );
    assert_eq!(run.state("Pod", NS, "web-6f7d8-d"), Healthy);
    assert!(run.evaluation.root_causes.is_empty());

    // A failed pod no controller replaces is a failure of its own.
    let mut bare = evicted;
    bare["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("ownerReferences");
    bare["status"].as_object_mut().unwrap().remove("message");
    let run = super::testkit::run(&[bare]);
    run.assert_verdict("Pod", NS, "web-6f7d8-e", Failed, "Evicted");
}

// Rule 6: a spec the controller has not observed yet.

#[test]
fn an_unobserved_generation_is_in_progress_never_healthy_on_old_counts() {
    let mut deployment = deployment_with(3, counts(3, 3, 3, 3), settled());
    deployment["metadata"]["generation"] = json!(2);
    let values = release_over(vec![deployment.clone()]);
    let fresh = run(&values);
    assert_reason(
        &fresh,
        Progressing,
        "generation 2 not yet observed (observed 1)",
    );
    let mut seen = SeenInProgress::new();
    seen.insert(
        crate::model::ObjectId(id("Deployment", NS, APP)),
        now() - TimeDelta::minutes(16),
    );
    let later = run_seen(&values, &[], &[], &Thresholds::default(), &seen);
    assert_reason(
        &later,
        Stuck,
        "stuck for 16m: generation 2 not yet observed (observed 1)",
    );
    assert_eq!(release(&later), Degraded);

    deployment["status"]
        .as_object_mut()
        .unwrap()
        .remove("observedGeneration");
    assert_reason(
        &run(&release_over(vec![deployment])),
        Progressing,
        "generation 2 not yet observed (observed none)",
    );
}

// Rule 7: complete only as kubectl rollout status decides.

#[test]
fn a_rollout_is_complete_only_with_every_replica_updated_available_and_no_old_one_left() {
    let with = |replicas: i64, status: Value| {
        run(&release_over(vec![deployment_with(
            replicas,
            status,
            settled(),
        )]))
    };
    assert_reason(&with(3, counts(3, 3, 3, 3)), Healthy, "3/3 available");
    assert_reason(
        &with(1, counts(2, 1, 1, 1)),
        Progressing,
        "rolling out: 1/1 available, 1 updated, 1 pending termination",
    );
    assert_reason(
        &with(3, counts(3, 2, 3, 3)),
        Progressing,
        "rolling out: 3/3 available, 2 updated",
    );
    assert_reason(
        &with(3, counts(3, 3, 3, 2)),
        Progressing,
        "2/3 available, 3 updated",
    );
    assert_reason(&with(0, counts(0, 0, 0, 0)), Healthy, "scaled to zero");
    assert_reason(
        &with(0, counts(2, 0, 2, 2)),
        Progressing,
        "rolling out: 2/0 available, 0 updated, 2 pending termination",
    );
}

#[test]
fn a_scale_down_to_zero_past_the_threshold_is_stuck_not_failed() {
    let old_pod = app_pod("a", DAY, false, running(0));
    let run = run(&release_over(vec![
        deployment_with(0, counts(1, 0, 0, 0), settled()),
        old_pod,
    ]));
    assert_reason(
        &run,
        Stuck,
        "stuck for 1d: rolling out: 0/0 available, 0 updated, 1 pending termination",
    );
}

#[test]
fn a_paused_deployment_is_suspended_and_never_stuck() {
    let conditions = vec![
        cond(
            "Available",
            "True",
            "MinimumReplicasAvailable",
            10 * DAY,
            10 * DAY,
        ),
        json!({"type": "Progressing", "status": "Unknown", "reason": "DeploymentPaused",
               "message": "Deployment is paused", "lastTransitionTime": secs_ago(3 * DAY), "lastUpdateTime": secs_ago(3 * DAY)}),
    ];
    let mut deployment = deployment_with(3, counts(4, 1, 4, 4), conditions);
    deployment["spec"]["paused"] = json!(true);
    let run = run(&release_over(vec![deployment]));
    let verdict = web(&run);
    assert_eq!(
        (
            verdict.state,
            verdict.reason.as_str(),
            verdict.message.as_str()
        ),
        (Suspended, "rollout paused (spec.paused)", "4/3 available")
    );
    assert_eq!(release(&run), Healthy);
}

#[test]
fn a_resumed_rollout_is_in_progress_from_its_resume() {
    let conditions = vec![
        json!({"type": "Progressing", "status": "Unknown", "reason": "DeploymentResumed",
        "message": "Deployment is resumed", "lastTransitionTime": secs_ago(3 * DAY), "lastUpdateTime": secs_ago(MIN)}),
    ];
    let run = run(&release_over(vec![deployment_with(
        3,
        counts(4, 1, 3, 3),
        conditions,
    )]));
    assert_reason(
        &run,
        Progressing,
        "rolling out: 3/3 available, 1 updated, 1 pending termination",
    );
    assert_eq!(web(&run).since, Some(now() - TimeDelta::minutes(1)));
}

#[test]
fn an_older_statefulset_status_falls_back_to_ready_replicas_and_revisions() {
    let status = |ready: i64, current: &str| {
        json!({"observedGeneration": 4, "replicas": 3, "readyReplicas": ready, "currentReplicas": 3,
               "currentRevision": current, "updateRevision": "db-7c9f"})
    };
    let state = |status: Value| {
        let run = run(&release_over(vec![
            statefulset(3, status),
            db_pod(0, DAY, true),
            db_pod(1, DAY, true),
            db_pod(2, 20, false),
        ]));
        let db = run.verdict("StatefulSet", NS, "db");
        (db.state, db.reason.clone())
    };
    assert_eq!(
        state(status(3, "db-7c9f")),
        (Healthy, "3/3 available".into())
    );
    assert_eq!(
        state(status(3, "db-5b1a")),
        (Progressing, "rolling out: 3/3 available".into())
    );
    assert_eq!(
        state(status(2, "db-7c9f")),
        (Progressing, "2/3 available".into())
    );
}

#[test]
fn a_statefulset_partition_and_on_delete_updates_leave_old_pods_by_design() {
    let state = |spec_strategy: Value, updated: i64| {
        let mut sts = statefulset(
            3,
            json!({"observedGeneration": 4, "replicas": 3, "readyReplicas": 3, "availableReplicas": 3,
                   "currentReplicas": 3 - updated, "updatedReplicas": updated,
                   "currentRevision": "db-5b1a", "updateRevision": "db-7c9f"}),
        );
        sts["spec"]["updateStrategy"] = spec_strategy;
        if updated == 0 {
            sts["status"]
                .as_object_mut()
                .unwrap()
                .remove("updatedReplicas");
        }
        run(&[sts]).state("StatefulSet", NS, "db")
    };
    let partition = |p: i64| json!({"type": "RollingUpdate", "rollingUpdate": {"partition": p}});
    assert_eq!(state(partition(2), 1), Healthy, "ordinal 2 updated");
    assert_eq!(state(partition(1), 1), Progressing, "ordinals 1 and 2");
    assert_eq!(state(partition(2), 0), Healthy, "unknown count");
    assert_eq!(state(partition(0), 0), Progressing, "revisions differ");
    assert_eq!(state(json!({"type": "OnDelete"}), 0), Healthy);
    assert_eq!(state(partition(0), 3), Healthy);
}

fn daemonset(status: Value, strategy: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
           "metadata": {"name": "agent", "namespace": NS, "generation": 2, "creationTimestamp": secs_ago(90 * DAY)},
           "spec": {"selector": {"matchLabels": {"app": "agent"}}, "updateStrategy": {"type": strategy},
                    "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "agent", "image": "agent:2"}]}}},
           "status": status})
}

#[test]
fn a_daemonset_rollout_follows_its_scheduled_counts() {
    let state = |status: Value, strategy: &str| {
        let run = run(&[daemonset(status, strategy)]);
        let verdict = run.verdict("DaemonSet", NS, "agent");
        (verdict.state, verdict.reason.clone())
    };
    let status = |updated: i64, available: i64| {
        json!({"observedGeneration": 2, "desiredNumberScheduled": 3, "currentNumberScheduled": 3,
               "numberReady": available, "numberAvailable": available, "updatedNumberScheduled": updated})
    };
    assert_eq!(
        state(status(3, 3), "RollingUpdate"),
        (Healthy, "3/3 available".into())
    );
    assert_eq!(
        state(status(1, 3), "RollingUpdate"),
        (Progressing, "rolling out: 3/3 available, 1 updated".into())
    );
    assert_eq!(
        state(status(1, 3), "OnDelete"),
        (Healthy, "3/3 available".into())
    );
    assert_eq!(
        state(json!({"observedGeneration": 2}), "RollingUpdate"),
        (Stuck, "stuck for 90d: no status yet".into()),
        "no desiredNumberScheduled: the controller has not counted nodes"
    );
}

// Weak spots the mutation run found.

#[test]
fn an_app_deployment_scaled_to_zero_is_healthy_a_controller_is_down() {
    let run = run(&release_over(vec![deployment_with(
        0,
        counts(0, 0, 0, 0),
        settled(),
    )]));
    assert_reason(&run, Healthy, "scaled to zero");
    let mut controller = deployment("flux-system", "helm-controller", 0, 0);
    controller["status"] = json!({"observedGeneration": 1});
    let mut values = release_over(vec![]);
    values.retain(|v| v["metadata"]["name"] != "helm-controller");
    values.push(controller);
    let down = super::testkit::run(&values);
    down.assert_verdict(
        "Deployment",
        "flux-system",
        "helm-controller",
        Failed,
        "scaled to zero",
    );
    assert_eq!(down.state("HelmRelease", NS, APP), Unverifiable);
}

#[test]
fn a_failing_pod_of_a_workload_scaled_to_zero_is_counted_among_its_pods() {
    let run = run(&release_over(vec![
        deployment_with(0, counts(1, 0, 0, 0), settled()),
        app_pod(
            "z",
            HOUR,
            false,
            waiting("CrashLoopBackOff", "back-off 5m0s"),
        ),
    ]));
    assert_reason(
        &run,
        Failed,
        "1/1 pods failing: web-6f7d8-z: CrashLoopBackOff: back-off 5m0s",
    );
}

#[test]
fn a_pod_running_but_not_ready_is_progressing_then_stuck_at_its_threshold() {
    let pod = |age: i64| {
        let run = run(&[app_pod("r", age, false, running(0))]);
        let verdict = run.verdict("Pod", NS, "web-6f7d8-r");
        (verdict.state, verdict.reason.clone())
    };
    assert_eq!(
        pod(15 * MIN),
        (
            Progressing,
            "containers not ready (ContainersNotReady)".into()
        )
    );
    assert_eq!(
        pod(15 * MIN + 1),
        (
            Stuck,
            "stuck for 15m: containers not ready (ContainersNotReady)".into()
        )
    );
    // Without a Ready condition the containers' own flags decide.
    let mut unconditioned = app_pod("q", HOUR, true, running(0));
    unconditioned["status"]
        .as_object_mut()
        .unwrap()
        .remove("conditions");
    assert_eq!(
        run(&[unconditioned.clone()]).state("Pod", NS, "web-6f7d8-q"),
        Healthy
    );
    unconditioned["status"]["containerStatuses"][0]["ready"] = json!(false);
    assert_eq!(
        run(&[unconditioned.clone()]).state("Pod", NS, "web-6f7d8-q"),
        Stuck
    );
    unconditioned["status"]["containerStatuses"] = json!([]);
    assert_eq!(run(&[unconditioned]).state("Pod", NS, "web-6f7d8-q"), Stuck);
}

#[test]
fn a_workload_without_status_waits_from_its_creation() {
    let mut deployment = deployment_with(1, json!({}), vec![]);
    deployment.as_object_mut().unwrap().remove("status");
    deployment["metadata"]["creationTimestamp"] = json!(secs_ago(20 * MIN));
    assert_reason(&run(&[deployment]), Stuck, "stuck for 20m: no status yet");
}

/// A StatefulSet's and a DaemonSet's pods name it directly as their controller owner (no
/// ReplicaSet in between: statefulset stateful_set_utils.go newStatefulSetPod and
/// daemon_controller.go set the ownerReference to the set itself): a crash-looping one is
/// evidence of that workload, and a symptom of it.
#[test]
fn a_crash_looping_pod_of_a_statefulset_or_daemonset_is_evidence_of_it() {
    let crashing = |kind: &str, owner: &str, name: &str| {
        let mut pod = app_pod(
            "x",
            HOUR,
            false,
            waiting(
                "CrashLoopBackOff",
                "back-off 5m0s restarting failed container",
            ),
        );
        pod["metadata"]["name"] = json!(name);
        pod["metadata"]["labels"] = json!({"app": owner});
        pod["metadata"]["ownerReferences"] =
            json!([{"apiVersion": "apps/v1", "kind": kind, "name": owner, "controller": true}]);
        pod
    };
    let db_status = json!({"observedGeneration": 4, "replicas": 2, "readyReplicas": 1, "currentReplicas": 2,
        "updatedReplicas": 2, "availableReplicas": 1, "currentRevision": "db-7c9f", "updateRevision": "db-7c9f"});
    let agent_status = json!({"observedGeneration": 2, "desiredNumberScheduled": 2, "currentNumberScheduled": 2,
        "numberReady": 1, "numberAvailable": 1, "numberUnavailable": 1, "updatedNumberScheduled": 2});
    let run = run(&[
        statefulset(2, db_status),
        db_pod(0, DAY, true),
        crashing("StatefulSet", "db", "db-1"),
        daemonset(agent_status, "RollingUpdate"),
        crashing("DaemonSet", "agent", "agent-x2k9p"),
    ]);
    for (kind, name, pod) in [
        ("StatefulSet", "db", "db-1"),
        ("DaemonSet", "agent", "agent-x2k9p"),
    ] {
        let verdict = run.verdict(kind, NS, name);
        assert!(
            verdict
                .reason
                .contains(&format!("{pod}: CrashLoopBackOff: back-off 5m0s")),
            "{kind}: {verdict:?}"
        );
        // One root cause per broken workload: the pod is its symptom.
        assert_eq!(run.roots("Pod", NS, pod), [id(kind, NS, name)], "{pod}");
    }
}

/// A pod held by scheduling gates is not unschedulable: the API server writes PodScheduled=False
/// with reason SchedulingGated (pkg/registry/core/pod strategy.go, applySchedulingGatedCondition)
/// until whoever set the gates removes them, so it waits as a pending pod, not a failure.
#[test]
fn a_pod_held_by_scheduling_gates_is_pending_not_unschedulable() {
    let mut pod = app_pod("g", HOUR, false, waiting("ContainerCreating", ""));
    pod["spec"]["schedulingGates"] = json!([{"name": "example.com/quota"}]);
    pod["status"]["phase"] = json!("Pending");
    pod["status"]["conditions"][1] = json!({"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
        "message": "Scheduling is blocked due to non-empty scheduling gates", "lastTransitionTime": secs_ago(HOUR)});
    let run = run(&[pod]);
    run.assert_verdict("Pod", NS, "web-6f7d8-g", Stuck, "stuck for 1h: pod Pending");
}

/// An evicted pod its ReplicaSet replaced is history: the shortfall while its replacement
/// starts dates from the replacement, not from the eviction a day ago.
#[test]
fn a_replacement_for_an_evicted_pod_is_progressing_not_dated_by_the_eviction() {
    let evicted = evicted_pod("The node was low on resource: memory.");
    let run = run(&release_over(vec![
        deployment_with(2, counts(2, 2, 1, 1), settled()),
        ready_pod("a"),
        app_pod("n", 30, false, waiting("ContainerCreating", "")),
        evicted,
    ]));
    assert_reason(&run, Progressing, "1/2 available, 2 updated");
    assert_eq!(web(&run).since, Some(now() - TimeDelta::seconds(30)));
}

// Issue 44, families 8–10: name the cause, lost nodes, transients that are not failures.

fn deadline_exceeded() -> Value {
    json!({"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
           "message": "ReplicaSet \"web-6f7d8\" has timed out progressing.",
           "lastTransitionTime": secs_ago(MIN), "lastUpdateTime": secs_ago(MIN)})
}

/// replica_set_utils.go copies the first pod-creation error into ReplicaFailure; the
/// deployment controller copies it onto the Deployment (progress.go).
fn replica_failure(message: &str) -> Value {
    json!({"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": message,
           "lastTransitionTime": secs_ago(20 * MIN), "lastUpdateTime": secs_ago(20 * MIN)})
}

#[test]
fn a_rollout_past_its_deadline_names_the_quota_or_pod_security_refusal() {
    let quota = "pods \"web-6f7d8-x2k9p\" is forbidden: exceeded quota: compute, requested: cpu=2, used: cpu=7, limited: cpu=8";
    let security = "pods \"web-6f7d8-x2k9p\" is forbidden: violates PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false";
    for (message, named) in [
        (
            quota,
            "exceeded quota: compute, requested: cpu=2, used: cpu=7, limited: cpu=8",
        ),
        (
            security,
            "violates PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false",
        ),
    ] {
        let conditions = vec![
            cond(
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                20 * MIN,
                20 * MIN,
            ),
            deadline_exceeded(),
            replica_failure(message),
        ];
        let run = run(&release_over(vec![deployment_with(
            2,
            counts(0, 0, 0, 0),
            conditions,
        )]));
        assert_reason(
            &run,
            Failed,
            &format!("rollout stalled: FailedCreate: {named}"),
        );
        assert_eq!(release(&run), Degraded);
    }
}

#[test]
fn before_its_deadline_a_refused_rollout_says_why_it_is_short() {
    let quota = "pods \"web-6f7d8-x2k9p\" is forbidden: exceeded quota: compute, requested: cpu=2, used: cpu=7, limited: cpu=8";
    let conditions = vec![
        cond(
            "Available",
            "True",
            "MinimumReplicasAvailable",
            10 * DAY,
            10 * DAY,
        ),
        cond("Progressing", "True", "ReplicaSetUpdated", 2 * MIN, 2 * MIN),
        replica_failure(quota),
    ];
    let run = run(&release_over(vec![
        deployment_with(2, counts(1, 0, 1, 1), conditions),
        ready_pod("a"),
    ]));
    let verdict = web(&run);
    assert_eq!(verdict.state, Progressing);
    assert!(
        verdict.reason.ends_with(
            "FailedCreate: exceeded quota: compute, requested: cpu=2, used: cpu=7, limited: cpu=8"
        ),
        "{}",
        verdict.reason
    );
}

#[test]
fn a_scheduler_error_and_a_volume_binding_failure_say_so() {
    let pending = |reason: &str, message: &str| {
        let mut pod = app_pod("u", 10 * MIN, false, waiting("ContainerCreating", ""));
        pod["status"]["phase"] = json!("Pending");
        pod["status"]["conditions"][1] = json!({"type": "PodScheduled", "status": "False", "reason": reason,
            "message": message, "lastTransitionTime": secs_ago(10 * MIN)});
        run(&release_over(vec![
            deployment_with(
                1,
                counts(1, 1, 0, 0),
                vec![cond(
                    "Available",
                    "False",
                    "MinimumReplicasUnavailable",
                    10 * MIN,
                    10 * MIN,
                )],
            ),
            pod,
        ]))
    };
    let volumes = "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.";
    assert_reason(
        &pending("Unschedulable", volumes),
        Failed,
        &format!("Unschedulable: {volumes}"),
    );
    let error = "running PreFilter plugin \"VolumeBinding\": error getting PVC \"shop/data\": could not find v1.PersistentVolumeClaim \"shop/data\"";
    assert_reason(
        &pending("SchedulerError", error),
        Failed,
        &format!("SchedulerError: {error}"),
    );
}

/// DefaultPreemption sets nominatedNodeName while the victims it evicts terminate.
#[test]
fn an_unschedulable_pod_with_a_nominated_node_is_preemption_in_progress() {
    let preempting = |age: i64| {
        let mut pod = app_pod("u", age, false, waiting("ContainerCreating", ""));
        pod["status"]["phase"] = json!("Pending");
        pod["status"]["nominatedNodeName"] = json!("node-2");
        pod["status"]["conditions"][1] = json!({"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
            "message": "0/3 nodes are available: 3 Insufficient cpu.", "lastTransitionTime": secs_ago(age)});
        run(&release_over(vec![
            deployment_with(
                1,
                counts(1, 1, 0, 0),
                vec![cond(
                    "Available",
                    "False",
                    "MinimumReplicasUnavailable",
                    age,
                    age,
                )],
            ),
            pod,
        ]))
    };
    let fresh = preempting(2 * MIN);
    assert_eq!(web(&fresh).state, Progressing, "{:?}", web(&fresh));
    fresh.assert_verdict(
        "Pod",
        NS,
        "web-6f7d8-u",
        Progressing,
        "waiting for preemption on node node-2",
    );
    let late = preempting(2 * HOUR);
    assert_eq!(late.state("Pod", NS, "web-6f7d8-u"), Stuck);
    assert_ne!(web(&late).state, Healthy);
}

/// Kubelet admission (pkg/kubelet/lifecycle/predicate.go): `Pod was rejected: …`, phase Failed.
fn rejected_pod(suffix: &str, age: i64) -> Value {
    let mut pod = ended_pod(suffix, "", 0, "Failed");
    pod["metadata"]["creationTimestamp"] = json!(secs_ago(age));
    pod["status"]["containerStatuses"] = json!([]);
    pod["status"]["reason"] = json!("OutOfcpu");
    pod["status"]["message"] = json!(
        "Pod was rejected: Node didn't have enough resource: cpu, requested: 500, used: 3800, capacity: 4000"
    );
    pod
}

#[test]
fn admission_rejections_that_keep_recurring_fail_the_owner_and_are_named() {
    let run = run(&release_over(vec![
        deployment_with(
            2,
            counts(2, 2, 1, 1),
            vec![cond(
                "Available",
                "True",
                "MinimumReplicasAvailable",
                DAY,
                DAY,
            )],
        ),
        ready_pod("a"),
        rejected_pod("r1", 3 * MIN),
        rejected_pod("r2", MIN),
    ]));
    assert_reason(
        &run,
        Failed,
        "2 pods rejected by the kubelet: OutOfcpu: Pod was rejected: Node didn't have enough resource: cpu, requested: 500, used: 3800, capacity: 4000",
    );
    assert_eq!(release(&run), Degraded);
    // one rejection, replaced long ago, with every replica available: history
    let once = super::testkit::run(&release_over(vec![
        deployment_with(2, counts(2, 2, 2, 2), settled()),
        ready_pod("a"),
        ready_pod("b"),
        rejected_pod("r1", DAY),
    ]));
    assert_eq!(web(&once).state, Healthy);
}

/// Taint eviction deletes the pods of an unreachable node; the kubelet never confirms, so
/// they stay Terminating and the StatefulSet cannot recreate its ordinal.
#[test]
fn a_statefulset_pod_stranded_on_a_lost_node_is_stuck_past_the_threshold_naming_the_node() {
    let status = json!({"observedGeneration": 4, "replicas": 3, "currentReplicas": 3, "updatedReplicas": 3,
        "readyReplicas": 2, "availableReplicas": 2, "currentRevision": "db-7c9f", "updateRevision": "db-7c9f"});
    let stranded = |deleted: i64| {
        let mut lost = db_pod(2, 30 * DAY, false);
        lost["metadata"]["deletionTimestamp"] = json!(secs_ago(deleted));
        lost["metadata"]["deletionGracePeriodSeconds"] = json!(30);
        lost["spec"]["nodeName"] = json!("node-3");
        lost["status"]["conditions"] = json!([
            {"type": "Ready", "status": "False", "lastTransitionTime": secs_ago(deleted + 300)},
            {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager",
             "message": "Taint manager: deleting due to NoExecute taint", "lastTransitionTime": secs_ago(deleted)}]);
        run(&release_over(vec![
            statefulset(3, status.clone()),
            db_pod(0, 30 * DAY, true),
            db_pod(1, 30 * DAY, true),
            lost,
        ]))
    };
    let fresh = stranded(5 * MIN);
    let verdict = fresh.verdict("StatefulSet", NS, "db");
    assert_eq!(verdict.state, Progressing, "{verdict:?}");
    assert!(
        verdict
            .reason
            .contains("pod db-2 stuck terminating on unreachable node node-3"),
        "{}",
        verdict.reason
    );
    fresh.assert_verdict(
        "Pod",
        NS,
        "db-2",
        Progressing,
        "stuck terminating on unreachable node node-3",
    );

    let late = stranded(3 * HOUR);
    let verdict = late.verdict("StatefulSet", NS, "db");
    assert_eq!(verdict.state, Stuck, "{verdict:?}");
    assert!(
        verdict.reason.contains("unreachable node node-3"),
        "{}",
        verdict.reason
    );
    assert_eq!(late.roots("Pod", NS, "db-2"), [id("StatefulSet", NS, "db")]);
}

/// Deleted minutes ago and not ready, with no eviction condition (a drain, a hand deletion
/// on a node that went away): the kubelet never confirmed, so the node is taken for lost.
#[test]
fn a_deletion_unconfirmed_for_minutes_strands_the_pod_on_its_node() {
    let stranded = |deleted: i64| {
        let mut pod = db_pod(2, 30 * DAY, false);
        pod["metadata"]["deletionTimestamp"] = json!(secs_ago(deleted));
        pod["spec"]["nodeName"] = json!("node-7");
        pod
    };
    let status = json!({"observedGeneration": 4, "replicas": 3, "currentReplicas": 3, "updatedReplicas": 3,
        "readyReplicas": 2, "availableReplicas": 2, "currentRevision": "db-7c9f", "updateRevision": "db-7c9f"});
    let fleet = |deleted: i64| {
        run(&release_over(vec![
            statefulset(3, status.clone()),
            db_pod(0, 30 * DAY, true),
            db_pod(1, 30 * DAY, true),
            stranded(deleted),
        ]))
    };
    fleet(10 * MIN).assert_verdict(
        "Pod",
        NS,
        "db-2",
        Progressing,
        "stuck terminating on unreachable node node-7",
    );
    fleet(MIN).assert_verdict(
        "Pod",
        NS,
        "db-2",
        Progressing,
        "being deleted (finalizers pending)",
    );
}

#[test]
fn pod_reasons_without_words_say_no_more_than_the_kubelet() {
    let mut evicted = evicted_pod("");
    evicted["metadata"]["ownerReferences"] = json!([]);
    evicted["status"]["message"] = json!("");
    let run = run(&[evicted]);
    run.assert_verdict("Pod", NS, "web-6f7d8-e", Failed, "Evicted");
    let mut unready = app_pod("u", MIN, false, running(0));
    unready["metadata"]["ownerReferences"] = json!([]);
    unready["status"]["conditions"][0]["reason"] = json!("");
    super::testkit::run(&[unready]).assert_verdict(
        "Pod",
        NS,
        "web-6f7d8-u",
        Progressing,
        "containers not ready",
    );
}

fn recently_evicted(suffix: &str) -> Value {
    let mut pod = evicted_pod("The node was low on resource: memory.");
    pod["metadata"]["name"] = json!(format!("web-6f7d8-{suffix}"));
    pod["metadata"]["creationTimestamp"] = json!(secs_ago(2 * MIN));
    pod
}

/// Only phase Failed with the kubelet's "Pod was rejected" is an admission rejection; evicted
/// pods and a ready pod being deleted are something else.
#[test]
fn evictions_are_no_admission_rejections_and_a_ready_pod_is_not_stranded() {
    let run = run(&release_over(vec![
        deployment_with(2, counts(2, 2, 2, 2), settled()),
        ready_pod("a"),
        ready_pod("b"),
        recently_evicted("e"),
        recently_evicted("f"),
    ]));
    assert_eq!(web(&run).state, Healthy, "{:?}", web(&run));
    let mut deleting = ready_pod("d");
    deleting["metadata"]["deletionTimestamp"] = json!(secs_ago(10 * MIN));
    deleting["spec"]["nodeName"] = json!("node-1");
    let mut alone = deleting;
    alone["metadata"]["ownerReferences"] = json!([]);
    super::testkit::run(&[alone]).assert_verdict(
        "Pod",
        NS,
        "web-6f7d8-d",
        Progressing,
        "being deleted (finalizers pending)",
    );
}

/// Recurring means two or more, and either recent or while replicas are missing: the four
/// corners of that rule.
#[test]
fn admission_rejections_recur_when_two_and_recent_or_short() {
    let verdict = |rejections: &[i64], short: bool| {
        let (ready, extra) = if short {
            (1, vec![])
        } else {
            (2, vec![ready_pod("b")])
        };
        let mut values = vec![
            deployment_with(2, counts(2, 2, ready, ready), settled()),
            ready_pod("a"),
        ];
        values.extend(extra);
        for (i, age) in rejections.iter().enumerate() {
            values.push(rejected_pod(&format!("r{i}"), *age));
        }
        web(&run(&release_over(values))).state
    };
    assert_eq!(verdict(&[2 * MIN, MIN], false), Failed, "two, recent");
    assert_eq!(
        verdict(&[DAY, DAY - MIN], true),
        Failed,
        "two, old, replicas missing"
    );
    assert_ne!(
        verdict(&[DAY, DAY - MIN], false),
        Failed,
        "two, old, all there"
    );
    assert_ne!(verdict(&[MIN], true), Failed, "one");
}

#[test]
fn several_stranded_pods_are_counted() {
    let status = json!({"observedGeneration": 4, "replicas": 3, "currentReplicas": 3, "updatedReplicas": 3,
        "readyReplicas": 1, "availableReplicas": 1, "currentRevision": "db-7c9f", "updateRevision": "db-7c9f"});
    let mut values = vec![statefulset(3, status), db_pod(0, 30 * DAY, true)];
    for ordinal in [1, 2] {
        let mut lost = db_pod(ordinal, 30 * DAY, false);
        lost["metadata"]["deletionTimestamp"] = json!(secs_ago(10 * MIN));
        lost["spec"]["nodeName"] = json!("node-3");
        values.push(lost);
    }
    let run = run(&release_over(values));
    let verdict = run.verdict("StatefulSet", NS, "db");
    assert!(
        verdict
            .reason
            .ends_with("on unreachable node node-3 (and 1 more)"),
        "{}",
        verdict.reason
    );
}

/// A pod being evicted through the Eviction API (a drain) is on its way out, not stranded.
#[test]
fn a_pod_being_drained_is_not_stranded() {
    let mut drained = db_pod(2, 30 * DAY, false);
    drained["metadata"]["ownerReferences"] = json!([]);
    drained["metadata"]["deletionTimestamp"] = json!(secs_ago(MIN));
    drained["spec"]["nodeName"] = json!("node-3");
    drained["status"]["conditions"] = json!([{"type": "DisruptionTarget", "status": "True",
        "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting", "lastTransitionTime": secs_ago(MIN)}]);
    run(&[drained]).assert_verdict(
        "Pod",
        NS,
        "db-2",
        Progressing,
        "being deleted (finalizers pending)",
    );
}
