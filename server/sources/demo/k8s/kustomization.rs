//! kustomize-controller's Kustomization as the demo shows it: the status each kind of run
//! leaves behind, worded as kustomize-controller words it.

use crate::objects::{Conditions, Kustomization, KustomizationStatus, Meta, Ref, Truth};
use chrono::{DateTime, TimeDelta, Utc};
use serde_json::Value;

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
    let source = Ref::to(kind, name).in_namespace(namespace);
    let interval = format!("{}m", spec.interval_minutes);
    let mut built = Kustomization::new(meta.clone(), source, spec.path, &interval);
    built.depends_on = spec
        .depends_on
        .iter()
        .map(|(namespace, name)| Ref::named(name).in_namespace(namespace))
        .collect();
    built.health_checks = spec
        .health_checks
        .iter()
        .map(|t| {
            Ref::to(t.kind, t.name)
                .in_namespace(t.namespace)
                .api_version(t.api_version)
        })
        .collect();
    built.wait = spec.wait;
    built.service_account = spec.service_account.map(String::from);
    let mut status = status(meta, spec, run);
    status.inventory = Some(
        inventory
            .iter()
            .map(|(id, version)| (id.clone(), version.to_string()))
            .collect(),
    );
    built.status = Some(status);
    let mut value = built.to_json();
    value["spec"]["retryInterval"] = Value::from("1m");
    value
}

fn status(meta: &Meta, spec: &KustomizationSpec, run: Run) -> KustomizationStatus {
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
    KustomizationStatus {
        observed_generation: observed,
        last_attempted_revision: Some(attempted.to_string()),
        last_applied_revision: Some(applied.to_string()),
        conditions: conditions.into_vec(),
        inventory: None,
    }
}
