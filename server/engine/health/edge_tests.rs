//! The edges each verdict carries are the graph the root-cause walk used: every root cause is
//! reached along them, a HelmRelease's source is the HelmChart helm-controller generated, the
//! controller edge leads to the Deployment actually matched (any namespace, the object's
//! shard, or the absent one named as root cause), and references to nothing stay visible.

use super::State::*;
use super::testkit::*;
use super::{EdgeKind, ObjectEdge, Verdict};
use crate::model::ObjectId;
use serde_json::Value;
use std::collections::{HashMap, HashSet, VecDeque};

/// Where these tests install Flux: anywhere but flux-system, which nothing may assume.
const FLUX_NAMESPACE: &str = "gitops";

fn controller_in(namespace: &str, name: &str) -> Value {
    with_label(
        deployment(namespace, name, 1, 1),
        "app.kubernetes.io/part-of",
        "flux",
    )
}

fn controllers_elsewhere() -> Vec<Value> {
    [
        "source-controller",
        "kustomize-controller",
        "helm-controller",
    ]
    .into_iter()
    .map(|name| controller_in(FLUX_NAMESPACE, name))
    .collect()
}

fn edges<'r>(run: &'r Run, kind: &str, namespace: &str, name: &str) -> Vec<(EdgeKind, &'r str)> {
    run.verdict(kind, namespace, name)
        .edges
        .iter()
        .map(|e| (e.kind, e.target.as_str()))
        .collect()
}

/// Every object root cause of every verdict is reachable from it along its edges.
fn assert_roots_reachable(run: &Run) {
    let by_id: HashMap<&ObjectId, &Verdict> =
        run.evaluation.objects.iter().map(|v| (&v.id, v)).collect();
    for verdict in &run.evaluation.objects {
        let mut seen: HashSet<&ObjectId> = HashSet::from([&verdict.id]);
        let mut queue = VecDeque::from([verdict]);
        let mut reached: HashSet<&ObjectId> = HashSet::from([&verdict.id]);
        while let Some(at) = queue.pop_front() {
            for ObjectEdge { target, .. } in &at.edges {
                reached.insert(target);
                if let Some(next) = by_id.get(target)
                    && seen.insert(target)
                {
                    queue.push_back(next);
                }
            }
        }
        for root in &verdict.root_causes {
            let is_cluster = root.parts().is_some_and(|p| p.1 == "Cluster");
            assert!(
                is_cluster || reached.contains(root),
                "{}: root cause {root} not reachable along {:?}",
                verdict.id,
                verdict.edges
            );
        }
    }
}

#[test]
fn depends_on_source_and_controller_edges_lead_to_the_root_cause() {
    let mut values = controllers_elsewhere();
    values.extend([
        with_conditions(
            git_repository("flux-system", SHA),
            vec![not_ready(
                "GitOperationFailed",
                "authentication required",
                30,
            )],
        ),
        with_conditions(
            kustomization("infra", &[]),
            vec![not_ready("ArtifactFailed", "Source artifact not found", 25)],
        ),
        with_conditions(
            kustomization("apps", &["infra"]),
            vec![not_ready(
                "DependencyNotReady",
                "dependency 'flux-system/infra' is not ready",
                20,
            )],
        ),
    ]);
    let run = run(&values);
    let controller = id("Deployment", FLUX_NAMESPACE, "kustomize-controller");
    assert_eq!(
        edges(&run, "Kustomization", "flux-system", "apps"),
        [
            (
                EdgeKind::DependsOn,
                id("Kustomization", "flux-system", "infra").as_str()
            ),
            (
                EdgeKind::Source,
                id("GitRepository", "flux-system", "flux-system").as_str()
            ),
            (EdgeKind::Controller, controller.as_str()),
        ]
    );
    assert_eq!(
        run.roots("Kustomization", "flux-system", "apps"),
        [id("GitRepository", "flux-system", "flux-system")]
    );
    assert_roots_reachable(&run);
    let found: Vec<&str> = as_strs(&run.evaluation.controllers);
    assert_eq!(
        found,
        [
            id("Deployment", FLUX_NAMESPACE, "helm-controller"),
            id("Deployment", FLUX_NAMESPACE, "kustomize-controller"),
            id("Deployment", FLUX_NAMESPACE, "source-controller"),
        ],
        "controllers outside flux-system are matched"
    );
}

