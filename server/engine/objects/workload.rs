//! Deployments, StatefulSets and DaemonSets: one container selected by `app: <app>`, and the
//! replica counts (and conditions) their controllers report.

use super::meta::{Meta, object};
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadKind {
    Deployment,
    StatefulSet,
    DaemonSet,
}

impl WorkloadKind {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadKind::Deployment => "Deployment",
            WorkloadKind::StatefulSet => "StatefulSet",
            WorkloadKind::DaemonSet => "DaemonSet",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Workload {
    pub kind: WorkloadKind,
    pub meta: Meta,
    /// The `app` label that selects its pods (and labels its pod template).
    pub app: String,
    pub container: String,
    /// The image of the current pod template.
    pub image: String,
    /// Desired replicas (for a DaemonSet: the number of nodes it should run on).
    pub replicas: i64,
    pub status: Option<WorkloadStatus>,
}

/// What the workload's controller reports, in the Deployment's terms (a DaemonSet's
/// `*NumberScheduled` counts are written from the same numbers).
#[derive(Debug, Clone, Default)]
pub struct WorkloadStatus {
    pub observed_generation: i64,
    /// Pods that exist.
    pub replicas: i64,
    pub ready: i64,
    pub available: i64,
    /// Pods of the current template.
    pub updated: i64,
    /// StatefulSets: `(currentRevision, updateRevision)`.
    pub revisions: Option<(String, String)>,
    pub conditions: Vec<Value>,
}

impl WorkloadStatus {
    /// Rolled out: all `replicas` of the current template ready and available, at generation 1.
    pub fn rolled_out(replicas: i64) -> WorkloadStatus {
        WorkloadStatus {
            observed_generation: 1,
            replicas,
            ready: replicas,
            available: replicas,
            updated: replicas,
            ..WorkloadStatus::default()
        }
    }
}

impl Workload {
    /// A Deployment of one replica, rolled out.
    pub fn deployment(meta: Meta, app: &str, container: &str, image: &str) -> Workload {
        Workload {
            kind: WorkloadKind::Deployment,
            meta,
            app: app.into(),
            container: container.into(),
            image: image.into(),
            replicas: 1,
            status: Some(WorkloadStatus::rolled_out(1)),
        }
    }

    pub fn to_json(&self) -> Value {
        let app = json!({"app": self.app});
        let mut spec = json!({
            "selector": {"matchLabels": app},
            "template": {
                "metadata": {"labels": app},
                "spec": {"containers": [{"name": self.container, "image": self.image}]},
            },
        });
        if self.kind != WorkloadKind::DaemonSet {
            spec["replicas"] = Value::from(self.replicas);
        }
        let status = self.status.as_ref().map(|s| self.status_json(s));
        object("apps/v1", self.kind.as_str(), &self.meta, spec, status)
    }

    fn status_json(&self, s: &WorkloadStatus) -> Value {
        let mut status = match self.kind {
            WorkloadKind::Deployment | WorkloadKind::StatefulSet => json!({
                "observedGeneration": s.observed_generation,
                "replicas": s.replicas,
                "readyReplicas": s.ready,
                "availableReplicas": s.available,
                "updatedReplicas": s.updated,
            }),
            WorkloadKind::DaemonSet => json!({
                "observedGeneration": s.observed_generation,
                "desiredNumberScheduled": self.replicas,
                "currentNumberScheduled": s.replicas,
                "numberReady": s.ready,
                "numberAvailable": s.available,
                "updatedNumberScheduled": s.updated,
            }),
        };
        if let Some((current, update)) = &s.revisions {
            status["currentRevision"] = Value::from(current.as_str());
            status["updateRevision"] = Value::from(update.as_str());
        }
        if !s.conditions.is_empty() {
            status["conditions"] = Value::Array(s.conditions.clone());
        }
        status
    }
}
