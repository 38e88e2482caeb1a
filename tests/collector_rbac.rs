//! A collector identity that may not read HelmReleases gets a clear Forbidden reason for that
//! kind only; everything else is still collected.

use crate::common;

use common::collector::{cluster_row, config, flux_pair, objects_in};
use common::eventually;
use fleetglass::app::{Collector, Source};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

/// The shipped reader role, minus HelmReleases.
fn role_without_helm_releases() -> String {
    let manifest = include_str!("../helm/rbac/fleetglass-reader.yaml");
    let role = manifest
        .split("\n---\n")
        .find(|doc| doc.contains("kind: ClusterRole\n"))
        .expect("the ClusterRole");
    role.replace("name: fleetglass-reader", "name: fg-test-no-helm")
        .replace(
            "  - apiGroups: [\"helm.toolkit.fluxcd.io\"]\n    resources: [\"helmreleases\"]\n    verbs: [\"get\", \"list\", \"watch\"]\n",
            "",
        )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_helm_releases_are_named_and_only_that_kind_suffers() {
    let bed = common::collector::bed();
    let one = bed.clusters[0].as_str();
    let role = role_without_helm_releases();
    assert!(!role.contains("helmreleases") && role.contains("kustomizations"));
    common::collector::apply(&bed, one, &role);
    common::collector::apply(
        &bed,
        one,
        "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: fg-no-helm, namespace: flux-system}\n---\n\
         apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: fg-test-no-helm}\n\
         roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: fg-test-no-helm}\n\
         subjects: [{kind: ServiceAccount, name: fg-no-helm, namespace: flux-system}]\n",
    );
    let token = bed.kubectl(one, &["-n", "flux-system", "create", "token", "fg-no-helm"]);
    // A kubeconfig for that identity: the admin one with the user's credentials replaced.
    let dir = std::env::temp_dir().join(common::collector::unique_namespace("fg-rbac"));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    std::fs::copy(&bed.kubeconfig, &kubeconfig).unwrap();
    let user = bed.kubectl(
        one,
        &[
            "config",
            "view",
            "-o",
            &format!("jsonpath={{.contexts[?(@.name==\"{one}\")].context.user}}"),
        ],
    );
    // Edits the copied kubeconfig only (the admin one stays as it was).
    let edit = |args: &[&str]| {
        let output = std::process::Command::new(bed.bin.join("kubectl"))
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    let user = user.trim();
    edit(&["config", "set-credentials", user, "--token", token.trim()]);
    edit(&[
        "config",
        "unset",
        &format!("users.{user}.client-certificate-data"),
    ]);
    edit(&["config", "unset", &format!("users.{user}.client-key-data")]);

    let ns = common::collector::unique_namespace("fgr");
    common::collector::apply(&bed, one, &flux_pair(&ns));
    let store = common::fresh_store().await;
    let collector = Collector::start(
        &config(&kubeconfig, &[one]),
        store.clone(),
        Source::Kube,
        "rbac-test".into(),
    );

    let errors = eventually("the HelmRelease kind error", DEADLINE, || async {
        let row = cluster_row(&store, one).await?;
        row.kind_errors
            .get("HelmRelease")
            .is_some()
            .then_some(row.kind_errors)
    })
    .await;
    let reason = errors["HelmRelease"].as_str().unwrap();
    assert_eq!(
        reason,
        "RBAC Forbidden: cannot list helmreleases.helm.toolkit.fluxcd.io (user system:serviceaccount:flux-system:fg-no-helm)"
    );
    eventually(
        "the readable kinds are still collected",
        DEADLINE,
        || async {
            let objects = objects_in(&store, one, &ns).await;
            (objects
                .iter()
                .any(|o| o.verdict.kind.as_str() == "Kustomization")
                && objects
                    .iter()
                    .any(|o| o.verdict.kind.as_str() == "GitRepository"))
            .then_some(())
        },
    )
    .await;
    let row = cluster_row(&store, one).await.unwrap();
    let kinds: Vec<&String> = row.kind_errors.as_object().unwrap().keys().collect();
    assert_eq!(
        kinds,
        vec!["HelmRelease"],
        "only HelmRelease may be unreadable"
    );
    assert_eq!(row.error, None);
    collector.stop().await;
    let _ = std::fs::remove_dir_all(dir);
}
