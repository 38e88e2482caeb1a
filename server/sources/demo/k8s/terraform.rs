//! tofu-controller's Terraform object (infra.contrib.fluxcd.io/v1alpha2): spec and the
//! conditions of a run that wrote its outputs, optionally with Reconciling left behind.

use super::meta::{Conditions, Meta, Truth, object};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

pub const API_VERSION: &str = "infra.contrib.fluxcd.io/v1alpha2";

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
    let spec = json!({
        "interval": "12h",
        "approvePlan": "auto",
        "path": path,
        "sourceRef": {"kind": "GitRepository", "namespace": source.0, "name": source.1},
        "writeOutputsToSecret": {"name": format!("{}-outputs", meta.name)},
    });
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
    let mut status = json!({
        "observedGeneration": meta.generation,
        "lastAppliedRevision": run.revision,
        "lastAttemptedRevision": run.revision,
        "lastPlannedRevision": run.revision,
        "plan": {"lastApplied": plan, "pending": ""},
        "availableOutputs": ["security_group_id", "security_group_arn"],
    });
    status["conditions"] = conditions.into_json();
    object(API_VERSION, "Terraform", meta, spec, Some(status))
}
