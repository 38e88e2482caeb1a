//! `fleetglass evaluate` end to end on the Flux rules (issue 16, rules 9–15): controllers,
//! shards, releases, sources, Terraform and suspensions, with objects shaped as the
//! controllers write them and read the way `kubectl get -o yaml` prints them.

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

const NOW: &str = "2026-11-29T12:00:00Z";
const SHA: &str = "main@sha1:1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const NEW_SHA: &str = "main@sha1:2222222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

/// A Flux controller's Deployment in flux-system with `available` of 1 replica available.
fn controller(name: &str, available: u8) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: flux-system
  generation: 1
  labels: {{app.kubernetes.io/part-of: flux, app.kubernetes.io/component: {name}}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec: {{containers: [{{name: manager, image: "ghcr.io/fluxcd/{name}:v1.0.0"}}]}}
status:
  observedGeneration: 1
  replicas: 1
  readyReplicas: {available}
  availableReplicas: {available}
  updatedReplicas: 1
---
"#
    )
}

/// A pod of Deployment `app` crash-looping, as a kubelet writes it.
fn crash_looping_pod(namespace: &str, app: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: Pod
metadata:
  name: {app}-7c9d8b5f4-x2x7k
  namespace: {namespace}
  labels: {{app: {app}, pod-template-hash: 7c9d8b5f4}}
  ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: {app}-7c9d8b5f4, controller: true}}]
spec:
  containers: [{{name: manager, image: "ghcr.io/example/{app}:v1.0.0"}}]
status:
  phase: Running
  startTime: "2026-11-29T11:30:00Z"
  conditions:
    - {{type: Ready, status: "False", reason: ContainersNotReady, message: "containers with unready status: [manager]", lastTransitionTime: "2026-11-29T11:30:10Z"}}
  containerStatuses:
    - name: manager
      ready: false
      restartCount: 7
      image: "ghcr.io/example/{app}:v1.0.0"
      state: {{waiting: {{reason: CrashLoopBackOff, message: "back-off 5m0s restarting failed container=manager pod={app}-7c9d8b5f4-x2x7k_{namespace}"}}}}
      lastState: {{terminated: {{exitCode: 1, reason: Error, finishedAt: "2026-11-29T11:55:00Z"}}}}
---
"#
    )
}

fn helm_repository(labels: &str) -> String {
    format!(
        r#"apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {{name: podinfo, namespace: flux-system, generation: 1, labels: {{{labels}}}}}
spec: {{interval: 1h, url: "https://stefanprodan.github.io/podinfo"}}
status:
  observedGeneration: 1
  artifact: {{revision: "sha256:0123456789abcdef", lastUpdateTime: "2026-11-29T08:00:00Z"}}
  conditions:
    - {{type: Ready, status: "True", reason: Succeeded, message: "stored artifact: revision 'sha256:0123456789abcdef'", lastTransitionTime: "2026-11-29T08:00:00Z", observedGeneration: 1}}
---
"#
    )
}

/// The HelmChart helm-controller created for release apps/podinfo, with `status`.
fn helm_chart(status: &str) -> String {
    format!(
        r#"apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmChart
metadata:
  name: apps-podinfo
  namespace: flux-system
  generation: 1
  labels: {{helm.toolkit.fluxcd.io/name: podinfo, helm.toolkit.fluxcd.io/namespace: apps}}
spec:
  chart: podinfo
  version: "6.x"
  interval: 1h
  sourceRef: {{kind: HelmRepository, name: podinfo}}
status:
{status}
---
"#
    )
}

const CHART_READY: &str = r#"  observedGeneration: 1
  artifact: {revision: "6.0.3", lastUpdateTime: "2026-11-29T09:00:00Z"}
  conditions:
    - {type: Ready, status: "True", reason: ChartPullSucceeded, message: "pulled 'podinfo' chart with version '6.0.3'", lastTransitionTime: "2026-11-29T09:00:00Z", observedGeneration: 1}"#;

/// HelmRelease apps/podinfo (`api` version) with `status`.
fn helm_release(api: &str, labels: &str, status: &str) -> String {
    format!(
        r#"apiVersion: helm.toolkit.fluxcd.io/{api}
kind: HelmRelease
metadata: {{name: podinfo, namespace: apps, generation: 1, labels: {{{labels}}}}}
spec:
  interval: 30m
  chart:
    spec:
      chart: podinfo
      version: "6.x"
      sourceRef: {{kind: HelmRepository, name: podinfo, namespace: flux-system}}
status:
  observedGeneration: 1
  helmChart: flux-system/apps-podinfo
{status}
---
"#
    )
}