/// helm-controller reconciles a HelmRelease from the HelmChart it generates
/// (helm-controller internal/reconcile/helmchart_template.go), named in
/// `status.helmChart`; that chart is the release's source, and the HelmRepository the chart's.
#[test]
fn a_helm_release_source_is_the_chart_helm_controller_generated() {
    let mut values = controllers_elsewhere();
    values.extend([
        helm_repository("podinfo"),
        helm_chart("default", "podinfo", "podinfo", "6.0.3"),
        helm_release("default", "podinfo", "podinfo"),
    ]);
    let run = run(&values);
    let chart = id("HelmChart", "flux-system", "default-podinfo");
    let release = edges(&run, "HelmRelease", "default", "podinfo");
    assert!(
        release.contains(&(EdgeKind::Source, chart.as_str())),
        "{release:?}"
    );
    assert!(
        !release
            .iter()
            .any(|(_, target)| target.contains("/HelmRepository/")),
        "the repository is the chart's source, not the release's: {release:?}"
    );
    assert!(
        edges(&run, "HelmChart", "flux-system", "default-podinfo").contains(&(
            EdgeKind::Source,
            id("HelmRepository", "flux-system", "podinfo").as_str()
        ))
    );
}

/// A controller started with `--watch-label-selector=sharding.fluxcd.io/key=<shard>` is the
/// `<controller>-<shard>` Deployment (the Flux sharding guide's naming); an object on a shard
/// with no such Deployment points at the absent one, which is also its root cause.
#[test]
fn the_controller_edge_follows_the_shard_and_names_an_absent_controller() {
    let sharded = |value: Value| with_label(value, "sharding.fluxcd.io/key", "shard1");
    let mut values = controllers_elsewhere();
    values.push(controller_in(FLUX_NAMESPACE, "source-controller-shard1"));
    values.extend([
        sharded(git_repository("flux-system", SHA)),
        sharded(kustomization("apps", &[])),
    ]);
    let run = run(&values);
    let absent = id("Deployment", FLUX_NAMESPACE, "kustomize-controller-shard1");
    assert!(
        edges(&run, "Kustomization", "flux-system", "apps")
            .contains(&(EdgeKind::Controller, absent.as_str()))
    );
    assert_eq!(
        run.state("Kustomization", "flux-system", "apps"),
        Unverifiable
    );
    assert_eq!(
        run.roots("Kustomization", "flux-system", "apps"),
        [absent.as_str()]
    );
    assert!(
        edges(&run, "GitRepository", "flux-system", "flux-system").contains(&(
            EdgeKind::Controller,
            id("Deployment", FLUX_NAMESPACE, "source-controller-shard1").as_str()
        ))
    );
    assert!(
        as_strs(&run.evaluation.controllers).contains(&absent.as_str()),
        "the cluster's controllers include the absent one"
    );
    assert_roots_reachable(&run);
}

#[test]
fn a_reference_to_nothing_stays_an_edge_and_the_object_is_its_own_root_cause() {
    let mut values = controllers_elsewhere();
    values.extend([
        git_repository("flux-system", SHA),
        kustomization("apps", &["missing"]),
    ]);
    let run = run(&values);
    let missing = id("Kustomization", "flux-system", "missing");
    assert!(
        edges(&run, "Kustomization", "flux-system", "apps")
            .contains(&(EdgeKind::DependsOn, missing.as_str()))
    );
    assert_eq!(run.state("Kustomization", "flux-system", "apps"), Failed);
    assert_eq!(
        run.roots("Kustomization", "flux-system", "apps"),
        [id("Kustomization", "flux-system", "apps")]
    );
}

#[test]
fn an_applier_waits_on_what_it_applied_and_a_pod_on_its_workload() {
    let mut values = controllers_elsewhere();
    values.extend([
        git_repository("flux-system", SHA),
        kustomization("apps", &[]),
        applied_by(
            deployment("web", "podinfo", 1, 0),
            "kustomize",
            "flux-system",
            "apps",
        ),
        pod(
            "web",
            "podinfo",
            "a",
            Some(("ImagePullBackOff", "Back-off pulling image")),
        ),
    ]);
    let run = run(&values);
    let workload = id("Deployment", "web", "podinfo");
    assert!(
        edges(&run, "Kustomization", "flux-system", "apps")
            .contains(&(EdgeKind::Applied, workload.as_str()))
    );
    assert_eq!(
        edges(&run, "Pod", "web", "podinfo-5d9c7b-a"),
        [(EdgeKind::Owner, workload.as_str())]
    );
    assert_ne!(run.state("Kustomization", "flux-system", "apps"), Healthy);
    assert_roots_reachable(&run);
}
