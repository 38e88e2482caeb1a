//! Deployments, StatefulSets and DaemonSets, judged on their status and their pods (the rules
//! are listed with their sources in docs/WORKLOADS.md). One finding per workload: its pods are
//! evidence named in its reason, and it is the root cause of the Flux object that applied it.

use super::classify::explain_message;
use super::deadlines::Clock;
use super::finding::{EdgeSet, Finding};
use super::pods::{
    CRASH_LOOP_WINDOW, Failure, is_live, pod_failure, rejected_at_admission, stranded_on,
    unready_since,
};
use super::rollout::{Pending, pending};
use super::threshold::Timing;
use super::{Cause, CauseCode, State};
use crate::model::{Condition, ConditionStatus, Object, WorkloadStatus};
use chrono::{DateTime, Utc};

/// The reason the deployment controller writes on Progressing once a rollout has finished
/// (pkg/controller/deployment/util/deployment_util.go, NewRSAvailableReason).
const ROLLOUT_COMPLETE: &str = "NewReplicaSetAvailable";

/// A Deployment, StatefulSet or DaemonSet with its pods. A controller Deployment is down as
/// soon as it has no available replica, even when scaled to zero: nothing reconciles then.
pub(super) fn assess_workload(
    workload: &Object,
    pods: &[&Object],
    timing: Timing,
    is_controller: bool,
) -> Finding {
    let Some(counts) = workload.status.workload.as_ref() else {
        let cause = Cause::new(CauseCode::NoStatusYet);
        return timing.in_progress(cause, "no status yet", "", workload.created, EdgeSet::NONE);
    };
    let pods = PodEvidence::gather(pods, timing.clock);
    if workload.spec.paused {
        let message = join_nonempty(&available(counts), &pods.failures());
        let cause = Cause::new(CauseCode::Suspended).with("field", "spec.paused");
        return Finding::new(
            State::Suspended,
            cause,
            "rollout paused (spec.paused)",
            message,
        );
    }
    if let Some(behind) = generation_behind(workload) {
        // The counts describe the previous spec. No object says when the spec changed, so its
        // age comes from when it was first seen in progress.
        let cause = Cause::new(CauseCode::GenerationPending);
        return timing.in_progress(cause, &behind, &pods.failures(), None, EdgeSet::NONE);
    }
    // Progressing=False: past the progress deadline, or the new ReplicaSet could not be
    // created (deployment_util.go ReplicaSetCreateError): the rollout stopped.
    if let Some(deadline) = workload
        .condition("Progressing")
        .filter(|c| c.status == ConditionStatus::False)
    {
        let message = join_nonempty(&deadline.message, &pods.failures());
        // The pods, the ReplicaSet's refusal or a lost node say why the rollout stalled; the
        // deadline alone does not.
        let stalled = Cause::new(CauseCode::RolloutStalled);
        let (cause, reason) = match (pods.failing.first(), shortfall_cause(workload, &pods)) {
            (Some((pod, (why, failure))), _) => (
                stalled.because(why),
                format!("rollout stalled: pod {pod}: {failure}"),
            ),
            (None, Some((why, shortfall))) => (
                stalled.because(&why),
                format!("rollout stalled: {shortfall}"),
            ),
            (None, None) => (
                stalled.with("reason", deadline.reason.as_ref()),
                format!("rollout stalled ({})", deadline.reason.as_ref()),
            ),
        };
        return Finding::new(State::Failed, cause, reason, message).since(deadline.last_transition);
    }
    if let Some((pod, (cause, failure))) = pods.failing.first() {
        let none_available = counts.available == 0 && counts.desired > 0;
        let reason = if none_available {
            failure.clone()
        } else {
            let failing = pods.failing.len();
            format!("{failing}/{} pods failing: {pod}: {failure}", pods.live)
        };
        let message = join_nonempty(&available(counts), &pods.failures());
        return Finding::new(State::Failed, cause.clone(), reason, message)
            .since(unavailable_since(workload));
    }
    if let Some(finding) = recurring_rejections(workload, counts, &pods, timing.clock) {
        return finding;
    }
    // A controller rolling out (Recreate leaves none available meanwhile) is judged as any
    // rollout: progressing, then stuck.
    if is_controller && counts.available == 0 && active_rollout(workload).is_none() {
        let cause = Cause::new(CauseCode::NoAvailableReplicas);
        let (cause, reason) = match counts.desired {
            0 => (cause.with("scaled_to", "0"), "scaled to zero".to_string()),
            desired => (cause, format!("no available replicas (0/{desired})")),
        };
        return Finding::new(State::Failed, cause, reason, available(counts))
            .since(unavailable_since(workload));
    }
    let healthy =
        |reason: String| Finding::new(State::Healthy, Cause::new(CauseCode::Available), reason, "");
    match pending(workload, counts) {
        None if counts.desired == 0 => healthy("scaled to zero".into()),
        None => healthy(available(counts)),
        Some(pending) => incomplete(workload, counts, &pending, &pods, timing),
    }
}

