//! Objects created, changed and deleted on two real API servers appear, change and vanish in
//! the store.

use crate::common;

use common::collector::{bed_time, config, flux_pair, objects_in, ready_of, ready_status};
use common::eventually;
use common::testbed::manifest;
use fleetglass::app::{Collector, Source};
use fleetglass::objects::{Meta, Workload, WorkloadKind};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_on_two_clusters_appear_change_and_vanish() {
    let bed = common::collector::bed();
    let (one, two) = (bed.clusters[0].as_str(), bed.clusters[1].as_str());
    let ns = common::collector::unique_namespace("fgw");
    for cluster in [one, two] {
        common::collector::apply(&bed, cluster, &flux_pair(&ns));
        common::collector::set_status(&bed, cluster, "kustomization/app", &ns, &ready_status(true));
    }
    let deployment = |name: &str, container: &str, image: &str| Workload {
        kind: WorkloadKind::Deployment,
        meta: Meta::new(&ns, name, bed_time()),
        app: name.into(),
        container: container.into(),
        image: image.into(),
        replicas: 1,
        status: None,
    };
    let mut web = deployment("web", "web", "nginx:1.27");
    web.meta = web.meta.applied_by_kustomization(&ns, "app");
    let unrelated = deployment("unrelated", "x", "busybox");
    let workload = manifest(&[web.to_json(), unrelated.to_json()]);
    common::collector::apply(&bed, one, &workload);

    let store = common::fresh_store().await;
    let collector = Collector::start(
        &config(&bed.kubeconfig, &[one, two]),
        store.clone(),
        Source::Kube,
        "watch-test".into(),
    );

    for cluster in [one, two] {
        eventually("both Flux objects stored", DEADLINE, || async {
            let objects = objects_in(&store, cluster, &ns).await;
            let app = objects
                .iter()
                .find(|o| o.verdict.kind.as_str() == "Kustomization")?;
            objects
                .iter()
                .find(|o| o.verdict.kind.as_str() == "GitRepository")?;
            (ready_of(app).as_deref() == Some("True")).then_some(())
        })
        .await;
    }
    let kinds: Vec<String> = objects_in(&store, one, &ns)
        .await
        .into_iter()
        .map(|o| format!("{}/{}", o.verdict.kind, o.verdict.name))
        .collect();
    assert!(kinds.contains(&"Deployment/web".to_string()), "{kinds:?}");
    assert!(
        !kinds.contains(&"Deployment/unrelated".to_string()),
        "a Deployment without Flux labels must not be watched: {kinds:?}"
    );

    // A change on one cluster shows up there only.
    common::collector::set_status(&bed, one, "kustomization/app", &ns, &ready_status(false));
    eventually(
        "the Kustomization on cluster one turned not ready",
        DEADLINE,
        || async {
            let objects = objects_in(&store, one, &ns).await;
            let app = objects
                .iter()
                .find(|o| o.verdict.kind.as_str() == "Kustomization")?;
            (ready_of(app).as_deref() == Some("False")).then_some(())
        },
    )
    .await;
    let other = objects_in(&store, two, &ns).await;
    let app = other
        .iter()
        .find(|o| o.verdict.kind.as_str() == "Kustomization")
        .unwrap();
    assert_eq!(ready_of(app).as_deref(), Some("True"));

    // A deletion on the other cluster removes the row.
    bed.kubectl(two, &["delete", "gitrepository/repo", "-n", &ns]);
    eventually(
        "the GitRepository on cluster two vanished",
        DEADLINE,
        || async {
            let objects = objects_in(&store, two, &ns).await;
            objects
                .iter()
                .all(|o| o.verdict.kind.as_str() != "GitRepository")
                .then_some(())
        },
    )
    .await;
    assert!(
        objects_in(&store, one, &ns)
            .await
            .iter()
            .any(|o| o.verdict.kind.as_str() == "GitRepository"),
        "cluster one's GitRepository must stay"
    );

    collector.stop().await;
    for cluster in [one, two] {
        bed.kubectl(cluster, &["delete", "namespace", &ns, "--wait=false"]);
    }
}
