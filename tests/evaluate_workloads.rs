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

/// The object is `degraded` with `cause` as its one root cause.
fn assert_degraded_by(objects: &[Value], kind: &str, name: &str, cause: &str) {
    let object = find(objects, kind, name);
    assert_eq!(object["state"], "degraded", "{object}");
    assert_eq!(
        object["root_causes"],
        serde_json::json!([cause]),
        "{object}"
    );
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
    assert_degraded_by(&objects, "HelmRelease", "web", "prod/Deployment/shop/web");
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

/// Held-out shapes (issue 16, round two): kinds, containers and boundaries the cases above do
/// not use, each as the kubelet and the StatefulSet, DaemonSet and deployment controllers
/// write them.
const KUSTOMIZATION: &str = r#"
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: data, namespace: flux-system, generation: 1}
spec: {interval: 10m, path: ./data, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
status:
  observedGeneration: 1
  lastAppliedRevision: "main@sha1:1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
  lastAttemptedRevision: "main@sha1:1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
  conditions:
    - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: main@sha1:1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", lastTransitionTime: "2026-11-27T08:10:00Z", observedGeneration: 1}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system, generation: 1}
spec: {interval: 1m, url: "https://git.example/fleet", ref: {branch: main}}
status:
  observedGeneration: 1
  artifact: {revision: "main@sha1:1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", lastUpdateTime: "2026-11-27T08:00:00Z"}
  conditions:
    - {type: Ready, status: "True", reason: Succeeded, message: "stored artifact for revision 'main@sha1:1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'", lastTransitionTime: "2026-11-27T08:00:00Z", observedGeneration: 1}
"#;

/// Rule 2 on a StatefulSet: its init container crash-loops (the kubelet writes it under
/// initContainerStatuses, the app container waits in PodInitializing, the pod stays Pending);
/// the StatefulSet is the one root cause of the Kustomization that applied it.
#[test]
fn a_statefulset_whose_init_container_crash_loops_degrades_its_kustomization() {
    let statefulset = r#"
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: shop
  generation: 1
  labels: {app: db, kustomize.toolkit.fluxcd.io/name: data, kustomize.toolkit.fluxcd.io/namespace: flux-system}
spec:
  replicas: 3
  serviceName: db
  selector: {matchLabels: {app: db}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 0}}
  template:
    metadata: {labels: {app: db}}
    spec:
      initContainers: [{name: migrate, image: "ghcr.io/example/db-migrate:v3"}]
      containers: [{name: db, image: "postgres:17"}]
status: {observedGeneration: 1, replicas: 3, readyReplicas: 2, currentReplicas: 3, updatedReplicas: 3, availableReplicas: 2, currentRevision: db-7c9f5d, updateRevision: db-7c9f5d, collisionCount: 0}
"#;
    let pod = r#"
apiVersion: v1
kind: Pod
metadata:
  name: db-2
  namespace: shop
  labels: {app: db, statefulset.kubernetes.io/pod-name: db-2, controller-revision-hash: db-7c9f5d}
  creationTimestamp: "2026-11-27T09:00:00Z"
  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: db, controller: true}]
spec:
  restartPolicy: Always
  initContainers: [{name: migrate, image: "ghcr.io/example/db-migrate:v3"}]
  containers: [{name: db, image: "postgres:17"}]
status:
  phase: Pending
  startTime: "2026-11-27T09:00:00Z"
  conditions:
    - {type: Initialized, status: "False", reason: ContainersNotInitialized, message: "containers with incomplete status: [migrate]", lastTransitionTime: "2026-11-27T09:00:00Z"}
    - {type: Ready, status: "False", reason: ContainersNotReady, message: "containers with unready status: [db]", lastTransitionTime: "2026-11-27T09:00:00Z"}
  initContainerStatuses:
    - name: migrate
      ready: false
      restartCount: 540
      state: {waiting: {reason: CrashLoopBackOff, message: "back-off 5m0s restarting failed container=migrate pod=db-2_shop(1)"}}
      lastState: {terminated: {exitCode: 1, reason: Error, startedAt: "2026-11-29T11:54:00Z", finishedAt: "2026-11-29T11:54:03Z"}}
  containerStatuses:
    - {name: db, ready: false, restartCount: 0, started: false, state: {waiting: {reason: PodInitializing}}}
"#;
    let objects = evaluate(&[
        KUSTOMIZATION.to_string(),
        statefulset.to_string(),
        pod.to_string(),
    ]);
    let db = find(&objects, "StatefulSet", "db");
    assert_eq!(db["state"], "failed", "{db}");
    assert!(
        db["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("1/1 pods failing: db-2: Init:CrashLoopBackOff")),
        "{db}"
    );
    assert_degraded_by(
        &objects,
        "Kustomization",
        "data",
        "prod/StatefulSet/shop/db",
    );
}

