//! Reading a container's previous log from a real API server: the reader role without
//! `pods/log` is told so in words (and how to grant it), and an answer the server refuses for
//! another reason is named, never mistaken for an empty log.

use crate::common;

use common::collector::config;
use fleetglass::sources::logs::{LogError, PodLogs};

fn logs(kubeconfig: &std::path::Path, cluster: &str) -> PodLogs {
    let config = config(kubeconfig, &[cluster]);
    PodLogs::Kube(
        config
            .clusters
            .into_iter()
            .map(|c| (c.name.clone(), c))
            .collect(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn forbidden_logs_are_named_and_other_refusals_are_never_an_empty_log() {
    let bed = common::collector::bed();
    let cluster = bed.clusters[0].as_str();
    let reader = logs(&bed.readonly_kubeconfig, cluster);
    let forbidden = reader
        .previous(cluster, "default", "api-1", "app")
        .await
        .unwrap_err();
    assert_eq!(
        forbidden,
        LogError::Forbidden {
            cluster: cluster.to_string()
        }
    );
    assert!(
        forbidden.to_string().contains("podLogs: true"),
        "{forbidden}"
    );

    let admin = logs(&bed.kubeconfig, cluster);
    match admin
        .previous(cluster, "default", "no-such-pod", "app")
        .await
    {
        Err(LogError::Failed { problem, .. }) => {
            assert!(problem.contains("not found"), "{problem}")
        }
        other => panic!("a missing pod must be an error naming it: {other:?}"),
    }
    let unknown = admin.previous("elsewhere", "default", "p", "c").await;
    assert_eq!(unknown, Err(LogError::UnknownCluster("elsewhere".into())));
}