const RELEASE_READY: &str = r#"  lastAttemptedRevision: "6.0.3"
  history: [{chartName: podinfo, chartVersion: "6.0.3", status: deployed, version: 2}]
  conditions:
    - {type: Ready, status: "True", reason: UpgradeSucceeded, message: "Helm upgrade succeeded for release apps/podinfo.v2 with chart podinfo@6.0.3", lastTransitionTime: "2026-11-29T09:05:00Z", observedGeneration: 1}"#;

/// podinfo's Deployment as helm-controller labels what it installs, none available.
const PODINFO_UNAVAILABLE: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: podinfo
  namespace: apps
  generation: 2
  labels: {app: podinfo, helm.toolkit.fluxcd.io/name: podinfo, helm.toolkit.fluxcd.io/namespace: apps}
spec:
  replicas: 1
  selector: {matchLabels: {app: podinfo}}
  template:
    metadata: {labels: {app: podinfo}}
    spec: {containers: [{name: manager, image: "ghcr.io/example/podinfo:v1.0.0"}]}
status:
  observedGeneration: 2
  replicas: 1
  updatedReplicas: 1
  unavailableReplicas: 1
  conditions:
    - {type: Available, status: "False", reason: MinimumReplicasUnavailable, message: "Deployment does not have minimum availability.", lastTransitionTime: "2026-11-29T11:30:00Z"}
---
"#;

fn git_repository(revision: &str) -> String {
    format!(
        r#"apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {{name: flux-system, namespace: flux-system, generation: 1}}
spec: {{interval: 1m, url: "https://git.example/fleet", ref: {{branch: main}}}}
status:
  observedGeneration: 1
  artifact: {{revision: "{revision}", lastUpdateTime: "2026-11-29T08:00:00Z"}}
  conditions:
    - {{type: Ready, status: "True", reason: Succeeded, message: "stored artifact for revision '{revision}'", lastTransitionTime: "2026-11-29T08:00:00Z", observedGeneration: 1}}
---
"#
    )
}

/// Kustomization `name` in flux-system with `extra_spec` lines and `status`.
fn kustomization(name: &str, extra_spec: &str, status: &str) -> String {
    format!(
        r#"apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: {name}, namespace: flux-system, generation: 1}}
spec:
  interval: 10m
  path: ./{name}
  prune: true
  sourceRef: {{kind: GitRepository, name: flux-system}}
{extra_spec}
status:
  observedGeneration: 1
{status}
---
"#
    )
}

