//! Rules 11–13: helm-controller v1's wait failures name the workload that is the root cause;
//! older API versions' waiting reasons stay waits; a release Ready on an older chart than
//! its source offers is stuck past the threshold.

use super::State::*;
use super::liveness_tests::crash_looping_pod;
use super::testkit::*;
use serde_json::{Value, json};

const STALLED: &str = "Helm upgrade failed for release apps/podinfo with chart podinfo@6.0.3: \
    failed early due to stalled resources: [Deployment/apps/podinfo status: 'Failed']";
const TIMED_OUT: &str = "Helm install failed for release apps/podinfo with chart podinfo@6.0.3: \
    timeout waiting for: [Deployment/apps/podinfo status: 'InProgress', Deployment/apps/podinfo-worker status: 'InProgress']";

/// podinfo's HelmRelease with `conditions`, its chart and repository, and the Deployment it
/// installed (labelled by helm-controller) with one pod.
fn release(conditions: Vec<Value>, pod: Value, available: i64) -> Vec<Value> {
    let mut values = flux_controllers();
    values.extend([
        helm_repository("charts"),
        helm_chart("apps", "podinfo", "charts", "2.14.0"),
        with_conditions(helm_release("apps", "podinfo", "charts"), conditions),
        applied_by(
            deployment("apps", "podinfo", 1, available),
            "helm",
            "apps",
            "podinfo",
        ),
        pod,
    ]);
    values
}

/// As helm-controller writes an upgrade whose wait failed with no retries left
/// (internal/reconcile atomic_release.go: Stalled RetriesExceeded "Failed to %s after %d
/// attempt(s)"; the upgrade's error stays on Ready and Released).
fn retries_exhausted(message: &str) -> Vec<Value> {
    vec![
        condition(
            "Stalled",
            "True",
            "RetriesExceeded",
            "Failed to upgrade after 1 attempt(s)",
            20,
        ),
        not_ready("UpgradeFailed", message, 20),
        condition("Released", "False", "UpgradeFailed", message, 20),
    ]
}

#[test]
fn retries_exhausted_over_a_crash_looping_workload_has_the_workload_as_one_root_cause() {
    let run = run(&release(
        retries_exhausted(STALLED),
        crash_looping_pod("apps", "podinfo", "a"),
        0,
    ));
    let workload = id("Deployment", "apps", "podinfo");
    let release = run.assert_verdict(
        "HelmRelease",
        "apps",
        "podinfo",
        Failed,
        "Helm upgrade failed: Deployment/apps/podinfo stalled (retries exhausted)",
    );
    assert_eq!(
        release.message,
        format!("Failed to upgrade after 1 attempt(s): {STALLED}"),
        "the Stalled condition does not hide Ready's message"
    );
    assert_eq!(as_strs(&release.root_causes), [workload.as_str()]);
    assert_eq!(run.state("Deployment", "apps", "podinfo"), Failed);
    assert_eq!(
        run.evaluation.root_causes.len(),
        1,
        "{:?}",
        run.evaluation.root_causes
    );
    assert!(
        run.root_cause(&workload)
            .affected
            .contains(&crate::model::ObjectId(id(
                "HelmRelease",
                "apps",
                "podinfo"
            )))
    );
}

#[test]
fn a_wait_that_timed_out_names_every_workload_and_takes_their_root_causes() {
    let conditions = vec![
        not_ready("InstallFailed", TIMED_OUT, 10),
        condition("Reconciling", "True", "ProgressingWithRetry", TIMED_OUT, 10),
    ];
    let run = run(&release(
        conditions,
        crash_looping_pod("apps", "podinfo", "a"),
        0,
    ));
    let release = run.assert_verdict("HelmRelease", "apps", "podinfo", Failed, "Helm install failed: Deployment/apps/podinfo, Deployment/apps/podinfo-worker not ready in time");
    assert_eq!(
        as_strs(&release.root_causes),
        [id("Deployment", "apps", "podinfo")]
    );
}

