//! Pods, but not every pod of the cluster: only those in namespaces holding Flux-labelled
//! workloads (Flux's labels are on the workloads, not on their pods, so the namespace is the
//! narrowest selection the API server can do for us) plus flux-system for the controllers.
//! One watch per namespace; pods of a namespace that no longer qualifies are deleted here.

use super::context::ClusterContext;
use super::watch::{Trouble, id_of, slim};
use crate::metrics;
use crate::model::{Kind, ObjectId};
use crate::sources::SourceEvent;
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DynamicObject};
use kube::discovery::ApiResource;
use kube::runtime::{WatchStreamExt, watcher};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

const ALWAYS: &str = "flux-system";

type Delivery = (
    String,
    Result<watcher::Event<DynamicObject>, watcher::Error>,
);

#[derive(Default)]
struct Namespace {
    task: Option<tokio::task::AbortHandle>,
    known: HashSet<ObjectId>,
    relisting: Option<HashSet<ObjectId>>,
}

#[tracing::instrument(skip_all, fields(cluster = %ctx.cluster, kind = "Pod"))]
pub async fn run(client: kube::Client, ctx: Arc<ClusterContext>) {
    let resource = ApiResource::erase::<Pod>(&());
    let (deliver, mut deliveries) = mpsc::channel::<Delivery>(1024);
    let mut wanted_namespaces = ctx.namespaces.subscribe();
    let mut tasks = JoinSet::new();
    let mut namespaces: HashMap<String, Namespace> = HashMap::new();
    let mut trouble = Trouble::default();
    let cluster = ctx.cluster.clone();
    loop {
        let wanted: BTreeSet<String> = wanted_namespaces
            .borrow_and_update()
            .values()
            .flatten()
            .cloned()
            .chain([ALWAYS.to_string()])
            .collect();
        let stale: Vec<String> = namespaces
            .keys()
            .filter(|ns| !wanted.contains(*ns))
            .cloned()
            .collect();
        for ns in stale {
            if let Some(gone) = namespaces.remove(&ns) {
                gone.task.inspect(|t| t.abort());
                for id in gone.known {
                    ctx.send(SourceEvent::Delete(id)).await;
                }
            }
        }
        for ns in wanted {
            let entry = namespaces.entry(ns.clone()).or_default();
            if entry.task.is_none() {
                let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns, &resource);
                entry.task = Some(tasks.spawn(forward(api, ns, deliver.clone())));
            }
        }
        loop {
            tokio::select! {
                changed = wanted_namespaces.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    break;
                }
                Some((ns, delivery)) = deliveries.recv() => {
                    let Some(namespace) = namespaces.get_mut(&ns) else { continue };
                    let event = match delivery {
                        Ok(event) => event,
                        Err(error) => {
                            trouble.failed(&ctx, Kind::Pod, &error).await;
                            continue;
                        }
                    };
                    metrics::event_received(&cluster, Kind::Pod);
                    trouble.recovered(&ctx, Kind::Pod).await;
                    for out in apply(&cluster, &resource, namespace, event) {
                        ctx.send(out).await;
                    }
                    ctx.alive().await;
                }
            }
        }
    }
}

fn apply(
    cluster: &str,
    resource: &ApiResource,
    namespace: &mut Namespace,
    event: watcher::Event<DynamicObject>,
) -> Vec<SourceEvent> {
    match event {
        watcher::Event::Init => {
            namespace.relisting = Some(HashSet::new());
            Vec::new()
        }
        watcher::Event::InitApply(object) | watcher::Event::Apply(object) => {
            let id = id_of(cluster, Kind::Pod, &object);
            if let Some(seen) = &mut namespace.relisting {
                seen.insert(id.clone());
            }
            namespace.known.insert(id);
            slim(cluster, resource, object)
                .map(|pod| SourceEvent::Apply(Box::new(pod)))
                .into_iter()
                .collect()
        }
        watcher::Event::Delete(object) => {
            let id = id_of(cluster, Kind::Pod, &object);
            namespace.known.remove(&id);
            vec![SourceEvent::Delete(id)]
        }
        watcher::Event::InitDone => {
            let seen = namespace.relisting.take().unwrap_or_default();
            let gone: Vec<ObjectId> = namespace
                .known
                .iter()
                .filter(|id| !seen.contains(*id))
                .cloned()
                .collect();
            namespace.known.retain(|id| seen.contains(id));
            gone.into_iter().map(SourceEvent::Delete).collect()
        }
    }
}

async fn forward(api: Api<DynamicObject>, ns: String, deliver: mpsc::Sender<Delivery>) {
    let mut events = watcher(api, watcher::Config::default())
        .default_backoff()
        .boxed();
    while let Some(event) = events.next().await {
        if deliver.send((ns.clone(), event)).await.is_err() {
            break;
        }
    }
}