/// A rollout not yet complete: in progress while it is making progress; past the threshold
/// `stuck`, or `failed` when Kubernetes says the workload is unavailable.
fn incomplete(
    workload: &Object,
    counts: &WorkloadStatus,
    pending: &Pending,
    pods: &PodEvidence,
    timing: Timing,
) -> Finding {
    let replica_failure = workload.condition("ReplicaFailure").filter(|c| c.is_true());
    let message = join_nonempty(
        &replica_failure
            .map(|c| format!("{}: {}", c.reason, c.message))
            .unwrap_or_default(),
        &pods.not_ready(),
    );
    let shortfall = shortfall_cause(workload, pods);
    let because = |cause: Cause| match &shortfall {
        Some((why, _)) => cause.because(why),
        None => cause,
    };
    let counts_and_cause = match &shortfall {
        Some((_, words)) => format!("{}: {words}", pending.counts),
        None => pending.counts.clone(),
    };
    let rolling_out = because(Cause::new(CauseCode::RollingOut));
    if let Some(progressing) = active_rollout(workload) {
        let since = last_progress(workload, progressing, pods);
        let reason = format!("rolling out: {counts_and_cause}");
        return timing.in_progress(rolling_out, &reason, &message, since, EdgeSet::NONE);
    }
    // No rollout under way: a shortfall, dated by when the Deployment lost availability, else
    // by its longest-unready pod or its failing ReplicaSet.
    let unavailable = workload
        .condition("Available")
        .filter(|c| c.status == ConditionStatus::False);
    let since = unavailable.and_then(|c| c.last_transition).or_else(|| {
        let failure = replica_failure.and_then(|c| c.last_transition);
        let stranded = pods.stranded.iter().filter_map(|s| s.since);
        pods.unready_since
            .into_iter()
            .chain(failure)
            .chain(stranded)
            .min()
    });
    let reason = if pending.rollout {
        format!("rolling out: {counts_and_cause}")
    } else {
        counts_and_cause
    };
    let down = unavailable.is_some() || (counts.available == 0 && counts.desired > 0);
    match timing.overdue(since) {
        Some((since, age)) if down => Finding::new(
            State::Failed,
            because(Cause::new(CauseCode::Unavailable)),
            format!("unavailable for {age}: {}", pending.counts),
            message,
        )
        .since(Some(since)),
        _ => timing.in_progress(rolling_out, &reason, &message, since, EdgeSet::NONE),
    }
}

/// The Deployment's Progressing condition while a rollout is under way (True, or Unknown
/// after a resume, with any reason but the one marking a finished rollout).
pub(super) fn active_rollout(workload: &Object) -> Option<&Condition> {
    workload
        .condition("Progressing")
        .filter(|c| c.status != ConditionStatus::False && c.reason != ROLLOUT_COMPLETE)
}

