//! Killing one API server marks that cluster unreachable within the freshness limit while the
//! other stays fresh; restarting it recovers without restarting fleetglass.

use crate::common;

use common::collector::{cluster_row, config, flux_pair, objects_in, ready_of, ready_status};
use common::eventually;
use fleetglass::app::{Collector, Source};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_api_server_is_reported_and_recovers() {
    let bed = common::collector::bed();
    let (one, two) = (bed.clusters[0].as_str(), bed.clusters[1].as_str());
    let ns = common::collector::unique_namespace("fgo");
    common::collector::apply(&bed, one, &flux_pair(&ns));
    common::collector::set_status(&bed, one, "kustomization/app", &ns, &ready_status(true));
    let store = common::fresh_store().await;
    let collector = Collector::start(
        &config(&bed.kubeconfig, &[one, two]),
        store.clone(),
        Source::Kube,
        "outage-test".into(),
    );
    for cluster in [one, two] {
        eventually("both clusters fresh", DEADLINE, || async {
            let row = cluster_row(&store, cluster).await?;
            (row.last_good.is_some() && row.error.is_none()).then_some(())
        })
        .await;
    }

    bed.stop_cluster(one);
    let stopped_at = chrono::Utc::now();
    // A request in flight when the server died may first report the connection reset; once
    // the server is gone every probe is refused.
    eventually(
        "cluster one reported refusing connections",
        DEADLINE,
        || async {
            let error = cluster_row(&store, one).await?.error?;
            (error == "connection refused").then_some(())
        },
    )
    .await;
    // No last green: the cluster's objects are unverifiable, naming why.
    let reason = eventually("cluster one's objects unverifiable", DEADLINE, || async {
        let objects = objects_in(&store, one, &ns).await;
        let app = objects
            .iter()
            .find(|o| o.verdict.kind.as_str() == "Kustomization")?;
        (app.verdict.state.as_str() == "unverifiable").then(|| app.verdict.reason.clone())
    })
    .await;
    assert!(reason.contains("connection refused"), "{reason}");
    eventually(
        "cluster two still fresh after the stop",
        DEADLINE,
        || async {
            let row = cluster_row(&store, two).await?;
            (row.error.is_none() && row.last_good? > stopped_at).then_some(())
        },
    )
    .await;

    bed.start_cluster(one);
    let restarted_at = chrono::Utc::now();
    eventually("cluster one fresh again", DEADLINE, || async {
        let row = cluster_row(&store, one).await?;
        (row.error.is_none() && row.last_good? > restarted_at).then_some(())
    })
    .await;
    // The watches resumed: a change made after the restart arrives.
    common::collector::set_status(&bed, one, "kustomization/app", &ns, &ready_status(false));
    eventually(
        "a change after the restart is collected",
        DEADLINE,
        || async {
            let objects = objects_in(&store, one, &ns).await;
            let app = objects
                .iter()
                .find(|o| o.verdict.kind.as_str() == "Kustomization")?;
            (ready_of(app).as_deref() == Some("False")
                && app.verdict.state.as_str() != "unverifiable")
                .then_some(())
        },
    )
    .await;
    collector.stop().await;
}
