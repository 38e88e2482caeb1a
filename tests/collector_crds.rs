//! Seed 000, incident 2, on a real API server: a CRD that a Kustomization's inventory depends
//! on is deleted; within seconds its consumer is `failed` naming the CRD and the stack that
//! provided it, and it is a root cause (which pages at once).

mod common;

use common::collector::{apply, config, objects_in, set_status};
use common::eventually;
use fleetglass::app::{Collector, Source};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_consumed_crd_fails_its_consumer_within_seconds() {
    let bed = common::collector::bed();
    let cluster = bed.clusters[0].as_str();
    let ns = common::collector::unique_namespace("fgc");
    let suffix = ns.replace('-', "");
    let group = format!("{suffix}.example.com");
    let crd = format!("widgets.{group}");
    apply(
        &bed,
        cluster,
        &format!(
            r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: {crd}}}
spec:
  group: {group}
  scope: Namespaced
  names: {{kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}}
  versions: [{{name: v1, served: true, storage: true, schema: {{openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}}}}}]
---
apiVersion: v1
kind: Namespace
metadata: {{name: {ns}}}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {{name: repo, namespace: {ns}}}
spec: {{interval: 5m, url: "https://example.invalid/repo.git", ref: {{branch: main}}}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: crds, namespace: {ns}}}
spec: {{interval: 10m, path: ./crds, prune: true, sourceRef: {{kind: GitRepository, name: repo}}}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: app, namespace: {ns}}}
spec: {{interval: 10m, path: ./app, prune: true, sourceRef: {{kind: GitRepository, name: repo}}}}
"#
        ),
    );
    let ready = |entries: &str| {
        format!(
            r#"{{"observedGeneration": 1, "lastAttemptedRevision": "main@sha1:1", "lastAppliedRevision": "main@sha1:1", "inventory": {{"entries": [{entries}]}}, "conditions": [{{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded", "message": "Applied revision: main@sha1:1", "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 1}}]}}"#
        )
    };
    set_status(
        &bed,
        cluster,
        "gitrepository/repo",
        &ns,
        r#"{"observedGeneration": 1, "artifact": {"revision": "main@sha1:1", "digest": "sha256:1", "lastUpdateTime": "2026-01-01T00:00:00Z", "path": "x", "url": "http://x"}, "conditions": [{"type": "Ready", "status": "True", "reason": "Succeeded", "message": "stored", "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 1}]}"#,
    );
    set_status(
        &bed,
        cluster,
        "kustomization/crds",
        &ns,
        &ready(&format!(
            r#"{{"id": "_{crd}_apiextensions.k8s.io_CustomResourceDefinition", "v": "v1"}}"#
        )),
    );
    set_status(
        &bed,
        cluster,
        "kustomization/app",
        &ns,
        &ready(&format!(
            r#"{{"id": "{ns}_one_{group}_Widget", "v": "v1"}}"#
        )),
    );

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
                .find(|o| o.kind.as_str() == "Kustomization" && o.name == "app")?;
            (app.state.as_str() == "healthy").then_some(())
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
            .find(|o| o.kind.as_str() == "Kustomization" && o.name == "app")?;
        (app.state.as_str() == "failed").then(|| app.reason.clone())
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
            .any(|c| c.id.as_str() == consumer)
            .then_some(())
    })
    .await;
    collector.stop().await;
}
