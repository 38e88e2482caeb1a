//! Pods as evidence: what Flux's Ready cannot see (seed 000, incident 2: a HelmRelease stays
//! Ready while its pods crash-loop). A pod's failure is named in its workload's reason; the
//! workload, not each pod, is the root cause.

use super::classify::explain_message;
use super::deadlines::Clock;
use super::finding::{EdgeSet, Finding, Propagation};
use super::reasons::is_failing_wait;
use super::threshold::Timing;
use super::{Cause, CauseCode, State};
use crate::model::{ContainerState, Object, PodStatus, Termination};
use chrono::{DateTime, TimeDelta, Utc};

/// How long after a crash a container is still in the same crash loop: the kubelet forgets a
/// container's restart back-off once it has run for twice the maximum back-off
/// (MaxContainerBackOff = 300s in pkg/kubelet; client-go util/flowcontrol/backoff.go hasExpired).
pub(super) const CRASH_LOOP_WINDOW: TimeDelta = TimeDelta::minutes(10);

/// Restarts that make a running container's crashes a loop rather than one incident.
pub(super) const LOOP_RESTARTS: i64 = 2;

/// kstatus gives a new pod this long to be scheduled before calling it unschedulable
/// (kubernetes-sigs/cli-utils pkg/kstatus/status/core.go, ScheduleWindow): the scheduler, or
/// a cluster autoscaler adding a node, needs a moment.
pub(super) const SCHEDULE_WINDOW: TimeDelta = TimeDelta::seconds(15);

/// A failure's cause and its words.
pub(super) type Failure = (Cause, String);

/// Why a pod is failing, e.g. `ImagePullBackOff: Back-off pulling image "…"`. None for a pod
/// that is fine, still starting, or left over after its controller replaced it.
pub(super) fn pod_failure(pod: &Object, clock: Clock) -> Option<Failure> {
    let status = pod.status.pod.as_deref()?;
    if is_terminal(status) {
        return failed_attempt(pod).filter(|_| !is_replaced(pod));
    }
    let restarts_on_error = status.restart_policy.as_deref() != Some("Never");
    status
        .containers
        .iter()
        .find_map(|c| container_failure(c, restarts_on_error, clock))
        .or_else(|| unschedulable(pod, clock))
}

/// Why a pod that ended in phase Failed failed: the kubelet's reason for the pod (Evicted,
/// OutOfcpu…) when it gave one, else its first container that exited with an error, with its
/// exit code and last words (a Job's attempt, a Helm test).
pub(super) fn failed_attempt(pod: &Object) -> Option<Failure> {
    let status = pod.status.pod.as_deref()?;
    if status.phase.as_deref() != Some("Failed") {
        return None;
    }
    let failed = Cause::new(CauseCode::PodFailed);
    if let Some(reason) = &status.reason {
        return Some((
            failed.with("reason", reason),
            ended_reason(status, "pod failed"),
        ));
    }
    let exit = status
        .containers
        .iter()
        .filter_map(|c| c.terminated.as_ref().map(|t| (c, t)))
        .find(|(_, t)| t.is_error());
    Some(match exit {
        Some((container, exit)) => (
            failed
                .with("container", &container.name)
                .with("exit", exit.reason.as_deref().unwrap_or("Error")),
            exit_detail(exit),
        ),
        None => (failed, "pod failed".to_string()),
    })
}

/// A pod that has ended (Evicted, Completed) and that its ReplicaSet, StatefulSet or DaemonSet
/// replaces: history, not evidence about its workload.
pub(super) fn is_leftover(pod: &Object) -> bool {
    pod.status.pod.as_deref().is_some_and(is_terminal) && is_replaced(pod)
}

/// A pod that counts as evidence of its workload now: not ended, not being deleted (old pods
/// of a rollout terminate with errors by design).
pub(super) fn is_live(pod: &Object) -> bool {
    !pod.deleting && !is_leftover(pod)
}

/// Since when a pod has not been ready (its Ready condition's transition, else its start),
/// when it is not and the time is known.
pub(super) fn unready_since(pod: &Object) -> Option<DateTime<Utc>> {
    if is_ready(pod) {
        return None;
    }
    let ready = pod.condition("Ready").and_then(|c| c.last_transition);
    let started = pod.status.pod.as_ref().and_then(|s| s.started);
    ready.or(started).or(pod.created)
}