fn applied(revision: &str) -> String {
    format!(
        r#"  lastAttemptedRevision: "{revision}"
  lastAppliedRevision: "{revision}"
  conditions:
    - {{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: {revision}", lastTransitionTime: "2026-11-29T08:10:00Z", observedGeneration: 1}}"#
    )
}

/// A status holding only Ready=False with `reason` and `message` since `at` (11:00 on the day).
fn not_ready(reason: &str, message: &str, at: &str) -> String {
    format!(
        r#"  conditions:
    - {{type: Ready, status: "False", reason: {reason}, message: "{message}", lastTransitionTime: "2026-11-29T{at}:00Z", observedGeneration: 1}}"#
    )
}

fn evaluate(yaml: &str) -> Value {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fleetglass"))
        .args(["evaluate", "--now", NOW, "--cluster", "prod", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fleetglass evaluate");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(yaml.as_bytes())
        .expect("write objects");
    let output = child.wait_with_output().expect("fleetglass evaluate");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("evaluate prints JSON")
}

fn verdict<'r>(report: &'r Value, id: &str) -> &'r Value {
    report["objects"]
        .as_array()
        .and_then(|objects| objects.iter().find(|o| o["id"] == id))
        .unwrap_or_else(|| panic!("no verdict for {id}: {:#}", report["objects"]))
}

fn root_cause_ids(report: &Value) -> Vec<&str> {
    report["root_causes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["id"].as_str())
        .collect()
}

#[test]
fn rule_9_an_absent_or_crash_looping_controller_is_the_root_cause() {
    let release = helm_release("v2", "", RELEASE_READY);
    let absent = [
        controller("source-controller", 1),
        controller("kustomize-controller", 1),
        helm_repository(""),
        helm_chart(CHART_READY),
        release.clone(),
    ]
    .concat();
    let report = evaluate(&absent);
    let id = "prod/Deployment/flux-system/helm-controller";
    let release_verdict = verdict(&report, "prod/HelmRelease/apps/podinfo");
    assert_eq!(
        release_verdict["state"], "unverifiable",
        "{release_verdict:#}"
    );
    assert_eq!(release_verdict["root_causes"], serde_json::json!([id]));
    assert_eq!(root_cause_ids(&report), [id]);
    assert_eq!(report["root_causes"][0]["state"], "failed");

    let crashing = [
        controller("source-controller", 1),
        controller("helm-controller", 1),
        crash_looping_pod("flux-system", "helm-controller"),
        helm_repository(""),
        helm_chart(CHART_READY),
        release,
    ]
    .concat();
    let report = evaluate(&crashing);
    let release_verdict = verdict(&report, "prod/HelmRelease/apps/podinfo");
    assert_eq!(
        release_verdict["state"], "unverifiable",
        "{release_verdict:#}"
    );
    assert_eq!(release_verdict["root_causes"], serde_json::json!([id]));
}

#[test]
fn rule_10_a_sharded_repository_behind_an_unlabelled_chart_is_one_root_cause() {
    let not_found =
        r#"failed to get source: HelmRepository.source.toolkit.fluxcd.io \"podinfo\" not found"#;
    let chart = helm_chart(&format!(
        r#"  observedGeneration: -1
  conditions:
    - {{type: Ready, status: "False", reason: SourceUnavailable, message: "{not_found}", lastTransitionTime: "2026-11-29T11:00:00Z", observedGeneration: 1}}
    - {{type: FetchFailed, status: "True", reason: SourceUnavailable, message: "{not_found}", lastTransitionTime: "2026-11-29T11:00:00Z", observedGeneration: 1}}"#
    ));
    let release = helm_release(
        "v2",
        "",
        &not_ready(
            "SourceNotReady",
            &format!("HelmChart 'flux-system/apps-podinfo' is not ready: {not_found}"),
            "11:00",
        ),
    );
    let yaml = [
        controller("source-controller", 1),
        controller("source-controller-apps", 1),
        controller("helm-controller", 1),
        helm_repository("sharding.fluxcd.io/key: apps"),
        chart,
        release,
    ]
    .concat();
    let report = evaluate(&yaml);
    let chart_id = "prod/HelmChart/flux-system/apps-podinfo";
    let chart = verdict(&report, chart_id);
    assert_eq!(chart["state"], "failed", "{chart:#}");
    assert!(
        chart["reason"]
            .as_str()
            .is_some_and(|r| r.contains("on shard \"apps\", this HelmChart on the main shard")),
        "{chart:#}"
    );
    let release = verdict(&report, "prod/HelmRelease/apps/podinfo");
    assert_eq!(release["state"], "blocked", "{release:#}");
    assert_eq!(release["root_causes"], serde_json::json!([chart_id]));
    assert_eq!(root_cause_ids(&report), [chart_id]);
}

/// Cross-shard dependsOn works since kustomize-controller v1.4 (it reads through the API
/// reader, not the shard cache), so it is no fault of its own.
#[test]
fn rule_10_depends_on_across_shards_is_judged_like_any_dependency() {
    let yaml = [
        controller("source-controller", 1),
        controller("kustomize-controller", 1),
        controller("kustomize-controller-apps", 1),
        git_repository(SHA),
        kustomization("infra", "", &applied(SHA)),
        kustomization("apps", "  dependsOn: [{name: infra}]", &applied(SHA)).replace(
            "metadata: {name: apps, namespace: flux-system, generation: 1}",
            "metadata: {name: apps, namespace: flux-system, generation: 1, labels: {sharding.fluxcd.io/key: apps}}",
        ),
    ]
    .concat();
    let report = evaluate(&yaml);
    // kustomize-controller@v1.9.6 checkDependencies reads the dependency uncached.
    for name in ["apps", "infra"] {
        let id = format!("prod/Kustomization/flux-system/{name}");
        assert_eq!(verdict(&report, &id)["state"], "healthy", "{id}");
    }
}

#[test]
fn rule_11_retries_exhausted_over_a_crash_looping_workload_names_the_workload() {
    let failure = "Helm upgrade failed for release apps/podinfo with chart podinfo@6.0.3: failed early due to stalled resources: [Deployment/apps/podinfo status: 'Failed']";
    let release = helm_release(
        "v2",
        "",
        &format!(
            r#"  lastAttemptedRevision: "6.0.3"
  history: [{{chartName: podinfo, chartVersion: "6.0.3", status: failed, version: 3}}, {{chartName: podinfo, chartVersion: "6.0.2", status: superseded, version: 2}}]
  upgradeFailures: 1
  conditions:
    - {{type: Stalled, status: "True", reason: RetriesExceeded, message: "Failed to upgrade after 1 attempt(s)", lastTransitionTime: "2026-11-29T11:40:00Z", observedGeneration: 1}}
    - {{type: Ready, status: "False", reason: UpgradeFailed, message: "{failure}", lastTransitionTime: "2026-11-29T11:40:00Z", observedGeneration: 1}}
    - {{type: Released, status: "False", reason: UpgradeFailed, message: "{failure}", lastTransitionTime: "2026-11-29T11:40:00Z", observedGeneration: 1}}"#
        ),
    );
    let yaml = [
        controller("source-controller", 1),
        controller("helm-controller", 1),
        helm_repository(""),
        helm_chart(CHART_READY),
        release,
        PODINFO_UNAVAILABLE.to_string(),
        crash_looping_pod("apps", "podinfo"),
    ]
    .concat();
    let report = evaluate(&yaml);
    let workload = "prod/Deployment/apps/podinfo";
    let release = verdict(&report, "prod/HelmRelease/apps/podinfo");
    assert_eq!(release["state"], "failed", "{release:#}");
    assert_eq!(
        release["reason"],
        "Helm upgrade failed: Deployment/apps/podinfo stalled (retries exhausted)"
    );
    assert!(
        release["message"]
            .as_str()
            .is_some_and(|m| m.contains(failure)),
        "{release:#}"
    );
    assert_eq!(release["root_causes"], serde_json::json!([workload]));
    assert_eq!(root_cause_ids(&report), [workload]);
}

#[test]
fn rule_12_older_versions_waiting_reasons_are_blocked() {
    let failing_chart = helm_chart(&not_ready(
        "ChartPullFailed",
        "chart pull error: no 'podinfo' chart with version matching '9.x' found",
        "11:00",
    ));
    let release = helm_release(
        "v2beta2",
        "",
        &not_ready(
            "HelmChartNotReady",
            "HelmChart 'flux-system/apps-podinfo' is not ready",
            "11:00",
        ),
    );
    let yaml = [
        controller("source-controller", 1),
        controller("helm-controller", 1),
        helm_repository(""),
        failing_chart,
        release,
    ]
    .concat();
    let report = evaluate(&yaml);
    let release = verdict(&report, "prod/HelmRelease/apps/podinfo");
    assert_eq!(release["state"], "blocked", "{release:#}");
    assert_eq!(
        release["root_causes"],
        serde_json::json!(["prod/HelmChart/flux-system/apps-podinfo"])
    );
}

#[test]
fn rule_13_a_release_behind_its_chart_is_stuck_and_external_artifacts_are_sources() {
    let behind = helm_release("v2", "", &RELEASE_READY.replace("6.0.3", "6.0.2"));
    let yaml = [
        controller("source-controller", 1),
        controller("helm-controller", 1),
        helm_repository(""),
        helm_chart(CHART_READY),
        behind,
    ]
    .concat();
    let report = evaluate(&yaml);
    let release = verdict(&report, "prod/HelmRelease/apps/podinfo");
    assert_eq!(release["state"], "stuck", "{release:#}");
    assert_eq!(
        release["reason"],
        "stuck for 3h: chart 6.0.3 offered, 6.0.2 deployed"
    );

    let artifact = format!(
        r#"apiVersion: source.toolkit.fluxcd.io/v1
kind: ExternalArtifact
metadata: {{name: platform, namespace: flux-system, generation: 1}}
spec:
  sourceRef: {{apiVersion: source.extensions.fluxcd.io/v1beta1, kind: ArtifactGenerator, name: platform, namespace: flux-system}}
status:
  artifact: {{revision: "{NEW_SHA}", digest: "sha256:9f2b", lastUpdateTime: "2026-11-29T09:00:00Z", path: "externalartifact/flux-system/platform/9f2b.tar.gz", url: "http://source-watcher.flux-system.svc.cluster.local./externalartifact/flux-system/platform/9f2b.tar.gz"}}
  conditions:
    - {{type: Ready, status: "True", reason: Succeeded, message: "reconciliation succeeded", lastTransitionTime: "2026-11-29T09:00:00Z", observedGeneration: 1}}
---
"#
    );
    let consumer = kustomization("platform", "", &applied(SHA)).replace(
        "sourceRef: {kind: GitRepository, name: flux-system}",
        "sourceRef: {kind: ExternalArtifact, name: platform}",
    );
    let yaml = [
        controller("source-controller", 1),
        controller("kustomize-controller", 1),
        controller("source-watcher", 1),
        artifact,
        consumer,
    ]
    .concat();
    let report = evaluate(&yaml);
    assert_eq!(report["ignored"]["count"], 0, "{:#}", report["ignored"]);
    assert_eq!(
        verdict(&report, "prod/ExternalArtifact/flux-system/platform")["state"],
        "healthy"
    );
    let consumer = verdict(&report, "prod/Kustomization/flux-system/platform");
    assert_eq!(consumer["state"], "stuck", "{consumer:#}");
    assert_eq!(
        consumer["reason"],
        format!("stuck for 3h: source offers {NEW_SHA}, applied {SHA}")
    );
}

#[test]
fn rule_14_a_terraform_plan_without_changes_is_converged() {
    let terraform = format!(
        r#"apiVersion: infra.contrib.fluxcd.io/v1alpha2
kind: Terraform
metadata: {{name: nlb, namespace: flux-system, generation: 1}}
spec:
  interval: 12h
  path: ./nlb
  approvePlan: auto
  sourceRef: {{kind: GitRepository, name: flux-system}}
status:
  observedGeneration: 1
  lastAttemptedRevision: "{NEW_SHA}"
  lastPlannedRevision: "{NEW_SHA}"
  lastAppliedRevision: "{SHA}"
  plan: {{lastApplied: "plan-main-1111111aaa"}}
  conditions:
    - {{type: Ready, status: "True", reason: TerraformPlannedNoChanges, message: "Plan no changes: {NEW_SHA}", lastTransitionTime: "2026-11-29T11:00:00Z", observedGeneration: 1}}
    - {{type: Plan, status: "False", reason: TerraformPlannedNoChanges, message: "Plan no changes", lastTransitionTime: "2026-11-29T11:00:00Z"}}
---
"#
    );
    let yaml = [
        controller("source-controller", 1),
        controller("tofu-controller", 1),
        git_repository(NEW_SHA),
        terraform,
    ]
    .concat();
    let report = evaluate(&yaml);
    let verdict = verdict(&report, "prod/Terraform/flux-system/nlb");
    assert_eq!(verdict["state"], "healthy", "{verdict:#}");
    assert_eq!(root_cause_ids(&report), Vec::<&str>::new());
}

#[test]
fn rule_15_a_suspension_is_the_root_cause_only_of_what_waits_on_it() {
    let suspended = kustomization(
        "infra",
        "  suspend: true",
        &not_ready(
            "HealthCheckFailed",
            "health check failed after 4m30s: timeout waiting for: [Deployment/infra/ingress status: 'InProgress']",
            "07:00",
        ),
    );
    let waiting = kustomization(
        "apps",
        "  dependsOn: [{name: infra}]",
        &not_ready(
            "DependencyNotReady",
            "dependency 'flux-system/infra' is not ready",
            "10:00",
        ),
    );
    let base = [
        controller("source-controller", 1),
        controller("kustomize-controller", 1),
        git_repository(SHA),
        suspended,
    ]
    .concat();
    let report = evaluate(&format!("{base}{waiting}"));
    let infra = "prod/Kustomization/flux-system/infra";
    assert_eq!(verdict(&report, infra)["state"], "suspended");
    let apps = verdict(&report, "prod/Kustomization/flux-system/apps");
    assert_eq!(apps["state"], "blocked", "{apps:#}");
    assert_eq!(apps["root_causes"], serde_json::json!([infra]));
    assert_eq!(root_cause_ids(&report), [infra]);

    let alone = evaluate(&base);
    assert_eq!(verdict(&alone, infra)["state"], "suspended");
    assert_eq!(root_cause_ids(&alone), Vec::<&str>::new());
}

/// Held-out shapes (issue 16, round two): the same rules on kinds, API versions and
/// arguments the cases above do not use.
///
/// Rule 9: a controller that reports 1/1 available while its pod runs between OOM kills (the
/// kubelet restarts it and marks it Ready again for seconds) is not available.
#[test]
fn rule_9_a_controller_running_between_oom_kills_is_the_root_cause() {
    let pod = r#"apiVersion: v1
kind: Pod
metadata:
  name: helm-controller-5b8f9c7d6-q2w3e
  namespace: flux-system
  labels: {app: helm-controller, pod-template-hash: 5b8f9c7d6}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: helm-controller-5b8f9c7d6, controller: true}]
spec: {containers: [{name: manager, image: "ghcr.io/fluxcd/helm-controller:v1.4.0"}]}
status:
  phase: Running
  startTime: "2026-11-29T10:00:00Z"
  conditions:
    - {type: Ready, status: "True", lastTransitionTime: "2026-11-29T11:59:30Z"}
  containerStatuses:
    - name: manager
      ready: true
      restartCount: 14
      state: {running: {startedAt: "2026-11-29T11:59:10Z"}}
      lastState: {terminated: {exitCode: 137, reason: OOMKilled, startedAt: "2026-11-29T11:55:00Z", finishedAt: "2026-11-29T11:59:00Z"}}
---
"#;
    let yaml = [
        controller("source-controller", 1),
        controller("helm-controller", 1),
        pod.to_string(),
        helm_repository(""),
        helm_chart(CHART_READY),
        helm_release("v2", "", RELEASE_READY),
    ]
    .concat();
    let report = evaluate(&yaml);
    let id = "prod/Deployment/flux-system/helm-controller";
    let release = verdict(&report, "prod/HelmRelease/apps/podinfo");
    assert_eq!(release["state"], "unverifiable", "{release:#}");
    assert_eq!(release["root_causes"], serde_json::json!([id]));
    assert_eq!(root_cause_ids(&report), [id]);
}

/// Rule 10 with shards selected by `key=value` rather than `key in (value)`: the shard whose
/// controller is down has its Kustomization unverifiable; the main shard and the other shard
/// stay green.
#[test]
fn rule_10_a_shard_selected_by_equality_that_is_down_leaves_the_other_shards_green() {
    let sharded = |shard: &str, available: u8| {
        controller(&format!("kustomize-controller-{shard}"), available).replace(
            "name: manager, image:",
            &format!(
                "name: manager, args: [\"--watch-label-selector=sharding.fluxcd.io/key={shard}\"], image:"
            ),
        )
    };
    let labelled = |name: &str| {
        kustomization(name, "", &applied(SHA)).replace(
            &format!("metadata: {{name: {name}, namespace: flux-system, generation: 1}}"),
            &format!("metadata: {{name: {name}, namespace: flux-system, generation: 1, labels: {{sharding.fluxcd.io/key: {name}}}}}"),
        )
    };
    // The main shard ignores every labelled object (Flux's sharding guide).
    let main = controller("kustomize-controller", 1).replace(
        "name: manager, image:",
        "name: manager, args: [\"--watch-label-selector=!sharding.fluxcd.io/key\"], image:",
    );
    let yaml = [
        controller("source-controller", 1),
        main,
        sharded("shard1", 1),
        sharded("shard2", 0),
        git_repository(SHA),
        kustomization("main", "", &applied(SHA)),
        labelled("shard1"),
        labelled("shard2"),
    ]
    .concat();
    let report = evaluate(&yaml);
    let down = "prod/Deployment/flux-system/kustomize-controller-shard2";
    let shard2 = verdict(&report, "prod/Kustomization/flux-system/shard2");
    assert_eq!(shard2["state"], "unverifiable", "{shard2:#}");
    assert_eq!(shard2["root_causes"], serde_json::json!([down]));
    for green in ["main", "shard1"] {
        let id = format!("prod/Kustomization/flux-system/{green}");
        assert_eq!(verdict(&report, &id)["state"], "healthy", "{id}");
    }
    assert_eq!(root_cause_ids(&report), [down]);
}

/// Rule 11 on helm.toolkit.fluxcd.io/v2beta2 over a StatefulSet: the upgrade's wait ended in
/// "context deadline exceeded" and retries are exhausted (Stalled=True, RetriesExceeded) while
/// the new revision's pod crash-loops: the StatefulSet is the one root cause.
#[test]
fn rule_11_a_v2beta2_release_timed_out_over_a_crash_looping_statefulset_names_it() {
    let failure = "Helm upgrade failed for release apps/podinfo with chart podinfo@6.0.3: context deadline exceeded";
    let release = helm_release(
        "v2beta2",
        "",
        &format!(
            r#"  lastAttemptedRevision: "6.0.3"
  failures: 4
  upgradeFailures: 4
  history: [{{chartName: podinfo, chartVersion: "6.0.3", status: failed, version: 6}}, {{chartName: podinfo, chartVersion: "6.0.2", status: superseded, version: 5}}]
  conditions:
    - {{type: Ready, status: "False", reason: UpgradeFailed, message: "{failure}", lastTransitionTime: "2026-11-29T11:30:00Z", observedGeneration: 1}}
    - {{type: Released, status: "False", reason: UpgradeFailed, message: "{failure}", lastTransitionTime: "2026-11-29T11:30:00Z", observedGeneration: 1}}
    - {{type: Stalled, status: "True", reason: RetriesExceeded, message: "Failed to upgrade after 4 attempt(s)", lastTransitionTime: "2026-11-29T11:30:00Z", observedGeneration: 1}}"#
        ),
    );
    // An updated pod of a RollingUpdate StatefulSet: one of two on the new revision.
    let statefulset = r#"apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: podinfo
  namespace: apps
  generation: 5
  labels: {app: podinfo, helm.toolkit.fluxcd.io/name: podinfo, helm.toolkit.fluxcd.io/namespace: apps}
spec:
  replicas: 2
  serviceName: podinfo
  selector: {matchLabels: {app: podinfo}}
  template: {metadata: {labels: {app: podinfo}}, spec: {containers: [{name: app, image: "ghcr.io/example/podinfo:v3"}]}}
status: {observedGeneration: 5, replicas: 2, readyReplicas: 1, availableReplicas: 1, currentReplicas: 1, updatedReplicas: 1, currentRevision: podinfo-5d4c, updateRevision: podinfo-6e5f}
---
apiVersion: v1
kind: Pod
metadata:
  name: podinfo-1
  namespace: apps
  labels: {app: podinfo, controller-revision-hash: podinfo-6e5f, statefulset.kubernetes.io/pod-name: podinfo-1}
  creationTimestamp: "2026-11-29T11:20:00Z"
  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: podinfo, controller: true}]
