use super::*;

fn reason(kind: Kind, reason: &str, message: &str) -> String {
    classify(kind, reason, message).reason
}

#[test]
fn gatekeeper_denials_name_the_webhook_and_the_constraint() {
    let message = "Service/gateway/proxy dry-run failed: admission webhook \"validation.gatekeeper.sh\" denied the request: \
                   [lb-whitelist] LoadBalancer Service gateway/proxy is not in the whitelist";
    assert_eq!(
        reason(Kind::Kustomization, "ReconciliationFailed", message),
        "admission denied by webhook validation.gatekeeper.sh (policy lb-whitelist)"
    );
    let kyverno = "admission webhook \"validate.kyverno.svc-fail\" denied the request: policy Service/x for resource violation";
    assert_eq!(
        reason(Kind::Kustomization, "ReconciliationFailed", kyverno),
        "admission denied by webhook validate.kyverno.svc-fail"
    );
}

#[test]
fn validating_admission_policy_denials_name_policy_and_binding() {
    let message = "Service/gateway/proxy dry-run failed: services \"proxy\" is forbidden: ValidatingAdmissionPolicy \
                   'deny-loadbalancer' with binding 'deny-loadbalancer-binding' denied request: LoadBalancer Services are not allowed";
    assert_eq!(
        reason(Kind::Kustomization, "ReconciliationFailed", message),
        "admission denied by ValidatingAdmissionPolicy deny-loadbalancer (binding deny-loadbalancer-binding)"
    );
}

#[test]
fn rbac_forbidden_names_verb_resource_and_service_account() {
    let cluster_scope = "GlobalNetworkPolicy/allow-x dry-run failed (Forbidden): globalnetworkpolicies.crd.projectcalico.org \"allow-x\" \
                         is forbidden: User \"system:serviceaccount:flux-system:config-deployer\" cannot patch resource \
                         \"globalnetworkpolicies\" in API group \"crd.projectcalico.org\" at the cluster scope";
    assert_eq!(
        reason(Kind::Kustomization, "ReconciliationFailed", cluster_scope),
        "RBAC Forbidden: service account flux-system/config-deployer cannot patch globalnetworkpolicies.crd.projectcalico.org at cluster scope"
    );
    let namespaced = "secrets \"x\" is forbidden: User \"jane\" cannot get resource \"secrets\" in API group \"\" in the namespace \"apps\"";
    assert_eq!(
        reason(Kind::HelmRelease, "InstallFailed", namespaced),
        "RBAC Forbidden: user jane cannot get secrets in namespace apps"
    );
}

#[test]
fn missing_kinds_name_the_kind_and_version() {
    let message = "unable to setup global resources: no matches for kind \"RateLimitConfig\" in version \"ratelimit.solo.io/v1alpha1\"";
    assert_eq!(
        explain_message(message).unwrap(),
        "CRD missing: no kind RateLimitConfig in ratelimit.solo.io/v1alpha1"
    );
    assert_eq!(explain_message("just an error"), None);
}

#[test]
fn waits_are_not_failures_and_say_what_explains_them() {
    let dependency = classify(
        Kind::Kustomization,
        "DependencyNotReady",
        "dependency 'flux-system/infra' is not ready",
    );
    assert_eq!(
        (dependency.outcome, dependency.explained_by),
        (Outcome::Waiting, EdgeSet::DEPENDS_ON)
    );
    let source = classify(
        Kind::HelmRelease,
        "SourceNotReady",
        "HelmChart 'x' is not ready",
    );
    assert_eq!(
        (source.outcome, source.explained_by),
        (Outcome::Waiting, EdgeSet::SOURCE)
    );
    let progressing = classify(
        Kind::Kustomization,
        "Progressing",
        "Reconciliation in progress",
    );
    assert_eq!(progressing.outcome, Outcome::InProgress);
    let approval = classify(
        Kind::Terraform,
        "TerraformPlannedWithChanges",
        "Plan generated",
    );
    assert_eq!(
        (approval.outcome, approval.reason.as_str()),
        (Outcome::InProgress, "plan awaiting approval")
    );
}

