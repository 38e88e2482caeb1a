//! Seed 000, incident 2, rebuilt as objects: the gateway stack's upgrade drops the subchart
//! that carried `ratelimitconfigs.ratelimit.solo.io`; NetOp, in another stack, applies
//! RateLimitConfig objects. Before: the dependency is visible. After: NetOp is failed on Day 0,
//! naming the CRD and who provided it, while its own conditions still say Ready.

use super::testkit::*;
use super::{ClusterInfo, FormerCrdProvider, State};
use crate::model::ObjectId;
use serde_json::{Value, json};

const CRD: &str = "ratelimitconfigs.ratelimit.solo.io";

fn crd(name: &str, group: &str, kind: &str) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": name, "generation": 1},
           "spec": {"group": group, "names": {"kind": kind, "plural": name.split('.').next().unwrap()}, "scope": "Namespaced"},
           "status": {"conditions": [{"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": ago(3000)}]}})
}

fn namespace(name: &str, phase: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}, "status": {"phase": phase}})
}

fn with_inventory(mut value: Value, entries: &[&str]) -> Value {
    value["status"]["inventory"] = json!({"entries": entries.iter().map(|id| json!({"id": id, "v": "v1"})).collect::<Vec<_>>()});
    value
}

fn gateway(with_crd_subchart: bool) -> Value {
    let mut entries = vec![
        "gateway-system_gateway-controller_apps_Deployment",
        "_gateway-system__Namespace",
    ];
    let crd_entry = format!("_{CRD}_apiextensions.k8s.io_CustomResourceDefinition");
    if with_crd_subchart {
        entries.push(&crd_entry);
    }
    with_inventory(
        helm_release("gateway-system", "gateway", "charts"),
        &entries,
    )
}

fn netop() -> Value {
    with_inventory(
        helm_release("networking", "netop", "charts"),
        &[
            "networking_netop_apps_Deployment",
            "networking_tenant-limits_ratelimit.solo.io_RateLimitConfig",
        ],
    )
}

fn cluster(crds: bool) -> Vec<Value> {
    let mut values = flux_controllers();
    values.extend([
        helm_repository("charts"),
        helm_chart("gateway-system", "gateway", "charts", "2.14.0"),
    ]);
    values.push(helm_chart("networking", "netop", "charts", "2.14.0"));
    values.extend([
        namespace("gateway-system", "Active"),
        namespace("networking", "Active"),
        namespace("flux-system", "Active"),
    ]);
    if crds {
        values.push(crd(CRD, "ratelimit.solo.io", "RateLimitConfig"));
    }
    values.push(crd(
        "helmreleases.helm.toolkit.fluxcd.io",
        "helm.toolkit.fluxcd.io",
        "HelmRelease",
    ));
    values
}

#[test]
fn before_the_upgrade_the_cross_stack_dependency_is_visible() {
    let mut values = cluster(true);
    values.extend([gateway(true), netop()]);
    let run = run(&values);
    assert_eq!(
        run.state("HelmRelease", "networking", "netop"),
        State::Healthy
    );
    let edge = run
        .evaluation
        .dependencies
        .iter()
        .find(|d| d.object.ends_with(CRD))
        .expect("netop consumes the CRD the gateway provides");
    assert_eq!(
        edge.provider.as_str(),
        id("HelmRelease", "gateway-system", "gateway")
    );
    assert_eq!(
        edge.consumer.as_str(),
        id("HelmRelease", "networking", "netop")
    );
    let provider = &run
        .evaluation
        .crd_providers
        .iter()
        .find(|p| p.crd == CRD)
        .unwrap();
    assert_eq!(
        (provider.group.as_str(), provider.kind.as_str()),
        ("ratelimit.solo.io", "RateLimitConfig")
    );
}

#[test]
fn after_the_upgrade_the_consumer_fails_at_once_naming_the_crd_and_its_former_provider() {
    let before = {
        let mut values = cluster(true);
        values.extend([gateway(true), netop()]);
        run(&values)
    };
    let history: Vec<FormerCrdProvider> = before
        .evaluation
        .crd_providers
        .iter()
        .map(|p| FormerCrdProvider {
            group: p.group.clone(),
            kind: p.kind.clone(),
            crd: p.crd.clone(),
            provider: p.provider.clone(),
            last_seen: now(),
        })
        .collect();
    let mut values = cluster(false);
    values.extend([gateway(false), netop()]);
    let info = ClusterInfo {
        name: CLUSTER.into(),
        former_crd_providers: history,
        ..ClusterInfo::default()
    };
    let after = run_with(&values, &[info], &[], &Default::default());

    // The gateway upgrade "succeeded" and stays healthy; NetOp, still Ready=True, is failed.
    assert_eq!(
        after.state("HelmRelease", "gateway-system", "gateway"),
        State::Healthy
    );
    let netop = after.verdict("HelmRelease", "networking", "netop");
    assert_eq!(netop.state, State::Failed);
    assert!(netop.reason.contains(CRD), "{}", netop.reason);
    assert!(
        netop.reason.contains("HelmRelease/gateway-system/gateway"),
        "{}",
        netop.reason
    );
    assert_eq!(
        netop.root_causes,
        vec![ObjectId(id("HelmRelease", "networking", "netop"))],
        "a root cause, alerting at once"
    );
}