spec: {restartPolicy: Always, containers: [{name: app, image: "ghcr.io/example/podinfo:v3"}]}
status:
  phase: Running
  startTime: "2026-11-29T11:20:00Z"
  conditions:
    - {type: Ready, status: "False", reason: ContainersNotReady, message: "containers with unready status: [app]", lastTransitionTime: "2026-11-29T11:20:00Z"}
  containerStatuses:
    - name: app
      ready: false
      restartCount: 9
      state: {waiting: {reason: CrashLoopBackOff, message: "back-off 5m0s restarting failed container=app pod=podinfo-1_apps(5)"}}
      lastState: {terminated: {exitCode: 2, reason: Error, message: "panic: missing DATABASE_URL", startedAt: "2026-11-29T11:54:00Z", finishedAt: "2026-11-29T11:54:01Z"}}
---
"#;
    let yaml = [
        controller("source-controller", 1),
        controller("helm-controller", 1),
        helm_repository(""),
        helm_chart(CHART_READY),
        release,
        statefulset.to_string(),
    ]
    .concat();
    let report = evaluate(&yaml);
    let workload = "prod/StatefulSet/apps/podinfo";
    assert_eq!(
        verdict(&report, workload)["reason"],
        "1/1 pods failing: podinfo-1: CrashLoopBackOff: panic: missing DATABASE_URL"
    );
    let release = verdict(&report, "prod/HelmRelease/apps/podinfo");
    assert_eq!(release["state"], "failed", "{release:#}");
    assert_eq!(release["root_causes"], serde_json::json!([workload]));
    assert_eq!(root_cause_ids(&report), [workload]);
}

