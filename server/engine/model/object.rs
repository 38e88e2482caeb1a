//! The slim object: only the fields the health engine reads, the same whichever source
//! (a kube watcher, the demo fleet, a file given to `fleetglass evaluate`) produced it.

use super::{Empty, Interner, Kind, Labels, SharedStr, Sparse};
use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// `cluster/Kind/namespace/name`; the namespace is empty for cluster-scoped objects. Outside
/// the engine an id is made by [`ObjectId::new`] from its parts or read back from text with
/// `parse` (`FromStr`), never spelled by hand.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ObjectId(pub(crate) String);

impl ObjectId {
    /// The one constructor, with the one scope rule every path (watch events, parsing, the
    /// store, the web) goes through: a cluster-scoped kind has no namespace whatever the
    /// source says, and a namespaced object given none is in `default`, as the API server
    /// puts it. Every evaluation builds one per object: `join` allocates the string once.
    pub fn new(cluster: &str, kind: Kind, namespace: &str, name: &str) -> Self {
        let namespace = match namespace {
            _ if kind.is_cluster_scoped() => "",
            "" => "default",
            given => given,
        };
        ObjectId([cluster, kind.as_str(), namespace, name].join("/"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }

    /// Splits the id back into (cluster, kind, namespace, name).
    pub fn parts(&self) -> Option<(&str, &str, &str, &str)> {
        ObjectId::split(&self.0)
    }

    /// The one reading of an id held as text (stored, sent, in a link): (cluster, kind,
    /// namespace, name), or `None` without four parts. The name is the rest, slashes and all.
    pub fn split(text: &str) -> Option<(&str, &str, &str, &str)> {
        let mut it = text.splitn(4, '/');
        Some((it.next()?, it.next()?, it.next()?, it.next()?))
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for ObjectId {
    type Err = String;

    /// Accepts `cluster/Kind/namespace/name` with a cluster, a kind and a name (the namespace
    /// is empty for cluster-scoped objects).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match ObjectId::split(text) {
            Some((cluster, kind, _, name))
                if !cluster.is_empty() && !kind.is_empty() && !name.is_empty() =>
            {
                Ok(ObjectId(text.to_string()))
            }
            _ => Err(format!(
                "not an object id {text:?} (cluster/Kind/namespace/name)"
            )),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Object {
    /// The cluster, API version and namespace are shared: the collector's snapshot interns
    /// them, so thousands of objects hold one copy of each.
    pub cluster: SharedStr,
    pub kind: Kind,
    pub api_version: SharedStr,
    pub namespace: SharedStr,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Labels::is_empty")]
    pub labels: Labels,
    #[serde(default, skip_serializing_if = "is_false")]
    pub deleting: bool,
    /// `metadata.creationTimestamp`: how long an object without status has waited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<DateTime<Utc>>,
    /// `metadata.deletionTimestamp`: how long a deletion has been pending (finalizers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleting_since: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owners: Vec<OwnerRef>,
    /// The `reconcile.fluxcd.io/requestedAt` annotation: a reconcile asked for at this time
    /// (handled once the status's `last_handled_reconcile` says the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconcile_requested: Option<String>,
    pub spec: Spec,
    pub status: Status,
    /// What was malformed in the object as read; the engine reports these instead of guessing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defects: Vec<String>,
}

impl Object {
    pub fn id(&self) -> ObjectId {
        ObjectId::new(&self.cluster, self.kind, &self.namespace, &self.name)
    }

    /// Swaps the cluster name, namespace and API version for the copies `names` shares.
    pub fn share_names(&mut self, names: &mut Interner) {
        self.cluster = names.intern(&self.cluster);
        self.namespace = names.intern(&self.namespace);
        self.api_version = names.intern(&self.api_version);
    }

    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels.get(key)
    }

    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.status.conditions.iter().find(|c| c.type_ == type_)
    }

    /// The Flux object (kind, namespace, name) that applied this object, from Flux's own labels.
    pub fn applied_by(&self) -> Option<(Kind, &str, &str)> {
        self.appliers().next()
    }

    /// Every Flux object that applied this object: a Kustomization, a HelmRelease, or both
    /// (a HelmRelease's objects may also carry the labels of the Kustomization around it).
    pub fn appliers(&self) -> impl Iterator<Item = (Kind, &str, &str)> {
        [
            (
                Kind::Kustomization,
                "kustomize.toolkit.fluxcd.io/name",
                "kustomize.toolkit.fluxcd.io/namespace",
            ),
            (
                Kind::HelmRelease,
                "helm.toolkit.fluxcd.io/name",
                "helm.toolkit.fluxcd.io/namespace",
            ),
        ]
        .into_iter()
        .filter_map(|(kind, name_key, namespace_key)| {
            Some((kind, self.label(namespace_key)?, self.label(name_key)?))
        })
    }

    /// The `sharding.fluxcd.io/key` label: which controller shard reconciles the object.
    pub fn shard(&self) -> Option<&str> {
        self.label(SHARD_LABEL)
    }
}

impl Spec {
    pub fn interval(&self) -> Option<TimeDelta> {
        self.flux.interval_secs.map(TimeDelta::seconds)
    }

    pub fn timeout(&self) -> Option<TimeDelta> {
        self.flux.timeout_secs.map(TimeDelta::seconds)
    }
}

/// Stored bodies leave out fields at their empty value (`false`, `None`, empty lists): a
/// Kustomization's body is about half as long, and Postgres parses each changed one on write.
fn is_false(value: &bool) -> bool {
    !value
}

/// The label that assigns a Flux object to a controller shard.
pub const SHARD_LABEL: &str = "sharding.fluxcd.io/key";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnerRef {
    pub kind: String,
    pub name: String,
}

/// A reference from one object to another (sourceRef, dependsOn, chartRef, healthChecks).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ref {
    /// As written; may name a kind fleetglass does not know.
    pub kind: String,
    pub name: String,
    /// Already defaulted to the referring object's namespace when the reference omits it.
    pub namespace: String,
}

/// What an object declares. Workloads and pods, the most numerous objects, have their fields
/// inline; the Flux kinds' fields and a CRD's names are boxed apart ([`Sparse`]), so the other
/// objects do not carry their room.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Spec {
    /// Flux objects and sources (empty for every other kind).
    #[serde(flatten)]
    pub flux: Sparse<FluxSpec>,
    /// Workloads: `spec.selector.matchLabels`.
    #[serde(default, skip_serializing_if = "Labels::is_empty")]
    pub selector: Labels,
    /// Workloads: desired replicas (DaemonSets: desired number scheduled, from status).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i64>,
    /// Workloads and pods: container images.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    /// CustomResourceDefinition: the group and kind it serves.
    #[serde(flatten)]
    pub crd: Sparse<CrdNames>,
    /// Deployments: `spec.paused` (a rollout the user stopped).
    #[serde(default, skip_serializing_if = "is_false")]
    pub paused: bool,
    /// StatefulSets and DaemonSets: `spec.updateStrategy.type` is OnDelete, so pods are
    /// updated only when someone deletes them and no rollout is ever pending.
    #[serde(default, skip_serializing_if = "is_false")]
    pub updates_on_delete: bool,
    /// StatefulSets: `spec.updateStrategy.rollingUpdate.partition` (ordinals below it stay
    /// on the old revision by design).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<i64>,
}

/// The spec fields of Flux objects and sources.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FluxSpec {
    #[serde(default, skip_serializing_if = "is_false")]
    pub suspend: bool,
    /// `spec.interval` and `spec.timeout` in seconds (seconds keep the struct serialisable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_secs: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<i64>,
    /// Kustomization/Terraform/HelmChart sourceRef, HelmRelease chart.spec.sourceRef or chartRef.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_ref: Option<Ref>,
    /// HelmRelease `spec.chartRef` was used (the source is an OCIRepository or HelmChart directly).
    #[serde(default, skip_serializing_if = "is_false")]
    pub uses_chart_ref: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart_version: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<Ref>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub wait: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub health_checks: Vec<Ref>,
    /// GitRepository `spec.include[].repository`: repositories whose artifacts it includes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub includes: Vec<Ref>,
    /// HelmRepository `spec.type` (`oci` repositories have no status at all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_type: Option<String>,
    /// Sources: `spec.url`, and for Git and OCI repositories what `spec.ref` follows
    /// (`branch main`); shown and linked on pages, not read by the engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

impl Empty for FluxSpec {
    const EMPTY: &'static Self = &FluxSpec {
        suspend: false,
        interval_secs: None,
        timeout_secs: None,
        source_ref: None,
        uses_chart_ref: false,
        chart: None,
        chart_version: None,
        depends_on: Vec::new(),
        wait: false,
        health_checks: Vec::new(),
        includes: Vec::new(),
        source_type: None,
        url: None,
        reference: None,
    };
}

