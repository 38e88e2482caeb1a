//! Rule 10: sharding as the controllers behave. kustomize-controller and helm-controller
//! filter only their own kind by `--watch-label-selector` (main.go, `ByObject`), so their
//! sources may be on any shard; source-controller filters every source kind
//! (source-controller main.go, mustSetupManager), so a HelmChart — which helm-controller
//! creates without the shard label (helm-controller internal/reconcile/helmchart_template.go,
//! buildHelmChartFromTemplate copies only spec.chart.metadata labels) — cannot see a sharded
//! HelmRepository (seed 004). dependsOn is read uncached, so it crosses shards freely.

use super::State::*;
use super::testkit::*;
use serde_json::Value;

const SHARD: &str = "sharding.fluxcd.io/key";

fn on_shard(value: Value, shard: &str) -> Value {
    with_label(value, SHARD, shard)
}

/// The main controllers and the "apps" shard of each.
fn sharded_controllers() -> Vec<Value> {
    let mut values = flux_controllers();
    for name in [
        "source-controller-apps",
        "kustomize-controller-apps",
        "helm-controller-apps",
    ] {
        values.push(controller(name, 1));
    }
    values
}

/// Seed 004: the HelmRepository lives under an app directory and inherits the apps shard
/// label; the HelmChart helm-controller created carries none. Conditions as the controllers
/// write them: source-controller's HelmChart reconciler marks FetchFailed/Ready False with
/// reason SourceUnavailable ("failed to get source: …"), helm-controller marks the release
/// SourceNotReady with the chart's message.
fn seed_004(release_shard: Option<&str>) -> Vec<Value> {
    let not_found =
        "failed to get source: HelmRepository.source.toolkit.fluxcd.io \"podinfo\" not found";
    let mut release = with_conditions(
        helm_release("default", "podinfo", "podinfo"),
        vec![not_ready(
            "SourceNotReady",
            &format!("HelmChart 'flux-system/default-podinfo' is not ready: {not_found}"),
            30,
        )],
    );
    if let Some(shard) = release_shard {
        release = on_shard(release, shard);
    }
    let mut values = sharded_controllers();
    values.extend([
        on_shard(helm_repository("podinfo"), "apps"),
        with_conditions(
            helm_chart("default", "podinfo", "podinfo", "6.0.3"),
            vec![
                not_ready("SourceUnavailable", not_found, 30),
                condition("FetchFailed", "True", "SourceUnavailable", not_found, 30),
            ],
        ),
        release,
    ]);
    values
}

#[test]
fn seed_004_the_helm_chart_is_the_one_root_cause_naming_both_shards() {
    let run = run(&seed_004(None));
    let chart = run.verdict("HelmChart", "flux-system", "default-podinfo");
    assert_eq!(chart.state, Failed);
    assert_eq!(
        chart.reason,
        "source HelmRepository flux-system/podinfo not found by source-controller: the source is on \
         shard \"apps\", this HelmChart on the main shard (sharding.fluxcd.io/key differs)"
    );
    assert_eq!(chart.root_causes, std::slice::from_ref(&chart.id));

    let release = run.verdict("HelmRelease", "default", "podinfo");
    assert_eq!(release.state, Blocked);
    assert_eq!(release.root_causes, std::slice::from_ref(&chart.id));
    assert!(
        release.reason.starts_with(
            "blocked by HelmChart flux-system/default-podinfo (failed: source HelmRepository"
        ),
        "{}",
        release.reason
    );
    assert_eq!(
        run.state("HelmRepository", "flux-system", "podinfo"),
        Healthy,
        "the source itself reports Ready"
    );
    assert_eq!(
        run.evaluation.root_causes.len(),
        1,
        "one root cause, not two"
    );
}

/// The release is on the apps shard too: helm-controller-apps reads the HelmChart, but the
/// HelmChart itself is still unlabelled and reconciled by the main source-controller.
#[test]
fn seed_004_a_sharded_release_does_not_move_its_chart_to_the_shard() {
    let run = run(&seed_004(Some("apps")));
    assert_eq!(
        run.roots("HelmRelease", "default", "podinfo"),
        [id("HelmChart", "flux-system", "default-podinfo")]
    );
    assert_eq!(run.evaluation.root_causes.len(), 1);
}