/// Retries exhausted on a failure the message does not pin on a workload (a hook): with the
/// release's workload crash-looping, that workload is still the one root cause.
#[test]
fn retries_exhausted_on_a_hook_over_a_crash_looping_workload_is_the_workloads() {
    let hook = "Helm upgrade failed for release apps/podinfo with chart podinfo@6.0.3: \
        post-upgrade hooks failed: 1 error occurred: job podinfo-migrate failed: BackoffLimitExceeded";
    let run = run(&release(
        retries_exhausted(hook),
        crash_looping_pod("apps", "podinfo", "a"),
        0,
    ));
    let release = run.assert_verdict(
        "HelmRelease",
        "apps",
        "podinfo",
        Failed,
        "Helm upgrade failed: post-upgrade hooks failed: 1 error occurred: job podinfo-migrate failed: \
         BackoffLimitExceeded (retries exhausted)",
    );
    assert_eq!(
        as_strs(&release.root_causes),
        [id("Deployment", "apps", "podinfo")]
    );
    assert_eq!(run.evaluation.root_causes.len(), 1);
}

/// The workload recovered since (or never was the problem): the release's failure is its own.
#[test]
fn a_wait_failure_over_healthy_workloads_is_the_releases_own() {
    let run = run(&release(
        retries_exhausted(STALLED),
        pod("apps", "podinfo", "a", None),
        1,
    ));
    let release = run.verdict("HelmRelease", "apps", "podinfo");
    assert_eq!(release.state, Failed);
    assert_eq!(release.root_causes, std::slice::from_ref(&release.id));
}

/// Ready=True from the install, a crash loop since: degraded, the workload its root cause.
#[test]
fn a_ready_release_over_a_crash_looping_workload_is_degraded() {
    let run = run(&release(
        vec![ready(
            "UpgradeSucceeded",
            "Helm upgrade succeeded for release apps/podinfo.v4 with chart podinfo@2.14.0",
        )],
        crash_looping_pod("apps", "podinfo", "a"),
        0,
    ));
    let release = run.verdict("HelmRelease", "apps", "podinfo");
    assert_eq!(release.state, Degraded);
    assert_eq!(
        as_strs(&release.root_causes),
        [id("Deployment", "apps", "podinfo")]
    );
}

/// Stalled for a reason that is not a wait: the Ready condition's failure is still what the
/// verdict says, with Stalled's words beside it.
#[test]
fn stalled_keeps_the_ready_conditions_failure() {
    let denied = "Helm install failed for release apps/podinfo with chart podinfo@6.0.3: \
        1 error occurred: admission webhook \"validation.gatekeeper.sh\" denied the request: [lb-whitelist] denied";
    let conditions = vec![
        condition(
            "Stalled",
            "True",
            "RetriesExceeded",
            "Failed to install after 1 attempt(s)",
            20,
        ),
        not_ready("InstallFailed", denied, 20),
    ];
    let run = run(&release(conditions, pod("apps", "podinfo", "a", None), 1));
    let release = run.assert_verdict("HelmRelease", "apps", "podinfo", Failed, "admission denied by webhook validation.gatekeeper.sh (policy lb-whitelist) (retries exhausted)");
    assert!(release.message.ends_with(denied), "{}", release.message);
    assert_eq!(release.root_causes, std::slice::from_ref(&release.id));

    // Stalled with Ready saying nothing more: Stalled's own reason.
    let alone = run_only_stalled();
    assert_eq!(alone.reason, "retries exhausted");
    assert_eq!(alone.message, "Failed to install after 1 attempt(s)");
}

/// helm-controller marks an ACL denial Stalled and Ready=False with the same reason and message
/// (internal/controller/helmrelease_controller.go: `acl.IsAccessDenied` → MarkStalled and
/// MarkFalse(Ready) with AccessDeniedReason): the verdict says it once, not "X (X)" or "m: m".
#[test]
fn stalled_and_ready_with_the_same_reason_say_it_once() {
    let denied = "cannot access HelmRepository/flux-system/charts: cross-namespace references are not allowed";
    let conditions = vec![
        condition("Stalled", "True", "AccessDenied", denied, 20),
        not_ready("AccessDenied", denied, 20),
    ];
    let run = run(&release(conditions, pod("apps", "podinfo", "a", None), 1));
    let release = run.verdict("HelmRelease", "apps", "podinfo");
    assert_eq!(
        (
            release.state,
            release.reason.as_str(),
            release.message.as_str()
        ),
        (
            Failed,
            "access denied (cross-namespace reference or service account)",
            denied
        )
    );
    assert_eq!(release.root_causes, std::slice::from_ref(&release.id));
}

