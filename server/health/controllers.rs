//! Controller liveness: every Flux object maps to the Deployment that reconciles its kind, on
//! the right shard. Status written by a controller that is not running is not evidence
//! (seed 000, incident 4: a tofu-controller in ImagePullBackOff behind days of stale status).

use super::index::Index;
use super::pods::pod_failure;
use crate::model::Object;
use chrono::{DateTime, Utc};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Liveness {
    /// The input holds no Deployment for the controller: liveness unknown, verdict unchanged.
    Unknown,
    Alive(usize),
    /// The Deployment exists with no available replica.
    Down(usize),
    /// The object names a shard whose Deployment is absent while the main controller exists:
    /// nothing reconciles it.
    NoShard {
        deployment: String,
    },
}

pub(super) fn liveness(index: &Index, object: &Object) -> Liveness {
    let Some(controller) = object.kind.controller() else {
        return Liveness::Unknown;
    };
    let shard = object.shard().unwrap_or("");
    match index.controller(&object.cluster, controller, shard) {
        Some(found) if available(&index.objects[found]) => Liveness::Alive(found),
        Some(found) => Liveness::Down(found),
        None if !shard.is_empty()
            && index.controller(&object.cluster, controller, "").is_some() =>
        {
            Liveness::NoShard {
                deployment: format!("{controller}-{shard}"),
            }
        }
        None => Liveness::Unknown,
    }
}

fn available(deployment: &Object) -> bool {
    deployment
        .status
        .workload
        .as_ref()
        .is_some_and(|w| w.available > 0)
}

/// Why a controller is down, read from its pods ("ImagePullBackOff: …").
pub(super) fn down_reason(index: &Index, controller: usize, now: DateTime<Utc>) -> String {
    let deployment = &index.objects[controller];
    let pods = index.pods_of(controller);
    let from_pods = pods
        .iter()
        .find_map(|&pod| pod_failure(&index.objects[pod], now));
    let why = from_pods.unwrap_or_else(|| {
        let desired = deployment.status.workload.as_ref().map_or(0, |w| w.desired);
        format!("0/{desired} replicas available")
    });
    format!("controller {} unavailable: {why}", deployment.name)
}
