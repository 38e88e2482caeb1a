//! Pods as the kubelet reports them: phase, conditions and one container's state (running,
//! crash-looping with its last termination, stuck pulling its image, or still being created).

use crate::objects::{self, ContainerStatus, Meta, Pod, PodStatus, Termination, time};
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

/// The kubelet's view of the container: its state, last termination and restarts.
fn container_status(
    meta: &Meta,
    container: &str,
    image: &str,
    state: &ContainerState,
) -> ContainerStatus {
    let started = meta.created + TimeDelta::seconds(3);
    let waiting = |reason: &str, message: Option<String>| objects::ContainerState::Waiting {
        reason: reason.into(),
        message,
    };
    let (now, restart_count, last_state) = match state {
        ContainerState::Running => {
            let started_at = started + TimeDelta::seconds(4);
            (objects::ContainerState::Running { started_at }, 0, None)
        }
        ContainerState::CrashLoop {
            restarts,
            last_started,
            last_finished,
            message,
        } => {
            let uid = uid(meta);
            let back_off = format!(
                "back-off 5m0s restarting failed container={container} pod={}_{}({uid})",
                meta.name, meta.namespace
            );
            let last = Termination {
                exit_code: 1,
                reason: "Error".into(),
                message: message.clone(),
                started_at: *last_started,
                finished_at: *last_finished,
            };
            (
                waiting("CrashLoopBackOff", Some(back_off)),
                *restarts,
                Some(last),
            )
        }
        ContainerState::ImagePullBackOff => {
            let message = format!("Back-off pulling image \"{image}\"");
            (waiting("ImagePullBackOff", Some(message)), 0, None)
        }
        ContainerState::Creating => (waiting("ContainerCreating", None), 0, None),
    };
    ContainerStatus {
        name: container.into(),
        image: image.into(),
        ready: state.is_ready(),
        restart_count,
        state: now,
        last_state,
    }
}

/// The pod's uid: 32 hex digits derived from its namespace and name.
fn uid(meta: &Meta) -> String {
    hex(&format!("{}/{}", meta.namespace, meta.name), 32)
}

pub fn pod(meta: &Meta, container: &str, image: &str, state: &ContainerState) -> Value {
    let started = meta.created + TimeDelta::seconds(3);
    let (ready, phase) = match state {
        ContainerState::Running => ("True", "Running"),
        ContainerState::CrashLoop { .. } => ("False", "Running"),
        ContainerState::ImagePullBackOff | ContainerState::Creating => ("False", "Pending"),
    };
    let not_ready = format!("containers with unready status: [{container}]");
    let condition = |type_: &str, status: &str, since: DateTime<Utc>| {
        let mut c = json!({"type": type_, "status": status, "lastProbeTime": null, "lastTransitionTime": time(since)});
        if status == "False" {
            c["reason"] = Value::from("ContainersNotReady");
            c["message"] = Value::from(not_ready.as_str());
        }
        c
    };
    let service_account = meta.labels.get("app").and_then(Value::as_str);
    let built = Pod {
        meta: meta.clone(),
        container: container.into(),
        image: image.into(),
        restart_policy: Some("Always".into()),
        service_account: Some(service_account.unwrap_or("default").into()),
        status: Some(PodStatus {
            phase: phase.into(),
            start_time: Some(started),
            conditions: vec![
                condition("PodScheduled", "True", meta.created),
                condition("Initialized", "True", started),
                condition("ContainersReady", ready, started),
                condition("Ready", ready, started),
            ],
            containers: vec![container_status(meta, container, image, state)],
        }),
    };
    let mut pod = built.to_json();
    pod["spec"]["containers"][0]["imagePullPolicy"] = Value::from("IfNotPresent");
    let status = &mut pod["status"]["containerStatuses"][0];
    status["started"] = Value::Bool(state.is_ready());
    status["imageID"] = Value::from(match state {
        ContainerState::Running | ContainerState::CrashLoop { .. } => image_id(image),
        ContainerState::ImagePullBackOff | ContainerState::Creating => String::new(),
    });
    let uid = uid(meta);
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