/// Stalled next to a Ready condition that is not False (a new run started): Stalled's own
/// words.
fn run_only_stalled() -> super::Verdict {
    let conditions = vec![
        condition(
            "Stalled",
            "True",
            "RetriesExceeded",
            "Failed to install after 1 attempt(s)",
            20,
        ),
        condition(
            "Ready",
            "Unknown",
            "Progressing",
            "Fulfilling prerequisites",
            20,
        ),
    ];
    run(&release(conditions, pod("apps", "podinfo", "a", None), 1))
        .verdict("HelmRelease", "apps", "podinfo")
        .clone()
}

/// After a rollback remediation Ready says the rollback succeeded; the upgrade's wait failure
/// is on Released, and that is what names the cause.
#[test]
fn a_rolled_back_upgrade_names_the_workload_from_the_released_condition() {
    let conditions = vec![
        condition(
            "Stalled",
            "True",
            "RetriesExceeded",
            "Failed to upgrade after 3 attempt(s)",
            20,
        ),
        not_ready(
            "RollbackSucceeded",
            "Helm rollback to previous release apps/podinfo.v2 with chart podinfo@6.0.2 succeeded",
            20,
        ),
        condition("Released", "False", "UpgradeFailed", STALLED, 21),
        condition(
            "Remediated",
            "True",
            "RollbackSucceeded",
            "Helm rollback to previous release apps/podinfo.v2 with chart podinfo@6.0.2 succeeded",
            20,
        ),
    ];
    let run = run(&release(
        conditions,
        crash_looping_pod("apps", "podinfo", "a"),
        0,
    ));
    let release = run.assert_verdict(
        "HelmRelease",
        "apps",
        "podinfo",
        Failed,
        "Helm upgrade failed: Deployment/apps/podinfo stalled (rolled back) (retries exhausted)",
    );
    assert_eq!(
        as_strs(&release.root_causes),
        [id("Deployment", "apps", "podinfo")]
    );
}

/// summarize (helm-controller@v1.6.4 internal/reconcile/release.go) puts the Remediated
/// condition's reason on Ready, False: "rollback succeeded". The upgrade's failure, a webhook
/// denial here, is on Released: the release is failed for it, its own root cause.
#[test]
fn a_rollback_that_succeeded_still_names_the_upgrade_failure_it_hides() {
    let denied = "Helm upgrade failed for release apps/podinfo with chart podinfo@6.0.3: admission webhook \
                  \"validation.gatekeeper.sh\" denied the request: [required-labels] missing label team";
    let rollback =
        "Helm rollback to previous release apps/podinfo.v2 with chart podinfo@6.0.2 succeeded";
    let conditions = vec![
        not_ready("RollbackSucceeded", rollback, 20),
        condition("Released", "False", "UpgradeFailed", denied, 21),
        condition("Remediated", "True", "RollbackSucceeded", rollback, 20),
    ];
    let run = run(&release(conditions, pod("apps", "podinfo", "a", None), 1));
    let release = run.assert_verdict(
        "HelmRelease",
        "apps",
        "podinfo",
        Failed,
        "Helm upgrade failed: admission denied by webhook validation.gatekeeper.sh (policy required-labels) (rolled back)",
    );
    assert_eq!(release.root_causes, std::slice::from_ref(&release.id));
    assert!(release.message.starts_with(denied), "{}", release.message);
}

/// The HelmChart exists but the HelmRepository it was made from is gone.
#[test]
fn a_release_whose_repository_is_gone_fails_naming_it() {
    let mut values = release(
        vec![ready("UpgradeSucceeded", "Helm upgrade succeeded")],
        pod("apps", "podinfo", "a", None),
        1,
    );
    values.retain(|v| v["kind"] != "HelmRepository");
    let run = run(&values);
    run.assert_verdict(
        "HelmRelease",
        "apps",
        "podinfo",
        Failed,
        "source HelmRepository flux-system/charts not found",
    );
}