/// CustomResourceDefinition: `spec.group` and `spec.names.kind`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CrdNames {
    #[serde(rename = "crd_group", default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    #[serde(rename = "crd_kind", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

impl Empty for CrdNames {
    const EMPTY: &'static Self = &CrdNames {
        group: None,
        kind: None,
    };
}

/// What the controllers report. As in [`Spec`], the Flux kinds' fields are boxed apart.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// False when the object has no `status` at all.
    #[serde(default, skip_serializing_if = "is_false")]
    pub present: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Flux objects and sources (empty for every other kind).
    #[serde(flatten)]
    pub flux: Sparse<FluxStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadStatus>,
    /// Boxed: only pods have it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<Box<PodStatus>>,
    /// `status.phase` (Terminating matters for a Namespace); a pod's is in `pod`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

/// The status fields of Flux objects and sources.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FluxStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempted_revision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_applied_revision: Option<String>,
    /// Terraform: the revision of the last plan (a plan with no changes leaves
    /// `last_applied_revision` at the last commit that changed infrastructure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_planned_revision: Option<String>,
    /// HelmRelease: `status.helmChart` as `namespace/name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helm_chart: Option<String>,
    /// Sources: `status.artifact.revision`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_revision: Option<String>,
    /// Sources: `status.artifact.lastUpdateTime`, when the current revision was stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_updated: Option<DateTime<Utc>>,
    /// HelmRelease: newest `status.history` entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<ReleaseSnapshot>,
    /// `status.lastHandledReconcileAt`: the last reconcile request the controller took, by
    /// the value of the object's `reconcile.fluxcd.io/requestedAt` annotation then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile: Option<String>,
    /// Kustomization/HelmRelease: `status.inventory.entries[].id`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inventory: Vec<String>,
}

