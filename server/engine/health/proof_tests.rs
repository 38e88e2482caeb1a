//! Healthy only on proof (issue 44, method 1). What `healthy` needs, per kind:
//!
//! - Kustomization: Ready=True with a reason its controller writes on success, at the current
//!   generation; not reconciling; the revision attempted is the one applied and the one its
//!   source offers; every object of its inventory that fleetglass reads exists and is healthy
//!   (workloads rolled out, pods not failing); its controller alive; its cluster's data fresh
//!   and its kind listed.
//! - HelmRelease: the same, with the chart its source offers deployed instead of a revision.
//! - Workloads: every replica available and updated, at the observed generation, no pod
//!   failing.
//!
//! Each proof element is taken away from a healthy fleet, alone and in random combinations:
//! the object is then never `healthy`.

use super::State;
use super::testkit::*;
use super::{ClusterInfo, Thresholds};
use crate::model::Kind;
use chrono::TimeDelta;
use proptest::prelude::*;
use serde_json::{Value, json};

/// A Kustomization and a HelmRelease, each with an inventory whose Deployment is running,
/// their sources, and the controllers.
fn healthy_fleet() -> Vec<Value> {
    let mut values = flux_controllers();
    let mut apps = kustomization("apps", &[]);
    apps["status"]["inventory"] =
        json!({"entries": [{"id": "apps_api_apps_Deployment", "v": "v1"}]});
    let mut web = helm_release("apps", "web", "charts");
    web["status"]["inventory"] =
        json!({"entries": [{"id": "apps_web_apps_Deployment", "v": "v1"}]});
    values.extend([
        git_repository("flux-system", SHA),
        apps,
        applied_by(
            deployment("apps", "api", 1, 1),
            "kustomize",
            "flux-system",
            "apps",
        ),
        pod("apps", "api", "a", None),
        helm_repository("charts"),
        helm_chart("apps", "web", "charts", "2.14.0"),
        web,
        applied_by(deployment("apps", "web", 1, 1), "helm", "apps", "web"),
        pod("apps", "web", "a", None),
    ]);
    values
}

type Removal = fn(&mut Vec<Value>, &mut ClusterInfo, &str);

fn owner<'v>(values: &'v mut [Value], kind: &str) -> &'v mut Value {
    values
        .iter_mut()
        .find(|v| v["kind"] == kind)
        .expect("the owner is in the fleet")
}

/// Adds a condition, whatever other removals left of the status.
fn add_condition(object: &mut Value, condition: Value) {
    let conditions = &mut object["status"]["conditions"];
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    conditions.as_array_mut().expect("a list").push(condition);
}

/// The owner's Deployment, unless another removal deleted it.
fn workload<'v>(values: &'v mut [Value], kind: &str) -> Option<&'v mut Value> {
    let name = if kind == "Kustomization" {
        "api"
    } else {
        "web"
    };
    values
        .iter_mut()
        .find(|v| v["kind"] == "Deployment" && v["metadata"]["name"] == name)
}

