//! One object in full: conditions, revisions, what it waits on and what waits on it, what it
//! applied (workloads, pods), who reconciles it, and its state timeline. The graph is the
//! engine's, read from the edges stored with the verdicts.

use super::commits::CommitLinks;
use super::flux_commands::{FluxCommands, flux_commands};
use super::present::{Moment, ObjectItem, body_of, encode, href_of_id, label_of_id};
use super::warnings::WarningView;
use crate::health::{EdgeKind, State};
use crate::model::{Kind, Object, ObjectId, controller_shard_of_deployment};
use crate::store::{Linked, ObjectKey, ObjectRecord, Store};
use crate::web::error::ApiError;
use crate::web::freshness::Freshness;
use crate::web::scope::Scope;
use crate::web::state::Site;
use chrono::{DateTime, Utc};
use serde::Serialize;

/// Transitions shown in the timeline.
const HISTORY: i64 = 100;
/// Applied objects listed.
const APPLIED: usize = 500;
/// Objects listed as waiting on this one (a controller may reconcile thousands).
const WAITERS: i64 = 500;

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ObjectDetail {
    #[serde(flatten)]
    pub object: ObjectItem,
    pub generation: Option<i64>,
    pub observed_generation: Option<i64>,
    pub conditions: Vec<ConditionRow>,
    pub revisions: Revisions,
    pub upstream: Vec<Related>,
    pub downstream: Vec<Related>,
    pub applied_by: Option<Related>,
    pub applied: Vec<Applied>,
    pub reconciled_by: Option<ReconciledBy>,
    pub history: Vec<Transition>,
    /// Its Warning events and its pods', newest first (at most a few per object, a day old).
    pub warnings: Vec<WarningView>,
    /// Containers (its own, or its pods') that ran before and failed: their last log lines
    /// can be asked for.
    #[serde(skip)]
    pub log_targets: Vec<LogTarget>,
    /// `flux reconcile …` and `flux trace …` for this object, ready to copy.
    pub commands: FluxCommands,
    /// The last reconcile asked for (by `flux reconcile` or here), and whether the controller
    /// has taken it.
    pub reconcile_request: Option<ReconcileRequest>,
    /// A Flux kind: without `reconciled_by`, no controller Deployment of it was seen.
    #[serde(skip)]
    pub flux: bool,
}

/// The object's `reconcile.fluxcd.io/requestedAt` annotation against its status's
/// `lastHandledReconcileAt`: the controller has taken the request when they match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct ReconcileRequest {
    pub requested_at: String,
    pub handled: bool,
    /// The last request the controller took, when not this one.
    pub last_handled: Option<String>,
}

impl ReconcileRequest {
    pub fn of(object: &Object) -> Option<ReconcileRequest> {
        let requested_at = object.reconcile_requested.clone()?;
        let last = object.status.flux.last_handled_reconcile.clone();
        let handled = last.as_deref() == Some(requested_at.as_str());
        Some(ReconcileRequest {
            requested_at,
            handled,
            last_handled: last.filter(|_| !handled),
        })
    }
}

impl Revisions {
    /// Without the source's id, address and ref when `scope` does not see the source.
    pub fn seen_by(mut self, scope: &Scope) -> Revisions {
        if !self.source.as_ref().is_none_or(|id| scope.sees_id(id)) {
            self.source = None;
            self.source_url = None;
            self.source_ref = None;
        }
        self
    }
}

