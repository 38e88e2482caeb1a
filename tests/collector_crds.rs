//! Seed 000, incident 2, on a real API server: a CRD that a Kustomization's inventory depends
//! on is deleted; within seconds its consumer is `failed` naming the CRD and the stack that
//! provided it, and it is a root cause (which pages at once).

use crate::common;

use common::collector::{apply, bed_time, config, objects_in, set_status};
use common::eventually;
use common::testbed::manifest;
use fleetglass::app::{Collector, Source};
use fleetglass::objects::{
    self, Artifact, GitRepository, Kustomization, KustomizationStatus, Meta, Ref, SourceStatus,
    Storage, Truth, condition,
};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);
const REVISION: &str = "main@sha1:1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_consumed_crd_fails_its_consumer_within_seconds() {
    let bed = common::collector::bed();
    let cluster = bed.clusters[0].as_str();
    let ns = common::collector::unique_namespace("fgc");
    let suffix = ns.replace('-', "");
    let group = format!("{suffix}.example.com");
    let crd = format!("widgets.{group}");
    // The CRD stays YAML: an API server wants a structural schema, which no builder writes.
    let definition = format!(
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: {crd}}}
spec:
  group: {group}
  scope: Namespaced
  names: {{kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}}
  versions: [{{name: v1, served: true, storage: true, schema: {{openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}}}}}]
"#
    );
    let meta = |name: &str| Meta::new(&ns, name, bed_time());
    let artifact = Artifact {
        storage: Some(Storage {
            path: "x".into(),
            url: "http://x".into(),
            digest: "sha256:1".into(),
        }),
        ..Artifact::new(REVISION, bed_time())
    };
    let stored = condition(
        "Ready",
        Truth::True,
        "Succeeded",
        "stored",
        bed_time(),
        Some(1),
    );
    let repository = GitRepository {
        status: Some(SourceStatus {
            observed_generation: 1,
            artifact: Some(artifact),
            conditions: vec![stored],
        }),
        ..GitRepository::on_main(meta("repo"), "https://example.invalid/repo.git")
    }
    .to_json();
    // Ready on the revision, having applied the one object `entry` names.
    let kustomization = |name: &str, entry: String| {
        let source = Ref::to("GitRepository", "repo");
        let mut kustomization = Kustomization::new(meta(name), source, &format!("./{name}"), "10m");
        let message = format!("Applied revision: {REVISION}");
        let ready = condition(
            "Ready",
            Truth::True,
            "ReconciliationSucceeded",
            &message,
            bed_time(),
            Some(1),
        );
        kustomization.status = Some(KustomizationStatus {
            observed_generation: 1,
            last_attempted_revision: Some(REVISION.into()),
            last_applied_revision: Some(REVISION.into()),
            conditions: vec![ready],
            inventory: Some(vec![(entry, "v1".into())]),
        });
        kustomization.to_json()
    };
    let crds = kustomization(
        "crds",
        format!("_{crd}_apiextensions.k8s.io_CustomResourceDefinition"),
    );
    let app = kustomization("app", format!("{ns}_one_{group}_Widget"));
    let namespace = objects::namespace(&Meta::new("", &ns, bed_time()));
    let flux = manifest(&[namespace, repository.clone(), crds.clone(), app.clone()]);
    apply(&bed, cluster, &format!("{definition}---\n{flux}"));
    for (resource, object) in [
        ("gitrepository/repo", &repository),
        ("kustomization/crds", &crds),
        ("kustomization/app", &app),
    ] {
        set_status(&bed, cluster, resource, &ns, &object["status"].to_string());
    }

    let store = common::fresh_store().await;
    let collector = Collector::start(
        &config(&bed.kubeconfig, &[cluster]),
        store.clone(),
        Source::Kube,
        "crd-test".into(),
    );
    eventually(
        "the consumer is seen healthy while the CRD exists",
        DEADLINE,
        || async {
            let objects = objects_in(&store, cluster, &ns).await;
            let app = objects
                .iter()
                .find(|o| o.verdict.kind.as_str() == "Kustomization" && o.verdict.name == "app")?;
            (app.verdict.state.as_str() == "healthy").then_some(())
        },
    )
    .await;
    let provider = format!("{cluster}/Kustomization/{ns}/crds");
    eventually("the dependency edge is stored", DEADLINE, || async {
        let edges = store.dependencies_of(&provider).await.ok()?;
        (!edges.is_empty()).then_some(())
    })
    .await;

    bed.kubectl(cluster, &["delete", "crd", &crd]);
    let reason = eventually("the consumer fails naming the CRD", DEADLINE, || async {
        let objects = objects_in(&store, cluster, &ns).await;
        let app = objects
            .iter()
            .find(|o| o.verdict.kind.as_str() == "Kustomization" && o.verdict.name == "app")?;
        (app.verdict.state.as_str() == "failed").then(|| app.verdict.reason.clone())
    })
    .await;
    assert!(reason.contains(&crd), "{reason}");
    assert!(
        reason.contains(&provider),
        "names who provided it: {reason}"
    );
    let consumer = format!("{cluster}/Kustomization/{ns}/app");
    eventually("it is a root cause at once", DEADLINE, || async {
        let causes = store.root_causes().await.ok()?;
        causes
            .iter()
            .any(|c| c.verdict.id.as_str() == consumer)
            .then_some(())
    })
    .await;
    collector.stop().await;
}
