//! Reads a Kubernetes object (as JSON, the way the API server or `kubectl get -o json` returns
//! it) into the slim [`Object`]. Lenient by design: a field of the wrong shape is recorded as a
//! defect on the object rather than failing the whole read, so one malformed object never hides
//! the others and the engine can say exactly what was wrong.

use super::Sparse;
use super::lenient::{Entries, Field, First, Integer};
use super::object::*;
use super::raw::*;
use super::{Kind, Labels, parse_go_duration, shared};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// Why an input document was not turned into an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    /// A kind fleetglass does not evaluate (ConfigMap, a kustomize.config.k8s.io Kustomization…).
    UnknownKind { api_version: String, kind: String },
    /// Not a Kubernetes object at all (no kind, no name, not a mapping).
    Invalid(String),
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Skip::UnknownKind { api_version, kind } => {
                write!(f, "unknown kind {kind} ({api_version})")
            }
            Skip::Invalid(reason) => f.write_str(reason),
        }
    }
}

pub fn parse_object(cluster: &str, value: &Value) -> Result<Object, Skip> {
    match Field::<RawObject>::deserialize(value) {
        Ok(Field::Got(raw)) => object_from_raw(cluster, raw),
        Ok(_) => Err(Skip::Invalid("not a mapping".into())),
        // A JSON value always has a shape the reader accepts; kept for completeness.
        Err(e) => Err(Skip::Invalid(e.to_string())),
    }
}

/// The slim object from the fields read, each malformed one recorded as a defect.
pub fn object_from_raw(cluster: &str, raw: RawObject) -> Result<Object, Skip> {
    let RawObject {
        kind,
        api_version,
        metadata,
        spec,
        status,
    } = raw;
    let kind_text = kind
        .into_got()
        .ok_or_else(|| Skip::Invalid("no kind".into()))?;
    let api_version = api_version.into_got().unwrap_or_default();
    let kind = recognise(&kind_text, &api_version).ok_or_else(|| Skip::UnknownKind {
        api_version: api_version.clone(),
        kind: kind_text.clone(),
    })?;
    let mut meta = metadata.into_got().unwrap_or_default();
    let name = std::mem::take(&mut meta.name)
        .into_got()
        .filter(|n| !n.is_empty())
        .ok_or_else(|| Skip::Invalid(format!("{kind} without metadata.name")))?;

    let mut reader = Reader::default();
    let r = &mut reader;
    let namespace = if kind.is_cluster_scoped() {
        String::new()
    } else {
        r.str(&mut meta.namespace, "metadata", "namespace")
            .unwrap_or_else(|| "default".to_string())
    };
    let mut spec = r.map(spec, "", "spec");
    let status = r.map(status, "", "status");
    let mut object = Object {
        cluster: shared(cluster),
        kind,
        api_version: shared(&api_version),
        namespace: shared(&namespace),
        name,
        generation: r.int(&mut meta.generation, "metadata", "generation"),
        labels: r.string_map(meta.labels, "metadata", "labels"),
        deleting: meta.deletion_timestamp.is_present(),
        created: r.time(
            &mut meta.creation_timestamp,
            "metadata",
            "creationTimestamp",
        ),
        deleting_since: r.time(
            &mut meta.deletion_timestamp,
            "metadata",
            "deletionTimestamp",
        ),
        owners: owners(meta.owner_references),
        reconcile_requested: r.map(meta.annotations, "metadata", "annotations").and_then(
            |mut a| {
                let key = "reconcile.fluxcd.io/requestedAt";
                r.str(&mut a.reconcile_requested_at, "metadata.annotations", key)
            },
        ),
        spec: Spec::default(),
        status: Status {
            present: status.is_some(),
            ..Status::default()
        },
        defects: Vec::new(),
    };
    if let Some(spec) = spec.as_mut() {
        read_spec(r, &mut object, spec);
    }
    if let Some(status) = status {
        read_status(r, &mut object, status);
    }
    if let (Some(spec), Some(pod)) = (spec.as_mut(), object.status.pod.as_mut()) {
        pod.restart_policy = r.str(&mut spec.restart_policy, "spec", "restartPolicy");
        pod.node = r.str(&mut spec.node_name, "spec", "nodeName");
    }
    object.defects = reader.defects;
    Ok(object)
}

