//! Failure classification: turns a condition's reason and raw message into a short reason a
//! human can act on, says whether it is a failure, a wait or work in progress, and which
//! prerequisites could explain it. A table of rules, first match wins, so each rule is
//! testable on its own and new failure shapes are one entry.

use super::finding::EdgeSet;
use super::{Cause, CauseCode};
use crate::model::Kind;
use std::borrow::Cow;

/// What a condition's reason means for the object's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    Failure,
    /// A failure caused by the prerequisites over `explained_by` (a Helm action whose wait on
    /// its workloads failed): it stays failed, and their root causes are its own.
    FailedBy,
    /// Waiting on a prerequisite (DependencyNotReady, SourceNotReady): never a failure itself.
    Waiting,
    InProgress,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Classified {
    /// The condition's reason (a controller constant) and the classified words as `detail`:
    /// rules word only names they read from the message (a webhook, a policy, a subject, a
    /// path), never its figures, unless they say what identifies them instead.
    pub cause: Cause,
    pub reason: String,
    pub outcome: Outcome,
    /// Problem prerequisites over these edges make the object a symptom of them.
    pub explained_by: EdgeSet,
}

/// What a rule looks at.
pub(super) struct Evidence<'a> {
    pub kind: Kind,
    pub reason: &'a str,
    pub message: &'a str,
}

struct Rule {
    applies: fn(&Evidence) -> bool,
    describe: fn(&Evidence) -> String,
    /// What identifies the cause, where the words hold more (an error's own text).
    identify: Option<fn(&Evidence) -> String>,
    outcome: Outcome,
    explained_by: EdgeSet,
}

const fn rule(
    applies: fn(&Evidence) -> bool,
    describe: fn(&Evidence) -> String,
    outcome: Outcome,
    explained_by: EdgeSet,
) -> Rule {
    Rule {
        applies,
        describe,
        identify: None,
        outcome,
        explained_by,
    }
}

impl Rule {
    const fn identified_by(mut self, identify: fn(&Evidence) -> String) -> Rule {
        self.identify = Some(identify);
        self
    }
}

use Outcome::{FailedBy, Failure, InProgress, Waiting};

