//! kustomize-controller's Kustomization: spec (source, dependsOn, health checks) and the status
//! each kind of run leaves behind, worded as kustomize-controller words it.

use super::meta::{Conditions, Meta, Truth, object};
use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Value, json};

pub const API_VERSION: &str = "kustomize.toolkit.fluxcd.io/v1";

/// An object a Kustomization health-checks (`spec.healthChecks[]`).
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub api_version: &'a str,
    pub kind: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
}

#[derive(Debug, Clone)]
pub struct KustomizationSpec<'a> {
    /// `(kind, namespace, name)` of the source.
    pub source: (&'a str, &'a str, &'a str),
    pub path: &'a str,
    pub interval_minutes: i64,
    /// `(namespace, name)` of each Kustomization this one waits for.
    pub depends_on: Vec<(&'a str, &'a str)>,
    pub health_checks: Vec<Target<'a>>,
    pub wait: bool,
    pub service_account: Option<&'a str>,
}

impl KustomizationSpec<'_> {
    fn checks_health(&self) -> bool {
        self.wait || !self.health_checks.is_empty()
    }

    /// The effective timeout: interval − 30s, as kustomize-controller computes it.
    fn timeout(&self) -> String {
        format!("{}m30s", self.interval_minutes - 1)
    }

    /// What Reconciling says while a run on `revision` is in its last stage.
    fn progress_message(&self, revision: &str) -> String {
        let stage = if self.checks_health() {
            "Running health checks"
        } else {
            "Detecting drift"
        };
        format!(
            "{stage} for revision {revision} with a timeout of {}",
            self.timeout()
        )
    }
}

/// What the last (or current) run left in the status.
#[derive(Debug, Clone, Copy)]
pub enum Run<'a> {
    /// Applied `revision` and passed its health checks; Ready since `since`.
    Applied {
        revision: &'a str,
        since: DateTime<Utc>,
    },
    /// A run on `attempted` began at `since` and is still going.
    InProgress {
        applied: &'a str,
        attempted: &'a str,
        since: DateTime<Utc>,
    },
    /// The run on `attempted` failed with `reason`; `observed_generation` is the last good one.
    Failed {
        applied: &'a str,
        attempted: &'a str,
        reason: &'a str,
        message: &'a str,
        since: DateTime<Utc>,
        observed_generation: i64,
    },
    /// Waiting for `dependency` (`namespace/name`) since `since`; nothing new fetched or applied.
    Blocked {
        applied: &'a str,
        dependency: &'a str,
        since: DateTime<Utc>,
    },
}

/// `status.inventory.entries[].id`: `<namespace>_<name>_<group>_<kind>`.
pub fn inventory_id(namespace: &str, name: &str, group: &str, kind: &str) -> String {
    format!("{namespace}_{name}_{group}_{kind}")
}

/// `inventory` holds `(id, version)` pairs; the scenario adds the objects it builds later.
pub fn kustomization(
    meta: &Meta,
    spec: &KustomizationSpec,
    run: Run,
    inventory: &[(String, &str)],
) -> Value {
    let (kind, namespace, name) = spec.source;
    let mut spec_json = json!({
        "interval": format!("{}m", spec.interval_minutes),
        "retryInterval": "1m",
        "path": spec.path,
        "prune": true,
        "sourceRef": {"kind": kind, "name": name, "namespace": namespace},
    });
    if !spec.depends_on.is_empty() {
        spec_json["dependsOn"] = spec
            .depends_on
            .iter()
            .map(|(namespace, name)| json!({"name": name, "namespace": namespace}))
            .collect();
    }
    if !spec.health_checks.is_empty() {
        spec_json["healthChecks"] = spec
            .health_checks
            .iter()
            .map(|t| json!({"apiVersion": t.api_version, "kind": t.kind, "namespace": t.namespace, "name": t.name}))
            .collect();
    }
    if spec.wait {
        spec_json["wait"] = Value::Bool(true);
    }
    if let Some(account) = spec.service_account {
        spec_json["serviceAccountName"] = Value::from(account);
    }
    let mut status = status(meta, spec, run);
    status["inventory"] = json!({
        "entries": inventory.iter().map(|(id, v)| json!({"id": id, "v": v})).collect::<Vec<_>>(),
    });
    object(API_VERSION, "Kustomization", meta, spec_json, Some(status))
}

fn status(meta: &Meta, spec: &KustomizationSpec, run: Run) -> Value {
    let generation = meta.generation;
    let conditions = Conditions::observing(generation);
    // Healthy exists only with wait/healthChecks; it stays True from the last passing run
    // (which happened shortly after creation) until a health check fails.
    let healthy_since = meta.created + TimeDelta::minutes(2);
    let passed = |c: Conditions| {
        if spec.checks_health() {
            c.with(
                "Healthy",
                Truth::True,
                "Succeeded",
                "Health check passed in 2.04s",
                healthy_since,
            )
        } else {
            c
        }
    };
    let (applied, attempted, observed, conditions) = match run {
        Run::Applied { revision, since } => {
            let message = format!("Applied revision: {revision}");
            let c = conditions.with(
                "Ready",
                Truth::True,
                "ReconciliationSucceeded",
                &message,
                since,
            );
            (revision, revision, generation, passed(c))
        }
        Run::InProgress {
            applied,
            attempted,
            since,
        } => {
            let message = spec.progress_message(attempted);
            let reason = "Progressing";
            let mut c = conditions
                .with(
                    "Ready",
                    Truth::Unknown,
                    "Progressing",
                    "Reconciliation in progress",
                    since,
                )
                .with("Reconciling", Truth::True, reason, &message, since);
            if spec.checks_health() {
                c = c.with("Healthy", Truth::Unknown, "Progressing", &message, since);
            }
            (applied, attempted, generation, c)
        }
        Run::Failed {
            applied,
            attempted,
            reason,
            message,
            since,
            observed_generation,
        } => {
            let progress = spec.progress_message(attempted);
            let mut c = conditions
                .with("Ready", Truth::False, reason, message, since)
                .with(
                    "Reconciling",
                    Truth::True,
                    "ProgressingWithRetry",
                    &progress,
                    since,
                );
            if reason == "HealthCheckFailed" {
                c = c.with("Healthy", Truth::False, reason, message, since);
            } else {
                c = passed(c);
            }
            (applied, attempted, observed_generation, c)
        }
        Run::Blocked {
            applied,
            dependency,
            since,
        } => {
            let message = format!("dependency '{dependency}' is not ready");
            let c = conditions.with("Ready", Truth::False, "DependencyNotReady", &message, since);
            (applied, applied, generation, passed(c))
        }
    };
    let mut status = json!({
        "observedGeneration": observed,
        "lastAttemptedRevision": attempted,
        "lastAppliedRevision": applied,
    });
    status["conditions"] = conditions.into_json();
    status
}
