//! Everything about one cluster: its client, the liveness probe, discovery of the Flux kinds
//! it serves (again every few minutes), one watch task per kind, and the pod watches. All its
//! tasks live in one `JoinSet`, so aborting the cluster's task (lease lost) stops them all.

use super::context::ClusterContext;
use super::discovery::{self, Served};
use super::watch::{self, Selection, WatchSpec};
use super::{KubeSettings, connect, pods, probe, warnings};
use crate::config::ClusterConfig;
use crate::model::{Kind, Object, controller_of_deployment};
use crate::sources::{EventSender, SourceEvent};
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::discovery::ApiResource;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::{AbortHandle, JoinSet};

/// Flux's ownership labels on what it applied: the two selections of every workload kind.
const APPLIED_BY_KUSTOMIZATION: &str = "kustomize.toolkit.fluxcd.io/name";
const APPLIED_BY_HELM_RELEASE: &str = "helm.toolkit.fluxcd.io/name";
/// The Flux controllers label their Deployments with this; tofu-controller (a Helm chart of
/// its own) does not, so it is selected by its chart's name label.
const FLUX_CONTROLLERS: &str = "app.kubernetes.io/part-of=flux";
const TOFU_CONTROLLER: &str = "app.kubernetes.io/name in (tofu-controller,tf-controller)";
/// How long the cluster waits for every watch's first list before declaring itself alive.
const FIRST_LIST_DEADLINE: Duration = Duration::from_secs(60);
const RETRY_MIN: Duration = Duration::from_secs(2);
const RETRY_MAX: Duration = Duration::from_secs(30);
/// After a Flux CRD changed, a missing kind is looked for after 1, 2, 4 … 32 s (a minute in all).
const SETTLE_MIN: Duration = Duration::from_secs(1);
const SETTLE_MAX: Duration = Duration::from_secs(32);

fn is_controller(object: &Object) -> bool {
    controller_of_deployment(&object.name).is_some()
}

/// The built-in kinds watched from the start: workloads by Flux's labels, Jobs, CRDs, Namespaces.
fn workload_specs() -> Vec<WatchSpec> {
    let applied = || {
        vec![
            Selection::labelled(Some(APPLIED_BY_KUSTOMIZATION)),
            Selection::labelled(Some(APPLIED_BY_HELM_RELEASE)),
        ]
    };
    let mut deployments = applied();
    for labels in [FLUX_CONTROLLERS, TOFU_CONTROLLER] {
        deployments.push(Selection {
            labels: Some(labels),
            keep: is_controller,
        });
    }
    vec![
        WatchSpec {
            kind: Kind::Deployment,
            resource: ApiResource::erase::<Deployment>(&()),
            selections: deployments,
        },
        WatchSpec {
            kind: Kind::StatefulSet,
            resource: ApiResource::erase::<StatefulSet>(&()),
            selections: applied(),
        },
        WatchSpec {
            kind: Kind::DaemonSet,
            resource: ApiResource::erase::<DaemonSet>(&()),
            selections: applied(),
        },
        // Every Job: those a CronJob creates carry its job template's labels, not Flux's,
        // and a failed run is judged against the CronJob's later ones.
        WatchSpec {
            kind: Kind::Job,
            resource: ApiResource::erase::<Job>(&()),
            selections: vec![Selection::everything()],
        },
        WatchSpec {
            kind: Kind::CronJob,
            resource: ApiResource::erase::<CronJob>(&()),
            selections: applied(),
        },
        // Cross-stack: a consumer breaks when a CRD or Namespace it needs disappears.
        WatchSpec {
            kind: Kind::CustomResourceDefinition,
            resource: ApiResource::erase::<CustomResourceDefinition>(&()),
            selections: vec![Selection::everything()],
        },
        WatchSpec {
            kind: Kind::Namespace,
            resource: ApiResource::erase::<Namespace>(&()),
            selections: vec![Selection::everything()],
        },
    ]
}

struct Watching {
    version: String,
    task: AbortHandle,
}