/// The kind, if its API group is the one fleetglass knows it under.
fn recognise(kind: &str, api_version: &str) -> Option<Kind> {
    let known = Kind::named(kind)?;
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    (known.as_str() == kind && group == known.group()).then_some(known)
}

fn owners(list: Field<Vec<Field<RawOwner>>>) -> Vec<OwnerRef> {
    kept(list.into_got().unwrap_or_default(), |owner| {
        let owner = owner.into_got()?;
        Some(OwnerRef {
            kind: owner.kind.into_got()?,
            name: owner.name.into_got()?,
        })
    })
}

/// What `keep` makes of each item, in a list with room for exactly that many: collected from
/// a filtering iterator, a list of one gets room for four (a pod's one container: a kilobyte).
fn kept<T, U>(items: Vec<T>, keep: impl FnMut(T) -> Option<U>) -> Vec<U> {
    let mut kept = Vec::with_capacity(items.len());
    kept.extend(items.into_iter().filter_map(keep));
    kept
}

fn read_spec(r: &mut Reader, object: &mut Object, spec: &mut RawSpec) {
    let ns = object.namespace.clone();
    object.spec.flux = Sparse::new(flux_spec(r, object.kind, &ns, spec));
    let s = &mut object.spec;
    if object.kind.is_workload() {
        if let Some(selector) = r.map(std::mem::take(&mut spec.selector), "spec", "selector") {
            s.selector = r.string_map(selector.match_labels, "spec.selector", "matchLabels");
        }
        s.replicas = r.int(&mut spec.replicas, "spec", "replicas");
        if object.kind != Kind::DaemonSet && s.replicas.is_none() {
            s.replicas = Some(1);
        }
        let pod_spec = r
            .map(std::mem::take(&mut spec.template), "spec", "template")
            .and_then(|t| r.map(t.spec, "spec.template", "spec"));
        if let Some(pod_spec) = pod_spec {
            s.images = images(pod_spec.containers);
        }
        s.paused = r.bool(&mut spec.paused, "spec", "paused").unwrap_or(false);
        let strategy = std::mem::take(&mut spec.update_strategy);
        if let Some(mut strategy) = r.map(strategy, "spec", "updateStrategy") {
            let path = "spec.updateStrategy";
            s.updates_on_delete =
                r.str(&mut strategy.type_, path, "type").as_deref() == Some("OnDelete");
            s.partition = r
                .map(strategy.rolling_update, path, "rollingUpdate")
                .and_then(|mut rolling| {
                    r.int(
                        &mut rolling.partition,
                        "spec.updateStrategy.rollingUpdate",
                        "partition",
                    )
                });
        }
    }
    if object.kind == Kind::Pod {
        s.images = images(std::mem::take(&mut spec.containers));
    }
    if object.kind == Kind::CustomResourceDefinition {
        s.crd = Sparse::new(CrdNames {
            group: r.str(&mut spec.group, "spec", "group"),
            kind: r
                .map(std::mem::take(&mut spec.names), "spec", "names")
                .and_then(|mut names| r.str(&mut names.kind, "spec.names", "kind")),
        });
    }
}

