//! One supervised watch loop per (cluster, kind): list + watch with backoff, re-list on 410
//! Gone, every object slimmed on arrival. A kind read through one selection maps the watcher's
//! re-list onto `SyncStart`/`SyncDone` (the snapshot sweeps what was not re-sent); a kind read
//! through several selections (Deployments: controllers, and workloads applied by Flux) merges
//! them here and sweeps itself.

use super::context::ClusterContext;
use super::errors::{classify, is_forbidden};
use super::merge::Merge;
use crate::metrics;
use crate::model::{Kind, Object, ObjectId, parse_object};
use crate::sources::SourceEvent;
use futures::{StreamExt, stream};
use kube::api::{Api, DynamicObject};
use kube::core::TypeMeta;
use kube::discovery::ApiResource;
use kube::runtime::{WatchStreamExt, watcher};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A kind whose watch keeps failing (while the cluster answers) is reported after this long.
const FAILING_FOR: Duration = Duration::from_secs(30);

/// One label-selected view of a kind; `keep` filters what the selector cannot express.
pub struct Selection {
    pub labels: Option<&'static str>,
    pub keep: fn(&Object) -> bool,
}

impl Selection {
    pub fn everything() -> Selection {
        Selection::labelled(None)
    }

    pub fn labelled(labels: Option<&'static str>) -> Selection {
        Selection {
            labels,
            keep: |_| true,
        }
    }
}

pub struct WatchSpec {
    pub kind: Kind,
    pub resource: ApiResource,
    pub selections: Vec<Selection>,
}

/// Turns an API object into the slim object at once: managedFields are dropped before the
/// conversion, and only the fields the engine reads survive it.
pub fn slim(cluster: &str, resource: &ApiResource, mut object: DynamicObject) -> Option<Object> {
    object.metadata.managed_fields = None;
    // List items of built-in kinds come without apiVersion and kind.
    object.types = Some(TypeMeta {
        api_version: resource.api_version.clone(),
        kind: resource.kind.clone(),
    });
    let value = serde_json::to_value(&object).ok()?;
    match parse_object(cluster, &value) {
        Ok(slim) => Some(slim),
        Err(skip) => {
            tracing::debug!(%skip, "object skipped");
            None
        }
    }
}

/// The id a watch event's object has, by the one id rule (`ObjectId::new`): a delete event
/// for a CRD or Namespace finds the key its parsed object was held under.
pub fn id_of(cluster: &str, kind: Kind, object: &DynamicObject) -> ObjectId {
    let namespace = object.metadata.namespace.as_deref().unwrap_or_default();
    let name = object.metadata.name.as_deref().unwrap_or("");
    ObjectId::new(cluster, kind, namespace, name)
}

/// Health of one watch, for errors that must reach the fleet.
#[derive(Default)]
pub struct Trouble {
    reported: bool,
    failing_since: Option<Instant>,
}

impl Trouble {
    /// The watch works again: clears a reported error.
    pub async fn recovered(&mut self, ctx: &ClusterContext, kind: Kind) {
        self.failing_since = None;
        if std::mem::take(&mut self.reported) {
            tracing::info!(%kind, "watch recovered");
            ctx.kind_error(kind, None).await;
        }
    }

    /// The watch failed; returns whether the failure means the kind cannot be listed at all
    /// (so the cluster's first list should not wait for it).
    pub async fn failed(
        &mut self,
        ctx: &ClusterContext,
        kind: Kind,
        error: &watcher::Error,
    ) -> bool {
        metrics::watch_restarted(&ctx.cluster, kind);
        let kube_error = match error {
            watcher::Error::InitialListFailed(e)
            | watcher::Error::WatchStartFailed(e)
            | watcher::Error::WatchFailed(e) => Some(e),
            watcher::Error::WatchError(status) if status.code == 410 => {
                tracing::debug!(%kind, "watch expired (410 Gone); re-listing");
                return false;
            }
            _ => None,
        };
        if let Some(reason) = kube_error.and_then(is_forbidden) {
            if !self.reported {
                tracing::warn!(%kind, %reason, "cannot read kind");
            }
            self.reported = true;
            ctx.kind_error(kind, Some(reason)).await;
            return true;
        }
        tracing::warn!(%kind, %error, "watch failed; retrying with backoff");
        let since = *self.failing_since.get_or_insert_with(Instant::now);
        // When the whole cluster is down the probe says so; this is for one kind failing alone.
        if since.elapsed() >= FAILING_FOR && ctx.reachable() {
            let reason = kube_error.map_or_else(|| error.to_string(), classify);
            self.reported = true;
            ctx.kind_error(kind, Some(format!("watch failing: {reason}")))
                .await;
        }
        false
    }
}

