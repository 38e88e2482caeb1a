//! Revisions: compared by digest; Terraform's plan with no changes is converged (rule 14);
//! ExternalArtifact is a source like the others (rule 13).

use super::State::*;
use super::revisions::same_revision;
use super::testkit::*;
use serde_json::{Value, json};

const OLD: &str = "main@sha1:0000000cccccccccccccccccccccccccccccccc";

/// The Terraform after tofu-controller planned `planned` with no changes (api/v1alpha2
/// TerraformPlannedNoChanges: lastAttemptedRevision and lastPlannedRevision set to the
/// revision, Ready=True "Plan no changes: <revision>"), having last applied `applied`.
fn planned_no_changes(planned: &str, applied: &str) -> Value {
    let mut value = with_conditions(
        terraform("nlb"),
        vec![
            ready(
                "TerraformPlannedNoChanges",
                &format!("Plan no changes: {planned}"),
            ),
            condition(
                "Plan",
                "False",
                "TerraformPlannedNoChanges",
                "Plan no changes",
                600,
            ),
        ],
    );
    value["status"]["lastAttemptedRevision"] = json!(planned);
    value["status"]["lastPlannedRevision"] = json!(planned);
    value["status"]["lastAppliedRevision"] = json!(applied);
    value
}

fn with_tofu(extra: Vec<Value>) -> Vec<Value> {
    let mut values = flux_controllers();
    values.push(controller("tofu-controller", 1));
    values.push(git_repository("flux-system", NEW_SHA));
    values.extend(extra);
    values
}

#[test]
fn a_plan_without_changes_of_the_offered_revision_is_converged() {
    let run = run(&with_tofu(vec![planned_no_changes(NEW_SHA, OLD)]));
    let verdict = run.verdict("Terraform", "flux-system", "nlb");
    assert_eq!(verdict.state, Healthy, "{verdict:?}");
    assert_eq!(verdict.reason, "TerraformPlannedNoChanges");
}

#[test]
fn a_plan_without_changes_of_an_older_revision_lags_the_source() {
    let run = run(&with_tofu(vec![planned_no_changes(SHA, OLD)]));
    let verdict = run.verdict("Terraform", "flux-system", "nlb");
    assert_eq!(verdict.state, Stuck);
    assert_eq!(
        verdict.reason,
        format!("stuck for 10h: source offers {NEW_SHA}, applied {SHA}")
    );
}

/// Only a plan without changes stands in for an apply: after an apply the applied revision is
/// what counts, whatever was planned.
#[test]
fn after_an_apply_the_applied_revision_is_what_converged() {
    let mut applied = planned_no_changes(NEW_SHA, OLD);
    applied["status"]["conditions"] = json!([ready(
        "TerraformAppliedSucceed",
        &format!("Applied successfully: {OLD}")
    )]);
    let run = run(&with_tofu(vec![applied]));
    let verdict = run.verdict("Terraform", "flux-system", "nlb");
    assert_eq!(verdict.state, Stuck);
    assert_eq!(
        verdict.reason,
        format!("stuck for 10h: revision {NEW_SHA} attempted but {OLD} applied")
    );
}

/// A Kustomization's lastPlannedRevision means nothing: only Terraform plans.
#[test]
fn only_terraform_plans_stand_in_for_an_apply() {
    let mut apps = kustomization("apps", &[]);
    apps["status"]["lastAppliedRevision"] = json!(OLD);
    apps["status"]["lastAttemptedRevision"] = json!(NEW_SHA);
    apps["status"]["lastPlannedRevision"] = json!(NEW_SHA);
    apps["status"]["conditions"] = json!([ready("TerraformPlannedNoChanges", "")]);
    let run = run(&with_tofu(vec![apps]));
    assert_eq!(run.state("Kustomization", "flux-system", "apps"), Stuck);
}

/// The 40 hex of a `main@sha1:<hex>` revision.
fn hex_of(revision: &str) -> &str {
    revision.rsplit_once(':').expect("a digest").1
}

#[test]
fn revisions_are_the_same_when_their_digests_are() {
    let hex = hex_of(SHA);
    assert!(same_revision(SHA, SHA));
    assert!(same_revision(
        &format!("main@sha1:{hex}"),
        &format!("sha1:{hex}")
    ));
    assert!(same_revision(
        &format!("refs/heads/main@sha1:{hex}"),
        &format!("main@sha1:{hex}")
    ));
    assert!(same_revision(
        &format!("sha1:{hex}"),
        &format!("main@sha1:{hex}")
    ));
    assert!(!same_revision(SHA, NEW_SHA));
    assert!(!same_revision(&format!("sha1:{hex}"), NEW_SHA));
    assert!(same_revision("v1.2.0@sha256:abc", "latest@sha256:abc"));
    assert!(!same_revision("v1.2.0@sha256:abc", "v1.2.0@sha256:abd"));
    assert!(!same_revision("6.0.3", "6.0.4"));
}