/// An OCIRepository offering podinfo's chart as a helm.toolkit.fluxcd.io/v2 `chartRef`.
fn oci_chart(revision: &str) -> String {
    format!(
        r#"apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {{name: podinfo, namespace: apps, generation: 1}}
spec: {{interval: 10m, url: "oci://ghcr.io/stefanprodan/charts/podinfo", ref: {{semver: ">=6.0.0"}}}}
status:
  observedGeneration: 1
  artifact: {{revision: "{revision}", digest: "sha256:1234", lastUpdateTime: "2026-11-29T09:00:00Z"}}
  conditions:
    - {{type: Ready, status: "True", reason: Succeeded, message: "stored artifact for digest '{revision}'", lastTransitionTime: "2026-11-29T09:00:00Z", observedGeneration: 1}}
---
"#
    )
}

/// HelmRelease apps/`name` from the OCIRepository, with `extra_spec` and `status`.
fn chart_ref_release(name: &str, extra_spec: &str, status: &str) -> String {
    format!(
        r#"apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {{name: {name}, namespace: apps, generation: 1}}
spec:
  interval: 10m
  chartRef: {{kind: OCIRepository, name: podinfo}}
{extra_spec}
status:
  observedGeneration: 1
{status}
---
"#
    )
}

const DIGEST_A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const DIGEST_B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

