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
    // what the inventories list is there (an inventory is evidence)
    values.extend([
        deployment("gateway-system", "gateway-controller", 1, 1),
        deployment("networking", "netop", 1, 1),
    ]);
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
        // Listed in full just now: the history is the only thing it adds.
        last_good: Some(now()),
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
    let terminating = run.verdict("Namespace", "", "networking");
    assert_eq!(
        (terminating.state, terminating.reason.as_str()),
        (State::Progressing, "namespace terminating")
    );
    let active = run.verdict("Namespace", "", "gateway-system");
    assert_eq!(
        (active.state, active.reason.as_str()),
        (State::Healthy, "exists")
    );
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

/// The edges are what each consumer needs from another stack: none to itself (the gateway
/// applies into the namespace it provides), and an object held by one inventory is not
/// co-owned.
#[test]
fn dependencies_link_consumers_to_other_stacks_only() {
    let platform = with_inventory(kustomization("platform", &[]), &["_networking__Namespace"]);
    let mut values = cluster(true);
    values.extend([gateway(true), netop(), platform]);
    let run = run(&values);
    let edges: Vec<(&str, &str, &str)> = run
        .evaluation
        .dependencies
        .iter()
        .map(|d| (d.provider.as_str(), d.consumer.as_str(), d.object.as_str()))
        .collect();
    let gateway = id("HelmRelease", "gateway-system", "gateway");
    let platform = id("Kustomization", "flux-system", "platform");
    let netop = id("HelmRelease", "networking", "netop");
    let crd_object = format!("CustomResourceDefinition.apiextensions.k8s.io/{CRD}");
    assert_eq!(
        edges,
        [
            (platform.as_str(), netop.as_str(), "Namespace/networking"),
            (gateway.as_str(), netop.as_str(), crd_object.as_str()),
        ]
    );
    assert!(
        run.evaluation.co_ownerships.is_empty(),
        "{:?}",
        run.evaluation.co_ownerships
    );
}

/// A namespace being deleted, as the API server writes it (deletionTimestamp and phase
/// Terminating together), and a CRD gone: the reason names the first problem met in the
/// inventory and counts the other; the message lists both.
#[test]
fn a_consumer_with_several_missing_prerequisites_names_the_first_and_counts_the_others() {
    let consumer_of = |networking: Value| {
        let mut values = cluster(false);
        values.retain(|v| v["metadata"]["name"] != "networking" || v["kind"] != "Namespace");
        values.push(networking);
        values.extend([gateway(false), netop()]);
        run(&values)
            .verdict("HelmRelease", "networking", "netop")
            .clone()
    };
    let gone = "CRD for RateLimitConfig.ratelimit.solo.io is gone: this stack applies \
                RateLimitConfig objects (ratelimit.solo.io) that no CRD serves";
    let one = consumer_of(namespace("networking", "Active"));
    assert_eq!((one.state, one.reason.as_str()), (State::Failed, gone));

    let mut terminating = namespace("networking", "Terminating");
    terminating["metadata"]["deletionTimestamp"] = json!(ago(5));
    let two = consumer_of(terminating);
    assert_eq!(
        (two.state, two.reason.as_str()),
        (
            State::Failed,
            "namespace networking is terminating (and 1 more)"
        )
    );
    assert_eq!(
        two.message,
        format!("namespace networking is terminating; {gone}")
    );
}

/// A consumed CRD that exists but cannot serve: being deleted (the API server's finalizer
/// controller marks it Terminating=True/InstanceDeletionInProgress while Established stays
/// True; apiextensions-apiserver crd_finalizer.go), or not yet established.
#[test]
fn a_consumed_crd_being_deleted_or_not_established_fails_its_consumer() {
    let consumer_with = |crd: Value| {
        let mut values = cluster(false);
        values.push(crd);
        values.extend([gateway(true), netop()]);
        run(&values)
            .verdict("HelmRelease", "networking", "netop")
            .clone()
    };
    let mut deleting = crd(CRD, "ratelimit.solo.io", "RateLimitConfig");
    deleting["metadata"]["deletionTimestamp"] = json!(ago(5));
    deleting["status"]["conditions"]
        .as_array_mut()
        .unwrap()
        .push(condition(
            "Terminating",
            "True",
            "InstanceDeletionInProgress",
            "CustomResource deletion is in progress",
            5,
        ));
    let verdict = consumer_with(deleting);
    assert_eq!(
        (verdict.state, verdict.reason.as_str()),
        (
            State::Failed,
            format!(
                "CRD {CRD} is being deleted (provided by {})",
                id("HelmRelease", "gateway-system", "gateway")
            )
            .as_str()
        )
    );

    let mut not_established = crd(CRD, "ratelimit.solo.io", "RateLimitConfig");
    not_established["status"]["conditions"] = json!([condition(
        "Established",
        "False",
        "NotAccepted",
        "not all names are accepted",
        5
    )]);
    let verdict = consumer_with(not_established);
    assert_eq!(
        (verdict.state, verdict.reason.as_str()),
        (
            State::Failed,
            format!("CRD {CRD} is not established").as_str()
        )
    );
}

/// A chart that provided several CRDs of one group: the history entry of the consumed kind
/// names the CRD and its provider, not a sibling of the same group.
#[test]
fn a_gone_crd_is_named_from_the_history_of_its_own_kind() {
    let provider = |crd: &str, kind: &str, name: &str| FormerCrdProvider {
        group: "ratelimit.solo.io".into(),
        kind: kind.into(),
        crd: crd.into(),
        provider: ObjectId(id("HelmRelease", "gateway-system", name)),
        last_seen: now() - chrono::TimeDelta::minutes(30),
    };
    let info = ClusterInfo {
        name: CLUSTER.into(),
        // Listed in full just now: the history is the only thing it adds.
        last_good: Some(now()),
        former_crd_providers: vec![
            provider(
                "ratelimitpolicies.ratelimit.solo.io",
                "RateLimitPolicy",
                "policies",
            ),
            provider(CRD, "RateLimitConfig", "gateway"),
        ],
        ..ClusterInfo::default()
    };
    let mut values = cluster(false);
    values.extend([gateway(false), netop()]);
    let run = run_with(&values, &[info], &[], &Default::default());
    assert_eq!(
        run.verdict("HelmRelease", "networking", "netop").reason,
        format!(
            "CRD {CRD} is gone (RateLimitConfig ratelimit.solo.io): it was provided by {}, \
             last seen {}",
            id("HelmRelease", "gateway-system", "gateway"),
            (now() - chrono::TimeDelta::minutes(30)).format("%Y-%m-%dT%H:%M:%SZ")
        )
    );
}