/// A Kustomization applied `main@sha1:x` while the source says `sha1:x` (a commit ref): the
/// same commit, so converged.
#[test]
fn an_applied_revision_matches_its_source_by_digest() {
    let hex = hex_of(NEW_SHA);
    let mut values = flux_controllers();
    values.push(git_repository("flux-system", &format!("sha1:{hex}")));
    let mut apps = kustomization("apps", &[]);
    apps["status"]["lastAppliedRevision"] = json!(NEW_SHA);
    apps["status"]["lastAttemptedRevision"] = json!(NEW_SHA);
    values.push(apps);
    assert_eq!(
        run(&values).state("Kustomization", "flux-system", "apps"),
        Healthy
    );
}

/// An ExternalArtifact as source-watcher's ArtifactGenerator writes it (source.toolkit.fluxcd.io
/// /v1 ExternalArtifact: spec.sourceRef to the generator, status.artifact and Ready).
pub(super) fn external_artifact(name: &str, revision: &str, ready_condition: Value) -> Value {
    json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "ExternalArtifact",
        "metadata": {"name": name, "namespace": "flux-system", "generation": 1},
        "spec": {"sourceRef": {"apiVersion": "source.extensions.fluxcd.io/v1beta1",
                               "kind": "ArtifactGenerator", "name": "platform", "namespace": "flux-system"}},
        "status": {"artifact": {"revision": revision, "digest": "sha256:9f2b", "lastUpdateTime": ago(300),
                                "path": format!("externalartifact/flux-system/{name}/9f2b.tar.gz"),
                                "url": format!("http://source-watcher.flux-system.svc.cluster.local./externalartifact/flux-system/{name}/9f2b.tar.gz")},
                   "conditions": [ready_condition]}})
}

fn consuming_external(artifact: Value, applied: &str) -> Vec<Value> {
    let mut values = flux_controllers();
    values.push(controller("source-watcher", 1));
    values.push(artifact);
    let mut apps = kustomization("apps", &[]);
    apps["spec"]["sourceRef"] = json!({"kind": "ExternalArtifact", "name": "apps"});
    apps["status"]["lastAppliedRevision"] = json!(applied);
    apps["status"]["lastAttemptedRevision"] = json!(applied);
    values.push(apps);
    values
}

#[test]
fn an_external_artifact_is_a_source_like_the_others() {
    let stored = ready(
        "Succeeded",
        &format!("reconciliation succeeded, generated artifact for revision {SHA}"),
    );
    let current = run(&consuming_external(
        external_artifact("apps", SHA, stored.clone()),
        SHA,
    ));
    assert_eq!(
        current.state("ExternalArtifact", "flux-system", "apps"),
        Healthy
    );
    assert_eq!(
        current.state("Kustomization", "flux-system", "apps"),
        Healthy
    );

    let behind = run(&consuming_external(
        external_artifact("apps", NEW_SHA, stored),
        SHA,
    ));
    let verdict = behind.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(verdict.state, Stuck);
    assert_eq!(
        verdict.reason,
        format!("stuck for 5h: source offers {NEW_SHA}, applied {SHA}")
    );

    let failing = external_artifact(
        "apps",
        SHA,
        not_ready(
            "BuildFailed",
            "failed to build artifact: path 'deploy/apps' not found",
            30,
        ),
    );
    let mut values = consuming_external(failing, SHA);
    let apps = values.last_mut().unwrap();
    apps["status"]["conditions"] = json!([not_ready(
        "ArtifactFailed",
        "Source artifact not found, retrying in 30s",
        30
    )]);
    let run = run(&values);
    let verdict = run.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(verdict.state, Blocked);
    assert_eq!(
        as_strs(&verdict.root_causes),
        [id("ExternalArtifact", "flux-system", "apps")]
    );
}

#[test]
fn an_external_artifact_without_source_watcher_is_unverifiable() {
    let stored = ready("Succeeded", "reconciliation succeeded");
    let mut values = consuming_external(external_artifact("apps", SHA, stored), SHA);
    values.retain(|v| v["metadata"]["name"] != "source-watcher");
    let run = run(&values);
    assert_eq!(
        run.roots("ExternalArtifact", "flux-system", "apps"),
        [id("Deployment", "flux-system", "source-watcher")]
    );
}

/// A missing ExternalArtifact is a missing source, named like any other.
#[test]
fn a_missing_external_artifact_fails_its_consumer_by_name() {
    let mut values =
        consuming_external(external_artifact("apps", SHA, ready("Succeeded", "")), SHA);
    values.retain(|v| v["kind"] != "ExternalArtifact");
    let run = run(&values);
    assert_eq!(
        run.verdict("Kustomization", "flux-system", "apps").reason,
        "source ExternalArtifact flux-system/apps not found"
    );
}
