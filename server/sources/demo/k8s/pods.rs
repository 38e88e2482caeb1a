//! Pods as the kubelet reports them: phase, conditions and one container's state (running,
//! crash-looping with its last termination, stuck pulling its image, or still being created).

use super::meta::{Meta, object, time};
use crate::sources::demo::hex::hex;
use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Value, json};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContainerState {
    Running,
    /// Crashed `restarts` times; the last run lasted from `last_started` to `last_finished` and
    /// left `message` (the tail of its log) as its termination message.
    CrashLoop {
        restarts: i64,
        last_started: DateTime<Utc>,
        last_finished: DateTime<Utc>,
        message: String,
    },
    ImagePullBackOff,
    Creating,
}

impl ContainerState {
    pub fn is_ready(&self) -> bool {
        *self == ContainerState::Running
    }

    /// A container that has crashed since `since` with the kubelet's back-off (10s doubling to
    /// 5m): a fixed function of time, so the restart count climbs as the demo runs.
    pub fn crash_looping(
        since: DateTime<Utc>,
        now: DateTime<Utc>,
        message: &str,
    ) -> ContainerState {
        const WARM_UP_RESTARTS: i64 = 5; // 10s+20s+40s+80s+160s ≈ the first 5 minutes
        let elapsed = (now - since).num_seconds().max(0);
        let steady = (elapsed - 310).max(0);
        let restarts = WARM_UP_RESTARTS.min(elapsed / 60) + steady / 300;
        let last_finished = now - TimeDelta::seconds(steady % 300 + 1);
        ContainerState::CrashLoop {
            restarts,
            last_started: last_finished - TimeDelta::seconds(2),
            last_finished,
            message: message.to_string(),
        }
    }
}

/// A short digest-like id, as the kubelet reports `imageID`.
fn image_id(image: &str) -> String {
    let repository = image.rsplit_once(':').map_or(image, |(repo, _)| repo);
    format!("{repository}@sha256:{}", hex(image, 64))
}

pub fn pod(meta: &Meta, container: &str, image: &str, state: &ContainerState) -> Value {
    let started = meta.created + TimeDelta::seconds(3);
    let uid = hex(&format!("{}/{}", meta.namespace, meta.name), 32);
    let base = json!({"name": container, "image": image, "ready": state.is_ready()});
    let (phase, container_status) = match state {
        ContainerState::Running => {
            let mut c = base;
            c["imageID"] = Value::from(image_id(image));
            c["started"] = Value::Bool(true);
            c["restartCount"] = Value::from(0);
            c["state"] = json!({"running": {"startedAt": time(started + TimeDelta::seconds(4))}});
            ("Running", c)
        }
        ContainerState::CrashLoop {
            restarts,
            last_started,
            last_finished,
            message,
        } => {
            let mut c = base;
            c["imageID"] = Value::from(image_id(image));
            c["started"] = Value::Bool(false);
            c["restartCount"] = Value::from(*restarts);
            let back_off = format!(
                "back-off 5m0s restarting failed container={container} pod={}_{}({uid})",
                meta.name, meta.namespace
            );
            c["state"] = json!({"waiting": {"reason": "CrashLoopBackOff", "message": back_off}});
            c["lastState"] = json!({"terminated": {
                "exitCode": 1, "reason": "Error", "message": message,
                "startedAt": time(*last_started), "finishedAt": time(*last_finished),
            }});
            ("Running", c)
        }
        ContainerState::ImagePullBackOff => {
            let mut c = base;
            c["imageID"] = Value::from("");
            c["started"] = Value::Bool(false);
            c["restartCount"] = Value::from(0);
            let message = format!("Back-off pulling image \"{image}\"");
            c["state"] = json!({"waiting": {"reason": "ImagePullBackOff", "message": message}});
            ("Pending", c)
        }
        ContainerState::Creating => {
            let mut c = base;
            c["imageID"] = Value::from("");
            c["started"] = Value::Bool(false);
            c["restartCount"] = Value::from(0);
            c["state"] = json!({"waiting": {"reason": "ContainerCreating"}});
            ("Pending", c)
        }
    };
    let ready = if state.is_ready() { "True" } else { "False" };
    let not_ready = format!("containers with unready status: [{container}]");
    let condition = |type_: &str, status: &str, since: DateTime<Utc>| {
        let mut c = json!({"type": type_, "status": status, "lastProbeTime": null, "lastTransitionTime": time(since)});
        if status == "False" {
            c["reason"] = Value::from("ContainersNotReady");
            c["message"] = Value::from(not_ready.as_str());
        }
        c
    };
    let spec = json!({
        "containers": [{"name": container, "image": image, "imagePullPolicy": "IfNotPresent"}],
        "restartPolicy": "Always",
        "serviceAccountName": meta.labels.get("app").and_then(Value::as_str).unwrap_or("default"),
    });
    let mut pod_status = json!({"phase": phase, "startTime": time(started)});
    pod_status["conditions"] = Value::Array(vec![
        condition("PodScheduled", "True", meta.created),
        condition("Initialized", "True", started),
        condition("ContainersReady", ready, started),
        condition("Ready", ready, started),
    ]);
    pod_status["containerStatuses"] = Value::Array(vec![container_status]);
    let mut pod = object("v1", "Pod", meta, spec, Some(pod_status));
    pod["metadata"]["uid"] = Value::from(format!(
        "{}-{}-{}-{}-{}",
        &uid[..8],
        &uid[8..12],
        &uid[12..16],
        &uid[16..20],
        &uid[20..]
    ));
    pod
}
