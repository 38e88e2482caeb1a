//! Issue 44, family 7: pods belong to their owners. A Job's failed pods are evidence of the
//! Job (one root cause, carrying the pod's termination message); a failed Job a CronJob keeps
//! as history after a later successful run is no cause; a Helm test pod belongs to its release.

use super::State::*;
use super::testkit::*;
use serde_json::{Value, json};

const NS: &str = "apps";

/// A Job as the job controller writes it: `conditions`, created `minutes` ago, owned by the
/// CronJob `cron_job` when given, applied by the HelmRelease apps/web.
fn job(name: &str, minutes: i64, cron_job: Option<&str>, conditions: Value) -> Value {
    let mut job = json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": NS, "creationTimestamp": ago(minutes), "generation": 1,
                     "labels": {"helm.toolkit.fluxcd.io/name": "web", "helm.toolkit.fluxcd.io/namespace": NS}},
        "spec": {"backoffLimit": 1, "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "migrate", "image": "ghcr.io/example/migrate:v2"}]}}},
        "status": {"conditions": conditions, "startTime": ago(minutes)}});
    if let Some(cron_job) = cron_job {
        job["metadata"]["ownerReferences"] = json!([{"apiVersion": "batch/v1", "kind": "CronJob", "name": cron_job, "controller": true}]);
        job["metadata"]["labels"] = json!({});
    }
    job
}

/// job_controller.go: FailureTarget then Failed, BackoffLimitExceeded.
fn backoff_limit_exceeded(minutes: i64) -> Value {
    json!([
        {"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded",
         "message": "Job has reached the specified backoff limit", "lastTransitionTime": ago(minutes), "lastProbeTime": ago(minutes)},
        {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
         "message": "Job has reached the specified backoff limit", "lastTransitionTime": ago(minutes), "lastProbeTime": ago(minutes)}])
}

fn complete(minutes: i64) -> Value {
    json!([
        {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached",
         "message": "Reached expected number of succeeded pods", "lastTransitionTime": ago(minutes)},
        {"type": "Complete", "status": "True", "reason": "CompletionsReached",
         "message": "Reached expected number of succeeded pods", "lastTransitionTime": ago(minutes)}])
}

/// An attempt of Job `job` that exited 1 leaving `words` as its termination message.
fn failed_attempt(job: &str, suffix: &str, minutes: i64, words: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("{job}-{suffix}"), "namespace": NS, "creationTimestamp": ago(minutes),
                     "labels": {"job-name": job},
                     "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": job, "controller": true}]},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "migrate", "image": "ghcr.io/example/migrate:v2"}]},
        "status": {"phase": "Failed", "startTime": ago(minutes),
            "conditions": [{"type": "Ready", "status": "False", "reason": "PodFailed", "lastTransitionTime": ago(minutes - 1)}],
            "containerStatuses": [{"name": "migrate", "ready": false, "restartCount": 0, "image": "ghcr.io/example/migrate:v2",
                "state": {"terminated": {"exitCode": 1, "reason": "Error", "message": words,
                                          "startedAt": ago(minutes), "finishedAt": ago(minutes - 1)}}}]}})
}

fn release_over(extra: Vec<Value>) -> Vec<Value> {
    let mut values = flux_controllers();
    values.extend([
        helm_repository("charts"),
        helm_chart(NS, "web", "charts", "2.14.0"),
        helm_release(NS, "web", "charts"),
    ]);
    values.extend(extra);
    values
}

#[test]
fn a_job_past_its_backoff_limit_is_the_one_root_cause_carrying_its_pods_last_words() {
    let run = run(&release_over(vec![
        job("migrate", 20, None, backoff_limit_exceeded(10)),
        failed_attempt("migrate", "a1", 20, "first try"),
        failed_attempt("migrate", "b2", 15, "relation \"users\" already exists"),
    ]));
    let job = run.assert_verdict(
        "Job",
        NS,
        "migrate",
        Failed,
        "BackoffLimitExceeded: Job has reached the specified backoff limit; pod migrate-b2: \
         Error (exit code 1): relation \"users\" already exists",
    );
    let job_id = job.id.clone();
    let roots: Vec<&str> = run
        .evaluation
        .root_causes
        .iter()
        .map(|r| r.id.as_str())
        .collect();
    assert_eq!(roots, [job_id.as_str()]);
    // its attempts are history of the Job, the release is degraded by the Job
    assert_eq!(run.state("Pod", NS, "migrate-a1"), Healthy);
    assert_eq!(run.state("HelmRelease", NS, "web"), Degraded);
    let cause = run.root_cause(job_id.as_str());
    assert!(
        cause
            .affected
            .iter()
            .any(|a| a.as_str().ends_with("HelmRelease/apps/web"))
    );
}

