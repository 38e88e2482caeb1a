//! Jobs and CronJobs. A Job's pods are its evidence: their failures are named in the Job's
//! reason and the Job, not each pod, is the root cause (a failed pod of a Job is replaced by
//! the next attempt, as a ReplicaSet's is). A failed Job a CronJob keeps only as history,
//! after a later run of the same CronJob succeeded, is no cause.

use super::finding::{EdgeSet, Finding, Propagation};
use super::pods::{containers_summary, failed_attempt, is_live, pod_failure};
use super::threshold::Timing;
use super::{Cause, CauseCode, State};
use crate::model::{Condition, Object};

/// Job conditions as the job controller writes them (kubernetes@v1.37.2
/// pkg/controller/job/job_controller.go; k8s.io/api batch/v1 JobConditionType): Complete or
/// Failed (BackoffLimitExceeded, DeadlineExceeded, PodFailurePolicy, MaxFailedIndexesExceeded),
/// Suspended while spec.suspend holds it.
pub(super) fn assess_job(
    job: &Object,
    pods: &[&Object],
    later_success: Option<&Object>,
    timing: Timing,
) -> Finding {
    if let Some(failed) = condition(job, "Failed") {
        if let Some(later) = later_success {
            let reason = format!(
                "failed run kept as history: a later run, Job {}, succeeded",
                later.name
            );
            let cause = Cause::new(CauseCode::Superseded);
            return Finding::new(State::Healthy, cause, reason, &failed.message);
        }
        let (cause, reason) = failed_reason(failed, pods);
        return Finding::new(State::Failed, cause, reason, &failed.message)
            .since(failed.last_transition);
    }
    if condition(job, "Complete").is_some() {
        return Finding::new(
            State::Healthy,
            Cause::new(CauseCode::Completed),
            "completed",
            "",
        );
    }
    if job.spec.flux.suspend || condition(job, "Suspended").is_some() {
        return suspended();
    }
    // A running attempt that will not finish by itself (a crash loop under restartPolicy
    // OnFailure, an image that cannot be pulled): the Job fails on it, as a workload does.
    let failing = pods
        .iter()
        .filter(|pod| is_live(pod))
        .find_map(|pod| Some((pod, pod_failure(pod, timing.clock)?)));
    if let Some((pod, (cause, failure))) = failing {
        let reason = format!("pod {}: {failure}", pod.name);
        return Finding::new(State::Failed, cause, reason, containers_summary(pod))
            .since(job.created);
    }
    let attempts = pods.iter().filter(|p| failed_attempt(p).is_some()).count();
    let reason = match attempts {
        0 => "running".to_string(),
        failed => format!("running (after {failed} failed attempts)"),
    };
    let cause = Cause::new(CauseCode::JobRunning);
    timing.in_progress(cause, &reason, "", job.created, EdgeSet::NONE)
}

fn suspended() -> Finding {
    let cause = Cause::new(CauseCode::Suspended).with("field", "spec.suspend");
    Finding::new(State::Suspended, cause, "suspended (spec.suspend)", "")
}

/// `BackoffLimitExceeded: Job has reached the specified backoff limit; pod db-migrate-x7k2p:
/// Error (exit code 1): relation "users" already exists`: the last failed attempt's words.
fn failed_reason(failed: &Condition, pods: &[&Object]) -> (Cause, String) {
    let last = pods
        .iter()
        .filter_map(|pod| Some((pod, failed_attempt(pod)?)))
        .max_by_key(|(pod, _)| pod.created);
    let why = if failed.message.is_empty() {
        failed.reason.to_string()
    } else {
        format!("{}: {}", failed.reason, failed.message)
    };
    let cause = Cause::new(CauseCode::JobFailed).with("reason", failed.reason.as_ref());
    match last {
        Some((pod, (attempt, words))) => (
            cause.because(&attempt),
            format!("{why}; pod {}: {words}", pod.name),
        ),
        None => (cause, why),
    }
}

/// A CronJob is as good as its last run: degraded while its most recent Job is a problem
/// (failed, or failing on a crash-looping attempt; that Job, its evidence, is the root cause),
/// suspended when the schedule is, else healthy. Earlier runs are history; a run in progress is
/// the schedule working.
pub(super) fn assess_cron_job(cron_job: &Object, latest: Option<(&Object, Finding)>) -> Finding {
    if cron_job.spec.flux.suspend {
        return suspended();
    }
    match latest {
        Some((job, run)) if run.state.is_problem() => {
            let reason = format!("last run, Job {}: {}", job.name, run.reason);
            let cause = Cause::new(CauseCode::LastRunFailing).because(&run.cause);
            Finding::new(State::Degraded, cause, reason, &run.message)
                .since(run.since)
                .propagation(Propagation::Symptom(EdgeSet::DEPLOYED))
        }
        _ => Finding::new(
            State::Healthy,
            Cause::new(CauseCode::Scheduled),
            "scheduled",
            "",
        ),
    }
}

fn condition<'o>(job: &'o Object, type_: &str) -> Option<&'o Condition> {
    job.condition(type_).filter(|c| c.is_true())
}

/// The CronJob a Job was created by, if any.
pub(super) fn cron_job_of(job: &Object) -> Option<&str> {
    job.owners
        .iter()
        .find(|owner| owner.kind == "CronJob")
        .map(|owner| owner.name.as_str())
}

/// Completed and created after `job`, by the same CronJob.
pub(super) fn succeeded_after(job: &Object, sibling: &Object) -> bool {
    sibling.created > job.created && condition(sibling, "Complete").is_some()
}
