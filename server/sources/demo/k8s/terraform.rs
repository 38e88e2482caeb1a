//! tofu-controller's Terraform object (infra.contrib.fluxcd.io/v1alpha2): spec and the
//! conditions of a run that wrote its outputs, optionally with Reconciling left behind.

use crate::objects::{Conditions, Meta, Ref, Terraform, TerraformStatus, Truth};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy)]
pub struct TerraformRun<'a> {
    /// Revision of the last successful plan/apply and when its outputs were written.
    pub revision: &'a str,
    pub outputs_written: DateTime<Utc>,
    /// A `Reconciling=True "Fulfilling prerequisites"` set at this time and never cleared.
    pub reconciling_since: Option<DateTime<Utc>>,
}

/// `source` is the `(namespace, name)` of the GitRepository holding the module.
pub fn terraform(meta: &Meta, source: (&str, &str), path: &str, run: &TerraformRun) -> Value {
    let sha = run.revision.rsplit(':').next().unwrap_or(run.revision);
    let plan = format!("plan-{}", run.revision.replace("@sha1:", "-"));
    let written = run.outputs_written;
    let mut conditions = Conditions::observing(meta.generation)
        .with(
            "Ready",
            Truth::True,
            "TerraformOutputsWritten",
            &format!("Outputs written: {}", run.revision),
            written,
        )
        .with(
            "Plan",
            Truth::True,
            "TerraformPlannedNoChanges",
            &format!("Plan no changes: {sha}"),
            written,
        )
        .with(
            "Output",
            Truth::True,
            "TerraformOutputsWritten",
            "Outputs written",
            written,
        );
    if let Some(since) = run.reconciling_since {
        conditions = conditions.with(
            "Reconciling",
            Truth::True,
            "Progressing",
            "Fulfilling prerequisites",
            since,
        );
    }
    let terraform = Terraform {
        meta: meta.clone(),
        interval: "12h".into(),
        path: path.into(),
        approve_plan: "auto".into(),
        source: Ref::to("GitRepository", source.1).in_namespace(source.0),
        status: Some(TerraformStatus {
            observed_generation: meta.generation,
            last_attempted_revision: run.revision.into(),
            last_applied_revision: run.revision.into(),
            last_planned_revision: Some(run.revision.into()),
            conditions: conditions.into_vec(),
        }),
    };
    let mut value = terraform.to_json();
    value["spec"]["writeOutputsToSecret"] = json!({"name": format!("{}-outputs", meta.name)});
    value["status"]["plan"] = json!({"lastApplied": plan, "pending": ""});
    value["status"]["availableOutputs"] = json!(["security_group_id", "security_group_arn"]);
    value
}