#[test]
fn health_checks_and_helm_timeouts_are_explained_by_what_was_deployed() {
    let health = classify(
        Kind::Kustomization,
        "HealthCheckFailed",
        "health check failed after 5m0s: timeout waiting for: [Deployment/apps/podinfo status: 'InProgress']",
    );
    assert_eq!(
        health.reason,
        "health check failed: Deployment/apps/podinfo"
    );
    assert_eq!(health.explained_by, EdgeSet::DEPLOYED);
    let timeout = classify(
        Kind::HelmRelease,
        "UpgradeFailed",
        "Helm upgrade failed: context deadline exceeded",
    );
    assert_eq!(
        timeout.reason,
        "Helm upgrade failed (timed out waiting for workloads)"
    );
    assert_eq!(timeout.explained_by, EdgeSet::DEPLOYED);
}

#[test]
fn flux_reasons_have_short_human_names() {
    let cases = [
        (Kind::Kustomization, "BuildFailed", "build failed"),
        (Kind::HelmChart, "BuildFailed", "chart build failed"),
        (
            Kind::GitRepository,
            "FetchFailed",
            "source fetch failed (FetchFailed)",
        ),
        (
            Kind::OCIRepository,
            "OCIPullFailed",
            "source fetch failed (OCIPullFailed)",
        ),
        (Kind::HelmRelease, "InstallFailed", "Helm install failed"),
        (Kind::HelmRelease, "UpgradeFailed", "Helm upgrade failed"),
        (Kind::HelmRelease, "TestFailed", "Helm test failed"),
        (
            Kind::HelmRelease,
            "RollbackSucceeded",
            "Helm upgrade failed (rolled back)",
        ),
        (
            Kind::HelmRelease,
            "RollbackFailed",
            "Helm upgrade failed and rollback failed",
        ),
        // helm-controller api/v2 UninstallFailedReason (remediation by uninstall, or deletion).
        (
            Kind::HelmRelease,
            "UninstallFailed",
            "Helm uninstall failed",
        ),
        (Kind::HelmRelease, "RetriesExceeded", "retries exhausted"),
        (Kind::Terraform, "RetryLimitReached", "retries exhausted"),
        (Kind::HelmRelease, "ValuesError", "Helm values error"),
        (Kind::Kustomization, "ReconciliationFailed", "apply failed"),
        (Kind::Kustomization, "SomethingNew", "SomethingNew"),
    ];
    for (kind, flux_reason, expected) in cases {
        let classified = classify(kind, flux_reason, "");
        assert_eq!(classified.reason, expected, "{kind} {flux_reason}");
        // Helm actions and exhausted retries fail because of failing workloads, when any
        let helm = flux_reason.contains("Install")
            || flux_reason.contains("Upgrade")
            || flux_reason.contains("Test")
            || flux_reason.contains("Rollback")
            || flux_reason == "UninstallFailed"
            || flux_reason.starts_with("Retr");
        let expected_outcome = if helm {
            (Outcome::FailedBy, EdgeSet::DEPLOYED)
        } else {
            (Outcome::Failure, classified.explained_by)
        };
        assert_eq!(
            (classified.outcome, classified.explained_by),
            expected_outcome,
            "{flux_reason}"
        );
    }
}

/// source-controller's HelmChart reconciler: `failed to get source: …` (reason
/// SourceUnavailable) when its HelmRepository is not in its cache.
#[test]
fn source_not_found_is_recognised_in_messages() {
    let classified = classify(
        Kind::HelmChart,
        "SourceUnavailable",
        "failed to get source: HelmRepository.source.toolkit.fluxcd.io \"podinfo\" not found",
    );
    assert_eq!(
        (
            classified.reason.as_str(),
            classified.outcome,
            classified.explained_by
        ),
        ("source not found", Outcome::Failure, EdgeSet::SOURCE)
    );
    let unrelated = classify(
        Kind::Kustomization,
        "ReconciliationFailed",
        "ConfigMap/apps/settings not found",
    );
    assert_eq!(unrelated.reason, "apply failed", "no source named");
}