/// Message shapes first (they hide inside generic reasons like ReconciliationFailed), then
/// the reasons Flux and tofu-controller document.
const RULES: &[Rule] = &[
    rule(
        |e| webhook_denial(e.message).is_some(),
        |e| webhook_denial(e.message).unwrap_or_default(),
        Failure,
        EdgeSet::NONE,
    ),
    rule(
        |e| policy_denial(e.message).is_some(),
        |e| policy_denial(e.message).unwrap_or_default(),
        Failure,
        EdgeSet::NONE,
    ),
    rule(
        |e| rbac_forbidden(e.message).is_some(),
        |e| rbac_forbidden(e.message).unwrap_or_default(),
        Failure,
        EdgeSet::NONE,
    ),
    rule(
        |e| kind_missing(e.message).is_some(),
        |e| kind_missing(e.message).unwrap_or_default(),
        Failure,
        EdgeSet::NONE,
    ),
    rule(
        |e| e.reason == "DependencyNotReady",
        |_| "waiting for dependencies".into(),
        Waiting,
        EdgeSet::DEPENDS_ON,
    ),
    rule(
        |e| e.reason == "SourceNotReady",
        |_| "waiting for source".into(),
        Waiting,
        EdgeSet::SOURCE,
    ),
    // helm.toolkit.fluxcd.io/v2beta2 and kustomize v1beta2 (still served) wait on the chart
    // or artifact under these reasons; helm-controller v1 says ArtifactFailed while the
    // source's artifact is missing ("Source not ready: artifact not found. Retrying in 30s").
    rule(
        |e| e.reason == "HelmChartNotReady",
        |_| "waiting for chart".into(),
        Waiting,
        EdgeSet::SOURCE,
    ),
    // kustomize-controller@v1.9.6 kustomization_controller.go reconcile: `os.Stat(dirPath)`
    // fails → "kustomization path not found: …" under ArtifactFailed. The artifact is there;
    // the path is wrong: a failure of its own, not a wait on the source.
    rule(
        |e| e.reason == "ArtifactFailed" && e.message.contains("kustomization path not found"),
        |e| path_not_found(e.message),
        Failure,
        EdgeSet::NONE,
    ),
    rule(
        |e| e.reason == "ArtifactFailed" && !e.kind.is_source(),
        |_| "source artifact unavailable".into(),
        Waiting,
        EdgeSet::SOURCE,
    ),
    // source-controller's HelmChart before its repository has an artifact
    // (helmchart_controller.go, reconcileSource: "no artifact available for … source …").
    rule(
        |e| e.reason == "NoSourceArtifact",
        |_| "waiting for source artifact".into(),
        Waiting,
        EdgeSet::SOURCE,
    ),
    // A GitRepository whose include has no artifact yet (source-controller@v1.9.6
    // gitrepository_controller.go fetchIncludes: IncludeUnavailable, reason NoArtifact).
    rule(
        |e| e.reason == "NoArtifact" && e.kind == Kind::GitRepository,
        |e| match include_name(e.message) {
            Some(name) => format!("waiting for included repository {name}"),
            None => "waiting for an included repository".into(),
        },
        Waiting,
        EdgeSet::SOURCE,
    ),
    rule(
        source_not_found,
        |_| "source not found".into(),
        Failure,
        EdgeSet::SOURCE,
    ),
    // A newer revision arrived during the health check, which was cancelled to apply it
    // (kustomize-controller@v1.9.6 kustomization_controller.go, HealthCheckCanceledReason).
    rule(
        |e| e.reason == "HealthCheckCanceled",
        |_| "health check cancelled for a newer revision".into(),
        InProgress,
        EdgeSet::WAITING,
    ),
    rule(
        |e| e.reason == "HealthCheckFailed",
        |e| health_check(e.message),
        Failure,
        EdgeSet::DEPLOYED,
    ),
    rule(
        |e| is_helm_action_failure(e.reason) && waited_for(e.message).is_some(),
        |e| helm_wait(e.reason, e.message),
        FailedBy,
        EdgeSet::DEPLOYED,
    ),
    rule(
        helm_wait_timeout,
        |e| {
            format!(
                "{} (timed out waiting for workloads)",
                helm_action(e.reason)
            )
        },
        FailedBy,
        EdgeSet::DEPLOYED,
    ),
    rule(
        |e| e.reason == "BuildFailed",
        |e| build_failed(e.kind),
        Failure,
        EdgeSet::NONE,
    ),
    rule(
        is_fetch_failure,
        |e| format!("source fetch failed ({})", e.reason),
        Failure,
        EdgeSet::NONE,
    ),
    // A Helm action that failed, or retries exhausted, for no reason named above: failing
    // workloads it deployed are why (hooks and waits fail on them), if there are any.
    rule(
        |e| is_helm_action_failure(e.reason),
        |e| match failed_test_pod(e.message).filter(|_| e.reason == "TestFailed") {
            Some(pod) => format!("{}: pod {pod} failed", helm_action(e.reason)),
            None => match action_error(e.message) {
                Some(error) => format!("{}: {error}", helm_action(e.reason)),
                None => helm_action(e.reason).into(),
            },
        },
        FailedBy,
        EdgeSet::DEPLOYED,
    )
    // The error's first line is the helm library's words (release names, revisions,
    // durations): the failing test pod identifies the cause, or the action alone.
    .identified_by(
        |e| match failed_test_pod(e.message).filter(|_| e.reason == "TestFailed") {
            Some(pod) => format!("{}: pod {pod} failed", helm_action(e.reason)),
            None => helm_action(e.reason).into(),
        },
    ),
    rule(
        |e| matches!(e.reason, "RetriesExceeded" | "RetryLimitReached"),
        |_| "retries exhausted".into(),
        FailedBy,
        EdgeSet::DEPLOYED,
    ),
    rule(
        |e| e.reason == "ValuesError",
        |_| "Helm values error".into(),
        Failure,
        EdgeSet::NONE,
    ),
    rule(
        |e| e.reason == "AccessDenied",
        |_| "access denied (cross-namespace reference or service account)".into(),
        Failure,
        EdgeSet::NONE,
    ),
    rule(
        |e| e.reason == "PruneFailed",
        |_| "prune failed".into(),
        Failure,
        EdgeSet::NONE,
    ),
    // checkDependencies wraps a readyExpr that does not compile as "failed to evaluate
    // dependency <name>: …" (kustomize-controller@v1.9.6 and helm-controller@v1.6.4
    // evalReadyExpr), under the reason invalid health-check expressions use too.
    rule(
        |e| e.reason == "InvalidCELExpression" && dependency_expression(e.message).is_some(),
        |e| {
            let dependency = dependency_expression(e.message).unwrap_or_default();
            format!("invalid readyExpr on dependency {dependency}")
        },
        Failure,
        EdgeSet::NONE,
    ),
    rule(
        |e| e.reason == "InvalidCELExpression",
        |_| "invalid CEL health-check expression".into(),
        Failure,
        EdgeSet::NONE,
    ),
    rule(
        |e| e.reason == "ReconciliationFailed",
        |_| "apply failed".into(),
        Failure,
        EdgeSet::NONE,
    ),
    // A HelmChart waiting on its source object (helmchart_controller.go reconcileSource,
    // SourceUnavailable); an absent source is "not found" above.
    rule(
        |e| e.reason == "SourceUnavailable",
        |_| "waiting for source".into(),
        Waiting,
        EdgeSet::SOURCE,
    ),
    // An included repository that cannot be read yet (fetchIncludes, NotFound).
    rule(
        |e| e.reason == "NotFound" && e.kind == Kind::GitRepository,
        |_| "waiting for an included repository".into(),
        Waiting,
        EdgeSet::SOURCE,
    ),
    // tofu-controller: the state lock held by another run, or dependants blocking deletion.
    rule(
        |e| matches!(e.reason, "LockHeld" | "DeletionBlockedByDependantsReason"),
        |e| match e.reason {
            "LockHeld" => "waiting for the Terraform state lock".into(),
            _ => "deletion waiting for dependants".into(),
        },
        Waiting,
        EdgeSet::NONE,
    ),
    // A new revision or chart being fetched or built (source-controller ArtifactOutdated),
    // a release pending or awaiting its tests, a replan requested: work under way.
    rule(
        |e| {
            matches!(
                e.reason,
                "NewRevision"
                    | "IncludeChange"
                    | "NewChart"
                    | "PendingRelease"
                    | "AwaitingTests"
                    | "ReplanRequested"
            )
        },
        |e| in_progress_reason(e.reason).into(),
        InProgress,
        EdgeSet::WAITING,
    ),
    rule(
        |e| e.reason == "TerraformPlannedWithChanges",
        |_| "plan awaiting approval".into(),
        InProgress,
        EdgeSet::WAITING,
    ),
    rule(
        |e| e.reason == "ProgressingWithRetry",
        |_| "retrying after a failed run".into(),
        InProgress,
        EdgeSet::WAITING,
    ),
    rule(
        |e| matches!(e.reason, "Progressing" | ""),
        |_| "reconciliation in progress".into(),
        InProgress,
        EdgeSet::WAITING,
    ),
];

