//! Per-object rules: Flux conditions and time, controllers, workloads, defects.

use super::State::*;
use super::testkit::*;
use super::{DomainSpec, Thresholds};
use chrono::TimeDelta;
use serde_json::json;

fn fleet(mut extra: Vec<serde_json::Value>) -> Vec<serde_json::Value> {
    let mut values = flux_controllers();
    values.push(git_repository("flux-system", SHA));
    values.append(&mut extra);
    values
}

fn podinfo_release() -> Vec<serde_json::Value> {
    vec![
        helm_repository("charts"),
        helm_chart("apps", "podinfo", "charts", "2.14.0"),
        helm_release("apps", "podinfo", "charts"),
    ]
}

#[test]
fn a_converged_fleet_is_healthy_with_no_root_causes() {
    let mut values = fleet(vec![kustomization("apps", &[])]);
    values.extend(podinfo_release());
    let run = run(&values);
    for verdict in &run.evaluation.objects {
        assert_eq!(verdict.state, Healthy, "{verdict:?}");
        assert!(verdict.root_causes.is_empty());
    }
    assert!(run.evaluation.root_causes.is_empty());
}

/// Every HelmRelease run shows Ready=True + Reconciling=True for a while: not stale, not a problem.
#[test]
fn a_routine_helm_run_does_not_flap_to_stale() {
    let reconciling_with = |minutes, message: &str| {
        let mut values = fleet(podinfo_release());
        let release = values.pop().unwrap();
        values.push(with_conditions(
            release,
            vec![
                ready("UpgradeSucceeded", "Helm upgrade succeeded"),
                condition("Reconciling", "True", "Progressing", message, minutes),
            ],
        ));
        run(&values)
    };
    let reconciling = |minutes| reconciling_with(minutes, "Fulfilling prerequisites");
    let routine = reconciling(2);
    let verdict = routine.verdict("HelmRelease", "apps", "podinfo");
    assert_eq!(verdict.state, Progressing, "{verdict:?}");
    assert!(verdict.root_causes.is_empty());
    assert!(routine.evaluation.root_causes.is_empty());
    // Up to the threshold (max(15m, 2 × 5m)) it is still a run in flight; a flag without a
    // message is named by its reason.
    assert_eq!(
        reconciling(14).state("HelmRelease", "apps", "podinfo"),
        Progressing
    );
    let edge = reconciling_with(15, "");
    let verdict = edge.verdict("HelmRelease", "apps", "podinfo");
    assert_eq!(
        (verdict.state, verdict.reason.as_str()),
        (Progressing, "reconciling (Progressing)")
    );
    assert_eq!(
        reconciling(16).state("HelmRelease", "apps", "podinfo"),
        Stale
    );

    let stuck_flag = reconciling(7 * 24 * 60);
    let verdict = stuck_flag.verdict("HelmRelease", "apps", "podinfo");
    assert_eq!(verdict.state, Stale);
    assert!(
        verdict.reason.contains("Reconciling=True for 7d"),
        "{}",
        verdict.reason
    );
    assert_eq!(
        verdict.since.unwrap(),
        now() - TimeDelta::days(7),
        "since comes from Reconciling"
    );
    assert_eq!(
        stuck_flag.roots("HelmRelease", "apps", "podinfo"),
        [id("HelmRelease", "apps", "podinfo")]
    );
}

#[test]
fn a_long_helm_timeout_widens_the_threshold() {
    let mut values = fleet(podinfo_release());
    let mut release = values.pop().unwrap();
    release["spec"]["timeout"] = json!("30m");
    values.push(with_conditions(
        release,
        vec![
            ready("UpgradeSucceeded", ""),
            condition("Reconciling", "True", "Progressing", "", 45),
        ],
    ));
    assert_eq!(
        run(&values).state("HelmRelease", "apps", "podinfo"),
        Progressing,
        "45m < 2 × 30m"
    );
}

