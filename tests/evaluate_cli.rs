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

fn report_of(output: &Output) -> Value {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn verdicts_named<'a>(report: &'a Value, kind: &str, name: &str) -> Vec<&'a Value> {
    report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == kind && o["name"] == name)
        .collect()
}

#[test]
fn deep_nesting_exits_2_at_once_naming_the_limit() {
    let depth = 200_000;
    let yaml_flow = format!("a: {}{}\n", "[".repeat(depth), "]".repeat(depth));
    let yaml_block: String = (0..5_000)
        .map(|level| format!("{}k{level}:\n", " ".repeat(level)))
        .collect();
    let yaml_dashes = format!("{}x\n", "- ".repeat(depth));
    let json = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    for (name, text) in [
        ("flow.yaml", yaml_flow),
        ("block.yaml", yaml_block),
        ("dashes.yaml", yaml_dashes),
        ("deep.json", json),
    ] {
        let file = write(name, &text);
        let started = std::time::Instant::now();
        let output = evaluate(&[&file], None);
        let took = started.elapsed();
        assert_eq!(output.status.code(), Some(2), "{name}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains(name)
                && stderr.contains("nested more than 100 levels deep (the limit)"),
            "{stderr}"
        );
        assert!(took.as_secs_f64() < 1.0, "{name} took {took:?}");
    }
    // Through stdin too, and a real object nested deep inside its spec.
    let deep_spec = format!(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: a, namespace: b}}\nspec:\n  patches: {}{}\n",
        "{x: ".repeat(300),
        "}".repeat(300)
    );
    let output = evaluate(&["-"], Some(&deep_spec));
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("stdin: line 5 column"));
}

/// FLEET's GitRepository, at [`SHA`].
fn git_source() -> &'static str {
    FLEET
        .split("---")
        .nth(2)
        .expect("FLEET holds a GitRepository")
}

fn ready_kustomization(name: &str, revision: &str) -> String {
    format!(
        r#"
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: {name}, namespace: flux-system, generation: 1}}
spec: {{interval: 10m, sourceRef: {{kind: GitRepository, name: flux-system}}}}
status:
  observedGeneration: 1
  lastAttemptedRevision: "{revision}"
  lastAppliedRevision: "{revision}"
  conditions:
    - {{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: {revision}", lastTransitionTime: "2026-11-28T10:00:00Z", observedGeneration: 1}}
"#
    )
}

const SHA: &str = "main@sha1:1111111111111111111111111111111111111111";

#[test]
fn the_same_object_twice_gives_one_verdict_unverifiable_when_the_copies_differ() {
    let apps = ready_kustomization("apps", SHA);
    let same = format!("{}---{apps}---{apps}", git_source());
    let report = report_of(&evaluate(&["-"], Some(&same)));
    let verdicts = verdicts_named(&report, "Kustomization", "apps");
    assert_eq!(verdicts.len(), 1, "{report}");
    assert_eq!(verdicts[0]["state"], "healthy");

    let older = ready_kustomization("apps", "main@sha1:0000000000000000000000000000000000000000");
    let differing = format!("{}---{apps}---{older}", git_source());
    let file = write("copies.yaml", &differing);
    let report = report_of(&evaluate(&["--now", "2026-11-29T12:00:00Z", &file], None));
    let verdicts = verdicts_named(&report, "Kustomization", "apps");
    assert_eq!(verdicts.len(), 1, "{report}");
    assert_eq!(verdicts[0]["state"], "unverifiable");
    assert_eq!(verdicts[0]["reason"], "2 differing copies in the input");
    let message = verdicts[0]["message"].as_str().unwrap();
    assert!(
        message.contains("copies.yaml#1") && message.contains("copies.yaml#2"),
        "{message}"
    );
    assert_eq!(
        verdicts[0]["root_causes"],
        serde_json::json!(["local/Kustomization/flux-system/apps"])
    );
}

#[test]
fn lists_inside_lists_are_read() {
    let object = |name: &str| {
        serde_json::json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository",
            "metadata": {"name": name, "namespace": "flux-system"}, "spec": {"type": "oci", "url": "oci://r"}})
    };
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [
        object("outer"),
        {"apiVersion": "v1", "kind": "List", "items": [
            object("inner"),
            {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepositoryList", "items": [object("innermost"), "garbage"]}
        ]}
    ]});
    for text in [list.to_string(), serde_saphyr::to_string(&list).unwrap()] {
        let report = report_of(&evaluate(&["-"], Some(&text)));
        let mut names: Vec<&str> = report["objects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["name"].as_str().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["inner", "innermost", "outer"], "{report}");
        assert_eq!(
            report["skipped"][0]["document"],
            "stdin#0.items[1].items[1].items[1]"
        );
    }
}

#[test]
fn a_kind_absent_from_the_input_is_unverifiable_not_not_found() {
    // Only Kustomizations piped in: their GitRepository may well exist.
    let only = ready_kustomization("apps", SHA);
    let report = report_of(&evaluate(&["-"], Some(&only)));
    let apps = verdicts_named(&report, "Kustomization", "apps")[0];
    assert_eq!(apps["state"], "unverifiable", "{apps}");
    assert_eq!(apps["reason"], "GitRepository not in the input");
    assert!(
        apps["message"]
            .as_str()
            .unwrap()
            .contains("source GitRepository flux-system/flux-system"),
        "{apps}"
    );

    // With GitRepositories in the input, a missing one is evidence: not found.
    let other_source =
        git_source().replace("name: flux-system, namespace", "name: other, namespace");
    let report = report_of(&evaluate(&["-"], Some(&format!("{other_source}---{only}"))));
    let apps = verdicts_named(&report, "Kustomization", "apps")[0];
    assert_eq!(apps["state"], "failed", "{apps}");
    assert_eq!(
        apps["reason"],
        "source GitRepository flux-system/flux-system not found"
    );

    let report = report_of(&evaluate(
        &["-"],
        Some(&format!("{}---{only}", git_source())),
    ));
    assert_eq!(
        verdicts_named(&report, "Kustomization", "apps")[0]["state"],
        "healthy"
    );
}