/// Rules 1 and 2 on a DaemonSet (status in desiredNumberScheduled/numberAvailable): the pod
/// on one node cannot pull its image.
#[test]
fn a_daemonset_pod_that_cannot_pull_its_image_fails_the_daemonset() {
    let daemonset = r#"
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  namespace: shop
  generation: 4
  labels: {app: agent, kustomize.toolkit.fluxcd.io/name: data, kustomize.toolkit.fluxcd.io/namespace: flux-system}
spec:
  selector: {matchLabels: {app: agent}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 1, maxSurge: 0}}
  template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: agent, image: "ghcr.io/example/agent:v9"}]}}
status: {currentNumberScheduled: 3, desiredNumberScheduled: 3, numberAvailable: 2, numberMisscheduled: 0, numberReady: 2, numberUnavailable: 1, observedGeneration: 4, updatedNumberScheduled: 3}
"#;
    let pod = r#"
apiVersion: v1
kind: Pod
metadata:
  name: agent-x7k2p
  namespace: shop
  labels: {app: agent, controller-revision-hash: 6d5f7c8b9, pod-template-generation: "4"}
  creationTimestamp: "2026-11-27T09:00:00Z"
  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, controller: true}]
spec: {restartPolicy: Always, nodeName: node-3, containers: [{name: agent, image: "ghcr.io/example/agent:v9"}]}
status:
  phase: Pending
  startTime: "2026-11-27T09:00:00Z"
  conditions:
    - {type: Ready, status: "False", reason: ContainersNotReady, message: "containers with unready status: [agent]", lastTransitionTime: "2026-11-27T09:00:00Z"}
  containerStatuses:
    - {name: agent, ready: false, restartCount: 0, started: false, state: {waiting: {reason: ImagePullBackOff, message: "Back-off pulling image \"ghcr.io/example/agent:v9\""}}}
"#;
    let objects = evaluate(&[
        KUSTOMIZATION.to_string(),
        daemonset.to_string(),
        pod.to_string(),
    ]);
    let agent = find(&objects, "DaemonSet", "agent");
    assert_eq!(
        agent["reason"],
        "1/1 pods failing: agent-x7k2p: ImagePullBackOff: Back-off pulling image \"ghcr.io/example/agent:v9\"",
        "{agent}"
    );
    assert_eq!(find(&objects, "Kustomization", "data")["state"], "degraded");

    // Rule 6: a DaemonSet that has not observed its spec is not healthy on its old counts.
    let unobserved = daemonset
        .replace("generation: 4\n", "generation: 5\n")
        .replace("numberAvailable: 2", "numberAvailable: 3")
        .replace("numberReady: 2, numberUnavailable: 1", "numberReady: 3");
    let objects = evaluate(&[KUSTOMIZATION.to_string(), unobserved]);
    let agent = find(&objects, "DaemonSet", "agent");
    assert_eq!(
        (agent["state"].as_str(), agent["reason"].as_str()),
        (
            Some("progressing"),
            Some("generation 5 not yet observed (observed 4)")
        )
    );
}

/// Rule 3 in a pod with several containers: the sidecar runs (and is Ready) between OOM
/// kills while the app container is fine. The loop lasts while the kubelet still backs the
/// container off: up to 10 minutes after the crash, not a second more (pods.rs,
/// CRASH_LOOP_WINDOW).
#[test]
fn a_sidecar_running_between_crashes_fails_its_workload_within_the_back_off_window() {
    let status = r#"  observedGeneration: 1
  replicas: 1
  updatedReplicas: 1
  readyReplicas: 1
  availableReplicas: 1
  conditions:
    - {type: Available, status: "True", reason: MinimumReplicasAvailable, message: "Deployment has minimum availability.", lastUpdateTime: "2026-11-20T12:00:00Z", lastTransitionTime: "2026-11-20T12:00:00Z"}
    - {type: Progressing, status: "True", reason: NewReplicaSetAvailable, message: "ReplicaSet \"web-6f7d8\" has successfully progressed.", lastUpdateTime: "2026-11-20T12:00:00Z", lastTransitionTime: "2026-07-01T12:00:00Z"}"#;
    let containers = |finished: &str| {
        format!(
            r#"{READY_CONTAINER}
    - name: envoy
      ready: true
      restartCount: 5
      state: {{running: {{startedAt: "{finished}"}}}}
      lastState: {{terminated: {{reason: OOMKilled, exitCode: 137, startedAt: "2026-11-29T11:40:00Z", finishedAt: "{finished}"}}}}"#
        )
    };
    let at_the_window = evaluate(&with_release(vec![
        deployment(1, status),
        pod(
            "web-6f7d8-a",
            "Running",
            "True",
            &containers("2026-11-29T11:50:00Z"),
        ),
    ]));
    let web = find(&at_the_window, "Deployment", "web");
    assert_eq!(
        web["reason"],
        "1/1 pods failing: web-6f7d8-a: CrashLoopBackOff: OOMKilled (exit code 137), 5 restarts",
        "{web}"
    );
    assert_eq!(
        find(&at_the_window, "HelmRelease", "web")["state"],
        "degraded"
    );

    let past_the_window = evaluate(&with_release(vec![
        deployment(1, status),
        pod(
            "web-6f7d8-a",
            "Running",
            "True",
            &containers("2026-11-29T11:49:59Z"),
        ),
    ]));
    assert_eq!(
        find(&past_the_window, "Deployment", "web")["state"],
        "healthy"
    );
}