/// The Flux objects' and sources' fields, read whatever the kind (so a field where it does not
/// belong reads the same as before); empty, and so not boxed, for the other kinds.
fn flux_spec(r: &mut Reader, kind: Kind, ns: &str, spec: &mut RawSpec) -> FluxSpec {
    let mut s = FluxSpec {
        suspend: r
            .bool(&mut spec.suspend, "spec", "suspend")
            .unwrap_or(false),
        interval_secs: r.duration(&mut spec.interval, "spec", "interval"),
        timeout_secs: r.duration(&mut spec.timeout, "spec", "timeout"),
        wait: r.bool(&mut spec.wait, "spec", "wait").unwrap_or(false),
        ..FluxSpec::default()
    };
    // Read for its defect only: nothing uses the service account, so it is not kept.
    r.str(&mut spec.service_account_name, "spec", "serviceAccountName");
    s.source_type = r.str(&mut spec.type_, "spec", "type");
    s.depends_on = r.refs(&mut spec.depends_on, "spec", "dependsOn", ns, kind.as_str());
    s.health_checks = r.refs(&mut spec.health_checks, "spec", "healthChecks", ns, "");
    s.source_ref = r.reference(&mut spec.source_ref, "spec", "sourceRef", ns, "");
    if kind == Kind::HelmRelease {
        if let Some(chart_ref) = r.reference(&mut spec.chart_ref, "spec", "chartRef", ns, "") {
            s.source_ref = Some(chart_ref);
            s.uses_chart_ref = true;
        } else if let Some(mut chart_spec) = r
            .map(chart_template(&mut spec.chart), "spec", "chart")
            .and_then(|chart| r.map(chart.spec, "spec.chart", "spec"))
        {
            let path = "spec.chart.spec";
            s.chart = r.str(&mut chart_spec.chart, path, "chart");
            s.chart_version = r.str(&mut chart_spec.version, path, "version");
            s.source_ref = r.reference(&mut chart_spec.source_ref, path, "sourceRef", ns, "");
        }
    }
    if kind.is_source() {
        s.url = r.str(&mut spec.url, "spec", "url");
        s.reference = r
            .map(std::mem::take(&mut spec.ref_), "spec", "ref")
            .and_then(|mut reference| source_reference(r, &mut reference));
        if kind == Kind::GitRepository {
            let includes = r.array(std::mem::take(&mut spec.include), "spec", "include");
            for (index, include) in includes.into_iter().enumerate() {
                let path = format!("spec.include[{index}]");
                match include.into_got() {
                    // A LocalObjectReference: the included repository is in the same namespace.
                    Some(mut include) => s.includes.extend(r.reference(
                        &mut include.repository,
                        &path,
                        "repository",
                        ns,
                        "GitRepository",
                    )),
                    None => r.defect(&path, "", "expected a mapping"),
                }
            }
        }
        if kind == Kind::GitRepository && s.reference.is_none() {
            // Without spec.ref the controller checks out its default branch.
            s.reference = Some("branch master (the default)".to_string());
        }
    }
    if kind == Kind::HelmChart {
        s.chart = r.str(&mut chart_name(&mut spec.chart), "spec", "chart");
        s.chart_version = r.str(&mut spec.version, "spec", "version");
    }
    s
}

/// `spec.chart` read as a HelmRelease's chart template: a chart name is the wrong shape.
fn chart_template(chart: &mut Field<Chart>) -> Field<RawChartTemplate> {
    match std::mem::take(chart) {
        Field::Absent => Field::Absent,
        Field::Got(Chart::Template(template)) => Field::Got(template),
        Field::Got(Chart::Name(_)) | Field::Wrong => Field::Wrong,
    }
}

/// `spec.chart` read as a HelmChart's chart name: a mapping is the wrong shape.
fn chart_name(chart: &mut Field<Chart>) -> Field<String> {
    match std::mem::take(chart) {
        Field::Absent => Field::Absent,
        Field::Got(Chart::Name(name)) => Field::Got(name),
        Field::Got(Chart::Template(_)) | Field::Wrong => Field::Wrong,
    }
}

