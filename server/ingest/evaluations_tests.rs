//! The collector's per-cluster evaluations against the whole fleet's: on generated fleets,
//! after random sequences of object changes, removals, cluster-info changes (probes, errors)
//! and clock advances, re-evaluating only what changed or fell due and merging gives exactly
//! what `health::evaluate` gives over every object, and the shared parts give its root causes
//! in the same order without merging. Also when a round is given only the clusters reported on
//! (and those falling due), as the runner gives it.

use super::evaluations::{Evaluations, Round};
use crate::health::generators::{
    CLUSTERS, cluster_info, controller_deployment, flux_object, parse_all,
};
use crate::health::testkit::now;
use crate::health::{
    ClusterInfo, DomainSpec, Input, Parts, RootCause, SeenInProgress, Selection, Thresholds,
    VersionSource, evaluate,
};
use crate::model::{Kind, Object};
use chrono::{DateTime, TimeDelta, Utc};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// A pod of a controller Deployment with what time alone changes: a crash between restarts
/// (CRASH_LOOP_WINDOW after it) and an unschedulable pod (SCHEDULE_WINDOW after creation).
fn controller_pod() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec!["source-controller", "kustomize-controller"]),
        prop::sample::select(CLUSTERS.to_vec()),
        0i64..600,
        0i64..8,
        0i64..40,
        any::<bool>(),
    )
        .prop_map(|(app, cluster, crashed_secs, restarts, created_secs, unschedulable)| {
            let at = |secs: i64| (now() - TimeDelta::seconds(secs)).to_rfc3339();
            let scheduled = if unschedulable {
                json!({"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                       "message": "0/3 nodes are available"})
            } else {
                json!({"type": "PodScheduled", "status": "True"})
            };
            json!({"apiVersion": "v1", "kind": "Pod", "cluster": cluster,
                   "metadata": {"name": format!("{app}-5d9c7b-x"), "namespace": "flux-system",
                                "labels": {"app": app}, "creationTimestamp": at(created_secs),
                                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                                     "name": format!("{app}-5d9c7b"), "controller": true}]},
                   "status": {"phase": "Running", "startTime": at(created_secs), "conditions": [scheduled],
                              "containerStatuses": [{"name": "manager", "ready": true, "restartCount": restarts,
                                                     "state": {"running": {"startedAt": at(1)}},
                                                     "lastState": {"terminated": {"exitCode": 1, "reason": "Error",
                                                                                  "finishedAt": at(crashed_secs)}}}]}})
        })
}

fn any_object() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => flux_object(),
        2 => controller_deployment(),
        1 => controller_pod(),
    ]
}

/// One step of the fleet's life.
#[derive(Debug, Clone)]
struct Step {
    replaced: Vec<Value>,
    removed: Vec<usize>,
    /// New cluster infos, when they change this step.
    infos: Option<Vec<ClusterInfo>>,
    /// Every cluster's probe succeeds now (last_good moves, nothing else).
    probed: bool,
    seconds_later: i64,
}

fn step() -> impl Strategy<Value = Step> {
    (
        prop::collection::vec(any_object(), 0..4),
        prop::collection::vec(0usize..40, 0..3),
        prop::option::weighted(0.2, prop::collection::vec(cluster_info(), 0..3)),
        any::<bool>(),
        prop_oneof![Just(0i64), 0i64..90, 0i64..1_800],
    )
        .prop_map(|(replaced, removed, infos, probed, seconds_later)| Step {
            replaced,
            removed,
            infos,
            probed,
            seconds_later,
        })
}

/// Domains by namespace and by root (across clusters, one with a cluster selector), so the
/// roll-ups that span the fleet are part of what must match.
fn domains() -> Vec<DomainSpec> {
    let version = VersionSource::SourceRevision {
        kind: Kind::GitRepository,
        namespace: "flux-system".into(),
        name: "a".into(),
    };
    let domain = |name: &str, select: Selection, clusters: &[(&str, &str)]| DomainSpec {
        name: name.into(),
        select,
        clusters: clusters
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        version: version.clone(),
        stuck_after: (name == "apps").then_some(TimeDelta::minutes(3)),
        owner: None,
        runbook: None,
        slack_channel: None,
    };
    vec![
        domain(
            "apps",
            Selection {
                namespaces: vec!["apps".into()],
                ..Selection::default()
            },
            &[],
        ),
        domain(
            "platform",
            Selection {
                root: Some("flux-system/a".into()),
                ..Selection::default()
            },
            &[("ring", "prod")],
        ),
    ]
}

/// Last one wins, as in the engine's own lookups; a cluster in the prod ring for the domains.
fn distinct(infos: Vec<ClusterInfo>) -> Vec<ClusterInfo> {
    let by_name: BTreeMap<String, ClusterInfo> = infos
        .into_iter()
        .map(|mut info| {
            if info.name == "c1" {
                info.labels.insert("ring".into(), "prod".into());
            }
            (info.name.clone(), info)
        })
        .collect();
    by_name.into_values().collect()
}

/// The fleet's objects grouped by cluster, each group in fleet order.
fn by_cluster(objects: &[Object]) -> BTreeMap<String, Vec<Object>> {
    let mut groups: BTreeMap<String, Vec<Object>> = BTreeMap::new();
    for object in objects {
        groups
            .entry(object.cluster.to_string())
            .or_default()
            .push(object.clone());
    }
    groups
}