#[test]
fn a_running_job_is_progressing_and_a_complete_one_healthy() {
    let running = run(&release_over(vec![
        job("migrate", 2, None, json!([])),
        failed_attempt("migrate", "a1", 2, "retrying"),
    ]));
    running.assert_verdict(
        "Job",
        NS,
        "migrate",
        Progressing,
        "running (after 1 failed attempts)",
    );
    let done = run(&release_over(vec![job("migrate", 30, None, complete(25))]));
    assert_eq!(done.state("Job", NS, "migrate"), Healthy);
}

/// A CronJob keeps failed Jobs (failedJobsHistoryLimit); once a later run succeeded, the old
/// failure is history, not a cause.
#[test]
fn a_failed_cron_job_run_superseded_by_a_later_success_is_no_cause() {
    let cron_job = json!({"apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": "report", "namespace": NS, "generation": 1,
                     "labels": {"helm.toolkit.fluxcd.io/name": "web", "helm.toolkit.fluxcd.io/namespace": NS}},
        "spec": {"schedule": "*/30 * * * *", "jobTemplate": {"spec": {"template": {"spec": {"containers": []}}}}},
        "status": {"lastScheduleTime": ago(20), "lastSuccessfulTime": ago(15)}});
    let superseded = run(&release_over(vec![
        cron_job.clone(),
        job(
            "report-29001",
            50,
            Some("report"),
            backoff_limit_exceeded(45),
        ),
        failed_attempt("report-29001", "x", 50, "timeout talking to the warehouse"),
        job("report-29002", 20, Some("report"), complete(15)),
    ]));
    assert_eq!(superseded.state("Job", NS, "report-29001"), Healthy);
    assert!(
        superseded.evaluation.root_causes.is_empty(),
        "{:?}",
        superseded.evaluation.root_causes
    );
    assert_eq!(superseded.state("HelmRelease", NS, "web"), Healthy);

    // the latest run failing is a cause
    let latest = run(&release_over(vec![
        cron_job,
        job("report-29001", 50, Some("report"), complete(45)),
        job(
            "report-29002",
            20,
            Some("report"),
            backoff_limit_exceeded(15),
        ),
        failed_attempt("report-29002", "x", 20, "timeout talking to the warehouse"),
    ]));
    let verdict = latest.verdict("Job", NS, "report-29002");
    assert_eq!(verdict.state, Failed);
    assert!(
        verdict.reason.ends_with("timeout talking to the warehouse"),
        "{}",
        verdict.reason
    );
    // The CronJob, and the release that applied it, are only as good as its last run: the
    // failed Job is the one root cause of both.
    let cron = latest.verdict("CronJob", NS, "report");
    assert_eq!(cron.state, Degraded);
    assert!(
        cron.reason
            .starts_with("last run, Job report-29002: BackoffLimitExceeded"),
        "{}",
        cron.reason
    );
    assert_ne!(latest.state("HelmRelease", NS, "web"), Healthy);
    let causes: Vec<&str> = latest
        .evaluation
        .root_causes
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(causes, ["prod/Job/apps/report-29002"]);
    assert_eq!(superseded.state("CronJob", NS, "report"), Healthy);
}

/// helm-controller@v1.6.4 internal/reconcile/test.go: TestSuccess False TestFailed, "Helm test
/// failed for release …: pod <name> failed"; the test pod is the release's, labelled or not.
#[test]
fn a_failed_helm_test_pod_is_its_releases_one_root_cause_named() {
    let stalled = "Helm test failed for release apps/web with chart web@2.14.0: failed early due to stalled resources: \
                   [Pod/apps/web-test-connection status: 'Failed']";
    for (message, reason) in [
        (
            "Helm test failed for release apps/web with chart web@2.14.0: pod web-test-connection failed",
            "Helm test failed: pod web-test-connection failed",
        ),
        (
            stalled,
            "Helm test failed: Pod/apps/web-test-connection stalled",
        ),
    ] {
        helm_test_failed(message, reason);
    }
}

fn helm_test_failed(message: &str, reason: &str) {
    let mut release = helm_release(NS, "web", "charts");
    release["spec"]["test"] = json!({"enable": true});
    release["status"]["conditions"] = json!([
        not_ready("TestFailed", message, 5),
        condition("TestSuccess", "False", "TestFailed", message, 5),
        condition(
            "Released",
            "True",
            "UpgradeSucceeded",
            "Helm upgrade succeeded",
            6
        )
    ]);
    let mut test_pod = failed_attempt(
        "web",
        "test-connection",
        6,
        "wget: can't connect to remote host: Connection refused",
    );
    test_pod["metadata"]["name"] = json!("web-test-connection");
    test_pod["metadata"]["ownerReferences"] = json!([]);
    test_pod["metadata"]["annotations"] = json!({"helm.sh/hook": "test"});
    let mut values = flux_controllers();
    values.extend([
        helm_repository("charts"),
        helm_chart(NS, "web", "charts", "2.14.0"),
        release,
        test_pod,
    ]);
    let run = run(&values);
    let release = run.assert_verdict("HelmRelease", NS, "web", Failed, reason);
    let pod = id("Pod", NS, "web-test-connection");
    assert_eq!(as_strs(&release.root_causes), [pod.as_str()]);
    run.assert_verdict(
        "Pod",
        NS,
        "web-test-connection",
        Failed,
        "Error (exit code 1): wget: can't connect to remote host: Connection refused",
    );
    assert_eq!(run.evaluation.root_causes.len(), 1);
}

