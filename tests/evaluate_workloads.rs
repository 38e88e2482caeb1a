//! `fleetglass evaluate` on workloads and pods as kube-controller-manager and the kubelet
//! write them (docs/WORKLOADS.md, one case per rule group): the verdicts reach the CLI's JSON.

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

const NOW: &str = "2026-11-29T12:00:00Z";

/// A Ready HelmRelease shop/web with its chart source; the workloads below carry its labels.
const RELEASE: &str = r#"
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: shop, generation: 1}
spec:
  interval: 30m
  chart: {spec: {chart: web, sourceRef: {kind: HelmRepository, name: charts, namespace: flux-system}}}
status:
  observedGeneration: 1
  helmChart: flux-system/shop-web
  history: [{chartName: web, chartVersion: 2.14.0, status: deployed, version: 4}]
  conditions:
    - {type: Ready, status: "True", reason: UpgradeSucceeded, message: "Helm upgrade succeeded for release shop/web.v4 with chart web@2.14.0", lastTransitionTime: "2026-11-20T10:00:00Z", observedGeneration: 1}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: charts, namespace: flux-system, generation: 1}
spec: {interval: 1h, url: "https://charts.example"}
status:
  observedGeneration: 1
  artifact: {revision: "sha256:abcd"}
  conditions:
    - {type: Ready, status: "True", reason: Succeeded, message: "stored artifact", lastTransitionTime: "2026-11-20T10:00:00Z", observedGeneration: 1}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmChart
metadata: {name: shop-web, namespace: flux-system, generation: 1}
spec: {chart: web, version: "*", interval: 1h, sourceRef: {kind: HelmRepository, name: charts}}
status:
  observedGeneration: 1
  artifact: {revision: 2.14.0}
  conditions:
    - {type: Ready, status: "True", reason: ChartPullSucceeded, message: "pulled 'web' chart with version '2.14.0'", lastTransitionTime: "2026-11-20T10:00:00Z", observedGeneration: 1}
"#;

fn deployment(replicas: i64, status: &str) -> String {
    format!(
        r#"
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  generation: 1
  labels: {{helm.toolkit.fluxcd.io/name: web, helm.toolkit.fluxcd.io/namespace: shop}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec: {{containers: [{{name: app, image: "ghcr.io/example/web:v2"}}]}}
status:
{status}
"#
    )
}

fn pod(name: &str, phase: &str, ready: &str, container_status: &str) -> String {
    format!(
        r#"
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: shop
  labels: {{app: web}}
  creationTimestamp: "2026-11-29T11:00:00Z"
  ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: web-6f7d8, controller: true}}]
spec: {{restartPolicy: Always, containers: [{{name: app, image: "ghcr.io/example/web:v2"}}]}}
status:
  phase: {phase}
  startTime: "2026-11-29T11:00:00Z"
  conditions:
    - {{type: Ready, status: "{ready}", lastTransitionTime: "2026-11-29T11:00:00Z"}}
  containerStatuses:
{container_status}
"#
    )
}

const READY_CONTAINER: &str = r#"    - {name: app, ready: true, restartCount: 0, state: {running: {startedAt: "2026-11-29T11:00:05Z"}}}"#;