/// The short reason for a raw error message alone (a container's last words, an apply
/// error), when its shape is one the table knows.
pub(super) fn explain_message(message: &str) -> Option<String> {
    let message = unescape_quotes(message);
    let message = message.as_ref();
    [
        webhook_denial,
        policy_denial,
        rbac_forbidden,
        kind_missing,
        admission_refusal,
    ]
    .into_iter()
    .find_map(|explain| explain(message))
}

pub(super) fn classify(kind: Kind, reason: &str, message: &str) -> Classified {
    let message = unescape_quotes(message);
    let message = message.as_ref();
    let evidence = Evidence {
        kind,
        reason,
        message,
    };
    match RULES.iter().find(|rule| (rule.applies)(&evidence)) {
        Some(rule) => {
            let words = (rule.describe)(&evidence);
            let detail = match rule.identify {
                Some(identify) => identify(&evidence),
                None => words.clone(),
            };
            Classified {
                cause: Cause::new(outcome_code(rule.outcome))
                    .with("reason", reason)
                    .with("detail", detail),
                reason: words,
                outcome: rule.outcome,
                explained_by: rule.explained_by,
            }
        }
        None => Classified {
            cause: Cause::new(CauseCode::FluxFailure).with("reason", reason),
            reason: reason.to_string(),
            outcome: Failure,
            explained_by: EdgeSet::NONE,
        },
    }
}

