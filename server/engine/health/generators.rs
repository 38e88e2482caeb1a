//! Generated fleets for property tests: Flux objects, controller Deployments and cluster
//! probes with random conditions, references, shards and ages. The engine's invariants
//! (property_tests) and the collector's incremental evaluation (ingest::evaluations_tests)
//! both run on them.

use super::ClusterInfo;
use super::testkit::now;
use crate::model::{Kind, Object, parse_object};
use chrono::TimeDelta;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::HashSet;

pub const NAMES: [&str; 4] = ["a", "b", "c", "d"];
pub const NAMESPACES: [&str; 2] = ["flux-system", "apps"];
pub const CLUSTERS: [&str; 2] = ["c1", "c2"];
pub const FLUX_KINDS: [(&str, &str); 7] = [
    ("kustomize.toolkit.fluxcd.io/v1", "Kustomization"),
    ("helm.toolkit.fluxcd.io/v2", "HelmRelease"),
    ("source.toolkit.fluxcd.io/v1", "GitRepository"),
    ("source.toolkit.fluxcd.io/v1", "OCIRepository"),
    ("source.toolkit.fluxcd.io/v1", "HelmRepository"),
    ("source.toolkit.fluxcd.io/v1", "HelmChart"),
    ("infra.contrib.fluxcd.io/v1alpha2", "Terraform"),
];
const READY_REASONS: [&str; 10] = [
    "ReconciliationSucceeded",
    "Progressing",
    "DependencyNotReady",
    "SourceNotReady",
    "BuildFailed",
    "HealthCheckFailed",
    "UpgradeFailed",
    "ArtifactFailed",
    "ProgressingWithRetry",
    "",
];

/// Minutes before now of a transition; one in twenty lies up to two hours ahead, as a controller
/// whose clock runs ahead writes it.
fn minutes_ago() -> impl Strategy<Value = i64> {
    prop_oneof![19 => 0i64..20_000, 1 => -120i64..0]
}

fn condition() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec!["Ready", "Reconciling", "Stalled", "Healthy"]),
        prop::sample::select(vec!["True", "False", "Unknown"]),
        prop::sample::select(READY_REASONS.to_vec()),
        0i64..20_000,
        prop::option::of(0i64..4),
    )
        .prop_map(|(type_, status, reason, minutes, observed)| {
            json!({"type": type_, "status": status, "reason": reason, "message": "m",
                   "lastTransitionTime": (now() - TimeDelta::minutes(minutes)).to_rfc3339(),
                   "observedGeneration": observed})
        })
}

fn reference() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(NAMES.to_vec()),
        prop::sample::select(NAMESPACES.to_vec()),
    )
        .prop_map(|(name, namespace)| json!({"name": name, "namespace": namespace}))
}

/// A Ready condition that is mostly True (so healthy verdicts are common enough to test),
/// sometimes Reconciling or Stalled beside it, plus arbitrary extra conditions.
fn conditions() -> impl Strategy<Value = Vec<Value>> {
    (
        prop::sample::select(vec!["True", "True", "True", "False", "Unknown"]),
        prop::sample::select(READY_REASONS.to_vec()),
        prop::option::weighted(0.2, minutes_ago()),
        prop::option::weighted(0.2, prop::sample::select(vec!["RetriesExceeded", "AccessDenied"])),
        prop::collection::vec(condition(), 0..2),
        prop::bool::weighted(0.95),
    )
        .prop_map(|(status, reason, reconciling, stalled, mut extra, succeeded)| {
            let at = |minutes: i64| (now() - TimeDelta::minutes(minutes)).to_rfc3339();
            // Ready=True mostly with the success reason its controller writes, else any other
            // reason (which is no proof).
            let reason = if status == "True" && succeeded { "ReconciliationSucceeded" } else { reason };
            let mut all = vec![json!({"type": "Ready", "status": status, "reason": reason, "message": "m",
                                      "lastTransitionTime": at(60), "observedGeneration": 1})];
            if let Some(minutes) = reconciling {
                all.push(json!({"type": "Reconciling", "status": "True", "reason": "Progressing", "lastTransitionTime": at(minutes)}));
            }
            if let Some(reason) = stalled {
                all.push(json!({"type": "Stalled", "status": "True", "reason": reason, "lastTransitionTime": at(5)}));
            }
            all.append(&mut extra);
            all
        })
}

