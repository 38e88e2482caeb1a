//! The scenario player: writes the demo fleet's objects for one demo cluster into a test bed
//! cluster — spec by `kubectl apply`, status through the status subresource — so the seed
//! incidents replay on a real API server, with its own validation and generations.

use super::testbed::Testbed;
use serde_json::{Value, json};
use std::collections::HashMap;

/// Replays `objects` (one demo cluster's world) onto `cluster` of the test bed.
pub fn replay(bed: &Testbed, cluster: &str, objects: &[Value]) {
    let mut specs: Vec<Value> = objects
        .iter()
        .filter(|o| !(o["kind"] == "CustomResourceDefinition" && crd_exists(bed, cluster, o)))
        .map(without_status)
        .collect();
    // Namespaces and CRDs first, so what lives in them is accepted in the same apply.
    specs.sort_by_key(|o| match o["kind"].as_str() {
        Some("Namespace") => 0,
        Some("CustomResourceDefinition") => 1,
        _ => 2,
    });
    let list = json!({"apiVersion": "v1", "kind": "List", "items": specs});
    apply(bed, cluster, &list.to_string());
    let generations = generations(bed, cluster, objects);
    for object in objects
        .iter()
        .filter(|o| o.get("status").is_some() && o["kind"] != "CustomResourceDefinition")
    {
        let key = identity(object);
        let Some(&generation) = generations.get(&key) else {
            continue;
        };
        let status = rebased_status(object, generation);
        let mut args = vec![
            "patch".to_string(),
            resource(object),
            key.2.clone(),
            "--subresource=status".into(),
            "--type=merge".into(),
        ];
        if !key.1.is_empty() {
            args.extend(["-n".to_string(), key.1.clone()]);
        }
        args.extend(["-p".to_string(), json!({"status": status}).to_string()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        bed.kubectl(cluster, &args);
    }
}

/// (kind, namespace, name)
fn identity(object: &Value) -> (String, String, String) {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    (
        text(&object["kind"]),
        text(&object["metadata"]["namespace"]),
        text(&object["metadata"]["name"]),
    )
}

/// `kind.group` as kubectl names a resource type (`deployment.apps`, `pod`).
fn resource(object: &Value) -> String {
    let kind = object["kind"].as_str().unwrap_or_default().to_lowercase();
    match object["apiVersion"]
        .as_str()
        .unwrap_or_default()
        .rsplit_once('/')
    {
        Some((group, _)) => format!("{kind}.{group}"),
        None => kind,
    }
}

fn crd_exists(bed: &Testbed, cluster: &str, crd: &Value) -> bool {
    let name = crd["metadata"]["name"].as_str().unwrap_or_default();
    bed.kubectl_output(cluster, &["get", "crd", name], None)
        .status
        .success()
}

/// The object as a client submits it: no status, no server-managed metadata; owner references
/// get the uid the API server requires; CRD versions get a schema that accepts anything.
fn without_status(object: &Value) -> Value {
    let mut object = object.clone();
    let map = object.as_object_mut().expect("objects are mappings");
    map.remove("status");
    let meta = map
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
        .expect("metadata");
    for field in ["generation", "creationTimestamp", "resourceVersion", "uid"] {
        meta.remove(field);
    }
    if let Some(owners) = meta
        .get_mut("ownerReferences")
        .and_then(Value::as_array_mut)
    {
        for owner in owners {
            owner["uid"] = json!("00000000-0000-4000-8000-000000000001");
        }
    }
    if map.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
        && let Some(versions) = map
            .get_mut("spec")
            .and_then(|s| s.get_mut("versions"))
            .and_then(Value::as_array_mut)
    {
        for version in versions {
            version["schema"] = json!({"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}});
        }
    }
    object
}

/// The demo wrote observedGenerations against its own generations; keep each one's distance
/// behind the generation the API server gave the object.
fn rebased_status(object: &Value, generation: i64) -> Value {
    let demo_generation = object["metadata"]["generation"].as_i64().unwrap_or(1);
    let rebase = |observed: &Value| {
        json!(generation - (demo_generation - observed.as_i64().unwrap_or(demo_generation)))
    };
    let mut status = object["status"].clone();
    if status.get("observedGeneration").is_some() {
        status["observedGeneration"] = rebase(&status["observedGeneration"]);
    }
    if let Some(conditions) = status.get_mut("conditions").and_then(Value::as_array_mut) {
        for condition in conditions
            .iter_mut()
            .filter(|c| c.get("observedGeneration").is_some())
        {
            condition["observedGeneration"] = rebase(&condition["observedGeneration"]);
        }
    }
    status
}

fn apply(bed: &Testbed, cluster: &str, document: &str) {
    let output = bed.kubectl_output(
        cluster,
        &["apply", "--server-side", "--force-conflicts", "-f", "-"],
        Some(document),
    );
    assert!(
        output.status.success(),
        "replay apply failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The generation the API server gave each object.
fn generations(
    bed: &Testbed,
    cluster: &str,
    objects: &[Value],
) -> HashMap<(String, String, String), i64> {
    let mut kinds: Vec<String> = objects.iter().map(resource).collect();
    kinds.sort();
    kinds.dedup();
    let listed = bed.kubectl(cluster, &["get", &kinds.join(","), "-A", "-o", "json"]);
    let list: Value = serde_json::from_str(&listed).expect("kubectl get -o json");
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| {
            (
                identity(item),
                item["metadata"]["generation"].as_i64().unwrap_or(1),
            )
        })
        .collect()
}