/// What a GitRepository or OCIRepository follows, by the API's precedence: a commit over a
/// reference name over a semver range over a tag over a branch (fluxcd/source-controller
/// api/v1/gitrepository_types.go, GitRepositoryRef; OCIRepositoryRef: digest over semver over
/// tag). A commit pinned together with a branch names both.
fn source_reference(r: &mut Reader, reference: &mut RawSourceRef) -> Option<String> {
    let mut field = |value: &mut Field<String>, key: &str| {
        r.str(value, "spec.ref", key).filter(|v| !v.is_empty())
    };
    let (commit, digest, name, semver, tag, branch) = (
        field(&mut reference.commit, "commit"),
        field(&mut reference.digest, "digest"),
        field(&mut reference.name, "name"),
        field(&mut reference.semver, "semver"),
        field(&mut reference.tag, "tag"),
        field(&mut reference.branch, "branch"),
    );
    match (commit, branch) {
        (Some(commit), Some(branch)) => Some(format!("commit {commit} on branch {branch}")),
        (Some(commit), None) => Some(format!("commit {commit}")),
        (None, branch) => [
            ("digest", digest),
            ("ref", name),
            ("semver", semver),
            ("tag", tag),
            ("branch", branch),
        ]
        .into_iter()
        .find_map(|(what, value)| value.map(|v| format!("{what} {v}"))),
    }
}

fn images(containers: Field<Vec<Field<RawContainer>>>) -> Vec<String> {
    kept(containers.into_got().unwrap_or_default(), |c| {
        c.into_got()?.image.into_got()
    })
}

fn read_status(r: &mut Reader, object: &mut Object, mut status: RawStatus) {
    let kind = object.kind;
    let st = &mut object.status;
    st.observed_generation = r.int(
        &mut status.observed_generation,
        "status",
        "observedGeneration",
    );
    st.conditions = r.conditions(std::mem::take(&mut status.conditions));
    let mut flux = FluxStatus {
        last_attempted_revision: r.str(
            &mut status.last_attempted_revision,
            "status",
            "lastAttemptedRevision",
        ),
        last_applied_revision: r.str(
            &mut status.last_applied_revision,
            "status",
            "lastAppliedRevision",
        ),
        last_planned_revision: r.str(
            &mut status.last_planned_revision,
            "status",
            "lastPlannedRevision",
        ),
        helm_chart: r.str(&mut status.helm_chart, "status", "helmChart"),
        last_handled_reconcile: r.str(
            &mut status.last_handled_reconcile_at,
            "status",
            "lastHandledReconcileAt",
        ),
        ..FluxStatus::default()
    };
    st.phase = r.str(&mut status.phase, "status", "phase");
    if let Some(mut artifact) = r.map(std::mem::take(&mut status.artifact), "status", "artifact") {
        flux.artifact_revision = r.str(&mut artifact.revision, "status.artifact", "revision");
        flux.artifact_updated = r.time(
            &mut artifact.last_update_time,
            "status.artifact",
            "lastUpdateTime",
        );
    }
    if let Some(inventory) = r.map(std::mem::take(&mut status.inventory), "status", "inventory") {
        let entries = r.array(inventory.entries, "status.inventory", "entries");
        flux.inventory = kept(entries, |e| e.into_got()?.id.into_got());
    }
    if kind == Kind::HelmRelease {
        flux.release = r
            .map(std::mem::take(&mut status.history), "status", "history")
            .and_then(|First(first)| first?.into_got())
            .map(|h| ReleaseSnapshot {
                chart_name: h.chart_name.into_got(),
                chart_version: h.chart_version.into_got(),
                app_version: h.app_version.into_got(),
                status: h.status.into_got(),
                oci_digest: h.oci_digest.into_got(),
            });
    }
    st.flux = Sparse::new(flux);
    if kind.is_workload() {
        st.workload = workload_status(r, kind, object.spec.replicas, &mut status);
        if kind == Kind::DaemonSet {
            object.spec.replicas = st.workload.as_ref().map(|w| w.desired);
        }
    }
    if kind == Kind::Pod {
        let init = r.array(
            std::mem::take(&mut status.init_container_statuses),
            "status",
            "initContainerStatuses",
        );
        let app = r.array(
            std::mem::take(&mut status.container_statuses),
            "status",
            "containerStatuses",
        );
        // Sized for both lists at once (see `kept`).
        let mut containers = Vec::with_capacity(init.len() + app.len());
        for (is_init, list) in [(true, init), (false, app)] {
            let states = list.into_iter().filter_map(|c| c.into_got());
            containers.extend(states.map(|c| container_state(c, is_init)));
        }
        st.pod = Some(Box::new(PodStatus {
            // Kept with the pod's status only: one copy.
            phase: st.phase.take(),
            reason: r.str(&mut status.reason, "status", "reason"),
            message: r.str(&mut status.message, "status", "message"),
            containers,
            started: r.time(&mut status.start_time, "status", "startTime"),
            restart_policy: None,
            node: None,
            nominated_node: r.str(
                &mut status.nominated_node_name,
                "status",
                "nominatedNodeName",
            ),
        }));
    }
}