/// When the current rollout last made progress. The deployment controller bumps Progressing's
/// lastUpdateTime at each step (new ReplicaSet, pods scaled or available: progress.go,
/// util.DeploymentProgressing) and measures its own deadline from it (util.DeploymentTimedOut),
/// while lastTransitionTime stays where Progressing first turned True, possibly months and
/// many rollouts ago. Without lastUpdateTime, the newest evidence of this rollout.
fn last_progress(
    workload: &Object,
    progressing: &Condition,
    pods: &PodEvidence,
) -> Option<DateTime<Utc>> {
    progressing.last_update.or_else(|| {
        [
            progressing.last_transition,
            unavailable_since(workload),
            pods.newest,
        ]
        .into_iter()
        .flatten()
        .max()
    })
}

fn unavailable_since(workload: &Object) -> Option<DateTime<Utc>> {
    workload
        .condition("Available")
        .filter(|c| c.status == ConditionStatus::False)
        .and_then(|c| c.last_transition)
}

/// `generation 3 not yet observed (observed 2)` while the controller has not seen the spec.
fn generation_behind(workload: &Object) -> Option<String> {
    let generation = workload.generation?;
    let observed = workload.status.observed_generation;
    (observed.is_none_or(|o| o < generation)).then(|| {
        let observed = observed.map_or("none".to_string(), |o| o.to_string());
        format!("generation {generation} not yet observed (observed {observed})")
    })
}

/// Why replicas are missing when no pod of them fails: the ReplicaSet's pod creation refused
/// (ReplicaFailure, copied onto the Deployment by its controller: kubernetes@v1.37.2
/// pkg/controller/deployment/progress.go), else a pod stranded on a lost node, which a
/// StatefulSet cannot replace until it is gone.
fn shortfall_cause(workload: &Object, pods: &PodEvidence) -> Option<Failure> {
    if let Some(failure) = workload.condition("ReplicaFailure").filter(|c| c.is_true()) {
        let words = explain_message(&failure.message)
            .unwrap_or_else(|| failure.message.lines().next().unwrap_or("").to_string());
        let cause = Cause::new(CauseCode::ReplicaCreationRefused)
            .with("reason", failure.reason.as_ref())
            .with("refusal", refusal_kind(&failure.message));
        return Some((cause, format!("{}: {words}", failure.reason)));
    }
    let stranded = pods.stranded.first()?;
    let more = match pods.stranded.len() - 1 {
        0 => String::new(),
        more => format!(" (and {more} more)"),
    };
    let cause = Cause::new(CauseCode::NodeLost).with("node", stranded.node);
    Some((
        cause,
        format!(
            "pod {} stuck terminating on unreachable node {}{more}",
            stranded.pod, stranded.node
        ),
    ))
}

/// Which admission refused a pod, without its figures (a quota's requested and used amounts
/// change from pod to pod): `exceeded quota: compute`, `violates PodSecurity "restricted:latest"`.
fn refusal_kind(message: &str) -> String {
    let refusal = message.split_once("is forbidden: ").map_or("", |(_, r)| r);
    if let Some(quota) = refusal.strip_prefix("exceeded quota: ") {
        return format!("exceeded quota: {}", quota.split(',').next().unwrap_or(""));
    }
    refusal.split(':').next().unwrap_or("").to_string()
}

