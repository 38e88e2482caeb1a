//! The demo fleet's prod-eu-1 replayed onto a real API server by the scenario player, then
//! read back by the collector: seed 000's incident 4 (tofu-controller in ImagePullBackOff,
//! a Terraform object stale for days, a dependsOn chain waiting on it) ends in the store and the
//! API with the controller as the one root cause.

use crate::common;

use chrono::{TimeDelta, Utc};
use common::collector::config;
use common::eventually;
use common::testbed::Testbed;
use fleetglass::app::{Collector, Source};
use fleetglass::sources::demo::world;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(90);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dead_controller_incident_replays_on_a_real_api_server() {
    let bed = Testbed::up("replay", 1);
    let cluster = bed.clusters[0].as_str();
    let now = Utc::now();
    let objects: Vec<_> = world(now - TimeDelta::seconds(10), now)
        .into_iter()
        .filter(|(demo_cluster, _)| demo_cluster == "prod-eu-1")
        .map(|(_, object)| object)
        .collect();
    assert!(objects.len() > 30, "the demo cluster has its fleet");
    common::player::replay(&bed, cluster, &objects);

    let store = common::fresh_store().await;
    let collector = Collector::start(
        &config(&bed.kubeconfig, &[cluster]),
        store.clone(),
        Source::Kube,
        "replay".into(),
    );
    let controller = format!("{cluster}/Deployment/flux-system/tofu-controller");
    let terraform = eventually(
        "the Terraform object is unverifiable because of its controller",
        DEADLINE,
        || async {
            let record = store
                .objects_by_ids(&[format!(
                    "{cluster}/Terraform/flux-system/nlb-security-groups"
                )])
                .await
                .ok()?
                .pop()?;
            (record.verdict.state.as_str() == "unverifiable").then_some(record)
        },
    )
    .await;
    assert_eq!(
        terraform.root_causes,
        serde_json::json!([controller]),
        "{}",
        terraform.verdict.reason
    );
    assert!(
        terraform.verdict.reason.contains("ImagePullBackOff"),
        "{}",
        terraform.verdict.reason
    );
    let chain = eventually(
        "the dependsOn chain is blocked by the same cause",
        DEADLINE,
        || async {
            let record = store
                .objects_by_ids(&[format!("{cluster}/Kustomization/tenants/tenants")])
                .await
                .ok()?
                .pop()?;
            (record.verdict.state.as_str() == "blocked").then_some(record)
        },
    )
    .await;
    assert_eq!(chain.root_causes, serde_json::json!([controller]));
    let causes = store.root_causes().await.unwrap();
    let cause = causes
        .iter()
        .find(|c| c.verdict.id.as_str() == controller)
        .expect("the controller is a root cause");
    assert_eq!(cause.verdict.state.as_str(), "failed");
    assert!(cause.affected.len() >= 4, "{:?}", cause.affected);
    collector.stop().await;
}