/// Rule 1 without Available=False: with 4 replicas and maxUnavailable 25% the Deployment stays
/// Available at 3/4 (deployment_util.go, MinAvailable), and Progressing keeps its finished
/// reason; a pod unready for two days makes the shortfall stuck, never "rolling out".
#[test]
fn a_shortfall_under_available_true_is_stuck_once_a_pod_has_been_unready_past_the_threshold() {
    let status = r#"  observedGeneration: 1
  replicas: 4
  updatedReplicas: 4
  readyReplicas: 3
  availableReplicas: 3
  unavailableReplicas: 1
  conditions:
    - {type: Available, status: "True", reason: MinimumReplicasAvailable, message: "Deployment has minimum availability.", lastUpdateTime: "2026-11-20T12:00:00Z", lastTransitionTime: "2026-11-20T12:00:00Z"}
    - {type: Progressing, status: "True", reason: NewReplicaSetAvailable, message: "ReplicaSet \"web-6f7d8\" has successfully progressed.", lastUpdateTime: "2026-11-20T12:00:00Z", lastTransitionTime: "2026-07-01T12:00:00Z"}"#;
    let unready = r#"    - {name: app, ready: false, restartCount: 0, started: true, state: {running: {startedAt: "2026-11-27T09:00:05Z"}}}"#;
    let mut documents = vec![deployment(4, status)];
    for name in ["web-6f7d8-a", "web-6f7d8-b", "web-6f7d8-c"] {
        documents.push(pod(name, "Running", "True", READY_CONTAINER));
    }
    documents.push(pod("web-6f7d8-d", "Running", "False", unready).replace(
        "lastTransitionTime: \"2026-11-29T11:00:00Z\"",
        "lastTransitionTime: \"2026-11-27T09:00:00Z\"",
    ));
    let objects = evaluate(&with_release(documents));
    let web = find(&objects, "Deployment", "web");
    assert_eq!(
        (web["state"].as_str(), web["reason"].as_str()),
        (
            Some("stuck"),
            Some("stuck for 2d 3h: 3/4 available, 4 updated")
        ),
        "{web}"
    );
    assert_degraded_by(&objects, "HelmRelease", "web", "prod/Deployment/shop/web");
}

/// Rule 4 on a single-replica StatefulSet: its only pod is being recreated (the StatefulSet
/// controller writes no conditions); seconds of 0/1 are progressing, dated by the new pod.
#[test]
fn a_single_replica_statefulset_pod_being_recreated_is_progressing() {
    let statefulset = r#"
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: shop
  generation: 2
  labels: {app: db, helm.toolkit.fluxcd.io/name: web, helm.toolkit.fluxcd.io/namespace: shop}
spec:
  replicas: 1
  serviceName: db
  selector: {matchLabels: {app: db}}
  template: {metadata: {labels: {app: db}}, spec: {containers: [{name: db, image: "postgres:17"}]}}
status: {observedGeneration: 2, replicas: 1, currentReplicas: 1, updatedReplicas: 1, availableReplicas: 0, currentRevision: db-7c9f, updateRevision: db-7c9f, collisionCount: 0}
"#;
    let pod = r#"
apiVersion: v1
kind: Pod
metadata:
  name: db-0
  namespace: shop
  labels: {app: db, statefulset.kubernetes.io/pod-name: db-0}
  creationTimestamp: "2026-11-29T11:59:52Z"
  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: db, controller: true}]
spec: {containers: [{name: db, image: "postgres:17"}]}
status:
  phase: Pending
  conditions:
    - {type: PodScheduled, status: "True", lastTransitionTime: "2026-11-29T11:59:52Z"}
    - {type: Ready, status: "False", reason: ContainersNotReady, message: "containers with unready status: [db]", lastTransitionTime: "2026-11-29T11:59:52Z"}
  containerStatuses:
    - {name: db, ready: false, restartCount: 0, started: false, state: {waiting: {reason: ContainerCreating}}}
"#;
    let objects = evaluate(&with_release(vec![
        statefulset.to_string(),
        pod.to_string(),
    ]));
    let db = find(&objects, "StatefulSet", "db");
    assert_eq!(
        (
            db["state"].as_str(),
            db["reason"].as_str(),
            db["since"].as_str()
        ),
        (
            Some("progressing"),
            Some("0/1 available, 1 updated"),
            Some("2026-11-29T11:59:52Z")
        ),
        "{db}"
    );
    assert_eq!(find(&objects, "HelmRelease", "web")["state"], "progressing");
}