#[test]
fn in_progress_becomes_stuck_past_the_threshold() {
    let progressing = |minutes| {
        let apps = with_conditions(
            kustomization("apps", &[]),
            vec![
                condition(
                    "Ready",
                    "Unknown",
                    "Progressing",
                    "Reconciliation in progress",
                    minutes,
                ),
                condition(
                    "Reconciling",
                    "True",
                    "Progressing",
                    "Reconciliation in progress",
                    minutes,
                ),
            ],
        );
        run(&fleet(vec![apps]))
    };
    assert_eq!(
        progressing(3).state("Kustomization", "flux-system", "apps"),
        Progressing
    );
    let stuck = progressing(40);
    let verdict = stuck.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(verdict.state, Stuck);
    assert!(
        verdict.reason.starts_with("stuck for 40m"),
        "{}",
        verdict.reason
    );
    assert_eq!(verdict.root_causes.len(), 1);

    let retrying = with_conditions(
        kustomization("apps", &[]),
        vec![condition(
            "Ready",
            "Unknown",
            "ProgressingWithRetry",
            "retrying",
            60,
        )],
    );
    assert_eq!(
        run(&fleet(vec![retrying])).state("Kustomization", "flux-system", "apps"),
        Stuck
    );
}

#[test]
fn observed_generation_behind_is_in_progress() {
    let mut apps = kustomization("apps", &[]);
    apps["metadata"]["generation"] = json!(2);
    apps["status"]["conditions"][0]["observedGeneration"] = json!(2);
    let verdict = run(&fleet(vec![apps.clone()]))
        .verdict("Kustomization", "flux-system", "apps")
        .clone();
    assert_eq!(verdict.state, Progressing);
    assert!(
        verdict
            .reason
            .contains("generation 2 not yet reconciled (observed 1)"),
        "{}",
        verdict.reason
    );

    // The Ready condition's own observedGeneration counts too.
    apps["status"]["observedGeneration"] = json!(2);
    apps["status"]["conditions"][0]["observedGeneration"] = json!(1);
    apps["status"]["conditions"]
        .as_array_mut()
        .unwrap()
        .push(condition("Reconciling", "True", "Progressing", "", 120));
    let verdict = run(&fleet(vec![apps]))
        .verdict("Kustomization", "flux-system", "apps")
        .clone();
    assert_eq!(verdict.state, Stuck, "{verdict:?}");
}

#[test]
fn attempted_but_not_applied_revision_is_stuck() {
    let mut apps = kustomization("apps", &[]);
    apps["status"]["lastAttemptedRevision"] = json!(NEW_SHA);
    let verdict = run(&fleet(vec![apps]))
        .verdict("Kustomization", "flux-system", "apps")
        .clone();
    assert_eq!(verdict.state, Stuck);
    assert!(verdict.reason.contains("attempted"), "{}", verdict.reason);
}

#[test]
fn applied_revision_behind_the_source_is_progressing_then_stuck() {
    let behind = |minutes| {
        let mut values = flux_controllers();
        let mut source = git_repository("flux-system", NEW_SHA);
        source["status"]["artifact"]["lastUpdateTime"] = json!(ago(minutes));
        values.push(source);
        values.push(kustomization("apps", &[]));
        run(&values)
    };
    assert_eq!(
        behind(1).state("Kustomization", "flux-system", "apps"),
        Progressing
    );
    let verdict = behind(90)
        .verdict("Kustomization", "flux-system", "apps")
        .clone();
    assert_eq!(verdict.state, Stuck);
    assert!(verdict.reason.contains(NEW_SHA), "{}", verdict.reason);
}

