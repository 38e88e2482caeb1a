//! Workloads and Pods as evidence: what Flux's Ready cannot see (seed 000, incident 2: a
//! HelmRelease stays Ready while its pods crash-loop). A workload's verdict names its failing
//! pods and why; it is the root cause of the Flux object that deployed it.

use super::State;
use super::classify::explain_message;
use super::finding::{Cause, EdgeSet, Finding};
use super::threshold::Timing;
use crate::model::{Object, WorkloadStatus};

/// Container waiting reasons that mean the pod will not become ready by itself.
const FAILING_WAITING_REASONS: [&str; 8] = [
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "ErrImageNeverPull",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
];

/// Why a pod is failing, e.g. `ImagePullBackOff: Back-off pulling image "…"`.
pub(super) fn pod_failure(pod: &Object) -> Option<String> {
    let status = pod.status.pod.as_ref();
    let containers = status.into_iter().flat_map(|s| &s.containers);
    for container in containers {
        let Some(waiting) = container.waiting_reason.as_deref() else {
            continue;
        };
        if !FAILING_WAITING_REASONS.contains(&waiting) {
            continue;
        }
        let last_words = container.last_terminated_message.as_deref();
        let detail = last_words
            .and_then(explain_message)
            .or_else(|| {
                last_words
                    .and_then(|w| w.lines().next())
                    .map(str::to_string)
            })
            .or_else(|| container.waiting_message.clone());
        return Some(match detail {
            Some(detail) if !detail.is_empty() => format!("{waiting}: {detail}"),
            _ => waiting.to_string(),
        });
    }
    if let Some(unschedulable) = pod
        .condition("PodScheduled")
        .filter(|c| !c.is_true() && c.reason == "Unschedulable")
    {
        return Some(format!("Unschedulable: {}", unschedulable.message));
    }
    (status.and_then(|s| s.phase.as_deref()) == Some("Failed")).then(|| "pod failed".to_string())
}

pub(super) fn assess_pod(pod: &Object, timing: Timing) -> Finding {
    let finding = if let Some(failure) = pod_failure(pod) {
        Finding::new(State::Failed, failure, containers_summary(pod))
    } else {
        let phase = pod.status.pod.as_ref().and_then(|s| s.phase.as_deref());
        let started = pod
            .status
            .pod
            .as_ref()
            .and_then(|s| s.started)
            .or(pod.created);
        let unready = pod.condition("Ready").filter(|c| !c.is_true());
        match (phase, unready) {
            (Some("Succeeded"), _) => Finding::new(State::Healthy, "completed", ""),
            (Some("Running"), None) => Finding::new(State::Healthy, "running", "").since(started),
            (Some("Running"), Some(ready)) => {
                let reason = format!("containers not ready ({})", ready.reason);
                timing.in_progress(
                    &reason,
                    &ready.message,
                    ready.last_transition,
                    EdgeSet::NONE,
                )
            }
            (phase, _) => timing.in_progress(
                &format!("pod {}", phase.unwrap_or("pending")),
                "",
                started,
                EdgeSet::NONE,
            ),
        }
    };
    // A pod's trouble is its workload's trouble: the workload is the root cause when it is a problem.
    finding.cause(Cause::Symptom(EdgeSet::OWNER))
}

fn containers_summary(pod: &Object) -> String {
    let containers = pod.status.pod.iter().flat_map(|s| &s.containers);
    let lines: Vec<String> = containers
        .map(|c| {
            let state =
                c.waiting_reason
                    .as_deref()
                    .unwrap_or(if c.ready { "ready" } else { "not ready" });
            let last = c
                .last_terminated_reason
                .as_deref()
                .map(|r| format!(", last exit {r}"))
                .unwrap_or_default();
            format!("{}: {state}, {} restarts{last}", c.name, c.restarts)
        })
        .collect();
    lines.join("; ")
}

/// A Deployment, StatefulSet or DaemonSet with its pods. A controller Deployment is down as
/// soon as it has no available replica, even when scaled to zero: nothing reconciles then.
pub(super) fn assess_workload(
    workload: &Object,
    pods: &[&Object],
    timing: Timing,
    is_controller: bool,
) -> Finding {
    let Some(counts) = workload.status.workload.as_ref() else {
        return timing.in_progress("no status yet", "", workload.created, EdgeSet::NONE);
    };
    let failing: Vec<(&str, String)> = pods
        .iter()
        .filter_map(|pod| Some((pod.name.as_str(), pod_failure(pod)?)))
        .collect();
    let pods_message = failing
        .iter()
        .map(|(name, failure)| format!("pod {name}: {failure}"))
        .collect::<Vec<_>>()
        .join("; ");
    if let Some(deadline) = workload
        .condition("Progressing")
        .filter(|c| !c.is_true() && c.reason == "ProgressDeadlineExceeded")
    {
        let message = join_nonempty(&deadline.message, &pods_message);
        // The pods say why the rollout stalled; the deadline alone does not.
        let reason = match failing.first() {
            Some((pod, failure)) => format!("rollout stalled: pod {pod}: {failure}"),
            None => "rollout stalled (ProgressDeadlineExceeded)".to_string(),
        };
        return Finding::new(State::Failed, reason, message).since(deadline.last_transition);
    }
    // A Deployment still rolling out (Progressing=True, new ReplicaSet not yet available) with
    // no failing pod is in progress, as Kubernetes itself says until its progress deadline:
    // seen with real kube-controller-manager, every new Deployment starts at 0 available.
    if counts.available == 0 && failing.is_empty() && !is_controller && rolling_out(workload) {
        let since = workload
            .condition("Progressing")
            .and_then(|c| c.last_transition);
        return timing.in_progress(&rollout(counts), "", since, EdgeSet::NONE);
    }
    if counts.available == 0 && (counts.desired > 0 || is_controller) {
        let reason = match failing.first() {
            Some((_, failure)) => failure.clone(),
            None if counts.desired == 0 => "scaled to zero".to_string(),
            None => format!("no available replicas (0/{})", counts.desired),
        };
        let since = workload
            .condition("Available")
            .filter(|c| !c.is_true())
            .and_then(|c| c.last_transition);
        let message = join_nonempty(
            &format!("0/{} replicas available", counts.desired),
            &pods_message,
        );
        return Finding::new(State::Failed, reason, message).since(since);
    }
    if let Some((pod, failure)) = failing.first() {
        let reason = format!(
            "{}/{} pods failing: {pod}: {failure}",
            failing.len(),
            pods.len()
        );
        return Finding::new(State::Failed, reason, pods_message);
    }
    if counts.available < counts.desired || counts.updated < counts.desired {
        return timing.in_progress(&rollout(counts), "", None, EdgeSet::NONE);
    }
    Finding::new(
        State::Healthy,
        format!("{}/{} available", counts.available, counts.desired),
        "",
    )
}

/// Progressing=True for a rollout that has not finished (reason other than
/// NewReplicaSetAvailable, which marks a completed one).
fn rolling_out(workload: &Object) -> bool {
    workload
        .condition("Progressing")
        .is_some_and(|c| c.is_true() && c.reason != "NewReplicaSetAvailable")
}

fn rollout(counts: &WorkloadStatus) -> String {
    format!(
        "rolling out: {}/{} available, {} updated",
        counts.available, counts.desired, counts.updated
    )
}

fn join_nonempty(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (false, false) => format!("{a}; {b}"),
        (true, _) => b.to_string(),
        (false, true) => a.to_string(),
    }
}