fn outcome_code(outcome: Outcome) -> CauseCode {
    match outcome {
        Failure | FailedBy => CauseCode::FluxFailure,
        Waiting => CauseCode::FluxWaiting,
        InProgress => CauseCode::FluxInProgress,
    }
}

/// Errors quoted inside JSON logs arrive with `\"`; the shapes below match plain quotes.
fn unescape_quotes(message: &str) -> Cow<'_, str> {
    if message.contains("\\\"") {
        Cow::Owned(message.replace("\\\"", "\""))
    } else {
        Cow::Borrowed(message)
    }
}

/// `admission webhook "validation.gatekeeper.sh" denied the request: [lb-whitelist] …`
fn webhook_denial(message: &str) -> Option<String> {
    let after = message.split_once("admission webhook \"")?.1;
    let (webhook, rest) = after.split_once('"')?;
    let denial = rest.split_once("denied the request")?.1;
    let policy = denial
        .trim_start_matches(':')
        .trim_start()
        .strip_prefix('[')
        .and_then(|p| p.split_once(']'))
        .map(|(policy, _)| format!(" (policy {policy})"))
        .unwrap_or_default();
    Some(format!("admission denied by webhook {webhook}{policy}"))
}

/// `… is forbidden: ValidatingAdmissionPolicy 'deny-lb' with binding 'deny-lb-binding' denied request: …`
fn policy_denial(message: &str) -> Option<String> {
    let after = message.split_once("ValidatingAdmissionPolicy '")?.1;
    let (policy, rest) = after.split_once('\'')?;
    if !rest.contains("denied request") {
        return None;
    }
    let binding = rest
        .split_once("binding '")
        .and_then(|(_, b)| b.split_once('\''))
        .map(|(binding, _)| format!(" (binding {binding})"))
        .unwrap_or_default();
    Some(format!(
        "admission denied by ValidatingAdmissionPolicy {policy}{binding}"
    ))
}

/// `… is forbidden: User "system:serviceaccount:ns:sa" cannot patch resource "x" in API group "g" at the cluster scope`
fn rbac_forbidden(message: &str) -> Option<String> {
    let after = message.split_once("is forbidden: User \"")?.1;
    let (user, rest) = after.split_once('"')?;
    let rest = rest.trim_start().strip_prefix("cannot ")?;
    let (verb, rest) = rest.split_once(' ')?;
    let resource = quoted_after(rest, "resource \"")?;
    let group = quoted_after(rest, "API group \"").filter(|g| !g.is_empty());
    let subject = match user
        .strip_prefix("system:serviceaccount:")
        .and_then(|sa| sa.split_once(':'))
    {
        Some((namespace, name)) => format!("service account {namespace}/{name}"),
        None => format!("user {user}"),
    };
    let resource = group.map_or_else(|| resource.to_string(), |g| format!("{resource}.{g}"));
    let scope = if rest.contains("at the cluster scope") {
        " at cluster scope".to_string()
    } else {
        quoted_after(rest, "in the namespace \"")
            .map(|ns| format!(" in namespace {ns}"))
            .unwrap_or_default()
    };
    Some(format!(
        "RBAC Forbidden: {subject} cannot {verb} {resource}{scope}"
    ))
}

