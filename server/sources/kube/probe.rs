//! The cheap liveness check: `GET /version` every few seconds. It notices a dead API server
//! long before a watch would, and its failure is what marks the cluster's data unverifiable.

use super::context::ClusterContext;
use super::errors::classify;
use crate::sources::SourceEvent;
use kube::Client;
use std::sync::Arc;
use std::time::Duration;

const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

#[tracing::instrument(skip_all, fields(cluster = %ctx.cluster))]
pub async fn run(client: Client, ctx: Arc<ClusterContext>, every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let error = match tokio::time::timeout(PROBE_TIMEOUT, client.apiserver_version()).await {
            Ok(Ok(_)) => None,
            Ok(Err(error)) => {
                tracing::debug!(%error, "probe failed");
                Some(classify(&error))
            }
            Err(_) => Some(format!(
                "timeout: no answer within {}s",
                PROBE_TIMEOUT.as_secs()
            )),
        };
        match error {
            None => {
                if !ctx.reachable() {
                    tracing::info!("cluster answers");
                }
                ctx.set_reachable(true);
                ctx.alive().await;
            }
            Some(error) => {
                if ctx.reachable() {
                    tracing::warn!(%error, "cluster stopped answering");
                }
                ctx.set_reachable(false);
                ctx.send(SourceEvent::ClusterError {
                    cluster: ctx.cluster.clone(),
                    error,
                })
                .await;
            }
        }
    }
}
