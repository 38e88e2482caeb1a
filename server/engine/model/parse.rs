//! Reads a Kubernetes object (as JSON, the way the API server or `kubectl get -o json` returns
//! it) into the slim [`Object`]. Lenient by design: a field of the wrong shape is recorded as a
//! defect on the object rather than failing the whole read, so one malformed object never hides
//! the others and the engine can say exactly what was wrong.

use super::object::*;
use super::{Kind, Labels, parse_go_duration};
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
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
    let root = value
        .as_object()
        .ok_or_else(|| Skip::Invalid("not a mapping".into()))?;
    let kind_text = root
        .get("kind")
        .and_then(Value::as_str)
        .ok_or_else(|| Skip::Invalid("no kind".into()))?;
    let api_version = root.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = recognise(kind_text, api_version).ok_or_else(|| Skip::UnknownKind {
        api_version: api_version.to_string(),
        kind: kind_text.to_string(),
    })?;
    let meta = root.get("metadata").and_then(Value::as_object);
    let name = meta
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| Skip::Invalid(format!("{kind} without metadata.name")))?;

    let mut reader = Reader::default();
    let empty = Map::new();
    let meta = meta.unwrap_or(&empty);
    let namespace = if kind.is_cluster_scoped() {
        String::new()
    } else {
        reader
            .str(meta, "metadata", "namespace")
            .unwrap_or_else(|| "default".to_string())
    };
    let spec_map = reader.map(root, "", "spec");
    let status_map = reader.map(root, "", "status");
    let mut object = Object {
        cluster: cluster.to_string(),
        kind,
        api_version: api_version.to_string(),
        namespace,
        name: name.to_string(),
        generation: reader.int(meta, "metadata", "generation"),
        labels: reader.string_map(meta, "metadata", "labels"),
        deleting: meta.get("deletionTimestamp").is_some_and(|v| !v.is_null()),
        created: reader.time(meta, "metadata", "creationTimestamp"),
        deleting_since: reader.time(meta, "metadata", "deletionTimestamp"),
        owners: owners(meta),
        spec: Spec::default(),
        status: Status {
            present: status_map.is_some(),
            ..Status::default()
        },
        defects: Vec::new(),
    };
    if let Some(spec) = spec_map {
        read_spec(&mut reader, &mut object, spec);
    }
    if let Some(status) = status_map {
        read_status(&mut reader, &mut object, status);
    }
    if let (Some(spec), Some(pod)) = (spec_map, object.status.pod.as_mut()) {
        pod.restart_policy = reader.str(spec, "spec", "restartPolicy");
    }
    object.defects = reader.defects;
    Ok(object)
}

/// The kind, if its API group is the one fleetglass knows it under.
fn recognise(kind: &str, api_version: &str) -> Option<Kind> {
    let known: Kind = kind.parse().ok()?;
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    (known.as_str() == kind && group == known.group()).then_some(known)
}

fn owners(meta: &Map<String, Value>) -> Vec<OwnerRef> {
    let Some(list) = meta.get("ownerReferences").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|owner| {
            Some(OwnerRef {
                kind: owner.get("kind")?.as_str()?.to_string(),
                name: owner.get("name")?.as_str()?.to_string(),
            })
        })
        .collect()
}