/// A HelmChart on the same shard as its repository is fine (spec.chart.metadata.labels can
/// carry the shard key onto the generated chart).
#[test]
fn a_chart_on_its_repositorys_shard_is_healthy() {
    let mut values = sharded_controllers();
    values.extend([
        on_shard(helm_repository("podinfo"), "apps"),
        on_shard(
            helm_chart("default", "podinfo", "podinfo", "2.14.0"),
            "apps",
        ),
        on_shard(helm_release("default", "podinfo", "podinfo"), "apps"),
    ]);
    let run = run(&values);
    assert_eq!(
        run.state("HelmChart", "flux-system", "default-podinfo"),
        Healthy
    );
    assert_eq!(run.state("HelmRelease", "default", "podinfo"), Healthy);
}

/// An unlabelled chart of a labelled release with an unlabelled repository: everything the
/// main source-controller reconciles, all visible to it.
#[test]
fn a_sharded_release_using_main_shard_sources_is_fine() {
    let mut values = sharded_controllers();
    values.extend([
        helm_repository("podinfo"),
        helm_chart("default", "podinfo", "podinfo", "2.14.0"),
        on_shard(helm_release("default", "podinfo", "podinfo"), "apps"),
        git_repository("flux-system", SHA),
        on_shard(kustomization("apps", &[]), "apps"),
    ]);
    let run = run(&values);
    assert_eq!(run.state("HelmRelease", "default", "podinfo"), Healthy);
    assert_eq!(run.state("Kustomization", "flux-system", "apps"), Healthy);
    assert!(run.evaluation.root_causes.is_empty());
}

/// kustomize-controller reads its sources unfiltered: a main-shard Kustomization may use a
/// GitRepository that the apps source-controller reconciles.
#[test]
fn a_kustomization_may_use_a_source_of_another_shard() {
    let mut values = sharded_controllers();
    values.extend([
        on_shard(git_repository("flux-system", SHA), "apps"),
        kustomization("infra", &[]),
    ]);
    let run = run(&values);
    assert_eq!(run.state("Kustomization", "flux-system", "infra"), Healthy);
}

/// kustomize-controller reads dependencies through its uncached API reader since v1.4
/// (kustomize-controller@v1.9.6 kustomization_controller.go checkDependencies,
/// `r.APIReader.Get`): a Ready apps-shard Kustomization depending on a main-shard one is
/// healthy, not a shard trap.
#[test]
fn depends_on_across_shards_is_read_by_the_api_reader_and_judged_like_any_other() {
    let mut values = sharded_controllers();
    values.extend([
        git_repository("flux-system", SHA),
        kustomization("infra", &[]),
        on_shard(kustomization("apps", &["infra"]), "apps"),
    ]);
    let run = run(&values);
    assert_eq!(run.state("Kustomization", "flux-system", "apps"), Healthy);
    assert!(run.evaluation.root_causes.is_empty());
}

/// Across shards a dependency that is not ready holds its dependent as on one shard: the
/// dependency is the root cause.
#[test]
fn a_failing_dependency_on_another_shard_blocks_its_dependent() {
    let mut values = sharded_controllers();
    values.extend([
        git_repository("flux-system", SHA),
        with_conditions(
            kustomization("infra", &[]),
            vec![not_ready(
                "BuildFailed",
                "kustomize build failed: accumulating resources",
                30,
            )],
        ),
        on_shard(
            with_conditions(
                kustomization("apps", &["infra"]),
                vec![not_ready(
                    "DependencyNotReady",
                    "dependency 'flux-system/infra' is not ready",
                    15,
                )],
            ),
            "apps",
        ),
    ]);
    let run = run(&values);
    assert_eq!(run.state("Kustomization", "flux-system", "apps"), Blocked);
    assert_eq!(
        run.roots("Kustomization", "flux-system", "apps"),
        [id("Kustomization", "flux-system", "infra")]
    );
}

/// helm-controller reads dependencies through its API reader since v1.1
/// (helm-controller@v1.6.4 helmrelease_controller.go checkDependencies).
#[test]
fn helm_releases_depend_across_shards_too() {
    let mut values = sharded_controllers();
    values.extend([
        helm_repository("charts"),
        helm_chart("apps", "db", "charts", "2.14.0"),
        on_shard(helm_release("apps", "db", "charts"), "apps"),
        helm_chart("apps", "web", "charts", "2.14.0"),
    ]);
    let mut web = helm_release("apps", "web", "charts");
    web["spec"]["dependsOn"] = serde_json::json!([{"name": "db"}]);
    values.push(web);
    let run = run(&values);
    assert_eq!(run.state("HelmRelease", "apps", "web"), Healthy);
    assert_eq!(run.state("HelmRelease", "apps", "db"), Healthy);
    assert!(run.evaluation.root_causes.is_empty());
}
