//! Deployments, StatefulSets and DaemonSets with their Pods. The workload's replica counts and
//! conditions are derived from the pods it is given, so the two can never disagree.

use super::pods::{ContainerState, pod};
use crate::objects::{self, Meta, Truth, WorkloadKind, WorkloadStatus, plain_condition};
use crate::sources::demo::hex::name_suffix;
use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Value, json};

/// The workload's spec: one container, selected by `app: <name>`.
#[derive(Debug, Clone)]
pub struct Workload {
    pub kind: WorkloadKind,
    pub meta: Meta,
    pub container: String,
    /// The image of the current pod template.
    pub image: String,
    /// Desired replicas (for a DaemonSet: the number of nodes it should run on).
    pub replicas: i64,
    /// Deployments: `strategy.rollingUpdate.maxUnavailable`.
    pub max_unavailable: i64,
    /// When the pod template last changed (the start of the latest rollout).
    pub rolled_out: DateTime<Utc>,
}

/// One pod: the template (image) it was made from, when, and how its container is doing.
#[derive(Debug, Clone)]
pub struct PodPlan {
    pub image: String,
    pub created: DateTime<Utc>,
    pub state: ContainerState,
}

/// Progress deadline of a Deployment (the Kubernetes default).
const PROGRESS_DEADLINE_SECS: i64 = 600;

impl Workload {
    pub fn new(
        kind: WorkloadKind,
        meta: Meta,
        container: &str,
        image: &str,
        replicas: i64,
        rolled_out: DateTime<Utc>,
    ) -> Workload {
        Workload {
            kind,
            meta,
            container: container.to_string(),
            image: image.to_string(),
            replicas,
            max_unavailable: 0,
            rolled_out,
        }
    }

    pub fn max_unavailable(mut self, max_unavailable: i64) -> Workload {
        self.max_unavailable = max_unavailable;
        self
    }

    /// The workload and its pods when the rollout finished long ago and every pod is running.
    pub fn settled(&self, now: DateTime<Utc>) -> Vec<Value> {
        let pods = running_pods(&self.image, self.rolled_out, self.replicas as usize);
        workload_with_pods(self, &pods, now)
    }

    /// The controller-generated hash of a pod template, which here only varies with the image.
    fn template_hash(&self, image: &str) -> String {
        name_suffix(
            &format!("{}/{}/{image}", self.meta.namespace, self.meta.name),
            10,
        )
    }

    fn replica_set(&self, image: &str) -> String {
        format!("{}-{}", self.meta.name, self.template_hash(image))
    }

    /// The spec fields the engine does not read, as the API server fills them in.
    fn spec_details(&self, spec: &mut Value) {
        match self.kind {
            WorkloadKind::Deployment => {
                spec["progressDeadlineSeconds"] = Value::from(PROGRESS_DEADLINE_SECS);
                spec["strategy"] = json!({"type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": self.max_unavailable, "maxSurge": 1}});
            }
            WorkloadKind::StatefulSet => {
                spec["serviceName"] = Value::from(self.meta.name.as_str());
            }
            WorkloadKind::DaemonSet => {}
        }
    }

    /// Metadata of the `index`-th pod made from `image`: its generated name, its owner and the
    /// labels its controller adds.
    fn pod_meta(&self, index: usize, image: &str, created: DateTime<Utc>) -> Meta {
        let name = &self.meta.name;
        let hash = self.template_hash(image);
        let base = |pod: &str| Meta::new(&self.meta.namespace, pod, created).label("app", name);
        match self.kind {
            WorkloadKind::Deployment => {
                let rs = self.replica_set(image);
                let pod = format!("{rs}-{}", name_suffix(&format!("{rs}/{index}"), 5));
                base(&pod)
                    .owned_by("ReplicaSet", &rs)
                    .label("pod-template-hash", &hash)
            }
            WorkloadKind::StatefulSet => {
                let pod = format!("{name}-{index}");
                base(&pod)
                    .owned_by("StatefulSet", name)
                    .label("controller-revision-hash", &format!("{name}-{hash}"))
                    .label("statefulset.kubernetes.io/pod-name", &pod)
            }
            WorkloadKind::DaemonSet => {
                let pod = format!("{name}-{}", name_suffix(&format!("{name}/{index}"), 5));
                base(&pod)
                    .owned_by("DaemonSet", name)
                    .label("controller-revision-hash", &format!("{name}-{hash}"))
            }
        }
    }
}

