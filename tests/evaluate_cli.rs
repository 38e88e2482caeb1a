//! `fleetglass evaluate`, the contract: files or stdin in, one JSON document out, exit codes.

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Output, Stdio};

const FLEET: &str = r#"
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system, generation: 2}
spec:
  interval: 10m
  sourceRef: {kind: GitRepository, name: flux-system}
  dependsOn: [{name: infra}]
status:
  observedGeneration: 1
  conditions:
    - {type: Ready, status: "False", reason: DependencyNotReady, message: "dependency 'flux-system/infra' is not ready", lastTransitionTime: "2026-11-28T10:00:00Z", observedGeneration: 2}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: infra, namespace: flux-system, generation: 1}
spec:
  interval: 10m
  sourceRef: {kind: GitRepository, name: flux-system}
status:
  observedGeneration: 1
  lastAttemptedRevision: main@sha1:1111111111111111111111111111111111111111
  lastAppliedRevision: main@sha1:1111111111111111111111111111111111111111
  conditions:
    - {type: Ready, status: "False", reason: BuildFailed, message: "kustomize build failed: accumulating resources", lastTransitionTime: "2026-11-28T09:00:00Z", observedGeneration: 1}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system, generation: 1}
spec: {interval: 1m, url: "https://git.example/fleet"}
status:
  observedGeneration: 1
  artifact: {revision: "main@sha1:1111111111111111111111111111111111111111"}
  conditions:
    - {type: Ready, status: "True", reason: Succeeded, message: "stored artifact", lastTransitionTime: "2026-11-28T08:00:00Z", observedGeneration: 1}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: unrelated, namespace: default}
"#;

fn evaluate(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fleetglass"))
        .arg("evaluate")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

fn write(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("fleetglass-evaluate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn evaluates_a_file_into_the_json_contract() {
    let file = write("fleet.yaml", FLEET);
    let output = evaluate(
        &["--now", "2026-11-29T12:00:00Z", "--cluster", "prod", &file],
        None,
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["evaluated_at"], "2026-11-29T12:00:00Z");
    let objects = report["objects"].as_array().unwrap();
    let apps = objects
        .iter()
        .find(|o| o["id"] == "prod/Kustomization/flux-system/apps")
        .unwrap();
    for field in [
        "id",
        "cluster",
        "kind",
        "namespace",
        "name",
        "state",
        "since",
        "reason",
        "message",
        "root_causes",
    ] {
        assert!(apps.get(field).is_some(), "missing {field}: {apps}");
    }
    assert_eq!(apps["state"], "blocked");
    assert_eq!(
        apps["root_causes"],
        serde_json::json!(["prod/Kustomization/flux-system/infra"])
    );
    let infra = objects.iter().find(|o| o["name"] == "infra").unwrap();
    assert_eq!(infra["state"], "failed");
    assert_eq!(
        infra["root_causes"],
        serde_json::json!(["prod/Kustomization/flux-system/infra"])
    );
    let git = objects
        .iter()
        .find(|o| o["kind"] == "GitRepository")
        .unwrap();
    assert_eq!(
        (
            git["state"].as_str(),
            git["root_causes"].as_array().unwrap().len()
        ),
        (Some("healthy"), 0)
    );
    let causes = report["root_causes"].as_array().unwrap();
    assert_eq!(causes.len(), 1);
    assert_eq!(causes[0]["id"], "prod/Kustomization/flux-system/infra");
    assert!(
        causes[0]["affected"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "prod/Kustomization/flux-system/apps")
    );
    assert_eq!(report["ignored"]["count"], 1);
}

#[test]
fn reads_stdin_and_json_lists() {
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository",
         "metadata": {"name": "charts", "namespace": "flux-system"}, "spec": {"type": "oci", "url": "oci://r"}}
    ]});
    let output = evaluate(&["-"], Some(&list.to_string()));
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let repo = &report["objects"][0];
    assert_eq!(repo["id"], "local/HelmRepository/flux-system/charts");
    assert_eq!(
        repo["state"], "healthy",
        "an OCI HelmRepository has no status and is fine"
    );
}

#[test]
fn unreadable_input_exits_2_naming_file_and_position() {
    let file = write(
        "broken.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  labels: [a\n",
    );
    let output = evaluate(&[&file], None);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("broken.yaml") && stderr.contains("line"),
        "{stderr}"
    );
    let missing = evaluate(&["/nonexistent.yaml"], None);
    assert_eq!(missing.status.code(), Some(2));
    let bad_now = evaluate(&["--now", "yesterday", &file], None);
    assert_eq!(bad_now.status.code(), Some(2));
}

#[test]
fn malformed_objects_are_reported_not_fatal() {
    let text = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: odd, namespace: x}\nspec: {interval: 5m}\nstatus: {conditions: [{type: Ready, status: Maybe, lastTransitionTime: soon}]}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {}\n";
    let output = evaluate(&["-"], Some(text));
    assert_eq!(output.status.code(), Some(0));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let odd = &report["objects"][0];
    assert_ne!(odd["state"], "healthy");
    assert!(
        odd["message"]
            .as_str()
            .unwrap()
            .contains("status.conditions[0]"),
        "{odd}"
    );
    assert_eq!(report["skipped"].as_array().unwrap().len(), 1, "{report}");
}

#[test]
fn a_consumed_crd_missing_from_the_input_fails_its_consumer() {
    let text = r#"
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: netop, namespace: networking, generation: 1}
spec: {interval: 30m, chartRef: {kind: OCIRepository, name: netop}}
status:
  observedGeneration: 1
  inventory:
    entries:
      - {id: networking_netop_apps_Deployment, v: v1}
      - {id: networking_tenant-limits_ratelimit.solo.io_RateLimitConfig, v: v1alpha1}
  conditions:
    - {type: Ready, status: "True", reason: UpgradeSucceeded, message: "Helm upgrade succeeded", lastTransitionTime: "2026-11-28T10:00:00Z", observedGeneration: 1}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: netop, namespace: networking, generation: 1}
spec: {interval: 5m, url: "oci://registry/netop"}
status:
  observedGeneration: 1
  artifact: {revision: "2.14.0@sha256:aaaa"}
  conditions:
    - {type: Ready, status: "True", reason: Succeeded, message: "stored artifact", lastTransitionTime: "2026-11-28T08:00:00Z", observedGeneration: 1}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: helmreleases.helm.toolkit.fluxcd.io}
spec: {group: helm.toolkit.fluxcd.io, names: {kind: HelmRelease, plural: helmreleases}}
"#;
    let output = evaluate(&["-"], Some(text));
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let netop = report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "HelmRelease")
        .unwrap();
    assert_eq!(netop["state"], "failed", "{netop}");
    assert!(
        netop["reason"]
            .as_str()
            .unwrap()
            .contains("RateLimitConfig"),
        "{netop}"
    );

    // Without any CRD in the input, nothing is inferred.
    let without_crds = text.split("---").take(2).collect::<Vec<_>>().join("---");
    let report: Value =
        serde_json::from_slice(&evaluate(&["-"], Some(&without_crds)).stdout).unwrap();
    let netop = report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "HelmRelease")
        .unwrap();
    assert_eq!(netop["state"], "healthy", "{netop}");
}