impl Empty for FluxStatus {
    const EMPTY: &'static Self = &FluxStatus {
        last_attempted_revision: None,
        last_applied_revision: None,
        last_planned_revision: None,
        helm_chart: None,
        artifact_revision: None,
        artifact_updated: None,
        release: None,
        last_handled_reconcile: None,
        inventory: Vec::new(),
    };
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Condition {
    /// Types and reasons repeat across objects: shared, as the reader interns them.
    #[serde(rename = "type")]
    pub type_: SharedStr,
    pub status: ConditionStatus,
    pub reason: SharedStr,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition: Option<DateTime<Utc>>,
    /// `lastUpdateTime` (Deployments): bumped whenever the controller reports progress, while
    /// `lastTransitionTime` only moves when the status flips.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConditionStatus {
    True,
    False,
    Unknown,
}

impl Condition {
    pub fn is_true(&self) -> bool {
        self.status == ConditionStatus::True
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleaseSnapshot {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// `ociDigest`: the chart artifact's digest, recorded for OCI sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci_digest: Option<String>,
}

/// Replica counts, normalised across Deployment, StatefulSet and DaemonSet.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkloadStatus {
    pub desired: i64,
    /// Pods the controller runs, old ones not yet terminated included (`status.replicas`;
    /// DaemonSets: `currentNumberScheduled`). Bodies stored before it was kept lack it.
    #[serde(default)]
    pub total: i64,
    pub ready: i64,
    /// `readyReplicas` stands in when the cluster does not write it (StatefulSets before
    /// Kubernetes 1.22), as kstatus does.
    pub available: i64,
    /// None when the cluster does not write it (older StatefulSets): the revisions decide.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated: Option<i64>,
    /// StatefulSets: `status.currentRevision` differs from `status.updateRevision`, so pods
    /// of the old revision remain.
    #[serde(default, skip_serializing_if = "is_false")]
    pub revision_pending: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PodStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// `status.reason` and `status.message` of a pod that ended, e.g. Evicted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Init containers first (marked `init`), then the app containers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub containers: Vec<ContainerState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<DateTime<Utc>>,
    /// `spec.restartPolicy` (Always when unset): whether the kubelet restarts a container
    /// that exits, kept with the status because only pods have it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<String>,
    /// `spec.nodeName`: where it was scheduled (kept with the status, as the restart policy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// `status.nominatedNodeName`: the scheduler preempts pods on that node to make room.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nominated_node: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerState {
    pub name: String,
    /// From `initContainerStatuses`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub init: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub ready: bool,
    pub restarts: i64,
    /// `state.waiting.reason`, e.g. CrashLoopBackOff, ImagePullBackOff, ErrImagePull.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_message: Option<String>,
    /// `state.terminated`: the container has exited and not been restarted yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminated: Option<Termination>,
    /// `lastState.terminated`: why it last died (e.g. Error, OOMKilled) and its last words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_terminated: Option<Termination>,
}

/// A container's exit as the kubelet records it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Termination {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// The termination message (e.g. the fatal error a crash-looping container logged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished: Option<DateTime<Utc>>,
}