/// Counters the API server leaves out when zero (`omitempty`) are zero; the ones an older
/// cluster does not write at all are unknown (kstatus, cli-utils pkg/kstatus/status/core.go,
/// falls back to readyReplicas and the revisions for StatefulSets).
fn workload_status(
    r: &mut Reader,
    kind: Kind,
    spec_replicas: Option<i64>,
    status: &mut RawStatus,
) -> Option<WorkloadStatus> {
    let mut int = |field: &mut Field<Integer>, key| r.int(field, "status", key);
    Some(match kind {
        // Without desiredNumberScheduled the DaemonSet controller has not counted nodes yet.
        Kind::DaemonSet => WorkloadStatus {
            desired: int(
                &mut status.desired_number_scheduled,
                "desiredNumberScheduled",
            )?,
            total: int(
                &mut status.current_number_scheduled,
                "currentNumberScheduled",
            )
            .unwrap_or(0),
            ready: int(&mut status.number_ready, "numberReady").unwrap_or(0),
            available: int(&mut status.number_available, "numberAvailable").unwrap_or(0),
            updated: Some(
                int(
                    &mut status.updated_number_scheduled,
                    "updatedNumberScheduled",
                )
                .unwrap_or(0),
            ),
            revision_pending: false,
        },
        Kind::StatefulSet => {
            let ready = int(&mut status.ready_replicas, "readyReplicas").unwrap_or(0);
            let available =
                int(&mut status.available_replicas, "availableReplicas").unwrap_or(ready);
            let total = int(&mut status.replicas, "replicas").unwrap_or(0);
            let updated = int(&mut status.updated_replicas, "updatedReplicas");
            let revision = |field: &Field<String>| field.got().cloned().unwrap_or_default();
            WorkloadStatus {
                desired: spec_replicas.unwrap_or(1),
                total,
                ready,
                available,
                updated,
                revision_pending: revision(&status.current_revision)
                    != revision(&status.update_revision),
            }
        }
        _ => WorkloadStatus {
            desired: spec_replicas.unwrap_or(1),
            total: int(&mut status.replicas, "replicas").unwrap_or(0),
            ready: int(&mut status.ready_replicas, "readyReplicas").unwrap_or(0),
            available: int(&mut status.available_replicas, "availableReplicas").unwrap_or(0),
            updated: Some(int(&mut status.updated_replicas, "updatedReplicas").unwrap_or(0)),
            revision_pending: false,
        },
    })
}

