//! Packaging: the Helm charts (lint, render, schema, and the rendered manifests validated by a
//! real API server with a server-side dry run) and docker-compose.yml.

mod common;

use common::testbed::Testbed;
use serde::Deserialize;
use std::path::PathBuf;
use std::process::{Command, Output};

fn charts() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("helm")
}

fn helm(args: &[&str]) -> Output {
    Command::new(Testbed::bin_dir().join("helm"))
        .args(args)
        .current_dir(charts())
        .output()
        .expect("run helm")
}

fn ok(output: Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Packs the reader subchart into the main chart once per run (tests run in parallel and
/// helm's dependency build is not safe to run concurrently).
fn build_dependencies() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        ok(helm(&["dependency", "build", "fleetglass"]));
    });
}

/// Renders the main chart with extra `--set` values.
fn render(sets: &[&str]) -> Output {
    build_dependencies();
    let mut args = vec!["template", "fg", "fleetglass", "--namespace", "fleetglass"];
    for set in sets {
        args.extend(["--set", set]);
    }
    helm(&args)
}

#[test]
fn charts_lint_clean() {
    build_dependencies();
    ok(helm(&["lint", "--strict", "fleetglass"]));
    ok(helm(&["lint", "--strict", "fleetglass-reader"]));
}

#[test]
fn misspelled_or_floating_values_are_rejected() {
    for (set, complaint) in [
        ("servce.port=80", "servce"),
        ("image.tga=1.0.0", "tga"),
        ("podDisruptionBudget.minAvilable=1", "minAvilable"),
        ("image.tag=latest", "/image/tag"),
        ("topology=sideways", "topology"),
        (
            "fleetglass-reader.serviceAcount.create=false",
            "serviceAcount",
        ),
    ] {
        let output = render(&[set]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{set} must be rejected");
        assert!(stderr.contains(complaint), "{set}: {stderr}");
    }
    // Open levels stay open: annotations, labels and resources take any key.
    ok(render(&[
        "podAnnotations.anything/goes=yes",
        "resources.limits.cpu=2",
        "nodeSelector.zone=a",
    ]));
}

#[test]
fn rendered_manifests_are_hardened() {
    let one = ok(render(&[
        "image.digest=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    ]));
    for needle in [
        "readOnlyRootFilesystem: true",
        "allowPrivilegeEscalation: false",
        "runAsNonRoot: true",
        "drop: [\"ALL\"]",
        "path: /healthz",
        "path: /readyz",
        "kind: PodDisruptionBudget",
        "kind: ClusterRole",
        "@sha256:0123456789abcdef",
        "secretKeyRef",
    ] {
        assert!(one.contains(needle), "missing {needle}");
    }
    assert!(!one.contains(":latest"));
    assert!(!one.contains("verbs: [\"create\""), "read-only RBAC only");
    let split = ok(render(&["topology=split"]));
    assert!(
        split.contains("name: fg-fleetglass-web")
            && split.contains("name: fg-fleetglass-collector")
    );
    assert!(split.contains("--role=collector") && split.contains("--role=web"));
}

#[test]
fn the_api_server_accepts_the_rendered_manifests() {
    let bed = Testbed::up("shared", 3);
    let cluster = &bed.clusters[0];
    let namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: fleetglass\n";
    let created = bed.kubectl_output(cluster, &["apply", "-f", "-"], Some(namespace));
    assert!(
        created.status.success(),
        "{}",
        String::from_utf8_lossy(&created.stderr)
    );
    for sets in [
        vec![],
        vec![
            "topology=split",
            "ingress.enabled=true",
            "slack.existingSecret=slack",
            "apiTokens.existingSecret=tokens",
            "kubeconfigs.existingSecret=kc",
        ],
    ] {
        let manifests = ok(render(&sets));
        let applied = bed.kubectl_output(
            cluster,
            &["apply", "--dry-run=server", "-f", "-"],
            Some(&manifests),
        );
        let stderr = String::from_utf8_lossy(&applied.stderr);
        assert!(applied.status.success(), "{sets:?}: {stderr}");
        let stdout = String::from_utf8_lossy(&applied.stdout);
        assert!(stdout.contains("deployment.apps/fg-fleetglass"), "{stdout}");
    }
    let reader = ok(helm(&[
        "template",
        "reader",
        "fleetglass-reader",
        "--namespace",
        "fleetglass",
        "--set",
        "tokenSecret=true",
    ]));
    let applied = bed.kubectl_output(
        cluster,
        &["apply", "--dry-run=server", "-f", "-"],
        Some(&reader),
    );
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );
}

#[test]
fn docker_compose_is_valid_and_pinned() {
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docker-compose.yml"),
    )
    .unwrap();
    let compose: serde_yaml::Value =
        serde_yaml::from_str(&text).expect("docker-compose.yml parses");
    let services = compose["services"].as_mapping().expect("services");
    let postgres = &compose["services"]["postgres"];
    let image = postgres["image"].as_str().unwrap();
    assert!(
        image.starts_with("postgres:") && !image.ends_with(":latest") && image.contains('.'),
        "pinned: {image}"
    );
    assert!(postgres["healthcheck"]["test"].is_sequence());
    assert!(postgres["volumes"].is_sequence());
    let fleetglass = &compose["services"]["fleetglass"];
    let command: Vec<&str> = fleetglass["command"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert!(command.contains(&"--demo"));
    assert!(
        fleetglass["environment"]["DATABASE_URL"]
            .as_str()
            .unwrap()
            .contains("@postgres:5432/")
    );
    assert_eq!(
        fleetglass["depends_on"]["postgres"]["condition"].as_str(),
        Some("service_healthy")
    );
    assert_eq!(services.len(), 2);
    for (name, _) in compose["volumes"].as_mapping().unwrap() {
        assert!(
            text.contains(&format!("{}:/", name.as_str().unwrap())),
            "volume used"
        );
    }
}

/// The plain manifest (for `kubectl apply`) and the chart grant exactly the same permissions.
#[test]
fn the_reader_manifest_and_the_chart_grant_the_same_rules() {
    let rules_of = |yaml: &str| -> serde_yaml::Value {
        serde_yaml::Deserializer::from_str(yaml)
            .map(|doc| serde_yaml::Value::deserialize(doc).unwrap())
            .find(|doc| doc["kind"] == "ClusterRole")
            .expect("a ClusterRole")["rules"]
            .clone()
    };
    let manifest = std::fs::read_to_string(charts().join("rbac/fleetglass-reader.yaml")).unwrap();
    let chart = ok(helm(&["template", "reader", "fleetglass-reader"]));
    assert_eq!(rules_of(&manifest), rules_of(&chart));
    let text = format!("{:?}", rules_of(&chart));
    for needed in [
        "kustomizations",
        "helmreleases",
        "customresourcedefinitions",
        "namespaces",
        "pods",
    ] {
        assert!(text.contains(needed), "{needed}");
    }
    assert!(!text.contains("secrets") && !text.contains("create") && !text.contains("patch"));
}
