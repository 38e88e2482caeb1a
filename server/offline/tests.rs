use super::report::Report;
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

/// Objects of every kind the engine reads, with fields of every wrong shape: malformed ones
/// become the same defects whichever way they arrive.
fn every_shape() -> Vec<Value> {
    let pod_status = serde_json::json!({
        "phase": "Running", "startTime": "2026-11-29T11:00:00Z", "reason": 3,
        "initContainerStatuses": [{"name": "init", "ready": true, "restartCount": 0,
            "state": {"terminated": {"reason": "Completed", "exitCode": 0}}}],
        "containerStatuses": [
            {"name": "app", "ready": "yes", "restartCount": "7",
             "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}},
             "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137,
                 "finishedAt": "2026-11-29T11:59:00Z", "message": "killed"}}},
            "not a container", null]});
    serde_json::json!([
        {"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
         "metadata": {"name": "apps", "namespace": "flux-system", "generation": "4",
                      "labels": {"a": "b", "n": 1, "sharding.fluxcd.io/key": "shard1"},
                      "creationTimestamp": "yesterday", "deletionTimestamp": 5,
                      "ownerReferences": [{"kind": "X", "name": "y"}, {"kind": 1, "name": "z"}, 7],
                      "annotations": {"big": "x".repeat(300)}, "managedFields": [{"a": [1, 2, {"b": null}]}]},
         "spec": {"interval": 600, "timeout": "5x", "wait": "true", "suspend": null,
                  "dependsOn": [{"name": "infra"}, "bad", {"namespace": "x"}, {"name": 3}],
                  "healthChecks": {"kind": "Deployment"},
                  "sourceRef": {"kind": "GitRepository", "name": "flux-system", "namespace": null}},
         "status": {"observedGeneration": 3.5, "lastAppliedRevision": ["a"],
                    "conditions": [{"type": "Ready", "status": "Maybe", "observedGeneration": "2",
                                    "lastTransitionTime": "2026-11-29T11:00:00Z", "reason": 1},
                                   "no", {"status": "True"}, {"type": 5}],
                    "inventory": {"entries": [{"id": "a_b_apps_Deployment"}, {"id": 4}, "x"]}}},
        {"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
         "metadata": {"name": "web", "namespace": "team"},
         "spec": {"chart": {"spec": {"chart": "web", "version": 2,
                  "sourceRef": {"kind": "HelmRepository", "name": "charts"}}}, "chartRef": "no"},
         "status": {"helmChart": "team/team-web", "history": [{"chartName": "web", "chartVersion": 1,
                    "appVersion": "2.0", "status": "deployed"}, {"chartName": "old"}]}},
        {"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
         "metadata": {"name": "named", "namespace": "team"},
         "spec": {"chart": "just-a-name"}, "status": {"history": {"x": 1}}},
        {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmChart",
         "metadata": {"name": "team-web", "namespace": "team"},
         "spec": {"chart": {"not": "a name"}, "version": "1.x", "url": 8,
                  "sourceRef": {"kind": "HelmRepository", "name": "charts"}},
         "status": {"artifact": {"revision": "1.0.0", "lastUpdateTime": "2026-11-29T10:00:00Z"}}},
        {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
         "metadata": {"name": "flux-system", "namespace": "flux-system"},
         "spec": {"url": "https://example.com/repo", "ref": {"commit": "abc", "branch": "main", "tag": 1}},
         "status": "ready"},
        {"apiVersion": "apps/v1", "kind": "StatefulSet",
         "metadata": {"name": "db", "namespace": "team"},
         "spec": {"replicas": "3", "selector": {"matchLabels": {"app": "db"}},
                  "template": {"spec": {"containers": [{"image": "db:1", "env": [{"name": "A"}]}, {"image": 2}]}},
                  "updateStrategy": {"type": "OnDelete", "rollingUpdate": {"partition": "x"}}},
         "status": {"readyReplicas": 2, "replicas": 3, "currentRevision": "a", "updateRevision": "b"}},
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "kube-system"},
         "spec": {"template": "no", "updateStrategy": 1}, "status": {"desiredNumberScheduled": 4, "numberReady": "x"}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "team"},
         "spec": {"paused": true, "selector": 1, "replicas": 18446744073709551615u64},
         "status": {"availableReplicas": -1, "updatedReplicas": 1}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-1", "namespace": "team"},
         "spec": {"restartPolicy": "Always", "containers": [{"image": "web:1"}]}, "status": pod_status},
        {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
         "metadata": {"name": "things.example.com", "namespace": "ignored"},
         "spec": {"group": "example.com", "names": {"kind": "Thing"}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": ""}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
        {"kind": 3},
        {"apiVersion": "v1", "kind": "Pod", "metadata": [1]},
        "a string"
    ])
    .as_array()
    .unwrap()
    .clone()
}

