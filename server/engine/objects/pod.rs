//! Pods as the kubelet reports them: phase, conditions and each container's state (running,
//! waiting with a reason, and how its last run ended).

use super::meta::{Meta, object, time};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

#[derive(Debug, Clone)]
pub struct Pod {
    pub meta: Meta,
    pub container: String,
    pub image: String,
    pub restart_policy: Option<String>,
    pub service_account: Option<String>,
    pub status: Option<PodStatus>,
}

#[derive(Debug, Clone)]
pub struct PodStatus {
    pub phase: String,
    pub start_time: Option<DateTime<Utc>>,
    /// Written only when not empty.
    pub conditions: Vec<Value>,
    pub containers: Vec<ContainerStatus>,
}

#[derive(Debug, Clone)]
pub struct ContainerStatus {
    pub name: String,
    pub image: String,
    pub ready: bool,
    pub restart_count: i64,
    pub state: ContainerState,
    pub last_state: Option<Termination>,
}

/// `state`: running since a time, or waiting for a reason.
#[derive(Debug, Clone)]
pub enum ContainerState {
    Running {
        started_at: DateTime<Utc>,
    },
    Waiting {
        reason: String,
        message: Option<String>,
    },
}

/// `lastState.terminated`: how the container's previous run ended.
#[derive(Debug, Clone)]
pub struct Termination {
    pub exit_code: i64,
    pub reason: String,
    pub message: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
}

impl Pod {
    pub fn to_json(&self) -> Value {
        let mut spec = json!({"containers": [{"name": self.container, "image": self.image}]});
        if let Some(policy) = &self.restart_policy {
            spec["restartPolicy"] = Value::from(policy.as_str());
        }
        if let Some(account) = &self.service_account {
            spec["serviceAccountName"] = Value::from(account.as_str());
        }
        let status = self.status.as_ref().map(PodStatus::to_json);
        object("v1", "Pod", &self.meta, spec, status)
    }
}

impl PodStatus {
    fn to_json(&self) -> Value {
        let mut status = json!({"phase": self.phase});
        if let Some(start) = self.start_time {
            status["startTime"] = Value::from(time(start));
        }
        if !self.conditions.is_empty() {
            status["conditions"] = Value::Array(self.conditions.clone());
        }
        status["containerStatuses"] = self
            .containers
            .iter()
            .map(ContainerStatus::to_json)
            .collect();
        status
    }
}

impl ContainerStatus {
    fn to_json(&self) -> Value {
        let state = match &self.state {
            ContainerState::Running { started_at } => {
                json!({"running": {"startedAt": time(*started_at)}})
            }
            ContainerState::Waiting { reason, message } => {
                let mut waiting = json!({"reason": reason});
                if let Some(message) = message {
                    waiting["message"] = Value::from(message.as_str());
                }
                json!({"waiting": waiting})
            }
        };
        let mut status = json!({"name": self.name, "image": self.image, "ready": self.ready,
                                "restartCount": self.restart_count, "state": state});
        if let Some(t) = &self.last_state {
            status["lastState"] = json!({"terminated": {
                "exitCode": t.exit_code, "reason": t.reason, "message": t.message,
                "startedAt": time(t.started_at), "finishedAt": time(t.finished_at),
            }});
        }
        status
    }
}