/// Older API versions still served (helm v2beta2, kustomize/source v1beta2) keep their
/// reasons' meaning: a wait on the chart or the artifact, never a failure of its own.
#[test]
fn chart_and_artifact_waits_of_every_version_are_waits() {
    for (kind, reason, message) in [
        (
            Kind::HelmRelease,
            "HelmChartNotReady",
            "HelmChart 'flux-system/apps-podinfo' is not ready",
        ),
        (
            Kind::HelmRelease,
            "ArtifactFailed",
            "Source not ready: artifact not found. Retrying in 30s",
        ),
        (
            Kind::Kustomization,
            "ArtifactFailed",
            "Source 'GitRepository/flux-system/apps' not found",
        ),
        (
            Kind::Terraform,
            "ArtifactFailed",
            "Source is not ready, artifact not found",
        ),
        (
            Kind::HelmChart,
            "NoSourceArtifact",
            "no artifact available for HelmRepository source 'podinfo'",
        ),
    ] {
        let classified = classify(kind, reason, message);
        assert_eq!(
            (classified.outcome, classified.explained_by),
            (Outcome::Waiting, EdgeSet::SOURCE),
            "{kind} {reason}"
        );
    }
    // a source's own ArtifactFailed is its fetch failing
    let own = classify(Kind::GitRepository, "ArtifactFailed", "");
    assert_eq!(own.outcome, Outcome::Failure);
}

/// helm-controller v1's wait errors (internal/reconcile install.go, upgrade.go) name what it
/// waited on: the release fails because of those workloads.
#[test]
fn helm_wait_failures_name_the_workloads() {
    let stalled = classify(
        Kind::HelmRelease,
        "InstallFailed",
        "Helm install failed for release commerce/lago with chart lago@1.28.0: failed early due to stalled resources: [Deployment/commerce/lago-clock-worker status: 'Failed']",
    );
    assert_eq!(
        (
            stalled.reason.as_str(),
            stalled.outcome,
            stalled.explained_by
        ),
        (
            "Helm install failed: Deployment/commerce/lago-clock-worker stalled",
            Outcome::FailedBy,
            EdgeSet::DEPLOYED
        )
    );
    let timeout = classify(
        Kind::HelmRelease,
        "UpgradeFailed",
        "Helm upgrade failed for release tools/hookshot with chart hookshot@0.4.1: timeout waiting for: [Deployment/tools/hookshot status: 'InProgress', StatefulSet/tools/hookshot-db status: 'InProgress']",
    );
    assert_eq!(
        timeout.reason,
        "Helm upgrade failed: Deployment/tools/hookshot, StatefulSet/tools/hookshot-db not ready in time"
    );
    assert_eq!(timeout.outcome, Outcome::FailedBy);
    // the same words under a reason that is no Helm action: not a Helm wait
    let health = classify(
        Kind::Kustomization,
        "HealthCheckFailed",
        "health check failed after 34.97ms: failed early due to stalled resources: [HelmRelease/crossplane-system/crossplane status: 'Failed']",
    );
    assert_eq!(
        (health.reason.as_str(), health.outcome),
        (
            "health check failed: HelmRelease/crossplane-system/crossplane",
            Outcome::Failure
        )
    );
    // an empty list names nothing
    let empty = classify(
        Kind::HelmRelease,
        "UpgradeFailed",
        "Helm upgrade failed: timeout waiting for: []",
    );
    assert_eq!(
        (empty.reason.as_str(), empty.outcome),
        ("Helm upgrade failed", Outcome::FailedBy)
    );
}

