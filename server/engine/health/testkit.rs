//! Test builders: Kubernetes objects as the API server prints them (real field paths, reasons
//! and messages), parsed through `parse_object` exactly like real input, and a one-call
//! evaluation with a fixed `now`.

use super::{
    ClusterInfo, DomainSpec, Evaluation, Input, RootCause, State, Thresholds, Verdict, evaluate,
};
use crate::model::{Object, parse_object};
use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Value, json};

pub const CLUSTER: &str = "prod";
pub const SHA: &str = "main@sha1:1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
pub const NEW_SHA: &str = "main@sha1:2222222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

pub fn now() -> DateTime<Utc> {
    "2026-11-29T12:00:00Z".parse().expect("valid time")
}

/// An RFC 3339 time `minutes` before [`now`].
pub fn ago(minutes: i64) -> String {
    (now() - TimeDelta::minutes(minutes)).to_rfc3339()
}

pub fn condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    minutes_ago: i64,
) -> Value {
    json!({"type": type_, "status": status, "reason": reason, "message": message,
           "lastTransitionTime": ago(minutes_ago), "observedGeneration": 1})
}

pub fn ready(reason: &str, message: &str) -> Value {
    condition("Ready", "True", reason, message, 600)
}

pub fn not_ready(reason: &str, message: &str, minutes_ago: i64) -> Value {
    condition("Ready", "False", reason, message, minutes_ago)
}

/// Replaces the object's conditions.
pub fn with_conditions(mut value: Value, conditions: Vec<Value>) -> Value {
    value["status"]["conditions"] = Value::Array(conditions);
    value
}

pub fn with_label(mut value: Value, key: &str, label: &str) -> Value {
    value["metadata"]["labels"][key] = json!(label);
    value
}

/// Labels an object as applied by a Kustomization or HelmRelease (`kustomize`/`helm`).
pub fn applied_by(value: Value, tool: &str, namespace: &str, name: &str) -> Value {
    let value = with_label(value, &format!("{tool}.toolkit.fluxcd.io/name"), name);
    with_label(
        value,
        &format!("{tool}.toolkit.fluxcd.io/namespace"),
        namespace,
    )
}

fn meta(name: &str, namespace: &str) -> Value {
    json!({"name": name, "namespace": namespace, "generation": 1, "creationTimestamp": ago(10_000), "labels": {}})
}

pub fn git_repository(name: &str, revision: &str) -> Value {
    json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository", "metadata": meta(name, "flux-system"),
           "spec": {"interval": "1m", "url": format!("https://git.example.com/{name}"), "ref": {"branch": "main"}},
           "status": {"observedGeneration": 1, "artifact": {"revision": revision, "lastUpdateTime": ago(600)},
                      "conditions": [ready("Succeeded", &format!("stored artifact for revision '{revision}'")),
                                     condition("ArtifactInStorage", "True", "Succeeded", "stored", 600)]}})
}

pub fn kustomization(name: &str, depends_on: &[&str]) -> Value {
    let depends: Vec<Value> = depends_on.iter().map(|d| json!({"name": d})).collect();
    json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization", "metadata": meta(name, "flux-system"),
           "spec": {"interval": "10m", "path": format!("./{name}"), "prune": true, "dependsOn": depends,
                    "sourceRef": {"kind": "GitRepository", "name": "flux-system"}},
           "status": {"observedGeneration": 1, "lastAttemptedRevision": SHA, "lastAppliedRevision": SHA,
                      "conditions": [ready("ReconciliationSucceeded", &format!("Applied revision: {SHA}"))]}})
}

pub fn helm_repository(name: &str) -> Value {
    json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository", "metadata": meta(name, "flux-system"),
           "spec": {"interval": "1h", "url": "https://charts.example.com"},
           "status": {"observedGeneration": 1, "artifact": {"revision": "sha256:0123456789abcdef"},
                      "conditions": [ready("Succeeded", "stored artifact: revision 'sha256:0123456789abcdef'")]}})
}

pub fn helm_chart(
    release_namespace: &str,
    release: &str,
    repository: &str,
    version: &str,
) -> Value {
    json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmChart",
           "metadata": meta(&format!("{release_namespace}-{release}"), "flux-system"),
           "spec": {"chart": release, "version": "*", "interval": "1h",
                    "sourceRef": {"kind": "HelmRepository", "name": repository}},
           "status": {"observedGeneration": 1, "artifact": {"revision": version},
                      "conditions": [ready("ChartPullSucceeded", &format!("pulled '{release}' chart with version '{version}'"))]}})
}

pub fn helm_release(namespace: &str, name: &str, repository: &str) -> Value {
    json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "metadata": meta(name, namespace),
           "spec": {"interval": "30m", "chart": {"spec": {"chart": name, "version": "2.x",
                    "sourceRef": {"kind": "HelmRepository", "name": repository, "namespace": "flux-system"}}}},
           "status": {"observedGeneration": 1, "helmChart": format!("flux-system/{namespace}-{name}"),
                      "lastAttemptedRevision": "2.14.0",
                      "history": [{"chartName": name, "chartVersion": "2.14.0", "status": "deployed", "version": 4}],
                      "conditions": [ready("UpgradeSucceeded", &format!("Helm upgrade succeeded for release {namespace}/{name}.v4 with chart {name}@2.14.0"))]}})
}

