//! `fleetglass cluster add` against a real API server: the kubeconfig it writes for the hub must
//! list the cluster's Kustomizations with the identity it created, and be refused writes and
//! Secrets; the ClusterRole it creates grants exactly what the reader chart grants.

use crate::common;

use common::collector::{apply, flux_pair, unique_namespace};
use common::testbed::Testbed;
use std::path::Path;
use std::process::{Command, Output};

fn kubectl(bed: &Testbed, kubeconfig: &Path, args: &[&str]) -> Output {
    Command::new(bed.bin.join("kubectl"))
        .env("KUBECONFIG", kubeconfig)
        .args(args)
        .output()
        .expect("run kubectl")
}

/// The kubeconfig inside the Secret manifest the command wrote (under `stringData`).
fn kubeconfig_in(manifest: &str, key: &str) -> String {
    let secret: serde_json::Value = fleetglass::yaml::from_str(manifest).expect("a YAML Secret");
    assert_eq!(secret["kind"], "Secret");
    secret["stringData"][key]
        .as_str()
        .unwrap_or_else(|| panic!("no {key} in {manifest}"))
        .to_string()
}

#[test]
fn the_hubs_kubeconfig_reads_the_fleet_and_nothing_else() {
    let bed = Testbed::up("shared", 3);
    let context = bed.clusters[1].as_str();
    let flux = unique_namespace("spoke");
    apply(&bed, context, &flux_pair(&flux));
    let out = bed
        .state
        .join(format!("cluster-add-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();

    let added = Command::new(env!("CARGO_BIN_EXE_fleetglass"))
        .args([
            "cluster",
            "add",
            context,
            "--name",
            "spoke",
            "--token-ttl",
            "2h",
            "--out",
        ])
        .arg(&out)
        .env("KUBECONFIG", &bed.kubeconfig)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&added.stdout);
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    assert!(
        stdout.contains("kubeconfig: /etc/fleetglass/kubeconfigs/spoke.yaml"),
        "{stdout}"
    );
    assert!(
        stdout.contains("existingSecrets: [fleetglass-kubeconfig-spoke]"),
        "{stdout}"
    );

    let manifest_path = out.join("fleetglass-kubeconfig-spoke.yaml");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&manifest_path)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0, "the manifest holds a token: owner only");
    let manifest = std::fs::read_to_string(&manifest_path).unwrap();
    assert!(
        !manifest.contains("client-key-data"),
        "no admin credentials leave"
    );
    let hub_kubeconfig = out.join("spoke.yaml");
    std::fs::write(&hub_kubeconfig, kubeconfig_in(&manifest, "spoke.yaml")).unwrap();

    let listed = kubectl(
        &bed,
        &hub_kubeconfig,
        &["get", "kustomizations", "-n", &flux, "-o", "name"],
    );
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&listed.stdout).trim(),
        "kustomization.kustomize.toolkit.fluxcd.io/app"
    );
    let who = kubectl(
        &bed,
        &hub_kubeconfig,
        &[
            "auth",
            "whoami",
            "-o",
            "jsonpath={.status.userInfo.username}",
        ],
    );
    assert_eq!(
        String::from_utf8_lossy(&who.stdout),
        "system:serviceaccount:fleetglass:fleetglass-reader"
    );
    for refused in [
        vec!["create", "namespace", &format!("{flux}-x")],
        vec!["delete", "kustomization", "app", "-n", &flux],
        vec!["get", "secrets", "-A"],
    ] {
        let output = kubectl(&bed, &hub_kubeconfig, &refused);
        assert!(!output.status.success(), "{refused:?} must be refused");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("Forbidden"),
            "{refused:?}"
        );
    }

    // The rules are the reader chart's, so the two ways to grant access never drift apart.
    let created = bed.kubectl(
        context,
        &[
            "get",
            "clusterrole",
            "fleetglass-reader:fleetglass:fleetglass-reader",
            "-o",
            "json",
        ],
    );
    let created: serde_json::Value = serde_json::from_str(&created).unwrap();
    let chart = Command::new(bed.bin.join("helm"))
        .args([
            "template",
            "fleetglass-reader",
            "fleetglass-reader",
            "--namespace",
            "fleetglass",
        ])
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("helm"))
        .output()
        .unwrap();
    let rendered = String::from_utf8_lossy(&chart.stdout);
    let role = common::pod::documents(&rendered)
        .into_iter()
        .find(|d| d["kind"] == "ClusterRole")
        .expect("the chart's ClusterRole");
    assert_eq!(created["rules"], role["rules"]);
    assert_eq!(created["metadata"]["name"], role["metadata"]["name"]);

    // Running it again updates in place and hands out a fresh token.
    let again = Command::new(env!("CARGO_BIN_EXE_fleetglass"))
        .args(["cluster", "add", context, "--name", "spoke", "--out"])
        .arg(&out)
        .env("KUBECONFIG", &bed.kubeconfig)
        .output()
        .unwrap();
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let rotated = std::fs::read_to_string(&manifest_path).unwrap();
    assert_ne!(
        kubeconfig_in(&rotated, "spoke.yaml"),
        kubeconfig_in(&manifest, "spoke.yaml")
    );
}

#[test]
fn an_unknown_context_is_one_clear_line() {
    let kubeconfig =
        std::env::temp_dir().join(format!("fleetglass-add-{}.kubeconfig", std::process::id()));
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters: [{name: a, cluster: {server: 'https://127.0.0.1:9'}}]\nusers: [{name: a, user: {token: t}}]\ncontexts: [{name: dev, context: {cluster: a, user: a}}]\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_fleetglass"))
        .args(["cluster", "add", "prod"])
        .env("KUBECONFIG", &kubeconfig)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("fleetglass: ") && stderr.trim().lines().count() == 1,
        "{stderr}"
    );
    assert!(stderr.contains("\"prod\""), "{stderr}");
}