fn read_spec(r: &mut Reader, object: &mut Object, spec: &Map<String, Value>) {
    let ns = object.namespace.clone();
    let s = &mut object.spec;
    s.suspend = r.bool(spec, "spec", "suspend").unwrap_or(false);
    s.interval_secs = r.duration(spec, "spec", "interval");
    s.timeout_secs = r.duration(spec, "spec", "timeout");
    s.wait = r.bool(spec, "spec", "wait").unwrap_or(false);
    s.service_account = r.str(spec, "spec", "serviceAccountName");
    s.source_type = r.str(spec, "spec", "type");
    s.depends_on = r.refs(spec, "spec", "dependsOn", &ns, object.kind.as_str());
    s.health_checks = r.refs(spec, "spec", "healthChecks", &ns, "");
    s.source_ref = r.reference(spec, "spec", "sourceRef", &ns, "");
    if object.kind == Kind::HelmRelease {
        if let Some(chart_ref) = r.reference(spec, "spec", "chartRef", &ns, "") {
            s.source_ref = Some(chart_ref);
            s.uses_chart_ref = true;
        } else if let Some(chart_spec) = r
            .map(spec, "spec", "chart")
            .and_then(|chart| r.map(chart, "spec.chart", "spec"))
        {
            s.chart = r.str(chart_spec, "spec.chart.spec", "chart");
            s.chart_version = r.str(chart_spec, "spec.chart.spec", "version");
            s.source_ref = r.reference(chart_spec, "spec.chart.spec", "sourceRef", &ns, "");
        }
    }
    if object.kind.is_source() {
        s.url = r.str(spec, "spec", "url");
        s.reference = r
            .map(spec, "spec", "ref")
            .and_then(|reference| source_reference(r, reference));
        if object.kind == Kind::GitRepository && s.reference.is_none() {
            // Without spec.ref the controller checks out its default branch.
            s.reference = Some("branch master (the default)".to_string());
        }
    }
    if object.kind == Kind::HelmChart {
        s.chart = r.str(spec, "spec", "chart");
        s.chart_version = r.str(spec, "spec", "version");
    }
    if object.kind.is_workload() {
        if let Some(selector) = r.map(spec, "spec", "selector") {
            s.selector = r.string_map(selector, "spec.selector", "matchLabels");
        }
        s.replicas = r.int(spec, "spec", "replicas");
        if object.kind != Kind::DaemonSet && s.replicas.is_none() {
            s.replicas = Some(1);
        }
        let pod_spec = r
            .map(spec, "spec", "template")
            .and_then(|t| r.map(t, "spec.template", "spec"));
        if let Some(pod_spec) = pod_spec {
            s.images = images(pod_spec);
        }
        s.paused = r.bool(spec, "spec", "paused").unwrap_or(false);
        if let Some(strategy) = r.map(spec, "spec", "updateStrategy") {
            s.updates_on_delete =
                r.str(strategy, "spec.updateStrategy", "type").as_deref() == Some("OnDelete");
            s.partition = r
                .map(strategy, "spec.updateStrategy", "rollingUpdate")
                .and_then(|rolling| {
                    r.int(rolling, "spec.updateStrategy.rollingUpdate", "partition")
                });
        }
    }
    if object.kind == Kind::Pod {
        s.images = images(spec);
    }
    if object.kind == Kind::CustomResourceDefinition {
        s.crd_group = r.str(spec, "spec", "group");
        s.crd_kind = r
            .map(spec, "spec", "names")
            .and_then(|names| r.str(names, "spec.names", "kind"));
    }
}

