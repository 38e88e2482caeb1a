//! Cluster-scoped objects: Namespaces and CustomResourceDefinitions.

use super::meta::{Meta, object, time};
use chrono::TimeDelta;
use serde_json::{Value, json};

pub fn namespace(meta: &Meta) -> Value {
    let spec = json!({"finalizers": ["kubernetes"]});
    object(
        "v1",
        "Namespace",
        meta,
        spec,
        Some(json!({"phase": "Active"})),
    )
}

/// An established CRD serving `v1alpha1`/`v1` of `kind` (`plural.group` is its name).
pub fn crd(meta: &Meta, group: &str, kind: &str, version: &str) -> Value {
    let plural = meta.name.split('.').next().unwrap_or(&meta.name);
    let spec = json!({
        "group": group,
        "names": {"kind": kind, "plural": plural, "listKind": format!("{kind}List"), "singular": kind.to_lowercase()},
        "scope": "Namespaced",
        "versions": [{"name": version, "served": true, "storage": true}],
    });
    let since = meta.created + TimeDelta::seconds(1);
    let status = json!({
        "acceptedNames": {"kind": kind, "plural": plural},
        "storedVersions": [version],
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
             "message": "no conflicts found", "lastTransitionTime": time(since)},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted", "lastTransitionTime": time(since)},
        ],
    });
    object(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        meta,
        spec,
        Some(status),
    )
}