#[test]
fn the_reader_and_a_json_value_give_the_same_objects_and_defects() {
    let values = every_shape();
    let expected: Vec<_> = values
        .iter()
        .map(|value| crate::model::parse_object(LOCAL_CLUSTER, value))
        .collect();
    assert!(
        expected
            .iter()
            .filter_map(|parsed| parsed.as_ref().ok())
            .map(|object| object.defects.len())
            .sum::<usize>()
            > 20,
        "the shapes exercise the defects: {expected:#?}"
    );
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": values});
    let yaml = values
        .iter()
        .map(|value| format!("---\n{}", serde_saphyr::to_string(value).unwrap()))
        .collect::<String>();
    for (name, text) in [
        (
            "every-shape.json",
            serde_json::to_string_pretty(&list).unwrap(),
        ),
        ("every-shape.yaml", yaml),
    ] {
        let file = TempFile::new(name, &text);
        let inputs = read_inputs(std::slice::from_ref(&file.0), LOCAL_CLUSTER).unwrap();
        let objects: Vec<_> = expected.iter().filter_map(|e| e.clone().ok()).collect();
        assert_eq!(inputs.objects, objects, "{name}");
        let skipped: Vec<_> = expected
            .iter()
            .filter_map(|e| match e {
                Err(crate::model::Skip::Invalid(reason)) => Some(reason.clone()),
                _ => None,
            })
            .collect();
        let read: Vec<_> = inputs.skipped.iter().map(|s| s.reason.clone()).collect();
        assert_eq!(read, skipped, "{name}");
        assert_eq!(inputs.ignored.count, 1, "{name}");
    }
}

#[test]
fn a_json_file_the_pieces_cannot_read_is_read_in_one_go_keeping_only_what_that_read_keeps() {
    let repo = |name: &str, url: &str| {
        serde_json::json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
               "metadata": {"name": name, "namespace": "flux-system"}, "spec": {"url": url}})
    };
    let first = TempFile::new("first.json", &repo("a", "https://a").to_string());
    // Two `items` keys: the parser keeps the last, so the copy of `a`, the Service and the
    // string in the first array (read in pieces before the second key is seen) leave no trace.
    let items = |values: Vec<serde_json::Value>| serde_json::Value::Array(values).to_string();
    let service =
        serde_json::json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}});
    let twice = format!(
        r#"{{"kind": "List", "items": {}, "items": {}}}"#,
        items(vec![
            repo("a", "https://elsewhere"),
            service,
            "garbage".into()
        ]),
        items(vec![repo("y", "https://y")]),
    );
    let second = TempFile::new("second.json", &twice);
    let inputs = read_inputs(&[first.0.clone(), second.0.clone()], LOCAL_CLUSTER).unwrap();
    let names: Vec<_> = inputs.objects.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["a", "y"]);
    assert!(inputs.conflicting.is_empty(), "{:?}", inputs.conflicting);
    assert_eq!(inputs.ignored.count, 0);
    assert!(inputs.skipped.is_empty(), "{:?}", inputs.skipped);
}

/// What `read_inputs` reads of `text` written into a named pipe (read once, whole).
fn read_through_a_pipe(name: &str, text: String) -> Inputs {
    let dir = std::env::temp_dir().join(format!(
        "fleetglass-evaluate-fifo-{}-{name}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join(name);
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, text))
    };
    let inputs = read_inputs(std::slice::from_ref(&fifo), LOCAL_CLUSTER).unwrap();
    writer.join().unwrap().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    inputs
}

fn git_repository(i: usize) -> serde_json::Value {
    serde_json::json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
           "metadata": {"name": format!("r{i}"), "namespace": "flux-system"}})
}

#[test]
fn a_json_list_from_a_pipe_is_read_once_whole() {
    // Larger than the reader's first buffer, so a second reader of the pipe would miss items.
    let items: Vec<_> = (0..500).map(git_repository).collect();
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string();
    let inputs = read_through_a_pipe("list.json", list);
    assert_eq!(inputs.objects.len(), 500);
    assert_eq!(inputs.objects[499].name, "r499");
}

#[test]
fn a_yaml_file_read_in_blocks_reads_as_the_same_text_read_whole_from_a_pipe() {
    // Leading blank lines (the whole read starts after them), more documents than a first
    // buffer holds, an unknown kind, a malformed object, and the same object twice.
    let mut text = "\n  \n---\n".to_string();
    for i in 0..300 {
        text += &format!(
            "---\n{}",
            serde_saphyr::to_string(&git_repository(i)).unwrap()
        );
    }
    text += "---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n";
    text += "---\napiVersion: v1\nkind: Pod\nmetadata: {namespace: default}\n";
    let mut copy = git_repository(7);
    copy["spec"] = serde_json::json!({"url": "https://elsewhere"});
    text += &format!("---\n{}", serde_saphyr::to_string(&copy).unwrap());
    let file = TempFile::new("blocks.yaml", &text);
    let read = read_inputs(std::slice::from_ref(&file.0), LOCAL_CLUSTER).unwrap();
    let whole = read_through_a_pipe("blocks.yaml", text);
    assert_eq!(read.objects.len(), 300);
    assert_eq!(read.objects, whole.objects);
    assert_eq!(read.ignored, whole.ignored);
    assert_eq!(read.conflicting.len(), 1);
    // Places as `file#document`, the file's path left out (the pipe has another).
    let places = |inputs: &Inputs| -> Vec<String> {
        let skipped = inputs.skipped.iter().map(|s| &s.document);
        let copies = inputs.conflicting.values().flatten();
        let document = |place: &String| place.rsplit('#').next().unwrap().to_string();
        skipped.chain(copies).map(document).collect()
    };
    assert_eq!(places(&read), ["301", "7", "302"]);
    assert_eq!(places(&read), places(&whole));
}
