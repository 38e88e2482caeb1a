use super::report::{Report, evaluate_inputs};
use super::*;
use crate::health::Thresholds;
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::path::PathBuf;

/// The report on `inputs` as JSON, at [`now`] with default thresholds.
fn report(inputs: &Inputs, cluster: &str) -> Value {
    let evaluation = evaluate_inputs(inputs, cluster, now(), &Thresholds::default(), &[]);
    serde_json::to_value(Report::new(inputs, cluster, now(), &evaluation)).unwrap()
}

/// A file under the temp dir, unique per test, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, text: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("fleetglass-evaluate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

const MULTI_DOC: &str = r#"
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
  generation: 1
spec:
  interval: 10m
  sourceRef: {kind: GitRepository, name: flux-system}
status:
  observedGeneration: 1
  lastAppliedRevision: main@sha1:1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
  lastAttemptedRevision: main@sha1:1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
  conditions:
  - {type: Ready, status: "False", reason: BuildFailed, message: "kustomize build failed", lastTransitionTime: "2026-11-29T11:00:00Z"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: flux-system}
---
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
metadata: {name: overlay}
---
apiVersion: v1
kind: Pod
metadata: {namespace: default}
---
"#;

fn now() -> DateTime<Utc> {
    "2026-11-29T12:00:00Z".parse().unwrap()
}

#[test]
fn reads_multi_document_yaml_counting_unknown_kinds_and_skipping_malformed_objects() {
    let file = TempFile::new("apps.yaml", MULTI_DOC);
    let inputs = read_inputs(std::slice::from_ref(&file.0), LOCAL_CLUSTER).unwrap();
    assert_eq!(inputs.objects.len(), 1);
    assert_eq!(
        inputs.objects[0].id().as_str(),
        "local/Kustomization/flux-system/apps"
    );
    assert_eq!(inputs.ignored.count, 2);
    assert_eq!(inputs.ignored.kinds["ConfigMap"], 1);
    assert_eq!(
        inputs.ignored.kinds["Kustomization (kustomize.config.k8s.io/v1beta1)"],
        1
    );
    assert_eq!(inputs.skipped.len(), 1);
    assert!(
        inputs.skipped[0].document.ends_with("apps.yaml#3"),
        "{:?}",
        inputs.skipped
    );
    assert_eq!(inputs.skipped[0].reason, "Pod without metadata.name");
}

#[test]
fn reads_a_json_list() {
    let list = r#"{"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository", "metadata": {"name": "a", "namespace": "flux-system"}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"}},
        "garbage"
    ]}"#;
    let file = TempFile::new("list.json", list);
    let inputs = read_inputs(std::slice::from_ref(&file.0), LOCAL_CLUSTER).unwrap();
    assert_eq!(inputs.objects.len(), 1);
    assert_eq!(inputs.ignored.kinds["Service"], 1);
    assert!(inputs.skipped[0].document.ends_with("list.json#0.items[2]"));
    assert_eq!(inputs.skipped[0].reason, "not a mapping");
}

#[test]
fn syntax_errors_are_one_line_with_file_and_position() {
    let file = TempFile::new(
        "broken.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  labels: {a: b\n bad\n",
    );
    let error = read_inputs(std::slice::from_ref(&file.0), LOCAL_CLUSTER)
        .unwrap_err()
        .to_string();
    assert!(error.contains("broken.yaml: line "), "{error}");
    assert!(error.contains(" column "), "{error}");
    assert!(!error.contains('\n'), "{error}");
    let indented = TempFile::new("indent.yaml", "kind: Pod\n  name: x\n");
    let error = read_inputs(std::slice::from_ref(&indented.0), LOCAL_CLUSTER)
        .unwrap_err()
        .to_string();
    assert!(
        error.ends_with(
            "indent.yaml: line 2 column 7: mapping values are not allowed in this context"
        ),
        "{error}"
    );

    let json = TempFile::new("broken.json", "{\"kind\": \"Pod\",\n  \"metadata\": }");
    let error = read_inputs(std::slice::from_ref(&json.0), LOCAL_CLUSTER).unwrap_err();
    assert_eq!(error.position, Some((2, 15)));
    assert!(
        error
            .to_string()
            .ends_with("broken.json: line 2 column 15: expected value"),
        "{error}"
    );

    let missing = read_inputs(&[PathBuf::from("/nonexistent/apps.yaml")], LOCAL_CLUSTER)
        .unwrap_err()
        .to_string();
    assert!(missing.starts_with("/nonexistent/apps.yaml: "), "{missing}");
}

#[test]
fn the_report_follows_the_json_contract() {
    let file = TempFile::new("report.yaml", MULTI_DOC);
    let inputs = read_inputs(std::slice::from_ref(&file.0), "staging").unwrap();
    let report = report(&inputs, "staging");
    let keys: Vec<&str> = report
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys.len(), 9);
    for key in [
        "evaluated_at",
        "cluster",
        "objects",
        "root_causes",
        "domains",
        "dependencies",
        "co_ownerships",
        "ignored",
        "skipped",
    ] {
        assert!(keys.contains(&key), "{key}");
    }
    assert_eq!(report["evaluated_at"], "2026-11-29T12:00:00Z");
    assert_eq!(report["cluster"], "staging");
    let object = &report["objects"][0];
    assert_eq!(object["id"], "staging/Kustomization/flux-system/apps");
    // The input holds no GitRepository at all: its absence proves nothing.
    assert_eq!(object["state"], "unverifiable");
    assert_eq!(object["since"], Value::Null);
    assert_eq!(object["reason"], "GitRepository not in the input");
    assert_eq!(
        object["message"],
        "source GitRepository flux-system/flux-system cannot be checked: the input holds no object of its kind"
    );
    assert_eq!(
        object["root_causes"][0],
        "staging/Kustomization/flux-system/apps"
    );
    let fields: Vec<&str> = object
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(fields.len(), 10, "{fields:?}");
    let cause = &report["root_causes"][0];
    assert_eq!(cause.as_object().unwrap().len(), 5);
    assert_eq!(
        cause["affected"][0],
        "staging/Kustomization/flux-system/apps"
    );
    assert_eq!(report["ignored"]["count"], 2);
    assert_eq!(report["skipped"][0]["reason"], "Pod without metadata.name");
}