/// helm.toolkit.fluxcd.io/v2beta1 kept no history: lastAppliedRevision is the chart version.
#[test]
fn without_history_the_applied_revision_is_the_deployed_chart() {
    let mut values = behind_its_chart(120);
    let release = values.last_mut().unwrap();
    let status = release["status"].as_object_mut().unwrap();
    status.remove("history");
    status.insert("lastAppliedRevision".into(), json!("6.0.2"));
    assert_eq!(run(&values).state("HelmRelease", "apps", "podinfo"), Stuck);
    values.last_mut().unwrap()["status"]["lastAppliedRevision"] = json!("6.0.3");
    values.last_mut().unwrap()["status"]["lastAttemptedRevision"] = json!("6.0.3");
    assert_eq!(
        run(&values).state("HelmRelease", "apps", "podinfo"),
        Healthy
    );
}

/// helm.toolkit.fluxcd.io/v2beta2, still served: the same object with the older apiVersion.
fn v2beta2(value: Value) -> Value {
    let mut value = value;
    value["apiVersion"] = json!("helm.toolkit.fluxcd.io/v2beta2");
    value
}

fn failing_chart() -> Value {
    with_conditions(
        helm_chart("apps", "podinfo", "charts", "2.14.0"),
        vec![not_ready(
            "ChartPullFailed",
            "chart pull error: failed to get chart version for remote reference: no 'podinfo' chart with version matching '9.x' found",
            40,
        )],
    )
}

fn waiting_release(reason: &str, message: &str, minutes_ago: i64) -> Vec<Value> {
    let mut values = flux_controllers();
    values.extend([
        helm_repository("charts"),
        failing_chart(),
        v2beta2(with_conditions(
            helm_release("apps", "podinfo", "charts"),
            vec![not_ready(reason, message, minutes_ago)],
        )),
    ]);
    values
}

#[test]
fn older_api_versions_waiting_reasons_are_blocked_by_what_they_wait_on() {
    let chart = id("HelmChart", "flux-system", "apps-podinfo");
    for (reason, message) in [
        (
            "HelmChartNotReady",
            "HelmChart 'flux-system/apps-podinfo' is not ready",
        ),
        (
            "ArtifactFailed",
            "Source not ready: artifact not found. Retrying in 30s",
        ),
    ] {
        let run = run(&waiting_release(reason, message, 30));
        let release = run.verdict("HelmRelease", "apps", "podinfo");
        assert_eq!(release.state, Blocked, "{reason}: {release:?}");
        assert_eq!(as_strs(&release.root_causes), [chart.as_str()], "{reason}");
        assert_eq!(run.evaluation.root_causes.len(), 1, "{reason}");
    }
}

/// A wait on a source that is fine is work in progress until the threshold, never a failure
/// of its own.
#[test]
fn waiting_on_a_healthy_chart_is_progressing_then_stuck() {
    for reason in ["HelmChartNotReady", "ArtifactFailed"] {
        let waiting = |minutes_ago| {
            let mut values = waiting_release(
                reason,
                "HelmChart 'flux-system/apps-podinfo' is not ready",
                minutes_ago,
            );
            values[4] = helm_chart("apps", "podinfo", "charts", "2.14.0");
            run(&values)
        };
        assert_eq!(
            waiting(2).state("HelmRelease", "apps", "podinfo"),
            Progressing,
            "{reason}"
        );
        let late = waiting(60);
        let release = late.verdict("HelmRelease", "apps", "podinfo");
        assert_eq!(release.state, Stuck, "{reason}");
        assert_eq!(release.root_causes, std::slice::from_ref(&release.id));
    }
}