/// What a ReplicaSet's pod creation was refused for, as the API server words it:
/// `pods "web-7d4b9c8f5-x2k9p" is forbidden: exceeded quota: compute, requested: …` (apiserver
/// admission/plugin/resourcequota) or `… is forbidden: violates PodSecurity "restricted:latest":
/// …` (pod-security-admission): the words after "is forbidden: ".
fn admission_refusal(message: &str) -> Option<String> {
    let refusal = message.split_once("is forbidden: ")?.1;
    (refusal.starts_with("exceeded quota") || refusal.starts_with("violates PodSecurity"))
        .then(|| refusal.to_string())
}

/// `no matches for kind "RateLimitConfig" in version "ratelimit.solo.io/v1alpha1"`
fn kind_missing(message: &str) -> Option<String> {
    let kind = quoted_after(message, "no matches for kind \"")?;
    let version = quoted_after(message, "in version \"")
        .map(|v| format!(" in {v}"))
        .unwrap_or_default();
    Some(format!("CRD missing: no kind {kind}{version}"))
}

fn quoted_after<'m>(text: &'m str, marker: &str) -> Option<&'m str> {
    Some(text.split_once(marker)?.1.split_once('"')?.0)
}

/// `kustomization path not found: stat /tmp/kustomization-1234/./apps: no such file or
/// directory` → `kustomization path not found: ./apps` (the temporary directory said nothing).
fn path_not_found(message: &str) -> String {
    let path = message
        .split_once("stat ")
        .map(|(_, rest)| rest.split_once(": ").map_or(rest, |(path, _)| path))
        .map(|path| {
            let within = path.split_once("/kustomization-").map_or(path, |(_, p)| p);
            within.split_once('/').map_or(within, |(_, p)| p)
        })
        .filter(|path| !path.is_empty());
    match path {
        Some(path) => format!("kustomization path not found: {path}"),
        None => "kustomization path not found".into(),
    }
}

/// The dependency named by `failed to evaluate dependency <name>: …`.
fn dependency_expression(message: &str) -> Option<&str> {
    let after = message.split_once("failed to evaluate dependency ")?.1;
    after.split_once(':').map(|(name, _)| name.trim())
}

/// What a Helm action's error said, after helm-controller's `Helm <action> failed for release
/// <release> with chart <chart>: ` (internal/reconcile install.go, upgrade.go, uninstall.go…):
/// its first line, when short enough to be a reason (`failed to delete release: webapp`).
fn action_error(message: &str) -> Option<&str> {
    let after_chart = message.split_once(" with chart ")?.1;
    let error = after_chart.split_once(": ")?.1.lines().next()?.trim();
    (!error.is_empty() && error.len() <= 160).then_some(error)
}

/// The test pod a failed Helm test names: `… pod podinfo-grpc-test-x9k2 failed` (helm v4
/// pkg/kube/wait.go) or, from helm-controller's waiter, `failed early due to stalled
/// resources: [Pod/apps/podinfo-grpc-test-x9k2 status: 'Failed']`.
pub(super) fn failed_test_pod(message: &str) -> Option<String> {
    if let Some(wait) = waited_for(message) {
        let pod = wait.targets.iter().find_map(|t| t.strip_prefix("Pod/"))?;
        return Some(
            pod.rsplit_once('/')
                .map_or(pod, |(_, name)| name)
                .to_string(),
        );
    }
    let after = message.rsplit_once("pod ")?.1;
    after
        .strip_suffix(" failed")
        .map(|name| name.trim().to_string())
}

fn in_progress_reason(reason: &str) -> &'static str {
    match reason {
        "NewRevision" => "fetching a new revision",
        "IncludeChange" => "an included repository changed",
        "NewChart" => "building a new chart",
        "PendingRelease" => "Helm release pending",
        "AwaitingTests" => "awaiting Helm tests",
        _ => "replan requested",
    }
}