/// kustomize-controller@v1.9.6 reconcile: `kustomization path not found: %w` around the
/// `os.Stat` of the path joined to its temporary directory, under ArtifactFailed.
#[test]
fn a_path_missing_from_the_artifact_is_a_failure_naming_the_path() {
    let message = "kustomization path not found: stat /tmp/kustomization-2761524213/apps/prod: no such file or directory";
    let classified = classify(Kind::Kustomization, "ArtifactFailed", message);
    assert_eq!(classified.outcome, Outcome::Failure);
    assert_eq!(classified.explained_by, EdgeSet::NONE);
    assert_eq!(classified.reason, "kustomization path not found: apps/prod");
    assert_eq!(
        reason(
            Kind::Kustomization,
            "ArtifactFailed",
            "kustomization path not found"
        ),
        "kustomization path not found"
    );
    let missing_artifact = classify(
        Kind::Kustomization,
        "ArtifactFailed",
        "Source artifact not found, retrying in 30s",
    );
    assert_eq!(missing_artifact.outcome, Outcome::Waiting);
}

#[test]
fn a_health_check_cancelled_for_a_newer_revision_is_in_progress() {
    let classified = classify(
        Kind::Kustomization,
        "HealthCheckCanceled",
        "New reconciliation triggered by GitRepository/flux-system/flux-system",
    );
    assert_eq!(classified.outcome, Outcome::InProgress);
    assert_eq!(
        classified.reason,
        "health check cancelled for a newer revision"
    );
}

/// evalReadyExpr: `reconcile.TerminalError(fmt.Errorf("failed to evaluate dependency %s: %w", …))`
/// behind "Reconciliation failed terminally due to configuration error".
#[test]
fn an_invalid_ready_expr_names_the_dependency_not_a_health_check() {
    let message = "Reconciliation failed terminally due to configuration error: failed to evaluate dependency infra: \
                   failed to parse the CEL expression 'dep.status.conditions.filter(': ERROR: <input>:1:30: Syntax error";
    let classified = classify(Kind::Kustomization, "InvalidCELExpression", message);
    assert_eq!(classified.outcome, Outcome::Failure);
    assert_eq!(classified.reason, "invalid readyExpr on dependency infra");
    assert_eq!(
        reason(
            Kind::Kustomization,
            "InvalidCELExpression",
            "Reconciliation failed terminally due to configuration error: failed to parse the CEL expression"
        ),
        "invalid CEL health-check expression"
    );
}

#[test]
fn work_under_way_is_named_for_what_is_under_way() {
    for (reason, named) in [
        ("NewRevision", "fetching a new revision"),
        ("IncludeChange", "an included repository changed"),
        ("NewChart", "building a new chart"),
        ("PendingRelease", "Helm release pending"),
        ("AwaitingTests", "awaiting Helm tests"),
        ("ReplanRequested", "replan requested"),
    ] {
        let classified = classify(Kind::GitRepository, reason, "");
        assert_eq!(classified.outcome, Outcome::InProgress, "{reason}");
        assert_eq!(classified.reason, named, "{reason}");
    }
    assert_eq!(
        reason(Kind::Terraform, "LockHeld", ""),
        "waiting for the Terraform state lock"
    );
    assert_eq!(
        reason(Kind::Terraform, "DeletionBlockedByDependantsReason", ""),
        "deletion waiting for dependants"
    );
}

/// helm-controller's `Helm <action> failed for release … with chart …: <error>`: the error
/// joins the reason when it is short; a pod it names is a test's only for TestFailed.
#[test]
fn a_helm_actions_error_joins_its_reason_when_short() {
    let hook = "Helm upgrade failed for release apps/web with chart web@1.0.0: post-upgrade hooks failed: \
                1 error occurred: pod migrate failed";
    assert_eq!(
        reason(Kind::HelmRelease, "UpgradeFailed", hook),
        "Helm upgrade failed: post-upgrade hooks failed: 1 error occurred: pod migrate failed"
    );
    let long = format!(
        "Helm install failed for release apps/web with chart web@1.0.0: {}",
        "x".repeat(161)
    );
    assert_eq!(
        reason(Kind::HelmRelease, "InstallFailed", &long),
        "Helm install failed"
    );
    let empty = "Helm install failed for release apps/web with chart web@1.0.0: ";
    assert_eq!(
        reason(Kind::HelmRelease, "InstallFailed", empty),
        "Helm install failed"
    );
}
