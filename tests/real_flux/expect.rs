//! What fleetglass must say about each step of the real Flux scenarios. Shared by the live run
//! (tests/real_flux, on the verdicts the collector stored in Postgres) and the fixture tests
//! (tests/real_flux_fixtures.rs, on the objects that run saved), so the saved steps keep exactly
//! the verdicts the live run had.

use super::report::{CLUSTER, Report};

fn id(kind: &str, namespace: &str, name: &str) -> String {
    format!("{CLUSTER}/{kind}/{namespace}/{name}")
}

fn assert_state(report: &Report, kind: &str, namespace: &str, name: &str, want: &str) {
    let verdict = report.verdict(kind, namespace, name);
    assert_eq!(
        verdict["state"], want,
        "{kind} {namespace}/{name}: {verdict:#}"
    );
}

fn root_causes(report: &Report, kind: &str, namespace: &str, name: &str) -> Vec<String> {
    report.verdict(kind, namespace, name)["root_causes"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The ids of the report's root causes.
fn root_cause_ids(report: &Report) -> Vec<&str> {
    report.0["root_causes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["id"].as_str())
        .collect()
}

/// Step `healthy`: GitRepository → Kustomization infra → Kustomization apps (dependsOn infra)
/// → HelmRelease webapp, all reconciled by the real controllers.
pub fn healthy_chain(report: &Report, ns: &str, commit: &str) {
    for (kind, name) in [
        ("GitRepository", "fleet"),
        ("HelmRepository", "charts"),
        ("HelmChart", &format!("{ns}-webapp") as &str),
        ("Kustomization", "infra"),
        ("Kustomization", "apps"),
        ("HelmRelease", "webapp"),
        ("Deployment", "backend"),
        ("Deployment", "webapp"),
    ] {
        assert_state(report, kind, ns, name, "healthy");
    }
    assert!(
        report.0["root_causes"]
            .as_array()
            .is_some_and(Vec::is_empty),
        "{:#}",
        report.0["root_causes"]
    );
    let git = report.domain(&format!("{ns}-git"));
    assert_eq!(git["version"], &commit[..7], "{git:#}");
    assert_eq!(git["fully_healthy"], true, "{git:#}");
    let chart = report.domain(&format!("{ns}-chart"));
    assert_eq!(chart["version"], "1.2.0", "{chart:#}");
    assert_eq!(chart["fully_healthy"], true, "{chart:#}");
}

/// Step `broken-yaml`: a commit whose YAML does not parse.
pub fn broken_yaml(report: &Report, ns: &str) {
    let infra = report.verdict("Kustomization", ns, "infra");
    assert_eq!(infra["state"], "failed", "{infra:#}");
    assert_eq!(infra["reason"], "build failed", "{infra:#}");
    assert!(
        infra["message"]
            .as_str()
            .is_some_and(|m| m.contains("MalformedYAMLError")),
        "{infra:#}"
    );
    assert_state(report, "Kustomization", ns, "apps", "blocked");
    assert_eq!(
        root_causes(report, "Kustomization", ns, "apps"),
        [id("Kustomization", ns, "infra")]
    );
    let git = report.domain(&format!("{ns}-git"));
    assert_eq!(git["fully_healthy"], false, "{git:#}");
    assert!(
        git["blockers"].as_array().is_some_and(|b| b
            .iter()
            .any(|b| b == id("Kustomization", ns, "infra").as_str())),
        "{git:#}"
    );
}

/// Step `rollout-progressing`: a new commit whose health checks are still running; the
/// verdict names the revision tried and the one still applied.
pub fn progressing_rollout(report: &Report, ns: &str) {
    assert_state(report, "Kustomization", ns, "infra", "progressing");
    assert_revision_lag(report, ns);
}

/// lastAttemptedRevision ≠ lastAppliedRevision, reported in the Kustomization's verdict.
fn assert_revision_lag(report: &Report, ns: &str) {
    let infra = report.verdict("Kustomization", ns, "infra");
    let message = infra["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("attempting ") && message.contains(", last applied "),
        "{infra:#}"
    );
}

/// Step `rollout-stuck`: the same rollout past the 20s threshold. The Deployment that never
/// becomes available is the stuck root cause; the Kustomization waiting on it is blocked by it.
pub fn stuck_rollout(report: &Report, ns: &str) {
    let deployment = report.verdict("Deployment", ns, "never-ready");
    assert_eq!(deployment["state"], "stuck", "{deployment:#}");
    assert_state(report, "Kustomization", ns, "infra", "blocked");
    assert_eq!(
        root_causes(report, "Kustomization", ns, "infra"),
        [id("Deployment", ns, "never-ready")]
    );
    assert_revision_lag(report, ns);
}

const KUSTOMIZE_CONTROLLER: &str = "tb-1/Deployment/flux-system/kustomize-controller";

/// Step `controller-stopped`: kustomize-controller's process is gone and its Deployment has
/// no available replica; the source keeps its verdict (its controller runs).
pub fn controller_stopped(report: &Report, ns: &str) {
    for name in ["infra", "apps"] {
        assert_state(report, "Kustomization", ns, name, "unverifiable");
        assert_eq!(
            root_causes(report, "Kustomization", ns, name),
            [KUSTOMIZE_CONTROLLER]
        );
    }
    assert_state(report, "GitRepository", ns, "fleet", "healthy");
    assert_state(report, "HelmRelease", ns, "webapp", "healthy");
}

/// Step `controller-restarted`: the same objects, healthy again.
pub fn controller_restarted(report: &Report, ns: &str) {
    for name in ["infra", "apps"] {
        assert_state(report, "Kustomization", ns, name, "healthy");
    }
    assert_state(
        report,
        "Deployment",
        "flux-system",
        "kustomize-controller",
        "healthy",
    );
}

/// Step `admission-denied`: the API server's ValidatingAdmissionPolicy refused the apply.
pub fn admission_denied(report: &Report, ns: &str) {
    let infra = report.verdict("Kustomization", ns, "infra");
    assert_eq!(infra["state"], "failed", "{infra:#}");
    let text = format!("{} {}", infra["reason"], infra["message"]);
    assert!(text.contains("testbed-allowed-loadbalancers"), "{infra:#}");
}

/// Step `crash-loop`: the HelmRelease is Ready (installed fine) but its pod crash-loops.
pub fn crash_looping_release(report: &Report, ns: &str) {
    let release = report.verdict("HelmRelease", ns, "webapp");
    assert_eq!(release["state"], "degraded", "{release:#}");
    let causes = root_causes(report, "HelmRelease", ns, "webapp");
    assert!(
        causes
            .iter()
            .any(|c| c.starts_with(&format!("{CLUSTER}/Pod/{ns}/webapp-"))
                || *c == id("Deployment", ns, "webapp")),
        "{release:#}"
    );
}

/// Step `shard-trap`: the HelmChart (main shard) cannot see its HelmRepository (shard apps).
pub fn shard_trap(report: &Report, ns: &str) {
    let chart_name = format!("{ns}-webapp");
    let chart = report.verdict("HelmChart", ns, &chart_name);
    assert_eq!(chart["state"], "failed", "{chart:#}");
    let reason = chart["reason"].as_str().unwrap_or_default();
    assert_eq!(
        reason,
        format!(
            "source HelmRepository {ns}/charts not found by source-controller: the source is on \
             shard \"apps\", this HelmChart on the main shard (sharding.fluxcd.io/key differs)"
        ),
        "{chart:#}"
    );
    let chart_id = id("HelmChart", ns, &chart_name);
    assert_eq!(
        root_causes(report, "HelmChart", ns, &chart_name),
        [chart_id.as_str()]
    );
    assert_state(report, "HelmRelease", ns, "webapp", "blocked");
    assert_eq!(
        root_causes(report, "HelmRelease", ns, "webapp"),
        [chart_id.as_str()]
    );
    assert_state(report, "HelmRepository", ns, "charts", "healthy");
    assert_state(
        report,
        "Deployment",
        "flux-system",
        "source-controller-apps",
        "healthy",
    );
    assert_eq!(
        root_cause_ids(report),
        [chart_id.as_str()],
        "one root cause, not two"
    );
}

/// Step `wait-failed`: the install's wait gave up on the Deployment (stalled or timed out)
/// while its pod crash-loops: the Deployment is the one root cause, the release failed by it.
pub fn wait_failed_over_crash_loop(report: &Report, ns: &str) {
    let workload = id("Deployment", ns, "webapp");
    let deployment = report.verdict("Deployment", ns, "webapp");
    assert_eq!(deployment["state"], "failed", "{deployment:#}");
    let release = report.verdict("HelmRelease", ns, "webapp");
    assert_eq!(release["state"], "failed", "{release:#}");
    let reason = release["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with(&format!("Helm install failed: Deployment/{ns}/webapp ")),
        "{release:#}"
    );
    assert_eq!(
        root_causes(report, "HelmRelease", ns, "webapp"),
        [workload.as_str()]
    );
    assert_eq!(
        root_cause_ids(report),
        [workload.as_str()],
        "one root cause"
    );
}

fn reason<'r>(report: &'r Report, kind: &str, namespace: &str, name: &str) -> &'r str {
    report.verdict(kind, namespace, name)["reason"]
        .as_str()
        .unwrap_or_default()
}

/// Step `path-not-found`: the Kustomization is failed naming the path, its own root cause.
pub fn path_not_found(report: &Report, ns: &str) {
    assert_state(report, "Kustomization", ns, "lost", "failed");
    let why = reason(report, "Kustomization", ns, "lost");
    assert!(why.starts_with("kustomization path not found"), "{why}");
    assert!(why.contains("nowhere"), "{why}");
    assert_eq!(
        root_causes(report, "Kustomization", ns, "lost"),
        [id("Kustomization", ns, "lost")]
    );
    assert_state(report, "GitRepository", ns, "fleet", "healthy");
}

/// Step `same-source-dependency`: apps is blocked by infra, suspended behind the source.
pub fn held_by_suspended_dependency(report: &Report, ns: &str) {
    assert_state(report, "Kustomization", ns, "infra", "suspended");
    assert_state(report, "Kustomization", ns, "apps", "blocked");
    assert_eq!(
        root_causes(report, "Kustomization", ns, "apps"),
        [id("Kustomization", ns, "infra")]
    );
    assert!(root_cause_ids(report).contains(&id("Kustomization", ns, "infra").as_str()));
}

/// Step `include-without-artifact`: `shared` the one root cause of `app` and its consumer.
pub fn include_without_artifact(report: &Report, ns: &str) {
    assert_state(report, "GitRepository", ns, "shared", "failed");
    let shared = id("GitRepository", ns, "shared");
    for (kind, name) in [("GitRepository", "app"), ("Kustomization", "apps")] {
        assert_state(report, kind, ns, name, "blocked");
        assert_eq!(
            root_causes(report, kind, ns, name),
            std::slice::from_ref(&shared),
            "{kind} {name}"
        );
    }
    assert_eq!(root_cause_ids(report), [shared.as_str()]);
}

/// Step `inventory-complete`: the release and its Deployment are healthy.
pub fn release_healthy(report: &Report, ns: &str) {
    assert_state(report, "HelmRelease", ns, "webapp", "healthy");
    assert_state(report, "Deployment", ns, "webapp", "healthy");
}

/// Step `inventory-deleted`: the release is degraded naming the Deployment it lost.
pub fn inventory_deleted(report: &Report, ns: &str) {
    assert_state(report, "HelmRelease", ns, "webapp", "degraded");
    assert_eq!(
        reason(report, "HelmRelease", ns, "webapp"),
        format!("inventory object Deployment {ns}/webapp not found")
    );
    assert_eq!(
        root_causes(report, "HelmRelease", ns, "webapp"),
        [id("HelmRelease", ns, "webapp")]
    );
}

/// Step `invalid-ready-expr`: apps failed naming its dependency's readyExpr.
pub fn invalid_ready_expr(report: &Report, ns: &str) {
    assert_state(report, "Kustomization", ns, "apps", "failed");
    assert_eq!(
        reason(report, "Kustomization", ns, "apps"),
        "invalid readyExpr on dependency infra"
    );
    assert_eq!(
        root_causes(report, "Kustomization", ns, "apps"),
        [id("Kustomization", ns, "apps")]
    );
}

/// Step `rollback-hides-failure`: failed, naming the policy that denied the upgrade.
pub fn rollback_hides_failure(report: &Report, ns: &str) {
    assert_state(report, "HelmRelease", ns, "webapp", "failed");
    let why = reason(report, "HelmRelease", ns, "webapp");
    assert!(
        why.contains(&format!(
            "admission denied by ValidatingAdmissionPolicy {ns}-replicas"
        )) && why.contains("rolled back"),
        "{why}"
    );
}

/// Step `uninstall-forbidden`: being deleted, stuck past the threshold on the uninstall's
/// error. Helm v4 (helm-controller v1.6.4) reports a resource it could not delete only as
/// "failed to delete release: <name>" (pkg/action/uninstall.go); the RBAC refusal itself is in
/// its debug log, not in any condition.
pub fn uninstall_forbidden(report: &Report, ns: &str) {
    assert_state(report, "HelmRelease", ns, "webapp", "stuck");
    let why = reason(report, "HelmRelease", ns, "webapp");
    assert!(
        why.contains("being deleted: Helm uninstall failed: failed to delete release: webapp"),
        "{why}"
    );
    assert_eq!(
        root_causes(report, "HelmRelease", ns, "webapp"),
        [id("HelmRelease", ns, "webapp")]
    );
}

/// Step `job-failed`: the Job is the root cause with its pod's words; infra is blocked by it.
pub fn job_failed(report: &Report, ns: &str) {
    assert_state(report, "Job", ns, "migrate", "failed");
    let why = reason(report, "Job", ns, "migrate");
    assert!(
        why.starts_with("BackoffLimitExceeded")
            && why.contains("relation \"users\" already exists"),
        "{why}"
    );
    let job = id("Job", ns, "migrate");
    assert!(root_cause_ids(report).contains(&job.as_str()));
    assert_eq!(root_causes(report, "Kustomization", ns, "infra"), [job]);
}