/// What a GitRepository or OCIRepository follows, by the API's precedence: a commit over a
/// reference name over a semver range over a tag over a branch (fluxcd/source-controller
/// api/v1/gitrepository_types.go, GitRepositoryRef; OCIRepositoryRef: digest over semver over
/// tag). A commit pinned together with a branch names both.
fn source_reference(r: &mut Reader, reference: &Map<String, Value>) -> Option<String> {
    let mut field = |key: &str| r.str(reference, "spec.ref", key).filter(|v| !v.is_empty());
    let (commit, digest, name, semver, tag, branch) = (
        field("commit"),
        field("digest"),
        field("name"),
        field("semver"),
        field("tag"),
        field("branch"),
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

fn images(pod_spec: &Map<String, Value>) -> Vec<String> {
    pod_spec
        .get("containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("image")?.as_str().map(str::to_string))
        .collect()
}

fn read_status(r: &mut Reader, object: &mut Object, status: &Map<String, Value>) {
    let kind = object.kind;
    let st = &mut object.status;
    st.observed_generation = r.int(status, "status", "observedGeneration");
    st.conditions = r.conditions(status);
    st.last_attempted_revision = r.str(status, "status", "lastAttemptedRevision");
    st.last_applied_revision = r.str(status, "status", "lastAppliedRevision");
    st.last_planned_revision = r.str(status, "status", "lastPlannedRevision");
    st.helm_chart = r.str(status, "status", "helmChart");
    st.phase = r.str(status, "status", "phase");
    if let Some(artifact) = r.map(status, "status", "artifact") {
        st.artifact_revision = r.str(artifact, "status.artifact", "revision");
        st.artifact_updated = r.time(artifact, "status.artifact", "lastUpdateTime");
    }
    if let Some(inventory) = r.map(status, "status", "inventory") {
        st.inventory = r
            .array(inventory, "status.inventory", "entries")
            .iter()
            .filter_map(|e| e.get("id")?.as_str().map(str::to_string))
            .collect();
    }
    if kind == Kind::HelmRelease {
        st.release = r
            .array(status, "status", "history")
            .first()
            .and_then(Value::as_object)
            .map(|h| ReleaseSnapshot {
                chart_name: h
                    .get("chartName")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                chart_version: h
                    .get("chartVersion")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                app_version: h
                    .get("appVersion")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                status: h.get("status").and_then(Value::as_str).map(str::to_string),
            })
            .map(Box::new);
    }
    if kind.is_workload() {
        st.workload = workload_status(r, kind, object.spec.replicas, status);
        if kind == Kind::DaemonSet {
            object.spec.replicas = st.workload.as_ref().map(|w| w.desired);
        }
    }
    if kind == Kind::Pod {
        let init = r.array(status, "status", "initContainerStatuses");
        let app = r.array(status, "status", "containerStatuses");
        let containers = init
            .iter()
            .map(|c| (true, c))
            .chain(app.iter().map(|c| (false, c)))
            .filter_map(|(init, c)| Some(container_state(c.as_object()?, init)))
            .collect();
        st.pod = Some(Box::new(PodStatus {
            phase: st.phase.clone(),
            reason: r.str(status, "status", "reason"),
            message: r.str(status, "status", "message"),
            containers,
            started: r.time(status, "status", "startTime"),
            restart_policy: None,
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
    status: &Map<String, Value>,
) -> Option<WorkloadStatus> {
    let mut int = |key| r.int(status, "status", key);
    Some(match kind {
        // Without desiredNumberScheduled the DaemonSet controller has not counted nodes yet.
        Kind::DaemonSet => WorkloadStatus {
            desired: int("desiredNumberScheduled")?,
            total: int("currentNumberScheduled").unwrap_or(0),
            ready: int("numberReady").unwrap_or(0),
            available: int("numberAvailable").unwrap_or(0),
            updated: Some(int("updatedNumberScheduled").unwrap_or(0)),
            revision_pending: false,
        },
        Kind::StatefulSet => {
            let ready = int("readyReplicas").unwrap_or(0);
            let available = int("availableReplicas").unwrap_or(ready);
            let total = int("replicas").unwrap_or(0);
            let updated = int("updatedReplicas");
            let revision = |key| status.get(key).and_then(Value::as_str).unwrap_or("");
            WorkloadStatus {
                desired: spec_replicas.unwrap_or(1),
                total,
                ready,
                available,
                updated,
                revision_pending: revision("currentRevision") != revision("updateRevision"),
            }
        }
        _ => WorkloadStatus {
            desired: spec_replicas.unwrap_or(1),
            total: int("replicas").unwrap_or(0),
            ready: int("readyReplicas").unwrap_or(0),
            available: int("availableReplicas").unwrap_or(0),
            updated: Some(int("updatedReplicas").unwrap_or(0)),
            revision_pending: false,
        },
    })
}

fn container_state(c: &Map<String, Value>, init: bool) -> ContainerState {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    let waiting = c.get("state").and_then(|s| s.get("waiting"));
    let termination = |t: &Value| Termination {
        reason: text(t.get("reason")),
        exit_code: t.get("exitCode").and_then(Value::as_i64),
        message: text(t.get("message")),
        finished: text(t.get("finishedAt"))
            .and_then(|f| DateTime::parse_from_rfc3339(&f).ok())
            .map(|f| f.with_timezone(&Utc)),
    };
    let terminated = |state: &str| {
        c.get(state)
            .and_then(|s| s.get("terminated"))
            .filter(|t| t.is_object())
            .map(termination)
    };
    ContainerState {
        name: text(c.get("name")).unwrap_or_default(),
        init,
        ready: c.get("ready").and_then(Value::as_bool).unwrap_or(false),
        restarts: c.get("restartCount").and_then(Value::as_i64).unwrap_or(0),
        waiting_reason: text(waiting.and_then(|w| w.get("reason"))),
        waiting_message: text(waiting.and_then(|w| w.get("message"))),
        terminated: terminated("state"),
        last_terminated: terminated("lastState"),
    }
}

/// Reads typed fields and records a defect for every field present with the wrong shape.
#[derive(Default)]
struct Reader {
    defects: Vec<String>,
}

impl Reader {
    fn defect(&mut self, parent: &str, key: &str, problem: &str) {
        let path = if parent.is_empty() {
            key.to_string()
        } else {
            format!("{parent}.{key}")
        };
        self.defects.push(format!("{path}: {problem}"));
    }

    fn get<'v>(&mut self, map: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
        map.get(key).filter(|v| !v.is_null())
    }

    fn str(&mut self, map: &Map<String, Value>, parent: &str, key: &str) -> Option<String> {
        match self.get(map, key)? {
            Value::String(s) => Some(s.clone()),
            _ => {
                self.defect(parent, key, "expected a string");
                None
            }
        }
    }

    fn int(&mut self, map: &Map<String, Value>, parent: &str, key: &str) -> Option<i64> {
        let value = self.get(map, key)?;
        let parsed = value.as_i64().or_else(|| value.as_str()?.parse().ok());
        if parsed.is_none() {
            self.defect(parent, key, "expected an integer");
        }
        parsed
    }

    fn bool(&mut self, map: &Map<String, Value>, parent: &str, key: &str) -> Option<bool> {
        match self.get(map, key)? {
            Value::Bool(b) => Some(*b),
            _ => {
                self.defect(parent, key, "expected true or false");
                None
            }
        }
    }

    fn map<'v>(
        &mut self,
        map: &'v Map<String, Value>,
        parent: &str,
        key: &str,
    ) -> Option<&'v Map<String, Value>> {
        match self.get(map, key)? {
            Value::Object(m) => Some(m),
            _ => {
                self.defect(parent, key, "expected a mapping");
                None
            }
        }
    }

    fn array<'v>(&mut self, map: &'v Map<String, Value>, parent: &str, key: &str) -> &'v [Value] {
        match self.get(map, key) {
            None => &[],
            Some(Value::Array(items)) => items,
            Some(_) => {
                self.defect(parent, key, "expected a list");
                &[]
            }
        }
    }

    fn string_map(&mut self, map: &Map<String, Value>, parent: &str, key: &str) -> Labels {
        let Some(m) = self.map(map, parent, key) else {
            return Labels::default();
        };
        m.iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect()
    }

    fn time(&mut self, map: &Map<String, Value>, parent: &str, key: &str) -> Option<DateTime<Utc>> {
        let text = self.str(map, parent, key)?;
        match DateTime::parse_from_rfc3339(&text) {
            Ok(t) => Some(t.with_timezone(&Utc)),
            Err(_) => {
                self.defect(parent, key, &format!("{text:?} is not an RFC 3339 time"));
                None
            }
        }
    }

    fn duration(&mut self, map: &Map<String, Value>, parent: &str, key: &str) -> Option<i64> {
        let text = self.str(map, parent, key)?;
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
        map: &Map<String, Value>,
        parent: &str,
        key: &str,
        ns: &str,
        default_kind: &str,
    ) -> Option<Ref> {
        let entry = self.map(map, parent, key)?;
        self.ref_entry(entry, &format!("{parent}.{key}"), ns, default_kind)
    }

    fn ref_entry(
        &mut self,
        entry: &Map<String, Value>,
        path: &str,
        ns: &str,
        default_kind: &str,
    ) -> Option<Ref> {
        let Some(name) = self.str(entry, path, "name") else {
            self.defect(path, "name", "missing");
            return None;
        };
        Some(Ref {
            kind: self
                .str(entry, path, "kind")
                .unwrap_or_else(|| default_kind.to_string()),
            name,
            namespace: self
                .str(entry, path, "namespace")
                .unwrap_or_else(|| ns.to_string()),
        })
    }

    fn refs(
        &mut self,
        map: &Map<String, Value>,
        parent: &str,
        key: &str,
        ns: &str,
        default_kind: &str,
    ) -> Vec<Ref> {
        let items = self.array(map, parent, key);
        let mut refs = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let path = format!("{parent}.{key}[{index}]");
            match item.as_object() {
                Some(entry) => refs.extend(self.ref_entry(entry, &path, ns, default_kind)),
                None => self.defect(&path, "", "expected a mapping"),
            }
        }
        refs
    }

    fn conditions(&mut self, status: &Map<String, Value>) -> Vec<Condition> {
        let items = self.array(status, "status", "conditions");
        let mut conditions = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let path = format!("status.conditions[{index}]");
            let Some(entry) = item.as_object() else {
                self.defects.push(format!("{path}: expected a mapping"));
                continue;
            };
            let Some(type_) = self.str(entry, &path, "type") else {
                self.defects.push(format!("{path}.type: missing"));
                continue;
            };
            let status = match self.str(entry, &path, "status").as_deref() {
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
            conditions.push(Condition {
                type_,
                status,
                reason: self.str(entry, &path, "reason").unwrap_or_default(),
                message: self.str(entry, &path, "message").unwrap_or_default(),
                last_transition: self.time(entry, &path, "lastTransitionTime"),
                last_update: self.time(entry, &path, "lastUpdateTime"),
                observed_generation: self.int(entry, &path, "observedGeneration"),
            });
        }
        conditions
    }
}