pub(super) fn assess_pod(pod: &Object, timing: Timing) -> Finding {
    // A pod's trouble is its workload's trouble: the workload is the root cause when it is a problem.
    own_finding(pod, timing).propagation(Propagation::Symptom(EdgeSet::OWNER))
}

fn own_finding(pod: &Object, timing: Timing) -> Finding {
    if let Some((cause, failure)) = pod_failure(pod, timing.clock) {
        return Finding::new(State::Failed, cause, failure, containers_summary(pod));
    }
    let status = pod.status.pod.as_deref();
    let phase = status.and_then(|s| s.phase.as_deref());
    let started = status.and_then(|s| s.started).or(pod.created);
    if let (Some(node), Some(condition)) = (preempting_for(pod), not_scheduled(pod)) {
        return timing.in_progress(
            Cause::new(CauseCode::Preempting),
            &format!("waiting for preemption on node {node}"),
            &condition.message,
            condition.last_transition.or(started),
            EdgeSet::NONE,
        );
    }
    match (status, phase) {
        (_, Some("Succeeded")) => running("completed"),
        // Not a failure (pod_failure said so): its controller replaced it.
        (Some(status), Some("Failed")) => running(&format!(
            "{} (left over, replaced)",
            ended_reason(status, "failed")
        )),
        (_, Some("Running")) if is_ready(pod) => running("running").since(started),
        (_, Some("Running")) => {
            let ready = pod.condition("Ready");
            let reason = match ready.map(|c| c.reason.as_str()) {
                Some(why) if !why.is_empty() => format!("containers not ready ({why})"),
                _ => "containers not ready".to_string(),
            };
            let cause = Cause::new(CauseCode::PodStarting)
                .with("phase", "Running")
                .with("reason", ready.map_or("", |c| c.reason.as_str()));
            timing.in_progress(
                cause,
                &reason,
                ready.map_or("", |c| c.message.as_str()),
                ready.and_then(|c| c.last_transition).or(started),
                EdgeSet::NONE,
            )
        }
        (_, phase) => timing.in_progress(
            Cause::new(CauseCode::PodStarting).with("phase", phase.unwrap_or("Pending")),
            &format!("pod {}", phase.unwrap_or("pending")),
            "",
            started,
            EdgeSet::NONE,
        ),
    }
}

/// Ready as the kubelet reports it: the Ready condition, or every container ready when the
/// condition is absent.
/// A pod that is fine: running and ready, completed, or left over and replaced.
fn running(reason: &str) -> Finding {
    Finding::new(
        State::Healthy,
        Cause::new(CauseCode::PodRunning),
        reason,
        "",
    )
}

fn is_ready(pod: &Object) -> bool {
    if let Some(ready) = pod.condition("Ready") {
        return ready.is_true();
    }
    let containers = pod.status.pod.iter().flat_map(|s| &s.containers);
    let app: Vec<&ContainerState> = containers.filter(|c| !c.init).collect();
    !app.is_empty() && app.iter().all(|c| c.ready)
}

fn is_terminal(status: &PodStatus) -> bool {
    matches!(status.phase.as_deref(), Some("Succeeded" | "Failed"))
}

/// Owned by a controller that creates a new pod when this one ends (a Job: the next attempt,
/// until its backoff limit, when the Job itself says it failed).
fn is_replaced(pod: &Object) -> bool {
    pod.owners.iter().any(|owner| {
        matches!(
            owner.kind.as_str(),
            "ReplicaSet" | "StatefulSet" | "DaemonSet" | "Job"
        )
    })
}

/// `Evicted: The node was low on resource: memory.`, or `fallback` when the kubelet said nothing.
fn ended_reason(status: &PodStatus, fallback: &str) -> String {
    let reason = status.reason.as_deref().unwrap_or(fallback);
    match status.message.as_deref() {
        Some(message) if !message.is_empty() => format!("{reason}: {message}"),
        _ => reason.to_string(),
    }
}