/// The workload followed by its pods.
pub fn workload_with_pods(w: &Workload, pods: &[PodPlan], now: DateTime<Utc>) -> Vec<Value> {
    let total = pods.len() as i64;
    let ready = pods.iter().filter(|p| p.state.is_ready()).count() as i64;
    let updated = pods.iter().filter(|p| p.image == w.image).count() as i64;
    let revision = format!("{}-{}", w.meta.name, w.template_hash(&w.image));
    let status = WorkloadStatus {
        observed_generation: w.meta.generation,
        replicas: total,
        ready,
        available: ready,
        updated,
        revisions: (w.kind == WorkloadKind::StatefulSet).then(|| (revision.clone(), revision)),
        conditions: match w.kind {
            WorkloadKind::Deployment => deployment_conditions(w, pods, ready, updated, now),
            WorkloadKind::StatefulSet | WorkloadKind::DaemonSet => Vec::new(),
        },
    };
    let mut workload = objects::Workload {
        kind: w.kind,
        meta: w.meta.clone(),
        app: w.meta.name.clone(),
        container: w.container.clone(),
        image: w.image.clone(),
        replicas: w.replicas,
        status: Some(status),
    }
    .to_json();
    w.spec_details(&mut workload["spec"]);
    let status = &mut workload["status"];
    match w.kind {
        WorkloadKind::Deployment => {
            status["unavailableReplicas"] = Value::from((w.replicas - ready).max(0));
        }
        WorkloadKind::StatefulSet => status["currentReplicas"] = Value::from(updated),
        WorkloadKind::DaemonSet => {}
    }
    drop_zero_counts(status);
    let mut out = Vec::with_capacity(pods.len() + 1);
    out.push(workload);
    for (index, plan) in pods.iter().enumerate() {
        let meta = w.pod_meta(index, &plan.image, plan.created);
        out.push(pod(&meta, &w.container, &plan.image, &plan.state));
    }
    out
}

/// The API server omits zero counts (`omitempty`); so does the demo.
fn drop_zero_counts(status: &mut Value) {
    if let Some(map) = status.as_object_mut() {
        map.retain(|key, value| key == "observedGeneration" || value.as_i64() != Some(0));
    }
}

fn deployment_conditions(
    w: &Workload,
    pods: &[PodPlan],
    ready: i64,
    updated: i64,
    now: DateTime<Utc>,
) -> Vec<Value> {
    let rs = w.replica_set(&w.image);
    let settled = w.rolled_out + TimeDelta::seconds(20);
    let deadline = w.rolled_out + TimeDelta::seconds(PROGRESS_DEADLINE_SECS);
    let progressing = if updated >= w.replicas {
        plain_condition(
            "Progressing",
            Truth::True,
            "NewReplicaSetAvailable",
            &format!("ReplicaSet \"{rs}\" has successfully progressed."),
            settled,
        )
    } else if now >= deadline {
        plain_condition(
            "Progressing",
            Truth::False,
            "ProgressDeadlineExceeded",
            &format!("ReplicaSet \"{rs}\" has timed out progressing."),
            deadline,
        )
    } else {
        plain_condition(
            "Progressing",
            Truth::True,
            "ReplicaSetUpdated",
            &format!("ReplicaSet \"{rs}\" is progressing."),
            w.rolled_out,
        )
    };
    let available = if ready >= w.replicas - w.max_unavailable {
        plain_condition(
            "Available",
            Truth::True,
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
            w.meta.created + TimeDelta::seconds(30),
        )
    } else {
        // Unavailable since the newest pod that is not ready appeared.
        let since = pods
            .iter()
            .filter(|p| !p.state.is_ready())
            .map(|p| p.created)
            .max();
        plain_condition(
            "Available",
            Truth::False,
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
            since.unwrap_or(w.rolled_out),
        )
    };
    vec![available, progressing]
}

/// `count` healthy pods of `image`, created a few seconds apart just after `since`.
pub fn running_pods(image: &str, since: DateTime<Utc>, count: usize) -> Vec<PodPlan> {
    (0..count as i64)
        .map(|i| PodPlan {
            image: image.to_string(),
            created: since + TimeDelta::seconds(5 + 7 * i),
            state: ContainerState::Running,
        })
        .collect()
}
