//! Revisions: whether two name the same content, and which one an object has converged on.

use crate::model::{Kind, Object};

/// Revisions are compared by digest when both carry one (`main@sha1:…` vs `sha1:…`).
pub(super) fn same_revision(a: &str, b: &str) -> bool {
    a == b || after_tag(a) == after_tag(b)
}

/// A release's chart against its source's artifact revision. A HelmChart's revision is the
/// chart version; an OCIRepository's is `<tag>@sha256:<hex>` (or the digest alone), which
/// helm-controller records as `<version>+<first 12 hex of the digest>`, checking the version
/// against the tag only when the tag is a semver (helm-controller@v1.6.4
/// helmrelease_controller.go, mutateChartWithSourceRevision and parseSemverFromTag): a tag such
/// as `stable` pushed again with new content is a new chart. With the
/// DisableChartDigestTracking gate the version stays plain and the digest goes to
/// `history[].ociDigest` (`oci_digest`: the source revision, tag and all, helm-controller@v1.6.4
/// mutateChartWithSourceRevision `revDigest`), compared by digest.
pub(super) fn same_chart(deployed: &str, oci_digest: Option<&str>, offered: &str) -> bool {
    if deployed == offered {
        return true;
    }
    let (tag, digest) = match offered.rsplit_once('@') {
        Some((tag, digest)) => (semver_tag(tag), digest),
        None => (None, offered),
    };
    let Some((_, hex)) = digest.split_once(':') else {
        return false;
    };
    let (version, recorded) = match deployed.split_once('+') {
        Some((version, build)) if build.len() == 12 && hex.starts_with(build) => (version, true),
        Some(_) => return false,
        // Recorded whole: `stable@sha256:…` for a floating tag, `sha256:…` for a semver one.
        None => (deployed, oci_digest.is_some_and(|d| after_tag(d) == digest)),
    };
    recorded && tag.is_none_or(|tag| same_version(&tag, version))
}

/// A revision without its `tag@`.
fn after_tag(revision: &str) -> &str {
    revision
        .rsplit_once('@')
        .map_or(revision, |(_, digest)| digest)
}

/// An OCI tag as the semver it names (Helm pushes `+` as `_`), when it is one.
fn semver_tag(tag: &str) -> Option<String> {
    let tag = tag.replace('_', "+");
    let core = tag.strip_prefix('v').unwrap_or(&tag);
    let core = core.split(['-', '+']).next().unwrap_or_default();
    let parts: Vec<&str> = core.split('.').collect();
    let numeric = |p: &&str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    (parts.len() <= 3 && parts.iter().all(numeric)).then_some(tag)
}

/// Semver equality as helm-controller reads it: a leading `v` and build metadata do not count.
fn same_version(tag: &str, version: &str) -> bool {
    let bare = |v: &str| {
        let v = v.strip_prefix('v').unwrap_or(v);
        v.split_once('+').map_or(v, |(v, _)| v).to_string()
    };
    bare(tag) == bare(version)
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