/// A Job suspended by its spec (before the controller wrote anything) or by the job
/// controller's Suspended condition is `suspended`; so is a CronJob whose schedule is.
#[test]
fn suspended_jobs_and_cron_jobs_read_suspended() {
    let mut by_spec = job("migrate", 5, None, json!([]));
    by_spec["spec"]["suspend"] = json!(true);
    let suspended = json!([{"type": "Suspended", "status": "True", "reason": "JobSuspended",
        "message": "Job suspended", "lastTransitionTime": ago(4)}]);
    let by_condition = job("migrate", 5, None, suspended);
    for job in [by_spec, by_condition] {
        let run = run(&[job]);
        assert_eq!(run.state("Job", NS, "migrate"), Suspended);
    }
    let cron_job = json!({"apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": "report", "namespace": NS},
        "spec": {"schedule": "@daily", "suspend": true, "jobTemplate": {"spec": {"template": {"spec": {"containers": []}}}}}});
    assert_eq!(
        run(std::slice::from_ref(&cron_job)).state("CronJob", NS, "report"),
        Suspended
    );
    let mut active = cron_job;
    active["spec"]["suspend"] = json!(false);
    assert_eq!(run(&[active]).state("CronJob", NS, "report"), Healthy);
}

/// Only a later success of the same CronJob supersedes a failed run: a Job created at the
/// same moment, or a Job of no CronJob, does not.
#[test]
fn only_a_later_run_of_the_same_cron_job_supersedes_a_failure() {
    let failed = || job("report-1", 50, Some("report"), backoff_limit_exceeded(45));
    let same_time = run(&[failed(), job("report-2", 50, Some("report"), complete(40))]);
    assert_eq!(same_time.state("Job", NS, "report-1"), Failed);
    let other = run(&[failed(), job("report-2", 20, Some("other"), complete(15))]);
    assert_eq!(other.state("Job", NS, "report-1"), Failed);
    let standalone = run(&[
        job("migrate", 50, None, backoff_limit_exceeded(45)),
        job("cleanup", 20, None, complete(15)),
    ]);
    assert_eq!(standalone.state("Job", NS, "migrate"), Failed);
}

/// restartPolicy OnFailure: the attempt crash-loops in place. The Job fails on it, naming the
/// pod; the pod's trouble is the Job's, one root cause.
#[test]
fn a_job_whose_running_attempt_crash_loops_fails_on_it() {
    let mut attempt = super::liveness_tests::crash_looping_pod(NS, "migrate", "a1");
    attempt["metadata"]["name"] = json!("migrate-a1");
    attempt["metadata"]["ownerReferences"] =
        json!([{"apiVersion": "batch/v1", "kind": "Job", "name": "migrate", "controller": true}]);
    let run = run(&[job("migrate", 30, None, json!([])), attempt]);
    let job = run.verdict("Job", NS, "migrate");
    assert_eq!(job.state, Failed, "{job:?}");
    assert!(
        job.reason.starts_with("pod migrate-a1: CrashLoopBackOff"),
        "{}",
        job.reason
    );
    assert_eq!(
        run.roots("Pod", NS, "migrate-a1"),
        [id("Job", NS, "migrate")]
    );
}

/// The latest run of a CronJob failing on a crash-looping attempt, before any Failed condition:
/// the CronJob is not healthy, and that Job is its root cause.
#[test]
fn a_cron_job_whose_latest_run_crash_loops_is_degraded_by_it() {
    let cron_job = json!({"apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": "nightly", "namespace": NS, "generation": 1},
        "spec": {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": {"spec": {"containers": []}}}}},
        "status": {"lastScheduleTime": ago(30)}});
    let mut attempt = super::liveness_tests::crash_looping_pod(NS, "migrate", "a1");
    attempt["metadata"]["name"] = json!("nightly-1-a1");
    attempt["metadata"]["ownerReferences"] =
        json!([{"apiVersion": "batch/v1", "kind": "Job", "name": "nightly-1", "controller": true}]);
    let scheduled = run(&[
        cron_job,
        job("nightly-1", 30, Some("nightly"), json!([])),
        attempt,
    ]);
    let cron = scheduled.verdict("CronJob", NS, "nightly");
    assert_eq!(cron.state, Degraded, "{cron:?}");
    assert!(
        cron.reason
            .starts_with("last run, Job nightly-1: pod nightly-1-a1: CrashLoopBackOff"),
        "{}",
        cron.reason
    );
    assert_eq!(
        scheduled.roots("CronJob", NS, "nightly"),
        [id("Job", NS, "nightly-1")]
    );
}