#[tracing::instrument(skip_all, fields(cluster = %ctx.cluster, kind = %spec.kind))]
pub async fn run(client: kube::Client, spec: WatchSpec, ctx: Arc<ClusterContext>, gate: bool) {
    let api: Api<DynamicObject> = Api::all_with(client, &spec.resource);
    let streams = spec.selections.iter().enumerate().map(|(i, selection)| {
        let mut config = watcher::Config::default();
        if let Some(labels) = selection.labels {
            config = config.labels(labels);
        }
        watcher(api.clone(), config)
            .default_backoff()
            .map(move |event| (i, event))
            .boxed()
    });
    let mut events = stream::select_all(streams);
    let single = spec.selections.len() == 1;
    let mut merge = Merge::new(spec.selections.len());
    let mut trouble = Trouble::default();
    let mut waiting_first_list = gate;
    let (cluster, kind) = (ctx.cluster.clone(), spec.kind);
    let mut first_list_complete = false;
    ctx.send(first_list(&cluster, kind, false)).await;
    while let Some((i, event)) = events.next().await {
        let event = match event {
            Ok(event) => event,
            Err(error) => {
                if trouble.failed(&ctx, kind, &error).await
                    && std::mem::take(&mut waiting_first_list)
                {
                    ctx.first_list_done();
                }
                continue;
            }
        };
        metrics::event_received(&cluster, kind);
        trouble.recovered(&ctx, kind).await;
        let keep = spec.selections[i].keep;
        if kind == Kind::CustomResourceDefinition && changes_a_flux_kind(&event) {
            ctx.flux_crds_changed.notify_one();
        }
        let out: Vec<SourceEvent> = match event {
            watcher::Event::Init if single => vec![SourceEvent::SyncStart {
                cluster: cluster.clone(),
                kind,
            }],
            watcher::Event::Init => {
                merge.relist_start(i);
                vec![]
            }
            watcher::Event::InitApply(object) | watcher::Event::Apply(object) => {
                let id = id_of(&cluster, kind, &object);
                match slim(&cluster, &spec.resource, object).filter(keep) {
                    Some(slim) => {
                        merge.insert(i, id);
                        vec![SourceEvent::Apply(Box::new(slim))]
                    }
                    None => merge
                        .remove(i, &id)
                        .then_some(SourceEvent::Delete(id))
                        .into_iter()
                        .collect(),
                }
            }
            watcher::Event::Delete(object) => {
                let id = id_of(&cluster, kind, &object);
                merge
                    .remove(i, &id)
                    .then_some(SourceEvent::Delete(id))
                    .into_iter()
                    .collect()
            }
            watcher::Event::InitDone => {
                let gone = merge.relist_done(i);
                let mut out: Vec<SourceEvent> = if single {
                    vec![SourceEvent::SyncDone {
                        cluster: cluster.clone(),
                        kind,
                    }]
                } else {
                    gone.into_iter().map(SourceEvent::Delete).collect()
                };
                if !first_list_complete && merge.every_selection_listed() {
                    first_list_complete = true;
                    out.push(first_list(&cluster, kind, true));
                    if std::mem::take(&mut waiting_first_list) {
                        ctx.first_list_done();
                    }
                }
                out
            }
        };
        if merge.take_membership_changed() && kind.is_workload() {
            let namespaces = merge.namespaces();
            ctx.namespaces.send_if_modified(|all| {
                let changed = all.get(&kind) != Some(&namespaces);
                all.insert(kind, namespaces);
                changed
            });
        }
        for event in out {
            ctx.send(event).await;
        }
        ctx.alive().await;
    }
}

fn first_list(cluster: &str, kind: Kind, complete: bool) -> SourceEvent {
    SourceEvent::FirstList {
        cluster: cluster.to_string(),
        kind,
        complete,
    }
}

/// A live (not initial-list) event on the CRD of a Flux kind: `<plural>.<flux group>`.
fn changes_a_flux_kind(event: &watcher::Event<DynamicObject>) -> bool {
    let (watcher::Event::Apply(crd) | watcher::Event::Delete(crd)) = event else {
        return false;
    };
    let name = crd.metadata.name.as_deref().unwrap_or_default();
    Kind::ALL
        .iter()
        .any(|kind| kind.is_flux() && name.ends_with(&format!(".{}", kind.group())))
}