#[test]
fn kustomize_v1beta2_waits_are_blocked_by_the_failing_prerequisite() {
    let v1beta2 = |value: Value| {
        let mut value = value;
        value["apiVersion"] = json!("kustomize.toolkit.fluxcd.io/v1beta2");
        value
    };
    let mut values = flux_controllers();
    values.extend([
        with_conditions(
            git_repository("flux-system", SHA),
            vec![not_ready(
                "GitOperationFailed",
                "failed to checkout and determine revision: unable to clone 'https://git.example.com/flux-system': authentication required",
                50,
            )],
        ),
        v1beta2(with_conditions(
            kustomization("infra", &[]),
            vec![not_ready(
                "ArtifactFailed",
                "Source is not ready, artifact not found",
                40,
            )],
        )),
        v1beta2(with_conditions(
            kustomization("apps", &["infra"]),
            vec![not_ready(
                "DependencyNotReady",
                "dependency 'flux-system/infra' is not ready",
                40,
            )],
        )),
    ]);
    let run = run(&values);
    let git = id("GitRepository", "flux-system", "flux-system");
    for name in ["infra", "apps"] {
        let verdict = run.verdict("Kustomization", "flux-system", name);
        assert_eq!(verdict.state, Blocked, "{name}");
        assert_eq!(as_strs(&verdict.root_causes), [git.as_str()], "{name}");
    }
}

/// The release's history says 6.0.2; its HelmChart has offered 6.0.3 since `minutes_ago`.
fn behind_its_chart(minutes_ago: i64) -> Vec<Value> {
    let mut chart = helm_chart("apps", "podinfo", "charts", "6.0.3");
    chart["status"]["artifact"]["lastUpdateTime"] = json!(ago(minutes_ago));
    let mut release = helm_release("apps", "podinfo", "charts");
    release["status"]["history"][0]["chartVersion"] = json!("6.0.2");
    release["status"]["lastAttemptedRevision"] = json!("6.0.2");
    let mut values = flux_controllers();
    values.extend([helm_repository("charts"), chart, release]);
    values
}

#[test]
fn a_release_behind_its_chart_is_progressing_then_stuck() {
    let fresh = run(&behind_its_chart(3));
    fresh.assert_verdict(
        "HelmRelease",
        "apps",
        "podinfo",
        Progressing,
        "chart 6.0.3 offered, 6.0.2 deployed",
    );
    let late = run(&behind_its_chart(120));
    let verdict = late.verdict("HelmRelease", "apps", "podinfo");
    assert_eq!(verdict.state, Stuck);
    assert_eq!(verdict.root_causes, std::slice::from_ref(&verdict.id));
}

const DIGEST: &str = "sha256:6c3e1f2a9b8d7c6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e";

/// A release with `chartRef` to an OCIRepository offering `revision`, its history recording
/// `chart_version` as helm-controller does (version+first 12 hex of the digest).
fn from_oci(revision: &str, chart_version: &str) -> Vec<Value> {
    let oci = json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "OCIRepository",
        "metadata": {"name": "podinfo", "namespace": "apps", "generation": 1},
        "spec": {"interval": "10m", "url": "oci://ghcr.io/stefanprodan/charts/podinfo", "ref": {"semver": "6.x"}},
        "status": {"observedGeneration": 1,
            "artifact": {"revision": revision, "digest": DIGEST, "lastUpdateTime": ago(300)},
            "conditions": [ready("Succeeded", &format!("stored artifact for digest '{revision}'"))]}});
    let mut release = helm_release("apps", "podinfo", "charts");
    release["spec"] =
        json!({"interval": "30m", "chartRef": {"kind": "OCIRepository", "name": "podinfo"}});
    release["status"]["history"][0]["chartVersion"] = json!(chart_version);
    release["status"]["lastAttemptedRevision"] = json!(chart_version);
    release["status"]["lastAttemptedRevisionDigest"] = json!(DIGEST);
    let mut values = flux_controllers();
    values.extend([oci, release]);
    values
}

#[test]
fn an_oci_chart_is_current_when_version_and_digest_match() {
    let current = run(&from_oci(&format!("6.0.3@{DIGEST}"), "6.0.3+6c3e1f2a9b8d"));
    assert_eq!(current.state("HelmRelease", "apps", "podinfo"), Healthy);
    let digest_only = run(&from_oci(DIGEST, "6.0.3+6c3e1f2a9b8d"));
    assert_eq!(digest_only.state("HelmRelease", "apps", "podinfo"), Healthy);

    // the tag pushed again with new content: same version, another digest
    let repushed = run(&from_oci(&format!("6.0.3@{DIGEST}"), "6.0.3+0123456789ab"));
    assert_eq!(repushed.state("HelmRelease", "apps", "podinfo"), Stuck);
    let older = run(&from_oci(&format!("6.0.3@{DIGEST}"), "6.0.2+6c3e1f2a9b8d"));
    older.assert_verdict(
        "HelmRelease",
        "apps",
        "podinfo",
        Stuck,
        &format!("stuck for 5h: chart 6.0.3@{DIGEST} offered, 6.0.2+6c3e1f2a9b8d deployed"),
    );
}