/// A container that will not become ready by itself: a failing wait, an error exit it is
/// about to be restarted from, or a run between crashes (rules 2, 3 and 8 of docs/WORKLOADS.md).
fn container_failure(
    container: &ContainerState,
    restarts_on_error: bool,
    clock: Clock,
) -> Option<Failure> {
    let prefix = if container.init { "Init:" } else { "" };
    if let Some(waiting) = container
        .waiting_reason
        .as_deref()
        .filter(|reason| is_failing_wait(reason))
    {
        let cause = Cause::new(CauseCode::ContainerWaiting)
            .with("container", &container.name)
            .with("reason", format!("{prefix}{waiting}"));
        return Some(match waiting_detail(container) {
            Some(detail) => (cause, format!("{prefix}{waiting}: {detail}")),
            None => (cause, format!("{prefix}{waiting}")),
        });
    }
    // Terminated with an error right now, between restarts: the kubelet shows it as Error or
    // OOMKilled for the seconds before it backs off, and it is the same crash loop.
    let exited = container
        .terminated
        .as_ref()
        .filter(|t| restarts_on_error && t.is_error());
    // Running again after crashes within the back-off window: crash-looping in the seconds
    // it is up (and perhaps even Ready).
    let between_crashes = || {
        container.last_terminated.as_ref().filter(|t| {
            container.restarts >= LOOP_RESTARTS
                && t.is_error()
                && t.finished
                    .is_some_and(|at| !clock.past(at, CRASH_LOOP_WINDOW))
        })
    };
    let crash = exited.or_else(between_crashes)?;
    // The restart count grows while the loop lasts and differs between clusters: words only.
    let cause = Cause::new(CauseCode::CrashLoop)
        .with("container", &container.name)
        .with("init", if container.init { "true" } else { "" })
        .with("exit", crash.reason.as_deref().unwrap_or("Error"));
    let words = format!(
        "{prefix}CrashLoopBackOff: {}, {} restarts",
        exit_detail(crash),
        container.restarts
    );
    Some((cause, words))
}

/// `OOMKilled (exit code 137)`, with the container's last words when it left some.
fn exit_detail(exit: &Termination) -> String {
    let reason = exit.reason.as_deref().unwrap_or("Error");
    let code = exit
        .exit_code
        .map(|code| format!(" (exit code {code})"))
        .unwrap_or_default();
    match exit.message.as_deref().and_then(last_words) {
        Some(words) => format!("{reason}{code}: {words}"),
        None => format!("{reason}{code}"),
    }
}

/// What explains a failing wait: the last exit when it says more than "Error" (OOMKilled),
/// the last words, else the kubelet's own message.
fn waiting_detail(container: &ContainerState) -> Option<String> {
    let last = container.last_terminated.as_ref();
    let notable = last
        .and_then(|t| t.reason.as_deref())
        .filter(|reason| *reason != "Error");
    let words = last.and_then(|t| t.message.as_deref()).and_then(last_words);
    match (notable, words) {
        (Some(reason), Some(words)) => Some(format!("{reason}: {words}")),
        (Some(reason), None) => Some(reason.to_string()),
        (None, Some(words)) => Some(words),
        (None, None) => container
            .waiting_message
            .clone()
            .filter(|message| !message.is_empty()),
    }
}

/// A termination message, explained when its shape is known, else its first line.
fn last_words(message: &str) -> Option<String> {
    explain_message(message)
        .or_else(|| message.lines().next().map(str::to_string))
        .filter(|words| !words.is_empty())
}

/// `Unschedulable: 0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims…`
/// (or `SchedulerError: …`, kubernetes@v1.37.2 pkg/scheduler/schedule_one.go), once the pod
/// has had its scheduling window, unless a preemption is under way for it.
fn unschedulable(pod: &Object, clock: Clock) -> Option<Failure> {
    let condition = not_scheduled(pod)?;
    if preempting_for(pod).is_some() {
        return None;
    }
    let past_window = pod
        .created
        .is_none_or(|created| clock.past(created, SCHEDULE_WINDOW));
    past_window.then(|| {
        let cause = Cause::new(CauseCode::Unschedulable).with("reason", condition.reason.as_ref());
        (
            cause,
            format!("{}: {}", condition.reason, condition.message),
        )
    })
}

/// PodScheduled=False for a reason the scheduler gives when it could not place the pod.
fn not_scheduled(pod: &Object) -> Option<&crate::model::Condition> {
    pod.condition("PodScheduled")
        .filter(|c| !c.is_true() && matches!(c.reason.as_ref(), "Unschedulable" | "SchedulerError"))
}