#[tracing::instrument(skip_all, fields(cluster = %target.name))]
pub async fn run(target: ClusterConfig, events: EventSender, settings: KubeSettings) {
    let ctx = Arc::new(ClusterContext::new(target.name.clone(), events));
    let client = connect_until_it_works(&target, &ctx).await;
    let mut tasks = JoinSet::new();
    tasks.spawn(probe::run(
        client.clone(),
        ctx.clone(),
        settings.probe_interval,
    ));
    let mut watching: HashMap<Kind, Watching> = HashMap::new();
    let mut missing: BTreeSet<Kind> = BTreeSet::new();
    let mut first = true;
    let mut retry = RETRY_MIN;
    // Quick re-discoveries left after a Flux CRD changed (the next one's delay).
    let mut settling: Option<Duration> = None;
    loop {
        let served = match discovery::flux_kinds(&client).await {
            Ok(served) => served,
            Err(error) => {
                tracing::warn!(%error, "cannot discover the Flux kinds; retrying");
                tokio::time::sleep(retry).await;
                retry = (retry * 2).min(RETRY_MAX);
                continue;
            }
        };
        retry = RETRY_MIN;
        let mut specs = if first { workload_specs() } else { Vec::new() };
        specs.extend(changed_flux_kinds(&served, &mut watching));
        report_missing(&ctx, &served, &mut watching, &mut missing).await;
        if first {
            ctx.expect_first_lists(specs.len());
        }
        for spec in specs {
            let kind = spec.kind;
            let version = spec.resource.version.clone();
            let task = tasks.spawn(watch::run(client.clone(), spec, ctx.clone(), first));
            if kind.is_flux() {
                watching.insert(kind, Watching { version, task });
            }
        }
        if first {
            tasks.spawn(pods::run(client.clone(), ctx.clone()));
            tasks.spawn(warnings::run(client.clone(), ctx.clone()));
            let deadline = ctx.clone();
            tasks.spawn(async move {
                tokio::time::sleep(FIRST_LIST_DEADLINE).await;
                deadline.stop_waiting_for_first_lists();
            });
            first = false;
        }
        // Right after a Flux CRD changed, a kind still missing is looked for again soon: the
        // API server lists a CRD's kind in discovery only once its DiscoveryController has
        // synced it from a work queue (apiextensions-apiserver v0.37.2,
        // pkg/apiserver/customresource_discovery_controller.go), after the CRD's Established
        // update that woke this loop. Waiting for the next rediscovery would leave the kind
        // unwatched for `rediscover`.
        let wait = match settling {
            Some(delay) if !missing.is_empty() => delay,
            _ => settings.rediscover,
        };
        tokio::select! {
            _ = tokio::time::sleep(wait) => {
                settling = settling.map(|d| d * 2).filter(|d| *d <= SETTLE_MAX);
            }
            _ = ctx.flux_crds_changed.notified() => {
                tracing::info!("a Flux CRD changed; discovering the served kinds again");
                settling = Some(SETTLE_MIN);
            }
        }
    }
}

/// Watch specs for Flux kinds newly served, or served at another version than watched.
fn changed_flux_kinds(served: &Served, watching: &mut HashMap<Kind, Watching>) -> Vec<WatchSpec> {
    let mut specs = Vec::new();
    for (kind, resource) in &served.kinds {
        if watching
            .get(kind)
            .is_some_and(|w| w.version == resource.version)
        {
            continue;
        }
        if let Some(old) = watching.remove(kind) {
            tracing::info!(%kind, from = %old.version, to = %resource.version, "served version changed");
            old.task.abort();
        }
        specs.push(WatchSpec {
            kind: *kind,
            resource: resource.clone(),
            selections: vec![Selection::everything()],
        });
    }
    specs
}

/// Records kinds the cluster does not serve (once), and clears them when served again.
async fn report_missing(
    ctx: &ClusterContext,
    served: &Served,
    watching: &mut HashMap<Kind, Watching>,
    missing: &mut BTreeSet<Kind>,
) {
    for &kind in &served.missing {
        if let Some(old) = watching.remove(&kind) {
            old.task.abort();
            // The CRD went away: so did its objects.
            let cluster = ctx.cluster.clone();
            ctx.send(SourceEvent::SyncStart {
                cluster: cluster.clone(),
                kind,
            })
            .await;
            ctx.send(SourceEvent::SyncDone {
                cluster: cluster.clone(),
                kind,
            })
            .await;
            // Known empty now: nothing of it is partial.
            ctx.send(SourceEvent::FirstList {
                cluster,
                kind,
                complete: true,
            })
            .await;
        }
        if missing.insert(kind) {
            if discovery::is_optional(kind) {
                tracing::info!(%kind, "kind not served (optional; nothing to watch)");
            } else {
                tracing::warn!(%kind, "kind not served");
                ctx.kind_error(kind, Some(discovery::not_served(kind)))
                    .await;
            }
        }
    }
    for (kind, _) in &served.kinds {
        if missing.remove(kind) && !discovery::is_optional(*kind) {
            ctx.kind_error(*kind, None).await;
        }
    }
}

async fn connect_until_it_works(target: &ClusterConfig, ctx: &ClusterContext) -> kube::Client {
    let mut retry = RETRY_MIN;
    loop {
        match connect::client(target).await {
            Ok(client) => return client,
            Err(error) => {
                tracing::warn!(%error, "cannot connect");
                ctx.send(SourceEvent::ClusterError {
                    cluster: ctx.cluster.clone(),
                    error: error.to_string(),
                })
                .await;
            }
        }
        tokio::time::sleep(retry).await;
        retry = (retry * 2).min(RETRY_MAX);
    }
}