impl ReconciledBy {
    /// The controller by name and state, without its Deployment's id and link when `scope`
    /// does not see it: a failing controller is the object's problem too.
    pub fn seen_by(mut self, scope: &Scope) -> ReconciledBy {
        if !scope.sees_id(&self.deployment_id) {
            self.deployment = "its controller (outside your scope)".into();
            self.deployment_id.clear();
            self.href.clear();
        }
        self
    }
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ConditionRow {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub message: String,
    pub since: Option<DateTime<Utc>>,
    pub observed_generation: Option<i64>,
    #[serde(skip)]
    pub since_moment: Option<Moment>,
}

#[derive(Debug, Default, Serialize, utoipa::ToSchema)]
pub struct Revisions {
    /// What the source offers now (its artifact revision).
    pub offered: Option<String>,
    pub attempted: Option<String>,
    pub applied: Option<String>,
    pub source: Option<String>,
    /// The source's `spec.url` and what it follows (`branch main`, `tag v1.2.0`).
    pub source_url: Option<String>,
    pub source_ref: Option<String>,
    /// The forge's pages for the commits above, for Git sources on a known or configured forge.
    pub commit_urls: CommitUrls,
}

#[derive(Debug, Default, Serialize, utoipa::ToSchema)]
pub struct CommitUrls {
    pub offered: Option<String>,
    pub attempted: Option<String>,
    pub applied: Option<String>,
}

impl Revisions {
    /// Adds what the source (a GitRepository, OCIRepository…) says about where revisions
    /// come from, and links each revision to its commit when the source is Git.
    pub fn with_source(mut self, source: Option<&Object>, links: &CommitLinks) -> Revisions {
        let Some(source) = source else {
            return self;
        };
        self.source_url = source.spec.flux.url.clone();
        self.source_ref = source.spec.flux.reference.clone();
        if source.kind == Kind::GitRepository
            && let Some(url) = &source.spec.flux.url
        {
            let link = |revision: &Option<String>| {
                revision.as_deref().and_then(|r| links.commit_url(url, r))
            };
            self.commit_urls = CommitUrls {
                offered: link(&self.offered),
                attempted: link(&self.attempted),
                applied: link(&self.applied),
            };
        }
        self
    }
}

/// Another object and how it relates to this one; `state` is None when it was never seen.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Related {
    pub id: String,
    pub relation: String,
    pub state: Option<State>,
    #[serde(skip)]
    pub href: String,
    #[serde(skip)]
    pub label: String,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Applied {
    #[serde(flatten)]
    pub object: ObjectItem,
    /// "2/3 ready" for workloads, waiting reasons for pods.
    pub detail: String,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ReconciledBy {
    pub controller: String,
    pub shard: Option<String>,
    pub deployment: String,
    pub deployment_id: String,
    /// The controller Deployment's own state; None when it was never seen.
    pub state: Option<State>,
    pub interval: Option<String>,
    #[serde(skip)]
    pub href: String,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Transition {
    pub from: Option<String>,
    pub to: State,
    pub reason: String,
    pub message: String,
    pub at: DateTime<Utc>,
    #[serde(skip)]
    pub at_moment: Moment,
}

impl ObjectDetail {
    /// The object as `scope` sees it: one outside it is not found (in the words of one that
    /// does not exist), and what it links to outside it is left out.
    pub async fn load(
        store: &Store,
        site: &Site,
        scope: &Scope,
        key: &ObjectKey,
        now: DateTime<Utc>,
    ) -> Result<ObjectDetail, ApiError> {
        if !scope.sees_object(&key.cluster, &key.namespace) {
            return Err(missing(key));
        }
        let (freshness, _) = Freshness::load(store, site, now).await?;
        let mut record = find(store, key).await?;
        freshness.record(&mut record);
        let id = record.verdict.id.clone();
        let body = body_of(&record);
        let item = ObjectItem::new(&record, now);
        let mut prerequisites = store.waits_on(&record).await?;
        freshness.linked(&mut prerequisites);
        let source_edge = prerequisites.iter().find(|l| l.kind == EdgeKind::Source);
        let referenced = source_edge
            .and_then(|l| l.record.as_ref())
            .and_then(body_of);
        let offered = referenced
            .as_ref()
            .and_then(|s| s.status.flux.artifact_revision.clone());
        // Where revisions come from: its source as the engine resolved it, or itself when it
        // is one.
        let source = referenced.or_else(|| body.clone().filter(|o| o.kind.is_source()));
        let reconciled_by = prerequisites
            .iter()
            .find(|l| l.kind == EdgeKind::Controller)
            .and_then(|l| reconciled(l, body.as_ref()));
        let upstream = prerequisites
            .iter()
            .filter_map(|l| Some(related_of(l, waits_on_relation(l.kind)?)))
            .collect();
        let mut waiters = store.waited_on_by(&id, WAITERS).await?;
        freshness.linked(&mut waiters);
        let pods: Vec<(ObjectId, Option<Object>)> = if record.verdict.is_kind(Kind::Pod) {
            vec![(id.clone(), body.clone())]
        } else {
            waiters
                .iter()
                .filter(|l| l.kind == EdgeKind::Owner)
                .map(|l| (l.id.clone(), l.record.as_ref().and_then(body_of)))
                .collect()
        };
        let log_targets = pods
            .iter()
            .filter(|(pod, _)| scope.sees_id(pod.as_str()))
            .flat_map(|(pod, body)| log_targets(pod, body.as_ref()))
            .collect();
        let mut downstream: Vec<Related> = waiters
            .iter()
            .filter_map(|l| Some(related_of(l, waited_on_by_relation(l.kind)?)))
            .collect();
        downstream.sort_by(|a, b| a.id.cmp(&b.id));
        let applier = store.applier(&id).await?;
        let applied = freshness
            .records(store.applied(&record, APPLIED).await?)
            .iter()
            .map(|r| Applied {
                detail: body_of(r).map(|o| applied_detail(&o)).unwrap_or_default(),
                object: ObjectItem::new(r, now),
            })
            .collect();
        let history = store
            .transitions(key, HISTORY)
            .await?
            .into_iter()
            .map(|t| Transition {
                at_moment: Moment::new(t.at, now),
                from: t.from_state.map(|s| s.to_string()),
                to: t.to_state,
                reason: t.reason,
                message: t.message,
                at: t.at,
            })
            .collect();
        let warnings = store
            .warnings_of(std::slice::from_ref(&id))
            .await?
            .iter()
            .map(|(_, warning)| WarningView::new(warning, now))
            .collect();
        let status = body.as_ref().map(|o| &o.status);
        Ok(ObjectDetail {
            reconcile_request: body.as_ref().and_then(ReconcileRequest::of),
            warnings,
            log_targets,
            generation: body.as_ref().and_then(|o| o.generation),
            observed_generation: status.and_then(|s| s.observed_generation),
            conditions: status
                .map(|s| {
                    s.conditions
                        .iter()
                        .map(|c| ConditionRow {
                            type_: c.type_.to_string(),
                            status: format!("{:?}", c.status),
                            reason: c.reason.to_string(),
                            message: c.message.clone(),
                            since: c.last_transition,
                            observed_generation: c.observed_generation,
                            since_moment: Moment::of(c.last_transition, now),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            revisions: Revisions {
                offered,
                attempted: status.and_then(|s| s.flux.last_attempted_revision.clone()),
                applied: status.and_then(|s| {
                    s.flux
                        .last_applied_revision
                        .clone()
                        .or_else(|| s.flux.artifact_revision.clone())
                }),
                source: source_edge.map(|l| l.id.to_string()),
                ..Revisions::default()
            }
            .with_source(source.as_ref(), &site.commit_links),
            commands: flux_commands(body.as_ref(), applier.is_some(), site),
            applied_by: applier.map(|r| {
                let linked = Linked {
                    kind: EdgeKind::Applied,
                    id: r.verdict.id.clone(),
                    record: Some(r),
                };
                related_of(&linked, "applied by")
            }),
            flux: body.as_ref().is_some_and(|o| o.kind.is_flux()),
            object: item,
            upstream,
            downstream,
            applied,
            reconciled_by,
            history,
        }
        .seen_by(scope))
    }

    /// Without what `scope` does not see: linked objects, root causes, domains, warnings of
    /// other objects, the source's id. Who reconciles it stays (by controller and state: a
    /// failing controller is the object's problem too), without the Deployment's id or link.
    fn seen_by(mut self, scope: &Scope) -> ObjectDetail {
        if scope.is_everything() {
            return self;
        }
        self.object = scope.item(self.object);
        self.upstream.retain(|r| scope.sees_id(&r.id));
        self.downstream.retain(|r| scope.sees_id(&r.id));
        self.applied = std::mem::take(&mut self.applied)
            .into_iter()
            .filter(|a| scope.sees_id(a.object.verdict.id.as_str()))
            .map(|mut a| {
                a.object = scope.item(a.object);
                a
            })
            .collect();
        self.applied_by = self.applied_by.filter(|r| scope.sees_id(&r.id));
        self.warnings.retain(|w| scope.sees_id(&w.regarding));
        self.revisions = self.revisions.seen_by(scope);
        self.reconciled_by = self.reconciled_by.map(|by| by.seen_by(scope));
        self
    }

    /// The timeline, oldest first, each state with how long it lasted.
    pub fn timeline(&self) -> Vec<&Transition> {
        self.history.iter().rev().collect()
    }
}

/// The object at a key, or a 404 naming it.
pub async fn find(store: &Store, key: &ObjectKey) -> Result<ObjectRecord, ApiError> {
    store.object(key).await?.ok_or_else(|| missing(key))
}

/// The 404 of an object that is not there, or not in the requester's scope: the same words.
pub fn missing(key: &ObjectKey) -> ApiError {
    ApiError::NotFound(format!(
        "no {} {}/{} on cluster {:?}",
        key.kind, key.namespace, key.name, key.cluster
    ))
}

/// Who reconciles an object, from the controller edge the engine matched (any namespace, the
/// object's shard); None for an object no controller edge leads from.
pub fn reconciled(controller: &Linked, body: Option<&Object>) -> Option<ReconciledBy> {
    let (_, _, _, deployment) = controller.id.parts()?;
    let (name, shard) = controller_shard_of_deployment(deployment)?;
    Some(ReconciledBy {
        state: controller.record.as_ref().map(|r| r.verdict.state),
        href: href_of_id(controller.id.as_str()),
        controller: name.to_string(),
        shard: (!shard.is_empty()).then(|| shard.to_string()),
        deployment: deployment.to_string(),
        deployment_id: controller.id.to_string(),
        interval: body
            .and_then(|o| o.spec.interval())
            .map(crate::model::human),
    })
}

/// How a prerequisite is named in "what it waits on"; the controller and what it applied have
/// sections of their own.
fn waits_on_relation(kind: EdgeKind) -> Option<&'static str> {
    match kind {
        EdgeKind::DependsOn => Some("depends on"),
        EdgeKind::Source => Some("source"),
        EdgeKind::HealthCheck => Some("health check"),
        EdgeKind::Owner => Some("owned by"),
        EdgeKind::Controller | EdgeKind::Applied => None,
    }
}

/// How a dependent is named in "what waits on it"; its applier has a line of its own.
/// A container whose previous run's log the page can fetch.
#[derive(Debug)]
pub struct LogTarget {
    /// "pod api-7d9f…-x2k4q, container app (9 restarts, last exit Error)".
    pub label: String,
    /// The fragment that reads it.
    pub href: String,
    /// Where the fragment goes on the page.
    pub anchor: String,
}

/// The containers of `pod` that ran and failed (restarted, or ended with an error): those
/// have a previous log. One that never started (an image it cannot pull) has none.
fn log_targets(pod: &ObjectId, body: Option<&Object>) -> Vec<LogTarget> {
    let Some((cluster, _, namespace, name)) = pod.parts() else {
        return Vec::new();
    };
    let containers = body
        .and_then(|o| o.status.pod.as_ref())
        .map(|p| p.containers.as_slice())
        .unwrap_or_default();
    containers
        .iter()
        .filter(|c| {
            let failed = c.terminated.as_ref().is_some_and(|t| t.is_error())
                || c.last_terminated.as_ref().is_some_and(|t| t.is_error());
            c.restarts > 0 || failed
        })
        .map(|c| {
            let last = c
                .last_terminated
                .as_ref()
                .or(c.terminated.as_ref())
                .and_then(|t| t.reason.as_deref())
                .map(|reason| format!(", last exit {reason}"))
                .unwrap_or_default();
            LogTarget {
                label: format!(
                    "pod {name}, container {} ({} restarts{last})",
                    c.name, c.restarts
                ),
                href: format!(
                    "/fragments/logs/{}/{}/{}/{}",
                    encode(cluster),
                    encode(namespace),
                    encode(name),
                    encode(&c.name)
                ),
                anchor: format!(
                    "log-{}",
                    super::problems::slug(&format!("{name}-{}", c.name))
                ),
            }
        })
        .collect()
}

fn waited_on_by_relation(kind: EdgeKind) -> Option<&'static str> {
    match kind {
        EdgeKind::DependsOn => Some("depended on by"),
        EdgeKind::Source => Some("source of"),
        EdgeKind::HealthCheck => Some("health-checked by"),
        EdgeKind::Controller => Some("reconciles"),
        EdgeKind::Owner => Some("owns"),
        EdgeKind::Applied => None,
    }
}

fn related_of(linked: &Linked, relation: &str) -> Related {
    let id = linked.id.as_str();
    Related {
        id: id.to_string(),
        relation: relation.to_string(),
        state: linked.record.as_ref().map(|r| r.verdict.state),
        href: href_of_id(id),
        label: label_of_id(id),
    }
}

fn applied_detail(object: &Object) -> String {
    if let Some(w) = &object.status.workload {
        return format!("{}/{} ready", w.ready, w.desired);
    }
    if object.kind == Kind::Pod
        && let Some(pod) = &object.status.pod
    {
        let waiting: Vec<String> = pod
            .containers
            .iter()
            .filter_map(|c| {
                c.waiting_reason
                    .as_ref()
                    .map(|r| format!("{}: {r}", c.name))
            })
            .collect();
        return if waiting.is_empty() {
            pod.phase.clone().unwrap_or_default()
        } else {
            waiting.join(", ")
        };
    }
    String::new()
}

/// The key in `/objects/{cluster}/{kind}/{namespace}/{name}`: the kind in any case, `_` for
/// the empty namespace of cluster-scoped objects.
pub fn key_from_path(
    cluster: String,
    kind: &str,
    namespace: &str,
    name: String,
) -> Result<ObjectKey, ApiError> {
    let kind: Kind = kind
        .parse()
        .map_err(|e: crate::model::UnknownKind| ApiError::BadRequest(e.to_string()))?;
    Ok(ObjectKey {
        cluster,
        kind,
        namespace: if namespace == "_" {
            String::new()
        } else {
            namespace.to_string()
        },
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kustomization(requested: Option<&str>, handled: Option<&str>) -> Object {
        let mut object = json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": "a", "namespace": "n"}, "spec": {}, "status": {},
        });
        if let Some(at) = requested {
            object["metadata"]["annotations"] = json!({"reconcile.fluxcd.io/requestedAt": at});
        }
        if let Some(at) = handled {
            object["status"]["lastHandledReconcileAt"] = json!(at);
        }
        crate::model::parse_object("c", &object).unwrap()
    }

    #[test]
    fn a_reconcile_request_is_handled_when_the_status_names_it() {
        assert_eq!(ReconcileRequest::of(&kustomization(None, Some("t1"))), None);
        let waiting = ReconcileRequest::of(&kustomization(Some("t2"), Some("t1"))).unwrap();
        assert_eq!(waiting.requested_at, "t2");
        assert!(!waiting.handled);
        assert_eq!(waiting.last_handled.as_deref(), Some("t1"));
        let never = ReconcileRequest::of(&kustomization(Some("t2"), None)).unwrap();
        assert!(!never.handled && never.last_handled.is_none());
        let handled = ReconcileRequest::of(&kustomization(Some("t2"), Some("t2"))).unwrap();
        assert!(handled.handled && handled.last_handled.is_none());
    }
}
