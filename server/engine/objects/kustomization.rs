//! kustomize-controller's Kustomization: its source, dependsOn, health checks and the status a
//! run leaves (revisions, conditions, inventory).

use super::meta::{Meta, object};
use super::reference::{Ref, list};
use serde_json::{Value, json};

pub const API_VERSION: &str = "kustomize.toolkit.fluxcd.io/v1";

#[derive(Debug, Clone)]
pub struct Kustomization {
    pub meta: Meta,
    pub interval: String,
    pub path: String,
    pub prune: bool,
    pub source: Ref,
    /// Written only when not empty, as kustomize-controller's users do.
    pub depends_on: Vec<Ref>,
    pub health_checks: Vec<Ref>,
    pub wait: bool,
    pub service_account: Option<String>,
    pub status: Option<KustomizationStatus>,
}

#[derive(Debug, Clone, Default)]
pub struct KustomizationStatus {
    pub observed_generation: i64,
    pub last_attempted_revision: Option<String>,
    pub last_applied_revision: Option<String>,
    pub conditions: Vec<Value>,
    /// `(id, version)` of each applied object (`status.inventory.entries[]`).
    pub inventory: Option<Vec<(String, String)>>,
}

impl Kustomization {
    /// A pruning Kustomization of `path` in `source`, nothing else set.
    pub fn new(meta: Meta, source: Ref, path: &str, interval: &str) -> Kustomization {
        Kustomization {
            meta,
            interval: interval.to_string(),
            path: path.to_string(),
            prune: true,
            source,
            depends_on: Vec::new(),
            health_checks: Vec::new(),
            wait: false,
            service_account: None,
            status: None,
        }
    }

    pub fn to_json(&self) -> Value {
        let mut spec = json!({"interval": self.interval, "path": self.path, "prune": self.prune,
                              "sourceRef": self.source.to_json()});
        if !self.depends_on.is_empty() {
            spec["dependsOn"] = list(&self.depends_on);
        }
        if !self.health_checks.is_empty() {
            spec["healthChecks"] = list(&self.health_checks);
        }
        if self.wait {
            spec["wait"] = Value::Bool(true);
        }
        if let Some(account) = &self.service_account {
            spec["serviceAccountName"] = Value::from(account.as_str());
        }
        let status = self.status.as_ref().map(KustomizationStatus::to_json);
        object(API_VERSION, "Kustomization", &self.meta, spec, status)
    }
}

impl KustomizationStatus {
    /// The status alone, as written through the status subresource.
    pub fn to_json(&self) -> Value {
        let mut status = json!({"observedGeneration": self.observed_generation});
        if let Some(revision) = &self.last_attempted_revision {
            status["lastAttemptedRevision"] = Value::from(revision.as_str());
        }
        if let Some(revision) = &self.last_applied_revision {
            status["lastAppliedRevision"] = Value::from(revision.as_str());
        }
        status["conditions"] = Value::Array(self.conditions.clone());
        if let Some(inventory) = &self.inventory {
            let entries: Vec<Value> = inventory
                .iter()
                .map(|(id, version)| json!({"id": id, "v": version}))
                .collect();
            status["inventory"] = json!({"entries": entries});
        }
        status
    }
}
