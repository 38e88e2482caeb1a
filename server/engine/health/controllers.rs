//! Controller liveness: every Flux object maps to the Deployment that reconciles its kind, on
//! the right shard. Status written by a controller that is not running is not evidence
//! (seed 000, incident 4: a tofu-controller in ImagePullBackOff behind days of stale status),
//! and neither is status whose controller is not installed at all.

use super::deadlines::Clock;
use super::index::Index;
use super::pods::pod_failure;
use super::threshold::threshold;
use super::workloads::active_rollout;
use super::{Cause, CauseCode, Thresholds};
use crate::model::{Kind, Object, ObjectId};
use std::collections::HashMap;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Liveness {
    /// The input holds no Flux controller Deployment on the cluster at all (a file of Flux
    /// objects alone): liveness unknown, verdict unchanged.
    Unknown,
    Alive(usize),
    /// The Deployment exists with no available replica, or only crash-looping pods.
    Down(usize),
    /// The cluster's Flux controllers are in the input but not this one (or not this shard):
    /// nothing reconciles the object. Indexes [`Absences::list`].
    Missing(usize),
}

/// The absent controllers, each once however many objects need it: one root cause.
#[derive(Default)]
pub(super) struct Absences {
    pub list: Vec<Absent>,
    seen: HashMap<Absent, usize>,
}

impl Absences {
    fn add(&mut self, absent: Absent) -> usize {
        *self.seen.entry(absent).or_insert_with_key(|absent| {
            self.list.push(absent.clone());
            self.list.len() - 1
        })
    }
}

/// A controller Deployment that the cluster's objects need and the input does not hold.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct Absent {
    pub cluster: String,
    /// Where the cluster's other Flux controllers run (flux-system when it holds one).
    pub namespace: String,
    pub deployment: String,
    /// The `sharding.fluxcd.io/key` it would serve; empty for the main controller.
    pub shard: String,
}

impl Absent {
    /// Where the Deployment would be: what objects needing it point at.
    pub fn id(&self) -> ObjectId {
        ObjectId::new(
            &self.cluster,
            Kind::Deployment,
            &self.namespace,
            &self.deployment,
        )
    }

    /// What is missing, as the root cause says it.
    pub fn cause(&self) -> Cause {
        Cause::new(CauseCode::ControllerAbsent)
            .with("namespace", &self.namespace)
            .with("deployment", &self.deployment)
            .with("shard", &self.shard)
    }

    pub fn reason(&self) -> String {
        let serves = if self.shard.is_empty() {
            String::new()
        } else {
            format!(" for shard {:?}", self.shard)
        };
        format!(
            "controller Deployment {}/{} not found{serves}: nothing reconciles its objects",
            self.namespace, self.deployment
        )
    }
}

pub(super) fn liveness(
    index: &Index,
    object: &Object,
    absences: &mut Absences,
    thresholds: &Thresholds,
    clock: Clock,
) -> Liveness {
    let Some(controller) = object.kind.controller() else {
        return Liveness::Unknown;
    };
    let shard = object.shard().unwrap_or("");
    if let Some(found) = index.controller(&object.cluster, controller, shard) {
        return if available(index, found, clock) || restarting(index, found, thresholds, clock) {
            Liveness::Alive(found)
        } else {
            Liveness::Down(found)
        };
    }
    match index.controllers_namespace(&object.cluster) {
        Some(namespace) => Liveness::Missing(absences.add(Absent {
            cluster: object.cluster.to_string(),
            namespace: namespace.to_string(),
            deployment: if shard.is_empty() {
                controller.to_string()
            } else {
                format!("{controller}-{shard}")
            },
            shard: shard.to_string(),
        })),
        None => Liveness::Unknown,
    }
}

/// Some replica is available and not every pod of the controller is failing: the
/// Deployment's count lags a pod that crash-loops between restarts.
fn available(index: &Index, deployment: usize, clock: Clock) -> bool {
    let counted = index.objects[deployment]
        .status
        .workload
        .as_ref()
        .is_some_and(|w| w.available > 0);
    let pods = index.pods_of(deployment);
    let all_failing = !pods.is_empty()
        && pods
            .iter()
            .all(|&pod| pod_failure(&index.objects[pod], clock).is_some());
    counted && !all_failing
}

/// Why a controller is down, read from its pods ("ImagePullBackOff: …").
/// A controller Deployment rolling out with no replica available yet (a Recreate rollout, a
/// new version) for less than its threshold, no pod of it failing: the status its objects
/// carry was written moments ago and stands until the new pod takes over.
fn restarting(index: &Index, deployment: usize, thresholds: &Thresholds, clock: Clock) -> bool {
    let object = &index.objects[deployment];
    let Some(progressing) = active_rollout(object) else {
        return false;
    };
    let Some(progress) = progressing.last_update.or(progressing.last_transition) else {
        return false;
    };
    let young = !clock.past(progress, threshold(object, thresholds, None));
    let failing = index
        .pods_of(deployment)
        .iter()
        .any(|&pod| pod_failure(&index.objects[pod], clock).is_some());
    young && !failing
}

/// Why a controller is down, named by its pods' failure when one says.
pub(super) fn down_reason(index: &Index, controller: usize, clock: Clock) -> (Cause, String) {
    let deployment = &index.objects[controller];
    let pods = index.pods_of(controller);
    let from_pods = pods
        .iter()
        .find_map(|&pod| pod_failure(&index.objects[pod], clock));
    let down = Cause::new(CauseCode::ControllerDown).with("controller", &deployment.name);
    let (cause, why) = match from_pods {
        Some((cause, why)) => (down.because(&cause), why),
        None => {
            let desired = deployment.status.workload.as_ref().map_or(0, |w| w.desired);
            (down, format!("0/{desired} replicas available"))
        }
    };
    (
        cause,
        format!("controller {} unavailable: {why}", deployment.name),
    )
}