/// What helm-controller writes after deploying the chart at `6.7.0@sha256:<DIGEST_A>`: the
/// version carries the digest's first 12 hex as build metadata (mutateChartWithSourceRevision).
fn deployed_from_oci() -> String {
    format!(
        r#"  lastAttemptedRevision: "6.7.0+aaaaaaaaaaaa"
  lastAttemptedRevisionDigest: "sha256:{DIGEST_A}"
  history: [{{chartName: podinfo, chartVersion: "6.7.0+aaaaaaaaaaaa", status: deployed, version: 3, ociDigest: "sha256:{DIGEST_A}"}}]
  conditions:
    - {{type: Ready, status: "True", reason: UpgradeSucceeded, message: "Helm upgrade succeeded for release apps/podinfo.v3 with chart podinfo@6.7.0+aaaaaaaaaaaa", lastTransitionTime: "2026-11-20T09:00:00Z", observedGeneration: 1}}"#
    )
}

/// Rule 13 with a `chartRef` to an OCIRepository: the same tag pushed again with new content
/// is a newer chart; the digest it was deployed from is current.
#[test]
fn rule_13_a_chart_ref_release_behind_a_re_pushed_oci_tag_is_stuck() {
    let base = [
        controller("source-controller", 1),
        controller("helm-controller", 1),
    ]
    .concat();
    let release = chart_ref_release("podinfo", "", &deployed_from_oci());
    let report = evaluate(&format!(
        "{base}{}{release}",
        oci_chart(&format!("6.7.0@sha256:{DIGEST_A}"))
    ));
    let id = "prod/HelmRelease/apps/podinfo";
    assert_eq!(verdict(&report, id)["state"], "healthy");

    let report = evaluate(&format!(
        "{base}{}{release}",
        oci_chart(&format!("6.7.0@sha256:{DIGEST_B}"))
    ));
    let behind = verdict(&report, id);
    assert_eq!(
        behind["reason"],
        format!("stuck for 3h: chart 6.7.0@sha256:{DIGEST_B} offered, 6.7.0+aaaaaaaaaaaa deployed"),
        "{behind:#}"
    );
}