fn container_state(c: RawContainerStatus, init: bool) -> ContainerState {
    let termination = |t: RawTermination| Termination {
        reason: t.reason.into_got(),
        exit_code: t.exit_code.into_got(),
        message: t.message.into_got(),
        finished: t
            .finished_at
            .into_got()
            .and_then(|f| DateTime::parse_from_rfc3339(&f).ok())
            .map(|f| f.with_timezone(&Utc)),
    };
    let (waiting, terminated) = match c.state.into_got() {
        Some(state) => (state.waiting.into_got(), state.terminated.into_got()),
        None => (None, None),
    };
    let (waiting_reason, waiting_message) = match waiting {
        Some(w) => (w.reason.into_got(), w.message.into_got()),
        None => (None, None),
    };
    ContainerState {
        name: c.name.into_got().unwrap_or_default(),
        init,
        ready: c.ready.into_got().unwrap_or(false),
        restarts: c.restart_count.into_got().unwrap_or(0),
        waiting_reason,
        waiting_message,
        terminated: terminated.map(termination),
        last_terminated: c
            .last_state
            .into_got()
            .and_then(|s| s.terminated.into_got())
            .map(termination),
    }
}

/// `status.conditions[i]`, written out only when one of its fields is malformed.
struct ConditionPath(usize);

impl fmt::Display for ConditionPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "status.conditions[{}]", self.0)
    }
}

/// Reads typed fields and records a defect for every field present with the wrong shape.
#[derive(Default)]
struct Reader {
    defects: Vec<String>,
}

impl Reader {
    /// `parent` is formatted only here, when a field is malformed: most objects have none.
    fn defect(&mut self, parent: &(impl fmt::Display + ?Sized), key: &str, problem: &str) {
        let parent = parent.to_string();
        let path = if parent.is_empty() {
            key.to_string()
        } else {
            format!("{parent}.{key}")
        };
        self.defects.push(format!("{path}: {problem}"));
    }

    /// The value of a field, or a defect saying what `problem` it had.
    fn take<T>(
        &mut self,
        field: Field<T>,
        parent: &(impl fmt::Display + ?Sized),
        key: &str,
        problem: &str,
    ) -> Option<T> {
        match field {
            Field::Absent => None,
            Field::Got(value) => Some(value),
            Field::Wrong => {
                self.defect(parent, key, problem);
                None
            }
        }
    }

    fn str(
        &mut self,
        field: &mut Field<String>,
        parent: &(impl fmt::Display + ?Sized),
        key: &str,
    ) -> Option<String> {
        self.take(std::mem::take(field), parent, key, "expected a string")
    }

    fn int(
        &mut self,
        field: &mut Field<Integer>,
        parent: &(impl fmt::Display + ?Sized),
        key: &str,
    ) -> Option<i64> {
        let value = self.take(std::mem::take(field), parent, key, "expected an integer");
        value.map(|Integer(v)| v)
    }

    fn bool(
        &mut self,
        field: &mut Field<bool>,
        parent: &(impl fmt::Display + ?Sized),
        key: &str,
    ) -> Option<bool> {
        self.take(std::mem::take(field), parent, key, "expected true or false")
    }

    fn map<T>(
        &mut self,
        field: Field<T>,
        parent: &(impl fmt::Display + ?Sized),
        key: &str,
    ) -> Option<T> {
        self.take(field, parent, key, "expected a mapping")
    }

    fn array<T>(
        &mut self,
        field: Field<Vec<T>>,
        parent: &(impl fmt::Display + ?Sized),
        key: &str,
    ) -> Vec<T> {
        self.take(field, parent, key, "expected a list")
            .unwrap_or_default()
    }

    /// A mapping of strings; other values are left out, and a key given twice keeps its last.
    fn string_map(
        &mut self,
        field: Field<Entries<Field<String>>>,
        parent: &str,
        key: &str,
    ) -> Labels {
        let Some(Entries(entries)) = self.map(field, parent, key) else {
            return Labels::default();
        };
        let last: BTreeMap<String, Field<String>> = entries.into_iter().collect();
        last.into_iter()
            .filter_map(|(k, v)| Some((k, v.into_got()?)))
            .collect()
    }

    fn time(
        &mut self,
        field: &mut Field<String>,
        parent: &(impl fmt::Display + ?Sized),
        key: &str,
    ) -> Option<DateTime<Utc>> {
        let text = self.str(field, parent, key)?;
        match DateTime::parse_from_rfc3339(&text) {
            Ok(t) => Some(t.with_timezone(&Utc)),
            Err(_) => {
                self.defect(parent, key, &format!("{text:?} is not an RFC 3339 time"));
                None
            }
        }
    }

