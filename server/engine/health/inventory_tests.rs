//! Family 4 of issue 44: an inventory is evidence. What a Kustomization or HelmRelease lists
//! in `status.inventory` and fleetglass reads on the cluster must be there for it to be
//! healthy; what is there is what it applied, labels or not.

use super::State::*;
use super::liveness_tests::crash_looping_pod;
use super::testkit::*;
use serde_json::{Value, json};

fn with_inventory(mut value: Value, ids: &[&str]) -> Value {
    let entries: Vec<Value> = ids.iter().map(|id| json!({"id": id, "v": "v1"})).collect();
    value["status"]["inventory"] = json!({ "entries": entries });
    value
}

fn release_listing(ids: &[&str]) -> Vec<Value> {
    let mut values = flux_controllers();
    values.extend([
        helm_repository("charts"),
        helm_chart("apps", "web", "charts", "2.14.0"),
        with_inventory(helm_release("apps", "web", "charts"), ids),
        applied_by(deployment("apps", "web", 1, 1), "helm", "apps", "web"),
    ]);
    values
}

#[test]
fn a_ready_release_missing_a_deployment_of_its_inventory_is_degraded_naming_it() {
    let run = run(&release_listing(&[
        "apps_web_apps_Deployment",
        "apps_web-worker_apps_Deployment",
        "apps_web__Service",
    ]));
    let verdict = run.assert_verdict(
        "HelmRelease",
        "apps",
        "web",
        Degraded,
        "inventory object Deployment apps/web-worker not found",
    );
    assert_eq!(verdict.root_causes, std::slice::from_ref(&verdict.id));
    assert!(verdict.message.contains("Deployment apps/web-worker"));
}

#[test]
fn an_inventory_whose_objects_are_all_there_is_healthy() {
    let run = run(&release_listing(&[
        "apps_web_apps_Deployment",
        "apps_web__Service",
    ]));
    assert_eq!(run.state("HelmRelease", "apps", "web"), Healthy);
}

/// A kind the cluster's objects are not read for is no evidence of absence.
#[test]
fn an_entry_of_a_kind_fleetglass_does_not_read_proves_nothing() {
    let run = run(&release_listing(&[
        "apps_web_apps_Deployment",
        "apps_web_policy_PodDisruptionBudget",
        "apps_web_example.com_Widget",
        "apps_web_other.group_Deployment",
    ]));
    assert_eq!(run.state("HelmRelease", "apps", "web"), Healthy);
}

/// An inventory object found is what the owner applied even without Flux's labels: its
/// failure degrades the owner.
#[test]
fn an_unlabelled_inventory_object_that_fails_degrades_its_owner() {
    let mut values = flux_controllers();
    values.extend([
        git_repository("flux-system", SHA),
        with_inventory(
            kustomization("apps", &[]),
            &["apps_api_apps_Deployment", "_apps__Namespace"],
        ),
        deployment("apps", "api", 1, 0),
        crash_looping_pod("apps", "api", "a"),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}}),
    ]);
    let run = run(&values);
    let verdict = run.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(verdict.state, Degraded, "{verdict:?}");
    assert!(
        verdict.reason.contains("Deployment apps/api"),
        "{}",
        verdict.reason
    );

    // the Namespace is cluster-scoped: named without a namespace when it goes
    values.pop();
    let run = super::testkit::run(&values);
    assert!(
        run.verdict("Kustomization", "flux-system", "apps")
            .message
            .contains("Namespace apps listed"),
    );
}

/// An inventory entry proves nothing of a kind the cluster cannot read or has not listed in
/// full, nor of a kind an `evaluate` input holds none of.
#[test]
fn absence_from_a_kind_not_read_in_full_is_no_evidence() {
    use super::{ClusterInfo, InputEvidence};
    use crate::model::Kind;
    let values = release_listing(&["apps_web_apps_Deployment", "apps_gone_apps_StatefulSet"]);
    let cluster = |info: ClusterInfo| ClusterInfo {
        name: CLUSTER.into(),
        last_good: Some(now()),
        ..info
    };
    let state = |info: ClusterInfo| {
        let run = run_with(&values, &[cluster(info)], &[], &Default::default());
        run.state("HelmRelease", "apps", "web")
    };
    assert_eq!(
        state(ClusterInfo::default()),
        Degraded,
        "read in full: gone"
    );
    let unreadable = ClusterInfo {
        kind_errors: [(Kind::StatefulSet, "forbidden".to_string())].into(),
        ..ClusterInfo::default()
    };
    assert_ne!(state(unreadable), Degraded);
    let input_without = ClusterInfo {
        input: Some(InputEvidence {
            kinds: [
                Kind::HelmRelease,
                Kind::HelmChart,
                Kind::HelmRepository,
                Kind::Deployment,
            ]
            .into(),
            ..InputEvidence::default()
        }),
        ..ClusterInfo::default()
    };
    assert_eq!(state(input_without), Healthy);
}
