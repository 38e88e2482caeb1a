//! Property tests of the "no false green" invariants on generated fleets (see `generators`),
//! and a fuzz of arbitrary Kubernetes-ish JSON through `parse_object` + `evaluate`.

use super::generators::{
    FLUX_KINDS, NAMES, cluster_info, controller_deployment, flux_object, parse_all,
};
use super::testkit::now;
use super::{ClusterInfo, Evaluation, Input, State, Thresholds, cluster_id, evaluate};
use crate::model::{Kind, Object, controller_of_deployment};
use chrono::TimeDelta;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};

fn check_invariants(objects: &[Object], clusters: &[ClusterInfo], evaluation: &Evaluation) {
    let thresholds = Thresholds::default();
    let verdicts: HashMap<&str, &super::Verdict> = evaluation
        .objects
        .iter()
        .map(|v| (v.id.as_str(), v))
        .collect();
    let causes: HashSet<&str> = evaluation
        .root_causes
        .iter()
        .map(|r| r.id.as_str())
        .collect();
    let stale_clusters: HashSet<&str> = clusters
        .iter()
        .filter(|c| {
            c.error.is_some()
                || c.last_good
                    .is_some_and(|t| now() - t > thresholds.freshness)
        })
        .map(|c| c.name.as_str())
        .collect();
    let dead: HashSet<(&str, String)> = objects
        .iter()
        .filter(|o| {
            o.kind == Kind::Deployment
                && o.status.workload.as_ref().is_some_and(|w| w.available == 0)
        })
        .map(|o| (o.cluster.as_str(), o.name.clone()))
        .collect();
    // the controller Deployments each cluster holds (a cluster with none: liveness unknown)
    let controllers: HashSet<(&str, &str)> = objects
        .iter()
        .filter(|o| o.kind == Kind::Deployment && controller_of_deployment(&o.name).is_some())
        .map(|o| (o.cluster.as_str(), o.name.as_str()))
        .collect();
    let has_controllers = |cluster: &str| controllers.iter().any(|(c, _)| *c == cluster);
    assert_eq!(evaluation.objects.len(), objects.len());
    for object in objects {
        let verdict = verdicts[object.id().as_str()];
        let healthy = verdict.state == State::Healthy;
        if let Some(controller) = object.kind.controller() {
            let deployment = object
                .shard()
                .map_or(controller.to_string(), |s| format!("{controller}-{s}"));
            let cluster = object.cluster.as_str();
            let absent =
                has_controllers(cluster) && !controllers.contains(&(cluster, deployment.as_str()));
            assert!(
                !(healthy && absent),
                "healthy without its controller: {verdict:?}"
            );
            let controller_dead = dead.contains(&(cluster, deployment));
            assert!(
                !(healthy && controller_dead),
                "healthy with a dead controller: {verdict:?}"
            );
        }
        let stalled = object.condition("Stalled").is_some_and(|c| c.is_true());
        assert!(!(healthy && stalled), "healthy while Stalled: {verdict:?}");
        assert!(
            !(healthy && stale_clusters.contains(object.cluster.as_str())),
            "healthy on stale cluster: {verdict:?}"
        );
        assert!(
            !healthy || object.defects.is_empty(),
            "healthy while malformed: {verdict:?}"
        );
        // a suspension is a root cause (its own) only while something waits on it
        let held_suspension =
            verdict.state == State::Suspended && verdict.root_causes == [verdict.id.clone()];
        assert_eq!(
            verdict.state.is_problem() || held_suspension,
            !verdict.root_causes.is_empty(),
            "{verdict:?}"
        );
        for root in &verdict.root_causes {
            assert!(
                causes.contains(root.as_str()),
                "root cause {root} not listed"
            );
        }
    }
    for cause in &evaluation.root_causes {
        if let Some(verdict) = verdicts.get(cause.id.as_str()) {
            assert_ne!(
                verdict.state,
                State::Blocked,
                "blocked root cause {cause:?}"
            );
            assert!(
                cause.affected.contains(&cause.id),
                "a root cause affects itself: {cause:?}"
            );
        } else {
            // not an object of the input: the cluster itself, or a controller it lacks
            let (cluster, kind, _, name) = cause.id.parts().unwrap_or_default();
            let absent_controller =
                kind == "Deployment" && controller_of_deployment(name).is_some();
            assert!(
                absent_controller || cause.id == cluster_id(cluster),
                "{cause:?}"
            );
        }
        for affected in &cause.affected {
            assert!(verdicts[affected.as_str()].root_causes.contains(&cause.id));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn no_false_green_on_generated_fleets(
        flux in prop::collection::vec(flux_object(), 0..24),
        controllers in prop::collection::vec(controller_deployment(), 0..6),
        clusters in prop::collection::vec(cluster_info(), 0..2),
        minutes_later in 0i64..30,
    ) {
        let values: Vec<Value> = flux.into_iter().chain(controllers).collect();
        let objects = parse_all(&values);
        let thresholds = Thresholds::default();
        let at = now() + TimeDelta::minutes(minutes_later);
        let evaluation = evaluate(&Input { objects: &objects, clusters: &clusters, domains: &[], thresholds: &thresholds, now: at, seen_in_progress: &Default::default() });
        // Invariants are stated at `now`; shifting time only moves progressing → stuck.
        if minutes_later == 0 {
            check_invariants(&objects, &clusters, &evaluation);
        }
    }
}

/// The invariants only mean something if the generator reaches healthy verdicts, including
/// next to dead controllers and Stalled conditions that the engine must then refuse.
#[test]
fn generated_fleets_reach_healthy_verdicts() {
    let mut runner = TestRunner::deterministic();
    let fleet = (
        prop::collection::vec(flux_object(), 0..24),
        prop::collection::vec(controller_deployment(), 0..6),
    );
    let mut healthy_flux = 0;
    for _ in 0..300 {
        let (flux, controllers) = fleet.new_tree(&mut runner).expect("a fleet").current();
        let values: Vec<Value> = flux.into_iter().chain(controllers).collect();
        let objects = parse_all(&values);
        let evaluation = evaluate(&Input {
            objects: &objects,
            clusters: &[],
            domains: &[],
            thresholds: &Thresholds::default(),
            now: now(),
            seen_in_progress: &Default::default(),
        });
        healthy_flux += evaluation
            .objects
            .iter()
            .filter(|v| v.kind.is_flux() && v.state == State::Healthy)
            .count();
    }
    assert!(
        healthy_flux > 100,
        "only {healthy_flux} healthy Flux verdicts in 300 fleets"
    );
}

/// Keys and values Kubernetes objects are made of, so the fuzz reaches deep into the parser.
const KEYS: [&str; 24] = [
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "namespace",
    "labels",
    "generation",
    "spec",
    "status",
    "conditions",
    "type",
    "reason",
    "message",
    "lastTransitionTime",
    "observedGeneration",
    "sourceRef",
    "dependsOn",
    "interval",
    "timeout",
    "suspend",
    "artifact",
    "revision",
    "containerStatuses",
    "ownerReferences",
];
const WORDS: [&str; 14] = [
    "Ready",
    "True",
    "False",
    "Unknown",
    "Stalled",
    "Reconciling",
    "5m",
    "1h30m",
    "bogus",
    "2026-11-29T11:00:00Z",
    "yesterday",
    "main@sha1:abc",
    "ReplicaSet",
    "CrashLoopBackOff",
];

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        prop::sample::select(WORDS.to_vec()).prop_map(Value::from),
        ".{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS.to_vec()), inner), 0..6).prop_map(
                |entries| Value::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.to_string(), v))
                        .collect()
                )
            ),
        ]
    })
}

fn arbitrary_object() -> impl Strategy<Value = Value> {
    (prop::sample::select(FLUX_KINDS.to_vec()), arbitrary_json(), arbitrary_json(), arbitrary_json(), prop::sample::select(NAMES.to_vec())).prop_map(
        |((api_version, kind), metadata, spec, status, name)| {
            let mut metadata = if metadata.is_object() { metadata } else { json!({}) };
            metadata["name"] = json!(name);
            json!({"apiVersion": api_version, "kind": kind, "metadata": metadata, "spec": spec, "status": status})
        },
    )
}

/// The number of fuzz cases (reported in the engine's notes).
const FUZZ_CASES: u32 = 20_000;

proptest! {
    #![proptest_config(ProptestConfig { cases: FUZZ_CASES, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_json_never_panics_and_never_passes_malformed_objects_as_healthy(
        documents in prop::collection::vec(prop_oneof![arbitrary_object(), arbitrary_json()], 1..6),
    ) {
        let objects: Vec<Object> = parse_all(&documents);
        let evaluation = evaluate(&Input { objects: &objects, clusters: &[], domains: &[], thresholds: &Thresholds::default(), now: now(), seen_in_progress: &Default::default() });
        check_invariants(&objects, &[], &evaluation);
    }
}