#[test]
fn charts_are_compared_by_version_and_digest() {
    use super::revisions::same_chart;
    let tagged = format!("6.0.3@{DIGEST}");
    assert!(same_chart("6.0.3", None, "6.0.3"));
    assert!(!same_chart("6.0.2", None, "6.0.3"));
    assert!(same_chart("6.0.3+6c3e1f2a9b8d", None, &tagged));
    assert!(same_chart("6.0.3+6c3e1f2a9b8d", None, DIGEST));
    assert!(same_chart(
        "6.0.3+6c3e1f2a9b8d",
        None,
        &format!("v6.0.3@{DIGEST}")
    ));
    assert!(
        !same_chart("6.0.3+6c3e1f2a9b8e", None, &tagged),
        "another digest"
    );
    assert!(
        !same_chart("6.0.4+6c3e1f2a9b8d", None, &tagged),
        "another tag"
    );
    assert!(
        !same_chart("6.0.3+6c3e1f2a", None, &tagged),
        "12 hex, not fewer"
    );
    assert!(!same_chart("6.0.3", None, &tagged), "no digest recorded");
    assert!(
        !same_chart("6.0.3+6c3e1f2a9b8d", None, "6.0.3"),
        "no digest offered"
    );
}

/// A tag that is no semver (`stable`): helm-controller records `<chart version>+<digest[:12]>`
/// and never compares the version with the tag (mutateChartWithSourceRevision, default case).
#[test]
fn a_floating_tag_is_converged_on_the_digest_alone() {
    use super::revisions::same_chart;
    let stable = format!("stable@{DIGEST}");
    assert!(same_chart("6.5.4+6c3e1f2a9b8d", None, &stable));
    assert!(
        !same_chart("6.5.4+0123456789ab", None, &stable),
        "tag moved"
    );
    let current = run(&from_oci(&stable, "6.5.4+6c3e1f2a9b8d"));
    assert_eq!(current.state("HelmRelease", "apps", "podinfo"), Healthy);
    let moved = run(&from_oci(&stable, "6.5.4+0123456789ab"));
    assert_eq!(moved.state("HelmRelease", "apps", "podinfo"), Stuck);
}

/// DisableChartDigestTracking: the chart version stays plain and the digest is recorded in
/// `history[].ociDigest` (helm-controller@v1.6.4 internal/release/observation.go OCIDigest).
#[test]
fn with_digest_tracking_disabled_the_history_digest_decides() {
    use super::revisions::same_chart;
    let stable = format!("stable@{DIGEST}");
    assert!(same_chart("6.5.4", Some(DIGEST), &stable));
    assert!(
        same_chart("6.5.4", Some(&stable), &stable),
        "recorded with its tag"
    );
    assert!(same_chart(
        "6.5.4",
        Some(DIGEST),
        &format!("6.5.4@{DIGEST}")
    ));
    assert!(
        !same_chart("6.5.4", Some(DIGEST), &format!("6.5.5@{DIGEST}")),
        "semver tag differs"
    );
    assert!(
        !same_chart("6.5.4", Some("sha256:0123"), &stable),
        "another digest"
    );
    let mut values = from_oci(&stable, "6.5.4");
    release_digest(&mut values, &stable);
    assert_eq!(
        run(&values).state("HelmRelease", "apps", "podinfo"),
        Healthy
    );
    release_digest(&mut values, "sha256:0123456789abcdef0123");
    assert_eq!(run(&values).state("HelmRelease", "apps", "podinfo"), Stuck);
}

fn release_digest(values: &mut [Value], digest: &str) {
    let release = values.last_mut().expect("the release");
    release["status"]["history"][0]["ociDigest"] = json!(digest);
}