struct Fleet {
    objects: Vec<Object>,
    infos: Vec<ClusterInfo>,
    now: DateTime<Utc>,
    evaluations: Evaluations,
    domains: Vec<DomainSpec>,
    thresholds: Thresholds,
    seen: SeenInProgress,
}

impl Fleet {
    /// Re-evaluates incrementally; returns the clusters re-evaluated. With `reported`, the
    /// round is given only those clusters and the ones falling due, as the runner does.
    fn incremental(
        &mut self,
        changed: &BTreeSet<String>,
        reported: Option<&BTreeSet<String>>,
    ) -> BTreeSet<String> {
        let only: Option<BTreeSet<String>> = reported.map(|reported| {
            let due = self.evaluations.due_by(self.now).map(str::to_string);
            changed.iter().chain(reported).cloned().chain(due).collect()
        });
        let given = |cluster: &str| only.as_ref().is_none_or(|only| only.contains(cluster));
        let groups = by_cluster(&self.objects);
        let infos: Vec<ClusterInfo> = self
            .infos
            .iter()
            .filter(|i| given(&i.name))
            .cloned()
            .collect();
        let round = Round {
            objects: groups
                .iter()
                .filter(|(cluster, _)| given(cluster))
                .map(|(cluster, objects)| (cluster.as_str(), objects.as_slice()))
                .collect(),
            infos: &infos,
            only: only.as_ref(),
            domains: &self.domains,
            thresholds: &self.thresholds,
            seen_in_progress: &self.seen,
            now: self.now,
        };
        self.evaluations.update(&round, changed).evaluated
    }

    fn check(&self) {
        let whole = evaluate(&Input {
            objects: &self.objects,
            clusters: &self.infos,
            domains: &self.domains,
            thresholds: &self.thresholds,
            now: self.now,
            seen_in_progress: &self.seen,
        });
        let fleet = self.evaluations.fleet();
        assert_eq!(fleet.merged(), whole, "at {}", self.now);
        // What the alerts read from the shared parts, without merging.
        let causes: Vec<&RootCause> = whole.root_causes.iter().collect();
        assert_eq!(fleet.root_causes(), causes, "at {}", self.now);
    }

    /// Returns the clusters whose objects changed and those whose info was reported on.
    fn apply(&mut self, step: &Step) -> (BTreeSet<String>, BTreeSet<String>) {
        let mut changed = BTreeSet::new();
        let mut reported = BTreeSet::new();
        for object in parse_all(&step.replaced) {
            changed.insert(object.cluster.to_string());
            let id = object.id();
            match self.objects.iter().position(|o| o.id() == id) {
                Some(i) => self.objects[i] = object,
                None => self.objects.push(object),
            }
        }
        for &i in &step.removed {
            if i < self.objects.len() {
                changed.insert(self.objects.remove(i).cluster.into());
            }
        }
        self.now += TimeDelta::seconds(step.seconds_later);
        if let Some(infos) = &step.infos {
            reported.extend(self.infos.iter().map(|i| i.name.clone()));
            self.infos = distinct(infos.clone());
            reported.extend(self.infos.iter().map(|i| i.name.clone()));
        }
        if step.probed {
            for info in &mut self.infos {
                info.last_good = Some(self.now);
                reported.insert(info.name.clone());
            }
        }
        (changed, reported)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn incremental_evaluation_equals_evaluating_the_whole_fleet(
        initial in prop::collection::vec(any_object(), 0..24),
        infos in prop::collection::vec(cluster_info(), 0..3),
        steps in prop::collection::vec(step(), 1..10),
        narrowed in any::<bool>(),
    ) {
        let mut fleet = Fleet {
            objects: parse_all(&initial),
            infos: distinct(infos),
            now: now(),
            evaluations: Evaluations::default(),
            domains: domains(),
            thresholds: Thresholds::default(),
            seen: SeenInProgress::default(),
        };
        let first: BTreeSet<String> = fleet
            .objects
            .iter()
            .map(|o| o.cluster.to_string())
            .chain(fleet.infos.iter().map(|i| i.name.clone()))
            .collect();
        fleet.incremental(&BTreeSet::new(), narrowed.then_some(&first));
        fleet.check();
        for step in &steps {
            let (changed, reported) = fleet.apply(step);
            let quiet = changed.is_empty()
                && step.infos.is_none()
                && !step.probed
                && step.seconds_later == 0;
            let redone = fleet.incremental(&changed, narrowed.then_some(&reported));
            fleet.check();
            // Nothing changed and no time passed: nothing is evaluated again.
            prop_assert!(!quiet || redone.is_empty(), "re-evaluated {redone:?} for nothing");
        }
    }
}

/// The generator must reach what makes the property worth checking: evaluations that fall due
/// with time, and steps that leave some clusters untouched.
#[test]
fn generated_fleets_reach_deadlines() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut due = 0;
    for _ in 0..200 {
        let values = prop::collection::vec(any_object(), 0..24)
            .new_tree(&mut runner)
            .expect("a fleet")
            .current();
        let objects = parse_all(&values);
        let timed = crate::health::evaluate_timed(&Input {
            objects: &objects,
            clusters: &[],
            domains: &domains(),
            thresholds: &Thresholds::default(),
            now: now(),
            seen_in_progress: &SeenInProgress::default(),
        });
        due += usize::from(timed.due.is_some());
    }
    assert!(due > 50, "only {due} of 200 fleets have a deadline");
}