/// The node the scheduler is preempting pods on for this one (`status.nominatedNodeName`,
/// set by the DefaultPreemption plugin while victims terminate): progress, not a failure.
fn preempting_for(pod: &Object) -> Option<&str> {
    pod.status.pod.as_deref()?.nominated_node.as_deref()
}

/// A pod whose deletion its node will never confirm: the taint manager deleted it for a
/// NoExecute taint (`node.kubernetes.io/unreachable`) and the kubelet is gone, so it stays
/// Terminating until the node returns or is removed (kubernetes@v1.37.2
/// pkg/controller/tainteviction/taint_eviction.go addConditionAndDeletePod: DisruptionTarget
/// DeletionByTaintManager; pkg/registry/core/pod/strategy.go keeps a scheduled pod until its
/// kubelet confirms). Returns the node, as `spec.nodeName` names it.
pub(super) fn stranded_on<'o>(pod: &'o Object, clock: Clock) -> Option<&'o str> {
    let evicted = pod
        .condition("DisruptionTarget")
        .is_some_and(|c| c.is_true() && c.reason == "DeletionByTaintManager");
    // Or deleted long ago and not ready: a kubelet confirms a deletion within the pod's grace
    // period (30 s by default); one that has not for minutes is not reporting.
    let unconfirmed = !is_ready(pod)
        && pod
            .deleting_since
            .is_some_and(|since| clock.past(since, UNCONFIRMED_DELETION));
    (pod.deleting && (evicted || unconfirmed)).then(|| {
        pod.status
            .pod
            .as_deref()
            .and_then(|s| s.node.as_deref())
            .unwrap_or("an unknown node")
    })
}

/// How long a deletion may go unconfirmed before the pod's node is taken for lost.
const UNCONFIRMED_DELETION: TimeDelta = TimeDelta::minutes(5);

/// A pod being deleted: one stranded on a lost node says so (it holds its owner's replica),
/// any other is finishing its termination.
pub(super) fn assess_deleting_pod(pod: &Object, timing: Timing) -> Finding {
    let (cause, reason) = match stranded_on(pod, timing.clock) {
        Some(node) => (
            Cause::new(CauseCode::NodeLost).with("node", node),
            format!("stuck terminating on unreachable node {node}"),
        ),
        None => (
            Cause::new(CauseCode::Deleting),
            "being deleted (finalizers pending)".to_string(),
        ),
    };
    timing
        .in_progress(cause, &reason, "", pod.deleting_since, EdgeSet::NONE)
        .propagation(Propagation::Symptom(EdgeSet::OWNER))
}

/// Rejected by the kubelet at admission (`Pod was rejected: …`, reasons OutOfcpu,
/// OutOfmemory, NodeAffinity…: kubernetes@v1.37.2 pkg/kubelet/lifecycle/predicate.go): the
/// reason and message, `OutOfcpu: Pod was rejected: Node didn't have enough resource: cpu…`.
pub(super) fn rejected_at_admission(pod: &Object) -> Option<Failure> {
    let status = pod.status.pod.as_deref()?;
    let rejected = status.phase.as_deref() == Some("Failed")
        && status
            .message
            .as_deref()
            .is_some_and(|m| m.starts_with("Pod was rejected"));
    rejected.then(|| {
        let reason = status.reason.as_deref().unwrap_or("rejected");
        let cause = Cause::new(CauseCode::AdmissionRejections).with("reason", reason);
        (cause, ended_reason(status, "rejected"))
    })
}

pub(super) fn containers_summary(pod: &Object) -> String {
    let containers = pod.status.pod.iter().flat_map(|s| &s.containers);
    let lines: Vec<String> = containers
        .map(|c| {
            let state = c
                .waiting_reason
                .as_deref()
                .or(c.terminated.as_ref().and_then(|t| t.reason.as_deref()))
                .unwrap_or(if c.ready { "ready" } else { "not ready" });
            let last = c
                .last_terminated
                .as_ref()
                .and_then(|t| t.reason.as_deref())
                .map(|r| format!(", last exit {r}"))
                .unwrap_or_default();
            let init = if c.init { " (init)" } else { "" };
            format!("{}{init}: {state}, {} restarts{last}", c.name, c.restarts)
        })
        .collect();
    lines.join("; ")
}