#[test]
fn stalled_and_failure_reasons_are_failed() {
    let stalled = with_conditions(
        helm_release("apps", "podinfo", "charts"),
        vec![
            not_ready(
                "UpgradeFailed",
                "Helm upgrade failed: post-upgrade hooks failed",
                30,
            ),
            condition(
                "Stalled",
                "True",
                "RetriesExceeded",
                "Failed to upgrade after 1 attempt(s)",
                30,
            ),
        ],
    );
    let mut values = fleet(vec![stalled]);
    values.extend(podinfo_release().into_iter().take(2));
    let run_ = run(&values);
    let verdict = run_.verdict("HelmRelease", "apps", "podinfo");
    // Stalled does not hide why: the upgrade's failure from Ready, with Stalled's words beside it
    assert_eq!(
        (verdict.state, verdict.reason.as_str()),
        (Failed, "Helm upgrade failed (retries exhausted)")
    );
    assert_eq!(
        verdict.message,
        "Failed to upgrade after 1 attempt(s): Helm upgrade failed: post-upgrade hooks failed"
    );

    for (reason, expected) in [
        ("BuildFailed", "build failed"),
        ("ReconciliationFailed", "apply failed"),
        ("PruneFailed", "prune failed"),
        (
            "AccessDenied",
            "access denied (cross-namespace reference or service account)",
        ),
    ] {
        let apps = with_conditions(
            kustomization("apps", &[]),
            vec![not_ready(reason, "boom", 5)],
        );
        let run = run(&fleet(vec![apps]));
        let verdict = run.verdict("Kustomization", "flux-system", "apps");
        assert_eq!(
            (verdict.state, verdict.reason.as_str()),
            (Failed, expected),
            "{reason}"
        );
        assert_eq!(verdict.message, "boom");
        assert_eq!(
            run.roots("Kustomization", "flux-system", "apps"),
            [id("Kustomization", "flux-system", "apps")]
        );
    }
    for reason in [
        "InstallFailed",
        "UpgradeFailed",
        "TestFailed",
        "RollbackSucceeded",
        "RollbackFailed",
        "ValuesError",
    ] {
        let mut values = fleet(podinfo_release());
        let release = values.pop().unwrap();
        values.push(with_conditions(release, vec![not_ready(reason, "boom", 5)]));
        let run = run(&values);
        assert_eq!(
            run.state("HelmRelease", "apps", "podinfo"),
            Failed,
            "{reason}"
        );
    }
    let mut values = flux_controllers();
    values.push(with_conditions(
        git_repository("flux-system", SHA),
        vec![
            not_ready(
                "GitOperationFailed",
                "failed to checkout and determine revision: unable to clone",
                5,
            ),
            condition(
                "FetchFailed",
                "True",
                "GitOperationFailed",
                "unable to clone",
                5,
            ),
        ],
    ));
    let verdict = run(&values)
        .verdict("GitRepository", "flux-system", "flux-system")
        .clone();
    assert_eq!(verdict.state, Failed);
    assert!(
        verdict.reason.starts_with("source fetch failed"),
        "{}",
        verdict.reason
    );
}

#[test]
fn waiting_on_healthy_dependencies_is_progressing_then_stuck() {
    let waiting = |minutes| {
        let apps = with_conditions(
            kustomization("apps", &["infra"]),
            vec![not_ready(
                "DependencyNotReady",
                "dependency 'flux-system/infra' is not ready",
                minutes,
            )],
        );
        let infra = with_conditions(
            kustomization("infra", &[]),
            vec![condition(
                "Ready",
                "Unknown",
                "Progressing",
                "Reconciliation in progress",
                1,
            )],
        );
        run(&fleet(vec![apps, infra]))
    };
    let young = waiting(2);
    assert_eq!(
        young.state("Kustomization", "flux-system", "apps"),
        Progressing
    );
    assert!(
        young
            .roots("Kustomization", "flux-system", "apps")
            .is_empty()
    );
    let old = waiting(60);
    assert_eq!(old.state("Kustomization", "flux-system", "apps"), Stuck);
    assert_eq!(
        old.roots("Kustomization", "flux-system", "apps"),
        [id("Kustomization", "flux-system", "apps")]
    );
}

#[test]
fn malformed_status_is_never_healthy() {
    let mut apps = kustomization("apps", &[]);
    apps["status"]["conditions"][0]["lastTransitionTime"] = json!("yesterday");
    let run = run(&fleet(vec![apps]));
    let verdict = run.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(verdict.state, Unverifiable);
    assert!(
        verdict
            .reason
            .contains("status.conditions[0].lastTransitionTime"),
        "{}",
        verdict.reason
    );
    assert_eq!(verdict.root_causes.len(), 1);

    let mut shapeless = kustomization("shapeless", &[]);
    shapeless["status"]["conditions"] = json!({"type": "Ready"});
    assert_eq!(
        super::testkit::run(&fleet(vec![shapeless])).state(
            "Kustomization",
            "flux-system",
            "shapeless"
        ),
        Unverifiable
    );
}

