//! A container's previous log from the cluster's API server (`GET …/pods/{pod}/log?previous`),
//! through a client made for the one request.

use super::connect;
use crate::config::ClusterConfig;
use crate::sources::logs::{BYTES, LINES, LogError};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, LogParams};

pub async fn previous_log(
    target: &ClusterConfig,
    namespace: &str,
    pod: &str,
    container: &str,
) -> Result<String, LogError> {
    let cluster = target.name.clone();
    let failed = |problem: String| LogError::Failed {
        cluster: cluster.clone(),
        problem,
    };
    let client = connect::client(target)
        .await
        .map_err(|e| failed(e.to_string()))?;
    let pods: Api<Pod> = Api::namespaced(client, namespace);
    let params = LogParams {
        container: Some(container.to_string()),
        previous: true,
        tail_lines: Some(LINES),
        limit_bytes: Some(BYTES),
        ..LogParams::default()
    };
    pods.logs(pod, &params).await.map_err(|error| match &error {
        kube::Error::Api(status) if status.code == 403 => LogError::Forbidden {
            cluster: cluster.clone(),
        },
        kube::Error::Api(status) => failed(status.message.clone()),
        other => failed(other.to_string()),
    })
}
