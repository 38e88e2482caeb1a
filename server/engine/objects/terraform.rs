//! tofu-controller's Terraform object (infra.contrib.fluxcd.io/v1alpha2): its module's source
//! and the revisions and conditions of its last plan and apply.

use super::meta::{Meta, object};
use super::reference::Ref;
use serde_json::{Value, json};

pub const API_VERSION: &str = "infra.contrib.fluxcd.io/v1alpha2";

#[derive(Debug, Clone)]
pub struct Terraform {
    pub meta: Meta,
    pub interval: String,
    pub path: String,
    pub approve_plan: String,
    pub source: Ref,
    pub status: Option<TerraformStatus>,
}

#[derive(Debug, Clone, Default)]
pub struct TerraformStatus {
    pub observed_generation: i64,
    pub last_attempted_revision: String,
    pub last_applied_revision: String,
    pub last_planned_revision: Option<String>,
    pub conditions: Vec<Value>,
}

impl Terraform {
    pub fn to_json(&self) -> Value {
        let spec = json!({"interval": self.interval, "path": self.path,
                          "approvePlan": self.approve_plan, "sourceRef": self.source.to_json()});
        let status = self.status.as_ref().map(|s| {
            let mut status = json!({"observedGeneration": s.observed_generation,
                                    "lastAttemptedRevision": s.last_attempted_revision,
                                    "lastAppliedRevision": s.last_applied_revision});
            if let Some(revision) = &s.last_planned_revision {
                status["lastPlannedRevision"] = Value::from(revision.as_str());
            }
            status["conditions"] = Value::Array(s.conditions.clone());
            status
        });
        object(API_VERSION, "Terraform", &self.meta, spec, status)
    }
}