#[test]
fn without_history_the_missing_crd_is_still_named_and_without_crds_nothing_is_inferred() {
    let mut values = cluster(false);
    values.extend([gateway(false), netop()]);
    let netop = run(&values)
        .verdict("HelmRelease", "networking", "netop")
        .clone();
    assert_eq!(netop.state, State::Failed);
    assert!(netop.reason.contains("RateLimitConfig"), "{}", netop.reason);

    let no_crds: Vec<Value> = values
        .into_iter()
        .filter(|v| v["kind"] != "CustomResourceDefinition")
        .collect();
    assert_eq!(
        run(&no_crds).state("HelmRelease", "networking", "netop"),
        State::Healthy
    );
}

#[test]
fn a_terminating_namespace_fails_who_applies_into_it_and_co_ownership_is_reported() {
    let mut values = cluster(true);
    values.retain(|v| v["metadata"]["name"] != "networking" || v["kind"] != "Namespace");
    values.push(namespace("networking", "Terminating"));
    let platform = with_inventory(
        kustomization("platform", &[]),
        &[
            "_networking__Namespace",
            &format!("_{CRD}_apiextensions.k8s.io_CustomResourceDefinition"),
        ],
    );
    values.extend([gateway(true), netop(), platform]);
    let run = run(&values);
    let netop = run.verdict("HelmRelease", "networking", "netop");
    assert_eq!(netop.state, State::Failed);
    assert!(
        netop.reason.contains("namespace networking is terminating"),
        "{}",
        netop.reason
    );
    assert!(
        netop.reason.contains("Kustomization/flux-system/platform"),
        "{}",
        netop.reason
    );
    let shared = run
        .evaluation
        .co_ownerships
        .iter()
        .find(|c| c.object.ends_with(CRD))
        .expect("two providers of the CRD");
    assert_eq!(shared.providers.len(), 2);
}

/// The API server marks a CRD Established only once all its names are accepted
/// (apiextensions-apiserver naming_controller.go, calculateNamesAndConditions: a plural already
/// in use gives NamesAccepted=False/PluralConflict and Established=False/NotAccepted); until
/// then its kind is not served, so the CRD is in progress, and stuck past the threshold.
#[test]
fn a_crd_whose_names_are_not_accepted_is_in_progress_until_established() {
    let not_established = |minutes| {
        let mut conflicting = crd(CRD, "ratelimit.solo.io", "RateLimitConfig");
        conflicting["status"]["conditions"] = json!([
            condition(
                "NamesAccepted",
                "False",
                "PluralConflict",
                "\"ratelimitconfigs\" is already in use",
                minutes
            ),
            condition(
                "Established",
                "False",
                "NotAccepted",
                "not all names are accepted",
                minutes
            ),
        ]);
        let established = crd(
            "helmreleases.helm.toolkit.fluxcd.io",
            "helm.toolkit.fluxcd.io",
            "HelmRelease",
        );
        run(&[conflicting, established])
    };
    let young = not_established(5);
    let verdict = young.verdict("CustomResourceDefinition", "", CRD);
    assert_eq!(
        (
            verdict.state,
            verdict.reason.as_str(),
            verdict.message.as_str()
        ),
        (
            State::Progressing,
            "CRD not established",
            "not all names are accepted"
        )
    );
    assert_eq!(verdict.since, Some(now() - chrono::TimeDelta::minutes(5)));
    let healthy = young.verdict(
        "CustomResourceDefinition",
        "",
        "helmreleases.helm.toolkit.fluxcd.io",
    );
    assert_eq!(
        (healthy.state, healthy.reason.as_str()),
        (State::Healthy, "exists")
    );
    assert_eq!(
        not_established(60).state("CustomResourceDefinition", "", CRD),
        State::Stuck
    );
}