fn evaluate(documents: &[String]) -> Vec<Value> {
    let text = documents.join("---\n");
    let mut child = Command::new(env!("CARGO_BIN_EXE_fleetglass"))
        .args(["evaluate", "--now", NOW, "--cluster", "prod", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    report["objects"].as_array().unwrap().clone()
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

fn with_release(workload: Vec<String>) -> Vec<String> {
    let mut documents = vec![RELEASE.to_string()];
    documents.extend(workload);
    documents
}

/// Rules 1 and 2: a shortfall for two days fails the workload, names its failing pod, and
/// degrades the Ready release; the pods are evidence, the workload the one root cause.
#[test]
fn a_lasting_shortfall_with_a_crash_looping_pod_is_one_root_cause_under_a_degraded_release() {
    let status = r#"  observedGeneration: 1
  replicas: 3
  updatedReplicas: 3
  readyReplicas: 1
  availableReplicas: 1
  conditions:
    - {type: Available, status: "False", reason: MinimumReplicasUnavailable, message: "Deployment does not have minimum availability.", lastUpdateTime: "2026-11-27T12:00:00Z", lastTransitionTime: "2026-11-27T12:00:00Z"}
    - {type: Progressing, status: "True", reason: NewReplicaSetAvailable, message: "ReplicaSet \"web-6f7d8\" has successfully progressed.", lastUpdateTime: "2026-07-01T12:00:00Z", lastTransitionTime: "2026-07-01T12:00:00Z"}"#;
    let crash = r#"    - name: app
      ready: false
      restartCount: 212
      state: {waiting: {reason: CrashLoopBackOff, message: "back-off 5m0s restarting failed container=app pod=web-6f7d8-b_shop"}}
      lastState: {terminated: {reason: OOMKilled, exitCode: 137, startedAt: "2026-11-29T11:54:00Z", finishedAt: "2026-11-29T11:55:00Z"}}"#;
    let pending = r#"    - {name: app, ready: false, restartCount: 0, state: {waiting: {reason: ContainerCreating}}}"#;
    let objects = evaluate(&with_release(vec![
        deployment(3, status),
        pod("web-6f7d8-a", "Running", "True", READY_CONTAINER),
        pod("web-6f7d8-b", "Running", "False", crash),
        pod("web-6f7d8-c", "Pending", "False", pending),
    ]));
    let web = find(&objects, "Deployment", "web");
    assert_eq!(web["state"], "failed", "{web}");
    assert_eq!(
        web["reason"],
        "1/3 pods failing: web-6f7d8-b: CrashLoopBackOff: OOMKilled"
    );
    let release = find(&objects, "HelmRelease", "web");
    assert_eq!(release["state"], "degraded", "{release}");
    assert_eq!(
        release["root_causes"],
        serde_json::json!(["prod/Deployment/shop/web"])
    );
    let crashing = find(&objects, "Pod", "web-6f7d8-b");
    assert_eq!(
        crashing["root_causes"],
        serde_json::json!(["prod/Deployment/shop/web"])
    );
}

/// Rules 3 and 8: crash loops seen while the container is up again, or exited right now.
#[test]
fn crash_loops_between_restarts_fail_the_workload() {
    let status = r#"  observedGeneration: 1
  replicas: 1
  updatedReplicas: 1
  readyReplicas: 1
  availableReplicas: 1
  conditions:
    - {type: Available, status: "True", reason: MinimumReplicasAvailable, message: "Deployment has minimum availability.", lastUpdateTime: "2026-11-20T12:00:00Z", lastTransitionTime: "2026-11-20T12:00:00Z"}
    - {type: Progressing, status: "True", reason: NewReplicaSetAvailable, message: "ReplicaSet \"web-6f7d8\" has successfully progressed.", lastUpdateTime: "2026-11-20T12:00:00Z", lastTransitionTime: "2026-07-01T12:00:00Z"}"#;
    let up_again = r#"    - name: app
      ready: true
      restartCount: 7
      state: {running: {startedAt: "2026-11-29T11:59:40Z"}}
      lastState: {terminated: {reason: OOMKilled, exitCode: 137, startedAt: "2026-11-29T11:58:00Z", finishedAt: "2026-11-29T11:59:30Z"}}"#;
    let objects = evaluate(&with_release(vec![
        deployment(1, status),
        pod("web-6f7d8-a", "Running", "True", up_again),
    ]));
    let web = find(&objects, "Deployment", "web");
    assert_eq!(web["state"], "failed", "{web}");
    assert_eq!(
        web["reason"],
        "1/1 pods failing: web-6f7d8-a: CrashLoopBackOff: OOMKilled (exit code 137), 7 restarts"
    );
    assert_eq!(find(&objects, "HelmRelease", "web")["state"], "degraded");

    let exited = r#"    - name: app
      ready: false
      restartCount: 4
      state: {terminated: {reason: Error, exitCode: 1, message: "fatal: cannot connect to postgres", startedAt: "2026-11-29T11:59:50Z", finishedAt: "2026-11-29T11:59:58Z"}}
      lastState: {terminated: {reason: Error, exitCode: 1, startedAt: "2026-11-29T11:58:50Z", finishedAt: "2026-11-29T11:58:58Z"}}"#;
    let objects = evaluate(&with_release(vec![
        deployment(1, status),
        pod("web-6f7d8-a", "Running", "False", exited),
    ]));
    assert_eq!(
        find(&objects, "Deployment", "web")["reason"],
        "1/1 pods failing: web-6f7d8-a: CrashLoopBackOff: Error (exit code 1): fatal: cannot connect to postgres, 4 restarts"
    );
}

/// Rule 4: a Recreate rollout with nothing available yet, under a Progressing condition that
/// turned True 150 days ago, is progressing since this rollout began.
#[test]
fn a_fresh_recreate_rollout_is_progressing_despite_an_old_progressing_transition() {
    let status = r#"  observedGeneration: 1
  replicas: 3
  updatedReplicas: 3
  unavailableReplicas: 3
  conditions:
    - {type: Available, status: "False", reason: MinimumReplicasUnavailable, message: "Deployment does not have minimum availability.", lastUpdateTime: "2026-11-29T11:59:40Z", lastTransitionTime: "2026-11-29T11:59:40Z"}
    - {type: Progressing, status: "True", reason: NewReplicaSetCreated, message: "Created new replica set \"web-6f7d8\"", lastUpdateTime: "2026-11-29T11:59:42Z", lastTransitionTime: "2026-07-02T12:00:00Z"}"#;
    let creating = r#"    - {name: app, ready: false, restartCount: 0, state: {waiting: {reason: ContainerCreating}}}"#;
    let objects = evaluate(&with_release(vec![
        deployment(3, status),
        pod("web-6f7d8-a", "Pending", "False", creating),
    ]));
    let web = find(&objects, "Deployment", "web");
    assert_eq!(web["state"], "progressing", "{web}");
    assert_eq!(web["since"], "2026-11-29T11:59:42Z");
    // Ready after the upgrade, not yet fully deployed: progressing with its Deployment.
    let release = find(&objects, "HelmRelease", "web");
    assert_eq!(release["state"], "progressing", "{release}");
    assert_eq!(release["root_causes"], serde_json::json!([]), "{release}");
}

/// Rule 5: an Evicted leftover of a healthy ReplicaSet fails nothing.
#[test]
fn an_evicted_leftover_pod_does_not_fail_its_healthy_workload() {
    let status = r#"  observedGeneration: 1
  replicas: 1
  updatedReplicas: 1
  readyReplicas: 1
  availableReplicas: 1
  conditions:
    - {type: Available, status: "True", reason: MinimumReplicasAvailable, message: "Deployment has minimum availability.", lastUpdateTime: "2026-11-20T12:00:00Z", lastTransitionTime: "2026-11-20T12:00:00Z"}
    - {type: Progressing, status: "True", reason: NewReplicaSetAvailable, message: "ReplicaSet \"web-6f7d8\" has successfully progressed.", lastUpdateTime: "2026-11-20T12:00:00Z", lastTransitionTime: "2026-07-01T12:00:00Z"}"#;
    let evicted = r#"
apiVersion: v1
kind: Pod
metadata:
  name: web-6f7d8-old
  namespace: shop
  labels: {app: web}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-6f7d8, controller: true}]
spec: {restartPolicy: Always, containers: [{name: app, image: "ghcr.io/example/web:v2"}]}
status:
  phase: Failed
  reason: Evicted
  message: "The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi."
  containerStatuses:
    - {name: app, ready: false, restartCount: 0, state: {terminated: {reason: ContainerStatusUnknown, exitCode: 137, finishedAt: "2026-11-28T09:00:00Z"}}}
"#;
    let objects = evaluate(&with_release(vec![
        deployment(1, status),
        pod("web-6f7d8-a", "Running", "True", READY_CONTAINER),
        evicted.to_string(),
    ]));
    assert_eq!(find(&objects, "Deployment", "web")["state"], "healthy");
    assert_eq!(find(&objects, "HelmRelease", "web")["state"], "healthy");
    let leftover = find(&objects, "Pod", "web-6f7d8-old");
    assert_eq!(leftover["state"], "healthy", "{leftover}");
    assert_eq!(leftover["root_causes"], serde_json::json!([]));
}

/// Rules 6 and 7: an unobserved spec, old replicas still terminating, a paused rollout and
/// an older StatefulSet status without availableReplicas.
#[test]
fn rollouts_complete_only_as_kubectl_rollout_status_decides() {
    let complete_counts = r#"  replicas: 2
  updatedReplicas: 1
  readyReplicas: 1
  availableReplicas: 1
  conditions:
    - {type: Available, status: "True", reason: MinimumReplicasAvailable, message: "Deployment has minimum availability.", lastUpdateTime: "2026-11-20T12:00:00Z", lastTransitionTime: "2026-11-20T12:00:00Z"}
    - {type: Progressing, status: "True", reason: ReplicaSetUpdated, message: "ReplicaSet \"web-6f7d8\" is progressing.", lastUpdateTime: "2026-11-29T11:59:00Z", lastTransitionTime: "2026-07-01T12:00:00Z"}"#;
    let terminating = format!("  observedGeneration: 1\n{complete_counts}");
    let objects = evaluate(&with_release(vec![deployment(1, &terminating)]));
    let web = find(&objects, "Deployment", "web");
    assert_eq!(
        (web["state"].as_str(), web["reason"].as_str()),
        (
            Some("progressing"),
            Some("rolling out: 1/1 available, 1 updated, 1 pending termination")
        )
    );

    let unobserved = deployment(1, &format!("  observedGeneration: 1\n{complete_counts}"))
        .replace("generation: 1\n", "generation: 2\n");
    let objects = evaluate(&with_release(vec![unobserved]));
    assert_eq!(
        find(&objects, "Deployment", "web")["reason"],
        "generation 2 not yet observed (observed 1)"
    );

    let paused =
        deployment(1, &terminating).replace("  replicas: 1\n", "  replicas: 1\n  paused: true\n");
    let objects = evaluate(&with_release(vec![paused]));
    let web = find(&objects, "Deployment", "web");
    assert_eq!(
        (web["state"].as_str(), web["reason"].as_str()),
        (Some("suspended"), Some("rollout paused (spec.paused)"))
    );

    let statefulset = r#"
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop, generation: 3}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template: {metadata: {labels: {app: db}}, spec: {containers: [{name: db, image: "postgres:17"}]}}
status: {observedGeneration: 3, replicas: 2, readyReplicas: 2, currentReplicas: 2, currentRevision: db-7c9f, updateRevision: db-7c9f}
"#;
    let objects = evaluate(&[statefulset.to_string()]);
    let db = find(&objects, "StatefulSet", "db");
    assert_eq!(
        (db["state"].as_str(), db["reason"].as_str()),
        (Some("healthy"), Some("2/2 available"))
    );
}