/// The reason names the first malformed field and counts the others; the message lists all.
#[test]
fn a_malformed_object_names_its_first_defect_and_counts_the_others() {
    let mut apps = kustomization("apps", &[]);
    apps["status"]["conditions"][0]["lastTransitionTime"] = json!("yesterday");
    let one = run(&fleet(vec![apps.clone()]));
    let time_defect =
        "status.conditions[0].lastTransitionTime: \"yesterday\" is not an RFC 3339 time";
    assert_eq!(
        one.verdict("Kustomization", "flux-system", "apps").reason,
        format!("malformed object: {time_defect}")
    );

    apps["spec"]["interval"] = json!(600);
    let two = run(&fleet(vec![apps]));
    let verdict = two.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(
        (verdict.state, verdict.reason.as_str()),
        (
            Unverifiable,
            "malformed object: spec.interval: expected a string (and 1 more)"
        )
    );
    assert_eq!(
        verdict.message,
        format!("spec.interval: expected a string; {time_defect}")
    );
}

#[test]
fn no_status_is_progressing_then_stuck_from_creation() {
    let created = |minutes| {
        let mut apps = kustomization("apps", &[]);
        apps.as_object_mut().unwrap().remove("status");
        apps["metadata"]["creationTimestamp"] = json!(ago(minutes));
        run(&fleet(vec![apps]))
            .verdict("Kustomization", "flux-system", "apps")
            .clone()
    };
    assert_eq!(created(1).state, Progressing);
    let old = created(120);
    assert_eq!(old.state, Stuck);
    assert!(old.reason.contains("no status yet"), "{}", old.reason);
}

#[test]
fn an_oci_helm_repository_without_status_is_fine() {
    let mut repository = helm_repository("oci-charts");
    repository["spec"]["type"] = json!("oci");
    repository.as_object_mut().unwrap().remove("status");
    assert_eq!(
        run(&fleet(vec![repository])).state("HelmRepository", "flux-system", "oci-charts"),
        Healthy
    );
}

/// Only `type: oci` has no status by design: an HTTP HelmRepository without one has not been
/// reconciled yet, so it is in progress, never healthy.
#[test]
fn an_http_helm_repository_without_status_is_not_healthy() {
    let mut repository = helm_repository("charts");
    repository.as_object_mut().unwrap().remove("status");
    let run = run(&fleet(vec![repository]));
    let verdict = run.verdict("HelmRepository", "flux-system", "charts");
    assert_ne!(verdict.state, Healthy);
    assert!(
        verdict.reason.contains("no status yet"),
        "{}",
        verdict.reason
    );
}

#[test]
fn suspended_is_never_a_root_cause_whatever_its_conditions() {
    let mut terraform = with_conditions(
        terraform("nlb"),
        vec![
            ready("TerraformPlannedNoChanges", ""),
            condition(
                "Reconciling",
                "True",
                "Progressing",
                "Fulfilling prerequisites",
                99_999,
            ),
        ],
    );
    terraform["spec"]["suspend"] = json!(true);
    let mut values = fleet(vec![terraform]);
    values.push(controller("tofu-controller", 0));
    let run = run(&values);
    let verdict = run.verdict("Terraform", "flux-system", "nlb");
    assert_eq!(verdict.state, Suspended);
    assert!(verdict.root_causes.is_empty());
    assert!(
        run.evaluation
            .root_causes
            .iter()
            .all(|r| r.id.as_str() != id("Terraform", "flux-system", "nlb"))
    );
}

#[test]
fn thresholds_come_from_domain_then_kind_then_global() {
    let values = fleet(vec![with_conditions(
        kustomization("apps", &[]),
        vec![condition("Ready", "Unknown", "Progressing", "", 10)],
    )]);
    assert_eq!(
        run(&values).state("Kustomization", "flux-system", "apps"),
        Progressing,
        "10m < 15m"
    );
    // As the config file writes it.
    let by_kind: Thresholds = crate::health::testkit::from_yaml("by_kind: {Kustomization: 5m}")
        .expect("valid thresholds");
    // The Kustomization's own timeout (10m interval − 30s) doubled still wins over 5m.
    assert_eq!(
        run_with(&values, &[], &[], &by_kind).state("Kustomization", "flux-system", "apps"),
        Progressing
    );
    let mut quick = values.clone();
    quick.last_mut().unwrap()["spec"]["timeout"] = json!("1m");
    assert_eq!(
        run_with(&quick, &[], &[], &by_kind).state("Kustomization", "flux-system", "apps"),
        Stuck
    );
    let domain: DomainSpec = crate::health::testkit::from_yaml(
        "{name: apps, select: {namespaces: [flux-system]}, version: {from: source_revision, kind: GitRepository, namespace: flux-system, name: flux-system}, stuck_after: 60m}",
    )
    .unwrap();
    assert_eq!(
        run_with(&quick, &[], &[domain], &by_kind).state("Kustomization", "flux-system", "apps"),
        Progressing
    );
}