impl Termination {
    /// Exited with an error (a non-zero code, or a reason other than Completed).
    pub fn is_error(&self) -> bool {
        match self.exit_code {
            Some(code) => code != 0,
            None => self.reason.as_deref() != Some("Completed"),
        }
    }
}

#[cfg(test)]
mod id_tests {
    use super::*;

    #[test]
    fn an_exit_is_an_error_by_its_code_else_by_its_reason() {
        let exit = |code: Option<i64>, reason: &str| Termination {
            reason: Some(reason.to_string()),
            exit_code: code,
            message: None,
            finished: None,
        };
        assert!(!exit(Some(0), "Completed").is_error());
        assert!(exit(Some(137), "OOMKilled").is_error());
        assert!(!exit(None, "Completed").is_error());
        assert!(exit(None, "Error").is_error());
    }

    #[test]
    fn an_id_is_made_of_its_four_parts_even_when_the_namespace_is_empty() {
        let id = ObjectId::new("prod-eu-1", Kind::Kustomization, "flux-system", "apps");
        assert_eq!(id.as_str(), "prod-eu-1/Kustomization/flux-system/apps");
        let cluster_scoped = ObjectId::new("dev", Kind::Namespace, "", "tenants");
        assert_eq!(cluster_scoped.as_str(), "dev/Namespace//tenants");
        // A watch event or a reference that names a namespace for a cluster-scoped kind
        // keys the same object as the parser does (a deleted CRD must find its key).
        let crd = ObjectId::new("dev", Kind::CustomResourceDefinition, "default", "x.io");
        assert_eq!(crd.as_str(), "dev/CustomResourceDefinition//x.io");
        let namespaced = ObjectId::new("dev", Kind::Deployment, "", "api");
        assert_eq!(namespaced.as_str(), "dev/Deployment/default/api");
        assert_eq!(
            cluster_scoped.parts(),
            Some(("dev", "Namespace", "", "tenants"))
        );
    }

    #[test]
    fn an_id_reads_back_into_its_parts_with_slashes_left_in_the_name() {
        let id: ObjectId = "prod/HelmRelease/gw/gateway/v2".parse().unwrap();
        assert_eq!(
            id.parts(),
            Some(("prod", "HelmRelease", "gw", "gateway/v2"))
        );
        assert_eq!(id.to_string(), "prod/HelmRelease/gw/gateway/v2");
        assert_eq!(
            "dev/Namespace//tenants"
                .parse::<ObjectId>()
                .unwrap()
                .parts(),
            Some(("dev", "Namespace", "", "tenants"))
        );
    }