/// Each proof element, and how to take it away from the object of `kind`.
const REMOVALS: &[(&str, Removal)] = &[
    ("Ready is False", |v, _, k| {
        owner(v, k)["status"]["conditions"][0]["status"] = json!("False")
    }),
    ("Ready is Unknown", |v, _, k| {
        owner(v, k)["status"]["conditions"][0]["status"] = json!("Unknown")
    }),
    ("Ready's reason is none its controller writes", |v, _, k| {
        owner(v, k)["status"]["conditions"][0]["reason"] = json!("LooksFine")
    }),
    ("no Ready condition", |v, _, k| {
        owner(v, k)["status"]["conditions"] = json!([])
    }),
    ("no status", |v, _, k| {
        owner(v, k)
            .as_object_mut()
            .expect("object")
            .remove("status");
    }),
    ("a generation not yet observed", |v, _, k| {
        owner(v, k)["metadata"]["generation"] = json!(2)
    }),
    (
        "Reconciling=True for longer than the threshold",
        |v, _, k| {
            let reconciling = condition("Reconciling", "True", "Progressing", "", 600);
            add_condition(owner(v, k), reconciling);
        },
    ),
    ("Stalled=True", |v, _, k| {
        add_condition(
            owner(v, k),
            condition("Stalled", "True", "RetriesExceeded", "", 5),
        )
    }),
    ("a revision attempted and not applied", |v, _, k| {
        owner(v, k)["status"]["lastAttemptedRevision"] = json!(if k == "Kustomization" {
            NEW_SHA
        } else {
            "2.15.0"
        })
    }),
    ("its source offers something newer", |v, _, _| {
        for source in v.iter_mut() {
            match source["kind"].as_str() {
                Some("GitRepository") => source["status"]["artifact"]["revision"] = json!(NEW_SHA),
                Some("HelmChart") => source["status"]["artifact"]["revision"] = json!("2.15.0"),
                _ => {}
            }
        }
    }),
    ("an inventory object deleted", |v, _, k| {
        let name = if k == "Kustomization" { "api" } else { "web" };
        v.retain(|o| !(o["kind"] == "Deployment" && o["metadata"]["name"] == name));
    }),
    ("a workload without its replicas", |v, _, k| {
        if let Some(workload) = workload(v, k) {
            workload["status"]["availableReplicas"] = json!(0);
            workload["status"]["readyReplicas"] = json!(0);
            workload["status"]["conditions"] = json!([{"type": "Available", "status": "False",
                "reason": "MinimumReplicasUnavailable", "lastTransitionTime": ago(600)}]);
        }
    }),
    ("a workload's pod crash-looping", |v, _, k| {
        let app = if k == "Kustomization" { "api" } else { "web" };
        v.retain(|o| !(o["kind"] == "Pod" && o["metadata"]["labels"]["app"] == app));
        v.push(super::liveness_tests::crash_looping_pod("apps", app, "z"));
    }),
    ("a workload's rollout not observed", |v, _, k| {
        if let Some(workload) = workload(v, k) {
            workload["metadata"]["generation"] = json!(2);
        }
    }),
    ("its controller absent", |v, _, k| {
        let name = if k == "Kustomization" {
            "kustomize-controller"
        } else {
            "helm-controller"
        };
        v.retain(|o| o["metadata"]["name"] != name);
    }),
    ("its controller not running", |v, _, k| {
        let name = if k == "Kustomization" {
            "kustomize-controller"
        } else {
            "helm-controller"
        };
        if let Some(controller) = v.iter_mut().find(|o| o["metadata"]["name"] == name) {
            controller["status"]["availableReplicas"] = json!(0);
            controller["status"]["readyReplicas"] = json!(0);
        }
    }),
    ("its cluster's data stale", |_, c, _| {
        c.last_good = Some(now() - TimeDelta::hours(2))
    }),
    ("its cluster never reached", |_, c, _| {
        c.last_good = None;
        c.error = Some("connection refused".into());
    }),
    ("its kind not listed yet", |_, c, k| {
        c.unlisted.insert(Kind::named(k).expect("a kind"));
    }),
    ("its kind unreadable", |_, c, k| {
        c.kind_errors
            .insert(Kind::named(k).expect("a kind"), "forbidden".into());
    }),
    ("suspended", |v, _, k| {
        owner(v, k)["spec"]["suspend"] = json!(true)
    }),
    ("a malformed field", |v, _, k| {
        owner(v, k)["spec"]["interval"] = json!("every now and then")
    }),
];

fn state_after(kind: &str, removals: &[usize]) -> State {
    let mut values = healthy_fleet();
    let mut cluster = ClusterInfo {
        name: CLUSTER.into(),
        last_good: Some(now()),
        ..ClusterInfo::default()
    };
    for &i in removals {
        (REMOVALS[i].1)(&mut values, &mut cluster, kind);
    }
    let thresholds = Thresholds::default();
    let run = run_with(&values, &[cluster], &[], &thresholds);
    let (namespace, name) = if kind == "Kustomization" {
        ("flux-system", "apps")
    } else {
        ("apps", "web")
    };
    run.state(kind, namespace, name)
}

#[test]
fn the_fleet_is_healthy_with_every_proof_element() {
    for kind in ["Kustomization", "HelmRelease"] {
        assert_eq!(state_after(kind, &[]), State::Healthy, "{kind}");
    }
}

#[test]
fn taking_away_any_one_proof_element_leaves_nothing_green() {
    for kind in ["Kustomization", "HelmRelease"] {
        for (i, (what, _)) in REMOVALS.iter().enumerate() {
            assert_ne!(state_after(kind, &[i]), State::Healthy, "{kind}: {what}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn taking_away_any_combination_of_proof_elements_leaves_nothing_green(
        removals in prop::collection::btree_set(0..REMOVALS.len(), 1..4),
        release in any::<bool>(),
    ) {
        let kind = if release { "HelmRelease" } else { "Kustomization" };
        let removals: Vec<usize> = removals.into_iter().collect();
        let state = state_after(kind, &removals);
        let named: Vec<&str> = removals.iter().map(|&i| REMOVALS[i].0).collect();
        prop_assert_ne!(state, State::Healthy, "{}: {:?}", kind, named);
    }
}