/// Rule 15 on HelmReleases: a suspended release that another's `dependsOn` waits on is its
/// root cause while it is not ready, and nobody's once it is.
#[test]
fn rule_15_a_suspended_release_is_the_root_cause_only_while_a_dependant_waits_on_it() {
    let failed = r#"  conditions:
    - {type: Ready, status: "False", reason: UpgradeFailed, message: "Helm upgrade failed for release apps/backend with chart podinfo@6.7.0+aaaaaaaaaaaa: cannot patch \"backend\" with kind Deployment", lastTransitionTime: "2026-11-29T07:00:00Z", observedGeneration: 1}"#;
    let waiting = chart_ref_release(
        "frontend",
        "  dependsOn: [{name: backend}]",
        &not_ready(
            "DependencyNotReady",
            "dependency 'apps/backend' is not ready",
            "10:00",
        ),
    );
    let base = [
        controller("source-controller", 1),
        controller("helm-controller", 1),
        oci_chart(&format!("6.7.0@sha256:{DIGEST_A}")),
    ]
    .concat();
    let backend = "prod/HelmRelease/apps/backend";
    let report = evaluate(&format!(
        "{base}{}{waiting}",
        chart_ref_release("backend", "  suspend: true", failed)
    ));
    assert_eq!(verdict(&report, backend)["state"], "suspended");
    let frontend = verdict(&report, "prod/HelmRelease/apps/frontend");
    assert_eq!(frontend["state"], "blocked", "{frontend:#}");
    assert_eq!(frontend["root_causes"], serde_json::json!([backend]));
    assert_eq!(root_cause_ids(&report), [backend]);

    let ready = chart_ref_release("backend", "  suspend: true", &deployed_from_oci());
    let report = evaluate(&format!(
        "{base}{ready}{}",
        chart_ref_release(
            "frontend",
            "  dependsOn: [{name: backend}]",
            &deployed_from_oci()
        )
    ));
    assert_eq!(verdict(&report, backend)["state"], "suspended");
    assert_eq!(
        verdict(&report, "prod/HelmRelease/apps/frontend")["state"],
        "healthy"
    );
    assert_eq!(root_cause_ids(&report), Vec::<&str>::new());
}