pub fn terraform(name: &str) -> Value {
    json!({"apiVersion": "infra.contrib.fluxcd.io/v1alpha2", "kind": "Terraform", "metadata": meta(name, "flux-system"),
           "spec": {"interval": "12h", "path": "./nlb", "approvePlan": "auto",
                    "sourceRef": {"kind": "GitRepository", "name": "flux-system"}},
           "status": {"observedGeneration": 1, "lastAttemptedRevision": SHA, "lastAppliedRevision": SHA,
                      "conditions": [ready("TerraformPlannedNoChanges", "Plan no changes")]}})
}

/// A workload with `available` of `replicas` available; its pods select `app=<name>`.
pub fn deployment(namespace: &str, name: &str, replicas: i64, available: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(name, namespace),
           "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                    "template": {"metadata": {"labels": {"app": name}},
                                 "spec": {"containers": [{"name": "manager", "image": format!("ghcr.io/example/{name}:v1.0.0")}]}}},
           "status": {"observedGeneration": 1, "replicas": replicas, "readyReplicas": available,
                      "availableReplicas": available, "updatedReplicas": replicas}})
}

/// A Flux controller Deployment in flux-system.
pub fn controller(name: &str, available: i64) -> Value {
    let value = deployment("flux-system", name, 1, available);
    with_label(value, "app.kubernetes.io/part-of", "flux")
}

/// The standard controllers, all running.
pub fn flux_controllers() -> Vec<Value> {
    [
        "source-controller",
        "kustomize-controller",
        "helm-controller",
    ]
    .into_iter()
    .map(|name| controller(name, 1))
    .collect()
}

/// A pod of Deployment `app` (owned through its ReplicaSet), waiting for `waiting` if given.
pub fn pod(namespace: &str, app: &str, suffix: &str, waiting: Option<(&str, &str)>) -> Value {
    let state = match waiting {
        Some((reason, message)) => json!({"waiting": {"reason": reason, "message": message}}),
        None => json!({"running": {"startedAt": ago(60)}}),
    };
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": format!("{app}-5d9c7b-{suffix}"), "namespace": namespace, "labels": {"app": app},
                        "creationTimestamp": ago(60),
                        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("{app}-5d9c7b"), "controller": true}]},
           "spec": {"containers": [{"name": "manager", "image": format!("ghcr.io/example/{app}:v1.0.0")}]},
           "status": {"phase": if waiting.is_some() { "Pending" } else { "Running" }, "startTime": ago(60),
                      "containerStatuses": [{"name": "manager", "ready": waiting.is_none(), "restartCount": 0, "state": state,
                                             "image": format!("ghcr.io/example/{app}:v1.0.0")}]}})
}

pub fn parse(value: &Value) -> Object {
    parse_object(CLUSTER, value).expect("test objects are valid Kubernetes objects")
}

pub struct Run {
    pub evaluation: Evaluation,
}

impl Run {
    pub fn verdict(&self, kind: &str, namespace: &str, name: &str) -> &Verdict {
        let id = format!("{CLUSTER}/{kind}/{namespace}/{name}");
        self.evaluation
            .objects
            .iter()
            .find(|v| v.id.as_str() == id)
            .unwrap_or_else(|| panic!("no verdict for {id}"))
    }

    pub fn state(&self, kind: &str, namespace: &str, name: &str) -> State {
        self.verdict(kind, namespace, name).state
    }

    /// The root-cause ids of an object, as plain strings.
    pub fn roots(&self, kind: &str, namespace: &str, name: &str) -> Vec<&str> {
        self.verdict(kind, namespace, name)
            .root_causes
            .iter()
            .map(|r| r.as_str())
            .collect()
    }

    pub fn root_cause(&self, id: &str) -> &RootCause {
        self.evaluation
            .root_causes
            .iter()
            .find(|r| r.id.as_str() == id)
            .unwrap_or_else(|| panic!("no root cause {id}"))
    }
}

pub fn id(kind: &str, namespace: &str, name: &str) -> String {
    format!("{CLUSTER}/{kind}/{namespace}/{name}")
}

pub fn run(values: &[Value]) -> Run {
    run_with(values, &[], &[], &Thresholds::default())
}

pub fn run_with(
    values: &[Value],
    clusters: &[ClusterInfo],
    domains: &[DomainSpec],
    thresholds: &Thresholds,
) -> Run {
    run_seen(values, clusters, domains, thresholds, &Default::default())
}

/// As [`run_with`], with when the caller first saw objects in progress.
pub fn run_seen(
    values: &[Value],
    clusters: &[ClusterInfo],
    domains: &[DomainSpec],
    thresholds: &Thresholds,
    seen_in_progress: &super::SeenInProgress,
) -> Run {
    let objects: Vec<Object> = values.iter().map(parse).collect();
    let evaluation = evaluate(&Input {
        objects: &objects,
        clusters,
        domains,
        thresholds,
        now: now(),
        seen_in_progress,
    });
    Run { evaluation }
}

/// Evaluates objects spread over clusters: `(cluster, object)`.
pub fn evaluate_on(
    placed: &[(&str, Value)],
    clusters: &[ClusterInfo],
    domains: &[DomainSpec],
    thresholds: &Thresholds,
) -> Evaluation {
    let objects: Vec<Object> = placed
        .iter()
        .map(|(cluster, value)| parse_object(cluster, value).expect("valid object"))
        .collect();
    evaluate(&Input {
        objects: &objects,
        clusters,
        domains,
        thresholds,
        now: now(),
        seen_in_progress: &Default::default(),
    })
}

/// Ids as plain strings, to compare with [`id`]'s.
pub fn as_strs(ids: &[crate::model::ObjectId]) -> Vec<&str> {
    ids.iter().map(|id| id.as_str()).collect()
}