    #[test]
    fn text_without_a_cluster_kind_and_name_is_not_an_id() {
        for text in [
            "",
            "prod",
            "prod/Kustomization/apps",
            "/Kustomization/apps/a",
            "prod//apps/a",
            "prod/Kustomization/apps/",
        ] {
            assert!(text.parse::<ObjectId>().is_err(), "{text:?}");
        }
        assert_eq!(ObjectId::split("prod/Kustomization/apps"), None);
    }
}

#[cfg(test)]
mod stored_form_tests {
    use super::*;
    use crate::health::generators::{controller_deployment, flux_object};
    use crate::health::testkit::*;
    use proptest::prelude::*;

    fn stored_and_read_back(object: &Object) -> (String, Object) {
        let stored = serde_json::to_string(object).expect("a slim object serialises");
        let read = serde_json::from_str(&stored).expect("its stored form reads back");
        (stored, read)
    }

    /// Objects whose fields cover every group the stored form leaves out when empty: pods
    /// with waiting and terminated containers, releases, plans, suspended and deleted ones.
    fn varied() -> Vec<Object> {
        let mut deleted = kustomization("gone", &["db"]);
        deleted["metadata"]["deletionTimestamp"] = ago(3).into();
        deleted["metadata"]["finalizers"] = serde_json::json!(["finalizers.fluxcd.io"]);
        deleted["spec"]["suspend"] = true.into();
        deleted["spec"]["wait"] = true.into();
        let mut crashing = pod("apps", "api", "1", Some(("CrashLoopBackOff", "exit 1")));
        crashing["status"]["containerStatuses"][0]["lastState"] = serde_json::json!({"terminated": {"reason": "Error", "exitCode": 1, "message": "panic"}});
        [
            deleted,
            crashing,
            pod("apps", "web", "2", None),
            helm_release("apps", "web", "charts"),
            helm_chart("apps", "web", "charts", "2.14.0"),
            terraform("infra"),
            deployment("apps", "api", 3, 1),
            git_repository("flux-system", "main@sha1:abc"),
        ]
        .iter()
        .map(parse)
        .collect()
    }

    #[test]
    fn shared_names_are_the_interners_copies() {
        let mut object = parse(&kustomization("apps", &[]));
        object.cluster = SharedStr::from("prod-eu-1");
        assert!(!object.cluster.is_shared(), "a copy of its own");
        let mut names = Interner::default();
        let held = names.intern_str("prod-eu-1");
        object.share_names(&mut names);
        assert!(object.cluster.is_shared() && object.cluster == held);
    }

    #[test]
    fn every_kind_of_object_reads_back_from_its_stored_form_unchanged() {
        for object in varied() {
            let (stored, read) = stored_and_read_back(&object);
            assert_eq!(read, object, "{stored}");
        }
    }

    /// Rows written before `status.replicas` was kept (2026-12-01) still read, so pages keep
    /// showing those objects' bodies until their next write.
    #[test]
    fn a_workload_stored_before_its_total_was_kept_reads_back() {
        let object = parse(&deployment("apps", "api", 3, 1));
        let mut stored = serde_json::to_value(&object).expect("a slim object serialises");
        let workload = stored["status"]["workload"]
            .as_object_mut()
            .expect("a Deployment's stored workload status");
        assert!(workload.remove("total").is_some(), "{workload:?}");
        let read: Object = serde_json::from_value(stored).expect("an older stored form reads");
        assert_eq!(read.status.workload.map(|w| w.total), Some(0));
    }

    #[test]
    fn the_stored_form_leaves_out_fields_at_their_empty_value() {
        let object = parse(&kustomization("apps", &[]));
        let (stored, _) = stored_and_read_back(&object);
        for empty in ["null", "[]", "{}", "false"] {
            assert!(!stored.contains(empty), "{empty} in {stored}");
        }
        assert!(
            stored.contains(r#""interval_secs":"#),
            "set fields stay: {stored}"
        );
    }

    proptest! {
        #[test]
        fn generated_objects_read_back_from_their_stored_form_unchanged(
            value in prop_oneof![flux_object(), controller_deployment()],
        ) {
            let object = parse(&value);
            let (stored, read) = stored_and_read_back(&object);
            prop_assert_eq!(read, object, "{}", stored);
        }
    }
}