/// `no artifact available for include 'shared'` → `shared`.
fn include_name(message: &str) -> Option<&str> {
    let after = message.split_once("include '")?.1;
    Some(after.split_once('\'')?.0)
}

fn source_not_found(e: &Evidence) -> bool {
    let message = e.message.to_ascii_lowercase();
    message.contains("not found") && message.contains("source")
}

/// `timeout waiting for: [Deployment/default/podinfo status: 'InProgress']`
fn health_check(message: &str) -> String {
    match waited_for(message) {
        Some(wait) => format!("health check failed: {}", wait.targets.join(", ")),
        None => "health check failed".into(),
    }
}

/// What a kstatus wait gave up on, as kustomize-controller's health checks and helm-controller
/// v1's install/upgrade wait write it (helm-controller internal/reconcile install.go and
/// upgrade.go wrap the waiter's error): `failed early due to stalled resources:
/// [Deployment/ns/name status: 'Failed']` or `timeout waiting for: [Deployment/ns/name
/// status: 'InProgress', …]`.
pub(super) struct Wait {
    /// True when the resources stalled (kstatus Failed), false when time ran out.
    pub stalled: bool,
    /// `Kind/namespace/name` of each resource named.
    pub targets: Vec<String>,
}

pub(super) fn waited_for(message: &str) -> Option<Wait> {
    const STALLED: &str = "failed early due to stalled resources: [";
    const TIMEOUT: &str = "waiting for: [";
    let (stalled, list) = match message.split_once(STALLED) {
        Some((_, list)) => (true, list),
        None => (false, message.split_once(TIMEOUT)?.1),
    };
    let list = list.split_once(']').map_or(list, |(list, _)| list);
    let targets: Vec<String> = list
        .split(", ")
        .filter_map(|entry| entry.split(' ').next())
        .filter(|target| !target.is_empty())
        .map(str::to_string)
        .collect();
    (!targets.is_empty()).then_some(Wait { stalled, targets })
}

/// `Helm upgrade failed: Deployment/apps/podinfo stalled`, naming what the wait gave up on.
fn helm_wait(reason: &str, message: &str) -> String {
    let Some(wait) = waited_for(message) else {
        return helm_action(reason).into();
    };
    let how = if wait.stalled {
        "stalled"
    } else {
        "not ready in time"
    };
    format!("{}: {} {how}", helm_action(reason), wait.targets.join(", "))
}

fn helm_wait_timeout(e: &Evidence) -> bool {
    is_helm_action_failure(e.reason)
        && [
            "context deadline exceeded",
            "timed out waiting for the condition",
        ]
        .iter()
        .any(|marker| e.message.contains(marker))
}

fn is_helm_action_failure(reason: &str) -> bool {
    matches!(
        reason,
        "InstallFailed"
            | "UpgradeFailed"
            | "TestFailed"
            | "RollbackSucceeded"
            | "RollbackFailed"
            | "UninstallFailed"
    )
}

pub(super) fn helm_action(reason: &str) -> &'static str {
    match reason {
        "InstallFailed" => "Helm install failed",
        "TestFailed" => "Helm test failed",
        "RollbackSucceeded" => "Helm upgrade failed (rolled back)",
        "RollbackFailed" => "Helm upgrade failed and rollback failed",
        "UninstallFailed" => "Helm uninstall failed",
        _ => "Helm upgrade failed",
    }
}

fn is_fetch_failure(e: &Evidence) -> bool {
    e.kind.is_source() && (e.reason.ends_with("Failed") || matches!(e.reason, "ArtifactOutdated"))
}

fn build_failed(kind: Kind) -> String {
    match kind {
        Kind::HelmChart => "chart build failed".into(),
        _ => "build failed".into(),
    }
}

#[cfg(test)]
#[path = "classify_tests.rs"]
mod tests;
