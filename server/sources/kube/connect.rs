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

impl ConnectError {
    pub fn new(message: impl Into<String>) -> ConnectError {
        ConnectError(message.into())
    }
}

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
