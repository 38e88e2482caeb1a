//! Issue 44's families read whole, as the controllers write them: an include without an
//! artifact, a path missing from the artifact, a health check cancelled by a newer revision,
//! an invalid readyExpr on a dependency.

use super::State::*;
use super::testkit::*;
use serde_json::{Value, json};

fn including(include: &str) -> Value {
    let mut app = git_repository("app", SHA);
    app["spec"]["include"] = json!([{"repository": {"name": include}, "toPath": "shared"}]);
    app
}

/// source-controller@v1.9.6 fetchIncludes: IncludeUnavailable=True NoArtifact, summarised
/// into Ready=False with the same reason and message.
fn waiting_for_include(mut app: Value, include: &str) -> Value {
    let message = format!("no artifact available for include '{include}'");
    app["status"]["conditions"] = json!([
        not_ready("NoArtifact", &message, 40),
        condition("IncludeUnavailable", "True", "NoArtifact", &message, 40),
    ]);
    app
}

fn consumer_of_app() -> Value {
    let mut apps = with_conditions(
        kustomization("apps", &[]),
        vec![not_ready(
            "ArtifactFailed",
            "Source artifact not found, retrying in 30s",
            40,
        )],
    );
    apps["spec"]["sourceRef"] = json!({"kind": "GitRepository", "name": "app"});
    apps["status"]["lastAppliedRevision"] = Value::Null;
    apps
}

#[test]
fn an_include_without_artifact_is_the_one_root_cause_of_its_includer_and_consumers() {
    let mut shared = with_conditions(
        git_repository("shared", SHA),
        vec![not_ready(
            "AuthenticationFailed",
            "failed to checkout and determine revision: authentication required",
            45,
        )],
    );
    shared["status"]["artifact"] = Value::Null;
    let mut app = waiting_for_include(including("shared"), "shared");
    app["status"]["artifact"] = Value::Null;
    let mut values = flux_controllers();
    values.extend([shared, app, consumer_of_app()]);
    let run = run(&values);
    let shared = id("GitRepository", "flux-system", "shared");
    assert_eq!(run.state("GitRepository", "flux-system", "shared"), Failed);
    for (kind, name) in [("GitRepository", "app"), ("Kustomization", "apps")] {
        let verdict = run.verdict(kind, "flux-system", name);
        assert_eq!(verdict.state, Blocked, "{verdict:?}");
        assert_eq!(run.roots(kind, "flux-system", name), [shared.as_str()]);
    }
    let roots: Vec<&str> = run
        .evaluation
        .root_causes
        .iter()
        .map(|r| r.id.as_str())
        .collect();
    assert_eq!(roots, [shared.as_str()]);
}

#[test]
fn an_include_naming_no_repository_is_a_missing_source() {
    let mut values = flux_controllers();
    values.push(including("nowhere"));
    let run = run(&values);
    run.assert_verdict(
        "GitRepository",
        "flux-system",
        "app",
        Failed,
        "include GitRepository flux-system/nowhere not found",
    );
}

#[test]
fn an_include_still_fetching_keeps_its_includer_progressing() {
    let mut shared = with_conditions(
        git_repository("shared", SHA),
        vec![condition(
            "Ready",
            "Unknown",
            "Progressing",
            "building artifact",
            1,
        )],
    );
    shared["status"]["artifact"] = Value::Null;
    let mut values = flux_controllers();
    values.extend([shared, waiting_for_include(including("shared"), "shared")]);
    let run = run(&values);
    run.assert_verdict(
        "GitRepository",
        "flux-system",
        "app",
        Stuck,
        "stuck for 40m: waiting for included repository shared",
    );
}

/// kustomize-controller rewrites Ready at each attempt; the path is named and the
/// Kustomization, not its healthy source, is the root cause.
#[test]
fn a_path_missing_from_the_artifact_fails_the_kustomization_as_its_own_root_cause() {
    let mut values = flux_controllers();
    values.extend([
        git_repository("flux-system", SHA),
        with_conditions(
            kustomization("apps", &[]),
            vec![not_ready(
                "ArtifactFailed",
                "kustomization path not found: stat /tmp/kustomization-4135546/apps: no such file or directory",
                1,
            )],
        ),
    ]);
    let run = run(&values);
    let verdict = run.assert_verdict(
        "Kustomization",
        "flux-system",
        "apps",
        Failed,
        "kustomization path not found: apps",
    );
    assert_eq!(verdict.root_causes, std::slice::from_ref(&verdict.id));
}

#[test]
fn a_health_check_cancelled_by_a_newer_revision_is_progressing() {
    let mut values = flux_controllers();
    values.extend([
        git_repository("flux-system", NEW_SHA),
        with_conditions(
            kustomization("apps", &[]),
            vec![
                not_ready(
                    "HealthCheckCanceled",
                    "New reconciliation triggered by GitRepository/flux-system/flux-system",
                    1,
                ),
                condition(
                    "Reconciling",
                    "True",
                    "Progressing",
                    "Reconciliation in progress",
                    1,
                ),
            ],
        ),
    ]);
    let run = run(&values);
    let verdict = run.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(verdict.state, Progressing, "{verdict:?}");
    assert!(verdict.root_causes.is_empty());
}

