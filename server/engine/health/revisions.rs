//! Revisions: whether two name the same content, and which one an object has converged on.

use crate::model::{Kind, Object};

/// Revisions are compared by digest when both carry one (`main@sha1:…` vs `sha1:…`).
pub(super) fn same_revision(a: &str, b: &str) -> bool {
    let digest = |r: &str| r.rsplit_once('@').map_or(r, |(_, d)| d).to_string();
    a == b || digest(a) == digest(b)
}

/// A release's chart version against its source's artifact revision. A HelmChart's revision is
/// the chart version; an OCIRepository's is `<tag>@sha256:<hex>` (or the digest alone), which
/// helm-controller records as `<version>+<first 12 hex of the digest>` (helmrelease_controller.go,
/// mutateChartWithSourceRevision), so a tag pushed again with new content is a new chart.
pub(super) fn same_chart(deployed: &str, offered: &str) -> bool {
    if deployed == offered {
        return true;
    }
    let (tag, digest) = match offered.rsplit_once('@') {
        Some((tag, digest)) => (Some(tag), digest),
        None => (None, offered),
    };
    let Some((_, hex)) = digest.split_once(':') else {
        return false;
    };
    let Some((version, build)) = deployed.split_once('+') else {
        return false;
    };
    build.len() == 12 && hex.starts_with(build) && tag.is_none_or(|tag| tag == version)
}

/// The revision a Kustomization or Terraform has converged on: the one it applied, or, for a
/// Terraform whose plan of it had no changes, the one it planned (tofu-controller
/// api/v1alpha2 TerraformPlannedNoChanges sets lastPlannedRevision and lastAttemptedRevision
/// and leaves lastAppliedRevision at the last commit that changed infrastructure).
pub(super) fn converged_revision(object: &Object) -> Option<&str> {
    let planned_no_changes = object.kind == Kind::Terraform
        && object
            .condition("Ready")
            .is_some_and(|r| r.is_true() && r.reason == "TerraformPlannedNoChanges");
    let planned = object.status.flux.last_planned_revision.as_deref();
    match planned {
        Some(planned) if planned_no_changes => Some(planned),
        _ => object.status.flux.last_applied_revision.as_deref(),
    }
}