    fn duration(&mut self, field: &mut Field<String>, parent: &str, key: &str) -> Option<i64> {
        let text = self.str(field, parent, key)?;
        match parse_go_duration(&text) {
            Ok(d) => Some(d.num_seconds()),
            Err(e) => {
                self.defect(parent, key, &e.to_string());
                None
            }
        }
    }

    /// A `{kind, name, namespace}` reference; `default_kind` fills in a missing kind.
    fn reference(
        &mut self,
        field: &mut Field<RawRef>,
        parent: &str,
        key: &str,
        ns: &str,
        default_kind: &str,
    ) -> Option<Ref> {
        let entry = self.map(std::mem::take(field), parent, key)?;
        self.ref_entry(entry, &format!("{parent}.{key}"), ns, default_kind)
    }

    fn ref_entry(
        &mut self,
        mut entry: RawRef,
        path: &str,
        ns: &str,
        default_kind: &str,
    ) -> Option<Ref> {
        let Some(name) = self.str(&mut entry.name, path, "name") else {
            self.defect(path, "name", "missing");
            return None;
        };
        Some(Ref {
            kind: self
                .str(&mut entry.kind, path, "kind")
                .unwrap_or_else(|| default_kind.to_string()),
            name,
            namespace: self
                .str(&mut entry.namespace, path, "namespace")
                .unwrap_or_else(|| ns.to_string()),
        })
    }

    fn refs(
        &mut self,
        field: &mut Field<Vec<Field<RawRef>>>,
        parent: &str,
        key: &str,
        ns: &str,
        default_kind: &str,
    ) -> Vec<Ref> {
        let items = self.array(std::mem::take(field), parent, key);
        let mut refs = Vec::with_capacity(items.len());
        for (index, item) in items.into_iter().enumerate() {
            let path = format!("{parent}.{key}[{index}]");
            match item.into_got() {
                Some(entry) => refs.extend(self.ref_entry(entry, &path, ns, default_kind)),
                None => self.defect(&path, "", "expected a mapping"),
            }
        }
        refs
    }

    fn conditions(&mut self, field: Field<Vec<Field<RawCondition>>>) -> Vec<Condition> {
        let items = self.array(field, "status", "conditions");
        let mut conditions = Vec::with_capacity(items.len());
        for (index, item) in items.into_iter().enumerate() {
            let path = ConditionPath(index);
            let Some(mut entry) = item.into_got() else {
                self.defects.push(format!("{path}: expected a mapping"));
                continue;
            };
            let Some(type_) = self.str(&mut entry.type_, &path, "type") else {
                self.defects.push(format!("{path}.type: missing"));
                continue;
            };
            let status = match self.str(&mut entry.status, &path, "status").as_deref() {
                Some("True") => ConditionStatus::True,
                Some("False") => ConditionStatus::False,
                Some("Unknown") => ConditionStatus::Unknown,
                other => {
                    self.defects.push(format!(
                        "{path}.status: {other:?} is not True, False or Unknown"
                    ));
                    ConditionStatus::Unknown
                }
            };
            let reason = self.str(&mut entry.reason, &path, "reason");
            conditions.push(Condition {
                type_: shared(&type_),
                status,
                reason: shared(reason.as_deref().unwrap_or_default()),
                message: self
                    .str(&mut entry.message, &path, "message")
                    .unwrap_or_default(),
                last_transition: self.time(
                    &mut entry.last_transition_time,
                    &path,
                    "lastTransitionTime",
                ),
                last_update: self.time(&mut entry.last_update_time, &path, "lastUpdateTime"),
                observed_generation: self.int(
                    &mut entry.observed_generation,
                    &path,
                    "observedGeneration",
                ),
            });
        }
        conditions
    }
}