#[test]
fn an_invalid_ready_expr_on_a_dependency_is_reported_as_such() {
    let message = "Reconciliation failed terminally due to configuration error: failed to evaluate dependency infra: \
                   failed to parse the CEL expression 'dep.status.': ERROR: <input>:1:12: Syntax error: mismatched input";
    let mut apps = with_conditions(
        kustomization("apps", &["infra"]),
        vec![
            not_ready("InvalidCELExpression", message, 5),
            condition("Stalled", "True", "InvalidCELExpression", message, 5),
        ],
    );
    apps["spec"]["dependsOn"] = json!([{"name": "infra", "readyExpr": "dep.status."}]);
    let mut values = flux_controllers();
    values.extend([
        git_repository("flux-system", SHA),
        kustomization("infra", &[]),
        apps,
    ]);
    let run = run(&values);
    let verdict = run.assert_verdict(
        "Kustomization",
        "flux-system",
        "apps",
        Failed,
        "invalid readyExpr on dependency infra",
    );
    assert_eq!(verdict.root_causes, std::slice::from_ref(&verdict.id));
}

/// helm-controller@v1.6.4 uninstall.go failure: Released=False UninstallFailed, summarised
/// onto Ready; the finalizer stays while it fails.
#[test]
fn a_release_whose_uninstall_fails_on_rbac_says_so_and_is_stuck_past_the_threshold() {
    let failing = |minutes: i64| {
        let message = "Helm uninstall failed for release apps/web with chart web@2.14.0: deployments.apps \"web\" is forbidden: \
                       User \"system:serviceaccount:apps:deployer\" cannot delete resource \"deployments\" in API group \"apps\" in the namespace \"apps\"";
        let mut release = with_conditions(
            helm_release("apps", "web", "charts"),
            vec![
                not_ready("UninstallFailed", message, minutes),
                condition("Released", "False", "UninstallFailed", message, minutes),
            ],
        );
        release["metadata"]["deletionTimestamp"] = json!(ago(minutes));
        release["metadata"]["finalizers"] = json!(["finalizers.fluxcd.io"]);
        let mut values = flux_controllers();
        values.extend([
            helm_repository("charts"),
            helm_chart("apps", "web", "charts", "2.14.0"),
            release,
        ]);
        run(&values)
    };
    let rbac = "RBAC Forbidden: service account apps/deployer cannot delete deployments.apps in namespace apps";
    failing(2).assert_verdict(
        "HelmRelease",
        "apps",
        "web",
        Progressing,
        &format!("being deleted: {rbac}"),
    );
    failing(120).assert_verdict(
        "HelmRelease",
        "apps",
        "web",
        Stuck,
        &format!("stuck for 2h: being deleted: {rbac}"),
    );
}

/// kustomize-controller rewrites Ready at each attempt: a failure and a wait retried attempt
/// after attempt are dated by when fleetglass first saw them unsettled (kept by the runner
/// across attempts and restarts), not by the latest attempt.
#[test]
fn the_stuck_clock_counts_from_the_first_sighting_across_attempts() {
    let path =
        "kustomization path not found: stat /tmp/kustomization-1/apps: no such file or directory";
    let mut values = flux_controllers();
    values.extend([
        git_repository("flux-system", SHA),
        with_conditions(
            kustomization("apps", &[]),
            vec![not_ready("ArtifactFailed", path, 1)],
        ),
        with_conditions(
            kustomization("infra", &[]),
            vec![condition(
                "Ready",
                "Unknown",
                "Progressing",
                "Running health checks",
                1,
            )],
        ),
    ]);
    let first_seen = now() - chrono::TimeDelta::hours(3);
    let seen: super::SeenInProgress = [
        (id("Kustomization", "flux-system", "apps"), first_seen),
        (id("Kustomization", "flux-system", "infra"), first_seen),
    ]
    .into_iter()
    .map(|(id, at)| (crate::model::ObjectId(id), at))
    .collect();
    let seen_run = run_seen(&values, &[], &[], &Default::default(), &seen);
    let apps = seen_run.verdict("Kustomization", "flux-system", "apps");
    assert_eq!((apps.state, apps.since), (Failed, Some(first_seen)));
    let infra = seen_run.verdict("Kustomization", "flux-system", "infra");
    assert_eq!(infra.state, Stuck, "{infra:?}");
    assert!(infra.reason.starts_with("stuck for 3h"), "{}", infra.reason);
    // unseen before, the latest attempt is all there is
    let fresh = run(&values);
    assert_eq!(
        fresh.state("Kustomization", "flux-system", "infra"),
        Progressing
    );
}

/// A Ready object being deleted waits on its finalizers; its Ready reason is no failure.
#[test]
fn a_ready_object_being_deleted_is_waiting_on_its_finalizers() {
    let mut apps = kustomization("apps", &[]);
    apps["metadata"]["deletionTimestamp"] = json!(ago(2));
    let mut values = flux_controllers();
    values.extend([git_repository("flux-system", SHA), apps]);
    run(&values).assert_verdict(
        "Kustomization",
        "flux-system",
        "apps",
        Progressing,
        "being deleted (finalizers pending)",
    );
}