/// A controller whose clock runs two hours ahead: its transition times are no start the
/// verdict can have yet (none, rather than "now", which would change every round and keep the
/// cluster re-evaluated and re-written without pause); the evaluation is due when they arrive.
/// An in-progress run from the future counts from when it was first seen in progress, so a
/// clock ahead does not hide work stuck that long.
#[test]
fn transition_times_from_a_clock_ahead_start_nothing_until_they_arrive() {
    let failing = with_conditions(
        kustomization("apps", &[]),
        vec![condition(
            "Ready",
            "False",
            "BuildFailed",
            "kustomize build failed",
            -120,
        )],
    );
    let running = with_conditions(
        kustomization("infra", &[]),
        vec![
            condition("Ready", "Unknown", "Progressing", "reconciling", -120),
            condition("Reconciling", "True", "Progressing", "reconciling", -120),
        ],
    );
    let values = fleet(vec![failing, running]);
    let run = run(&values);
    let failed = run.verdict("Kustomization", "flux-system", "apps");
    assert_eq!((failed.state, failed.since), (Failed, None));
    let progressing = run.verdict("Kustomization", "flux-system", "infra");
    assert_eq!((progressing.state, progressing.since), (Progressing, None));
    assert_eq!(run.due, Some(now() + TimeDelta::hours(2)));

    let first_seen = now() - TimeDelta::days(3);
    let id = crate::model::ObjectId(id("Kustomization", "flux-system", "infra"));
    let seen = [(id, first_seen)].into_iter().collect();
    let seen_long_ago = run_seen(&values, &[], &[], &Thresholds::default(), &seen);
    let stuck = seen_long_ago.verdict("Kustomization", "flux-system", "infra");
    assert_eq!((stuck.state, stuck.since), (Stuck, Some(first_seen)));
}

/// A new generation that the controller never starts on carries no start time of its own: it
/// is `progressing` when first seen, and `stuck` once it has been seen so past the threshold.
#[test]
fn work_without_a_start_time_is_stuck_once_seen_long_enough() {
    let mut apps = kustomization("apps", &[]);
    apps["metadata"]["generation"] = json!(2);
    let values = fleet(vec![apps]);
    let first_time = run(&values);
    let verdict = first_time.verdict("Kustomization", "flux-system", "apps");
    assert_eq!((verdict.state, verdict.since), (Progressing, None));

    let seen = |minutes| {
        let id = crate::model::ObjectId(id("Kustomization", "flux-system", "apps"));
        let seen = [(id, now() - TimeDelta::minutes(minutes))]
            .into_iter()
            .collect();
        run_seen(&values, &[], &[], &Thresholds::default(), &seen)
    };
    let recent = seen(5);
    assert_eq!(
        recent.state("Kustomization", "flux-system", "apps"),
        Progressing
    );
    let long_ago = seen(3 * 24 * 60);
    let verdict = long_ago.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(verdict.state, Stuck, "{verdict:?}");
    assert_eq!(verdict.since, Some(now() - TimeDelta::days(3)));
    assert!(
        verdict.reason.starts_with("stuck for 3d"),
        "{}",
        verdict.reason
    );
}

/// A new commit in flight: the verdict says which revision is being tried and which is still
/// the one applied (FLUX_FACTS: attempted ≠ applied while a run is in progress).
#[test]
fn a_run_in_flight_names_the_attempted_and_the_applied_revision() {
    let mut apps = kustomization("apps", &[]);
    apps["status"]["lastAttemptedRevision"] = json!("main@sha1:new0000");
    apps["status"]["conditions"] = json!([condition(
        "Ready",
        "Unknown",
        "Progressing",
        "Running health checks",
        2
    )]);
    let verdict = run(&fleet(vec![apps]))
        .verdict("Kustomization", "flux-system", "apps")
        .clone();
    assert_eq!(verdict.state, Progressing);
    assert!(
        verdict
            .message
            .starts_with("Running health checks (attempting main@sha1:new0000, last applied "),
        "{}",
        verdict.message
    );
}