pub fn flux_object() -> impl Strategy<Value = Value> {
    (
        (prop::sample::select(FLUX_KINDS.to_vec()), prop::sample::select(NAMES.to_vec()), prop::sample::select(NAMESPACES.to_vec())),
        (prop::sample::select(CLUSTERS.to_vec()), any::<bool>(), prop::option::weighted(0.1, Just(true)), prop::option::of(prop::sample::select(vec!["s1", "s2"]))),
        (conditions(), prop::collection::vec(reference(), 0..3), reference(), prop::option::of(reference())),
    )
        .prop_map(|((kind, name, namespace), (cluster, current, suspend, shard), (conditions, depends, source, applier))| {
            let (api_version, kind) = kind;
            let mut labels = serde_json::Map::new();
            if let Some(shard) = shard {
                labels.insert("sharding.fluxcd.io/key".into(), json!(shard));
            }
            if let Some(applier) = applier {
                labels.insert("kustomize.toolkit.fluxcd.io/name".into(), applier["name"].clone());
                labels.insert("kustomize.toolkit.fluxcd.io/namespace".into(), applier["namespace"].clone());
            }
            let mut spec = json!({"interval": "5m", "suspend": suspend.is_some()});
            if matches!(kind, "Kustomization" | "HelmRelease") {
                spec["dependsOn"] = json!(depends);
            }
            let source_kind = match kind {
                "HelmChart" => Some("HelmRepository"),
                "Kustomization" | "Terraform" => Some("GitRepository"),
                _ => None,
            };
            if let Some(source_kind) = source_kind {
                spec["sourceRef"] = json!({"kind": source_kind, "name": source["name"], "namespace": source["namespace"]});
            }
            let conditions: Vec<Value> = conditions.into_iter().map(|mut c| {
                // the success reason this kind's controller writes (docs/REASONS.md)
                if c["reason"] == "ReconciliationSucceeded" {
                    c["reason"] = json!(success_reason(kind));
                }
                c
            }).collect();
            json!({"apiVersion": api_version, "kind": kind, "cluster": cluster,
                   "metadata": {"name": name, "namespace": namespace, "generation": 1, "labels": labels},
                   "spec": spec,
                   "status": {"observedGeneration": if current { 1 } else { 0 }, "conditions": conditions,
                              "artifact": {"revision": "main@sha1:abc"}, "lastAppliedRevision": "main@sha1:abc"}})
        })
}

fn success_reason(kind: &str) -> &'static str {
    match kind {
        "Kustomization" => "ReconciliationSucceeded",
        "HelmRelease" => "UpgradeSucceeded",
        "Terraform" => "TerraformPlannedNoChanges",
        "HelmChart" => "ChartPullSucceeded",
        _ => "Succeeded",
    }
}

pub fn controller_deployment() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec![
            "source-controller",
            "kustomize-controller",
            "helm-controller",
            "tofu-controller",
        ]),
        prop::sample::select(vec!["", "-s1", "-s2"]),
        prop::sample::select(CLUSTERS.to_vec()),
        0i64..2,
    )
        .prop_map(|(controller, shard, cluster, available)| {
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "cluster": cluster,
                   "metadata": {"name": format!("{controller}{shard}"), "namespace": "flux-system"},
                   "spec": {"replicas": 1, "selector": {"matchLabels": {"app": controller}}},
                   "status": {"availableReplicas": available, "readyReplicas": available}})
        })
}

pub fn cluster_info() -> impl Strategy<Value = ClusterInfo> {
    (
        prop::sample::select(CLUSTERS.to_vec()),
        0i64..10,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(name, minutes, error, kind_error)| {
            let mut info = ClusterInfo {
                name: name.into(),
                last_good: Some(now() - TimeDelta::minutes(minutes)),
                ..ClusterInfo::default()
            };
            if error {
                info.error = Some("connection refused".into());
            }
            if kind_error {
                info.kind_errors
                    .insert(Kind::HelmRelease, "forbidden".into());
            }
            info
        })
}

/// Parses generated documents the way real input is parsed, each on the cluster it names.
pub fn parse_all(values: &[Value]) -> Vec<Object> {
    let mut seen = HashSet::new();
    values
        .iter()
        .filter_map(|v| parse_object(v["cluster"].as_str().unwrap_or("c1"), v).ok())
        .filter(|o| seen.insert(o.id()))
        .collect()
}
