//! One API client per cluster, from the cluster's own config: a kubeconfig file and context,
//! `$KUBECONFIG` (or ~/.kube/config), or the pod's service account. Exec plugins and token
//! files work as kube-rs supports them. Failures are per cluster and never affect another.

use crate::config::ClusterConfig;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use std::path::Path;
use std::time::Duration;

/// Connecting must fail fast so a dead cluster is reported within a probe interval.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Why a cluster's client could not be built (bad kubeconfig, missing context).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConnectError(String);

#[tracing::instrument(skip_all, fields(cluster = %target.name))]
pub async fn client(target: &ClusterConfig) -> Result<Client, ConnectError> {
    let mut config = if target.in_cluster {
        Config::incluster()
            .map_err(|e| ConnectError(format!("in-cluster credentials unavailable: {e}")))?
    } else {
        let kubeconfig = read_kubeconfig(target.kubeconfig.as_deref())?;
        let options = KubeConfigOptions {
            context: target.context.clone(),
            ..KubeConfigOptions::default()
        };
        Config::from_custom_kubeconfig(kubeconfig, &options)
            .await
            .map_err(|e| match &target.context {
                Some(context) => ConnectError(format!("kubeconfig context {context:?}: {e}")),
                None => ConnectError(format!("kubeconfig: {e}")),
            })?
    };
    config.connect_timeout = Some(CONNECT_TIMEOUT);
    Client::try_from(config).map_err(|e| ConnectError(format!("cannot build a client: {e}")))
}

fn read_kubeconfig(path: Option<&Path>) -> Result<Kubeconfig, ConnectError> {
    match path {
        Some(path) => Kubeconfig::read_from(path)
            .map_err(|e| ConnectError(format!("kubeconfig {}: {e}", path.display()))),
        None => Kubeconfig::read().map_err(|e| ConnectError(format!("kubeconfig: {e}"))),
    }
}

/// Without configured clusters, every context of `$KUBECONFIG` (or ~/.kube/config) is a
/// cluster named after its context, as kubectl users expect; `only` narrows the list.
pub fn clusters_from_kubeconfig(only: &[String]) -> Result<Vec<ClusterConfig>, ConnectError> {
    let kubeconfig = read_kubeconfig(None)?;
    let contexts: Vec<String> = kubeconfig.contexts.iter().map(|c| c.name.clone()).collect();
    if let Some(missing) = only.iter().find(|c| !contexts.contains(c)) {
        return Err(ConnectError(format!(
            "no context {missing:?} in the kubeconfig (it has: {})",
            contexts.join(", ")
        )));
    }
    let chosen: Vec<ClusterConfig> = contexts
        .into_iter()
        .filter(|c| only.is_empty() || only.contains(c))
        .map(|context| ClusterConfig {
            name: cluster_name(&context),
            kubeconfig: None,
            context: Some(context),
            in_cluster: false,
            labels: Default::default(),
        })
        .collect();
    if chosen.is_empty() {
        return Err(ConnectError(
            "the kubeconfig has no contexts: configure clusters or set KUBECONFIG".into(),
        ));
    }
    Ok(chosen)
}

/// Context names may hold characters ids cannot (EKS: `arn:aws:eks:…/name`); those become '-'.
fn cluster_name(context: &str) -> String {
    context
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn context_names_become_valid_cluster_names() {
        assert_eq!(super::cluster_name("tb-1"), "tb-1");
        assert_eq!(
            super::cluster_name("arn:aws:eks:eu-west-1:1:cluster/prod"),
            "arn-aws-eks-eu-west-1-1-cluster-prod"
        );
    }
}