/// The kubelet rejecting the workload's new pods at admission again and again (OutOfcpu,
/// NodeAffinity…): each rejected pod is replaced by another the kubelet rejects too. Two or
/// more rejected pods fail the workload while replicas are missing or while the newest
/// rejection is recent; older ones, the workload whole, are history.
fn recurring_rejections(
    workload: &Object,
    counts: &WorkloadStatus,
    pods: &PodEvidence,
    clock: Clock,
) -> Option<Finding> {
    let (_, (cause, rejection)) = pods.rejected.first()?;
    let recent = pods
        .newest_rejection
        .is_some_and(|at| !clock.past(at, CRASH_LOOP_WINDOW));
    let short = pending(workload, counts).is_some();
    if pods.rejected.len() < 2 || !(recent || short) {
        return None;
    }
    let reason = format!(
        "{} pods rejected by the kubelet: {rejection}",
        pods.rejected.len()
    );
    let named: Vec<String> = pods
        .rejected
        .iter()
        .take(10)
        .map(|(pod, (_, why))| format!("pod {pod}: {why}"))
        .collect();
    let message = join_nonempty(&available(counts), &named.join("; "));
    Some(Finding::new(State::Failed, cause.clone(), reason, message).since(pods.first_rejection))
}

/// What the workload's live pods say: which fail and why, and since when any is unready.
struct PodEvidence<'a> {
    failing: Vec<(&'a str, Failure)>,
    /// Pods the kubelet rejected at admission, with why, and when the first and newest were
    /// created.
    rejected: Vec<(&'a str, Failure)>,
    first_rejection: Option<DateTime<Utc>>,
    newest_rejection: Option<DateTime<Utc>>,
    /// Pods left Terminating on a node that stopped reporting.
    stranded: Vec<Stranded<'a>>,
    unready: Vec<&'a str>,
    live: usize,
    /// The longest-unready live pod's start of unreadiness.
    unready_since: Option<DateTime<Utc>>,
    /// The newest live pod's creation.
    newest: Option<DateTime<Utc>>,
}

impl<'a> PodEvidence<'a> {
    fn gather(pods: &[&'a Object], clock: Clock) -> Self {
        let live: Vec<&'a Object> = pods.iter().copied().filter(|p| is_live(p)).collect();
        let unready: Vec<(&'a Object, DateTime<Utc>)> = live
            .iter()
            .filter_map(|&pod| Some((pod, unready_since(pod)?)))
            .collect();
        let rejected: Vec<(&'a Object, Failure)> = pods
            .iter()
            .filter_map(|&pod| Some((pod, rejected_at_admission(pod)?)))
            .collect();
        let rejected_at = || rejected.iter().filter_map(|(pod, _)| pod.created);
        PodEvidence {
            first_rejection: rejected_at().min(),
            newest_rejection: rejected_at().max(),
            rejected: rejected
                .iter()
                .map(|(pod, why)| (pod.name.as_str(), why.clone()))
                .collect(),
            stranded: pods
                .iter()
                .filter_map(|&pod| {
                    Some(Stranded {
                        pod: &pod.name,
                        node: stranded_on(pod, clock)?,
                        since: pod.deleting_since,
                    })
                })
                .collect(),
            failing: live
                .iter()
                .filter_map(|&pod| Some((pod.name.as_str(), pod_failure(pod, clock)?)))
                .collect(),
            unready: unready.iter().map(|(pod, _)| pod.name.as_str()).collect(),
            live: live.len(),
            unready_since: unready.iter().map(|&(_, since)| since).min(),
            newest: live.iter().filter_map(|pod| pod.created).max(),
        }
    }

    /// `pod a: CrashLoopBackOff: …; pod b: …`
    fn failures(&self) -> String {
        let described: Vec<String> = self
            .failing
            .iter()
            .map(|(name, (_, failure))| format!("pod {name}: {failure}"))
            .collect();
        described.join("; ")
    }

    /// `not ready: pod a, pod b`
    fn not_ready(&self) -> String {
        if self.unready.is_empty() {
            return String::new();
        }
        format!("not ready: pod {}", self.unready.join(", pod "))
    }
}

struct Stranded<'a> {
    pod: &'a str,
    node: &'a str,
    since: Option<DateTime<Utc>>,
}

fn available(counts: &WorkloadStatus) -> String {
    format!("{}/{} available", counts.available, counts.desired)
}

fn join_nonempty(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (false, false) => format!("{a}; {b}"),
        (true, _) => b.to_string(),
        (false, true) => a.to_string(),
    }
}
