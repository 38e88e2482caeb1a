//! Two collectors sharing one database split the clusters with leases; when one dies without
//! a word, the other takes its cluster over within a lease period and keeps collecting it.

use crate::common;

use common::collector::{config, flux_pair, objects_in, ready_of, ready_status};
use common::eventually;
use fleetglass::app::{Collector, Source};
use fleetglass::ingest::ClusterSet;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collectors_split_the_clusters_and_take_over_from_a_dead_one() {
    let bed = common::collector::bed();
    let (one, two) = (bed.clusters[0].as_str(), bed.clusters[1].as_str());
    let ns = common::collector::unique_namespace("fgs");
    for cluster in [one, two] {
        common::collector::apply(&bed, cluster, &flux_pair(&ns));
        common::collector::set_status(&bed, cluster, "kustomization/app", &ns, &ready_status(true));
    }
    let store = common::fresh_store().await;
    let settings = config(&bed.kubeconfig, &[one, two]);
    let a = Collector::start(&settings, store.clone(), Source::Kube, "collector-a".into());
    let b = Collector::start(&settings, store.clone(), Source::Kube, "collector-b".into());

    let (held_a, held_b) = eventually("each collector holds one cluster", DEADLINE, || async {
        let (held_a, held_b) = (a.held.borrow().clone(), b.held.borrow().clone());
        (held_a.len() == 1 && held_b.len() == 1 && held_a != held_b).then_some((held_a, held_b))
    })
    .await;
    let holders: Vec<(String, String)> =
        sqlx::query!("SELECT cluster, holder FROM collector_leases ORDER BY cluster")
            .fetch_all(store.pool())
            .await
            .unwrap()
            .into_iter()
            .map(|row| (row.cluster, row.holder))
            .collect();
    assert_eq!(holders.len(), 2, "{holders:?}");
    for (cluster, holder) in &holders {
        let expected = if held_a.contains(cluster) {
            "collector-a"
        } else {
            "collector-b"
        };
        assert_eq!(holder, expected);
    }
    // Each collector evaluates only what it holds.
    for (collector, held) in [(&a, &held_a), (&b, &held_b)] {
        eventually(
            "a collector's evaluation covers its cluster only",
            DEADLINE,
            || async {
                let latest = collector.latest.borrow().clone();
                let clusters: ClusterSet = latest
                    .fleet
                    .merged()
                    .objects
                    .iter()
                    .map(|v| v.cluster.to_string())
                    .collect();
                (&clusters == held).then_some(())
            },
        )
        .await;
    }

    let orphan = held_a.first().unwrap().clone();
    a.crash();
    eventually("the survivor holds both clusters", DEADLINE, || async {
        (b.held.borrow().len() == 2).then_some(())
    })
    .await;
    // And really collects the orphaned one: a change made now arrives.
    common::collector::set_status(
        &bed,
        &orphan,
        "kustomization/app",
        &ns,
        &ready_status(false),
    );
    eventually(
        "a change on the taken-over cluster is collected",
        DEADLINE,
        || async {
            let objects = objects_in(&store, &orphan, &ns).await;
            let app = objects
                .iter()
                .find(|o| o.verdict.kind.as_str() == "Kustomization")?;
            (ready_of(app).as_deref() == Some("False")).then_some(())
        },
    )
    .await;
    let holder: String = sqlx::query_scalar!(
        "SELECT holder FROM collector_leases WHERE cluster = $1",
        orphan
    )
    .fetch_one(store.pool())
    .await
    .unwrap();
    assert_eq!(holder, "collector-b");
    b.stop().await;
    let left: i64 = sqlx::query_scalar!(
        r#"SELECT count(*) AS "left!" FROM collector_leases WHERE holder = 'collector-b'"#
    )
    .fetch_one(store.pool())
    .await
    .unwrap();
    assert_eq!(left, 0, "a stopped collector releases its leases");
}