/// With `chartRef`, helm-controller reads the chart from the referenced OCIRepository or
/// HelmChart (fluxcd/helm-controller helmrelease_controller.go, `getSource`: `HasChartRef`
/// first) and deletes the HelmChart it once generated from `spec.chart` (the chart-template
/// reconcile step, "a chart is present in the status, we need to clean it up"); until that
/// deletion lands, the leftover chart, failing, is not the release's source.
#[test]
fn a_release_with_chart_ref_ignores_a_leftover_generated_chart() {
    let mut values = from_oci(&format!("6.0.3@{DIGEST}"), "6.0.3+6c3e1f2a9b8d");
    values.push(failing_chart());
    let run = run(&values);
    let verdict = run.verdict("HelmRelease", "apps", "podinfo");
    assert_eq!(verdict.state, Healthy, "{}", verdict.reason);
}

/// Round two's rule 1 holds while the release reconciles: Ready=True (a Helm run shows
/// Reconciling=True too) over a crash-looping workload it deployed is `degraded` by the
/// workload, never `blocked` by it.
#[test]
fn a_ready_release_reconciling_over_a_failing_workload_is_degraded() {
    let conditions = vec![
        ready(
            "UpgradeSucceeded",
            "Helm upgrade succeeded for release apps/podinfo.v4",
        ),
        condition(
            "Reconciling",
            "True",
            "Progressing",
            "Running 'upgrade' action",
            2,
        ),
    ];
    let run = run(&release(
        conditions,
        crash_looping_pod("apps", "podinfo", "a"),
        0,
    ));
    let verdict = run.verdict("HelmRelease", "apps", "podinfo");
    assert_eq!(verdict.state, Degraded, "{verdict:?}");
    assert!(
        verdict
            .reason
            .starts_with("deployed objects unhealthy: Deployment apps/podinfo:"),
        "{}",
        verdict.reason
    );
    assert_eq!(
        run.roots("HelmRelease", "apps", "podinfo"),
        [id("Deployment", "apps", "podinfo")]
    );
}

/// The same with a newer chart offered and not yet deployed: still Ready, still degraded.
#[test]
fn a_ready_release_behind_its_chart_over_a_failing_workload_is_degraded() {
    let mut values = release(
        vec![ready("UpgradeSucceeded", "Helm upgrade succeeded")],
        crash_looping_pod("apps", "podinfo", "a"),
        0,
    );
    for value in &mut values {
        if value["kind"] == "HelmChart" {
            value["status"]["artifact"]["revision"] = json!("2.15.0");
            value["status"]["artifact"]["lastUpdateTime"] = json!(ago(2));
        }
    }
    let run = run(&values);
    assert_eq!(run.state("HelmRelease", "apps", "podinfo"), Degraded);
}

/// Every remediation outcome on Ready names the action it remediated and how it ended.
#[test]
fn each_remediation_outcome_is_named_after_the_failed_action() {
    let denied = "Helm install failed for release apps/podinfo with chart podinfo@6.0.3: timed out waiting for the condition";
    for (remediation, outcome) in [
        ("RollbackSucceeded", "rolled back"),
        ("RollbackFailed", "rollback failed too"),
        ("UninstallSucceeded", "uninstalled"),
        ("UninstallFailed", "uninstall failed too"),
    ] {
        let conditions = vec![
            not_ready(remediation, "remediation", 10),
            condition("Released", "False", "InstallFailed", denied, 11),
        ];
        let run = run(&release(conditions, pod("apps", "podinfo", "a", None), 1));
        run.assert_verdict(
            "HelmRelease",
            "apps",
            "podinfo",
            Failed,
            &format!("Helm install failed (timed out waiting for workloads) ({outcome})"),
        );
    }
    // without the failed action's condition, the remediation alone
    let bare = run(&release(
        vec![not_ready("UninstallSucceeded", "remediation", 10)],
        pod("apps", "podinfo", "a", None),
        1,
    ));
    bare.assert_verdict(
        "HelmRelease",
        "apps",
        "podinfo",
        Failed,
        "Helm action failed (uninstalled)",
    );
}
