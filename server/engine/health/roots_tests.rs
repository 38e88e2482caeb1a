//! Root causes over the graph, cluster freshness and domains.

use super::State::*;
use super::testkit::*;
use super::{ClusterInfo, DomainSpec, InputEvidence, Thresholds, cluster_id};
use crate::model::{Kind, ObjectId};
use chrono::TimeDelta;
use serde_json::{Value, json};

fn fleet(extra: Vec<Value>) -> Vec<Value> {
    let mut values = flux_controllers();
    values.push(git_repository("flux-system", SHA));
    values.extend(extra);
    values
}

fn waiting_on(name: &str, dependencies: &[&str]) -> Value {
    let message = format!("dependency 'flux-system/{}' is not ready", dependencies[0]);
    with_conditions(
        kustomization(name, dependencies),
        vec![not_ready("DependencyNotReady", &message, 90)],
    )
}

#[test]
fn a_failed_dependency_is_the_root_cause_of_the_chain() {
    let infra = with_conditions(
        kustomization("infra", &[]),
        vec![not_ready("BuildFailed", "kustomize build failed", 30)],
    );
    let run = run(&fleet(vec![
        infra,
        waiting_on("apps", &["infra"]),
        waiting_on("tenants", &["apps"]),
    ]));
    let infra_id = id("Kustomization", "flux-system", "infra");
    assert_eq!(run.state("Kustomization", "flux-system", "infra"), Failed);
    for name in ["apps", "tenants"] {
        let verdict = run.verdict("Kustomization", "flux-system", name);
        assert_eq!(verdict.state, Blocked, "{name}");
        assert_eq!(
            verdict.root_causes,
            [infra_id.as_str()].map(|s| crate::model::ObjectId(s.into()))
        );
        assert!(
            verdict
                .reason
                .starts_with("blocked by Kustomization flux-system/infra (failed: build failed)"),
            "{}",
            verdict.reason
        );
    }
    let cause = run.root_cause(&infra_id);
    assert_eq!(cause.affected.len(), 3);
    assert_eq!(
        run.evaluation.root_causes.len(),
        1,
        "1 cause, not 3 red symptoms"
    );
}

/// Issue 47: "blocked for 7d" while its cause has existed for 2d is not true. A symptom is
/// blocked since its cause became a problem, unless its own state began later.
#[test]
fn a_symptom_is_blocked_since_its_cause_began_never_before() {
    let at = |minutes: i64| Some(now() - TimeDelta::minutes(minutes));
    let infra = with_conditions(
        kustomization("infra", &[]),
        vec![not_ready("BuildFailed", "kustomize build failed", 30)],
    );
    let late = with_conditions(
        kustomization("late", &["infra"]),
        vec![not_ready(
            "DependencyNotReady",
            "dependency 'flux-system/infra' is not ready",
            10,
        )],
    );
    let run = run(&fleet(vec![infra, waiting_on("apps", &["infra"]), late]));
    // Not ready for 90 minutes, blocked by a failure 30 minutes old: blocked for 30.
    let apps = run.verdict("Kustomization", "flux-system", "apps");
    assert_eq!((apps.state, apps.since), (Blocked, at(30)));
    // Its own state began after the cause's: its own time stands.
    let late = run.verdict("Kustomization", "flux-system", "late");
    assert_eq!((late.state, late.since), (Blocked, at(10)));
}

#[test]
fn an_independent_failure_stays_its_own_root_cause() {
    let infra = with_conditions(
        kustomization("infra", &[]),
        vec![not_ready("BuildFailed", "build failed", 30)],
    );
    let apps = with_conditions(
        kustomization("apps", &["infra"]),
        vec![not_ready("ReconciliationFailed", "apply failed", 30)],
    );
    let run = run(&fleet(vec![infra, apps]));
    assert_eq!(run.state("Kustomization", "flux-system", "apps"), Failed);
    assert_eq!(
        run.roots("Kustomization", "flux-system", "apps"),
        [id("Kustomization", "flux-system", "apps")]
    );
}

#[test]
fn missing_dependencies_and_sources_fail_the_dependent_by_name() {
    let run = run(&fleet(vec![waiting_on("apps", &["infra"])]));
    let verdict = run.assert_verdict(
        "Kustomization",
        "flux-system",
        "apps",
        Failed,
        "dependency Kustomization flux-system/infra not found",
    );
    assert_eq!(verdict.root_causes, std::slice::from_ref(&verdict.id));

    let mut orphan = kustomization("orphan", &[]);
    orphan["spec"]["sourceRef"]["name"] = json!("gone");
    let run = super::testkit::run(&fleet(vec![orphan]));
    assert_eq!(
        run.verdict("Kustomization", "flux-system", "orphan").reason,
        "source GitRepository flux-system/gone not found"
    );
}

/// Several references gone: the reason names the first and counts the others, the message
/// names them all, and the fault shows since the object stopped being Ready.
#[test]
fn several_missing_references_name_the_first_and_date_from_not_ready() {
    let run = run(&fleet(vec![waiting_on("apps", &["infra", "crds"])]));
    let verdict = run.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(
        (
            verdict.state,
            verdict.reason.as_str(),
            verdict.message.as_str()
        ),
        (
            Failed,
            "dependency Kustomization flux-system/infra not found (and 1 more)",
            "dependency Kustomization flux-system/infra not found; \
             dependency Kustomization flux-system/crds not found"
        )
    );
    assert_eq!(verdict.since, Some(now() - TimeDelta::minutes(90)));
}

/// As `evaluate` runs the engine on files: the input covers the kinds it holds, and names the
/// objects it holds more than once with different contents.
fn run_as_input(values: &[Value], conflicting: &[(&str, &[&str])]) -> Run {
    let evidence = InputEvidence {
        kinds: values.iter().map(|v| parse(v).kind).collect(),
        conflicting: conflicting
            .iter()
            .map(|(id, places)| {
                let places = places.iter().map(|p| p.to_string()).collect();
                (ObjectId(id.to_string()), places)
            })
            .collect(),
    };
    let input = ClusterInfo {
        name: CLUSTER.into(),
        input: Some(evidence),
        ..ClusterInfo::default()
    };
    run_with(values, &[input], &[], &Thresholds::default())
}

/// `evaluate` given only Kustomizations (issue 16, rule 18): their GitRepository is neither
/// present nor proven absent, so the reference is unverifiable, not "not found".
#[test]
fn a_source_of_a_kind_the_input_lacks_is_unverifiable_not_missing() {
    let run = run_as_input(&[kustomization("apps", &[])], &[]);
    let verdict = run.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(
        (
            verdict.state,
            verdict.reason.as_str(),
            verdict.message.as_str()
        ),
        (
            Unverifiable,
            "GitRepository not in the input",
            "source GitRepository flux-system/flux-system cannot be checked: \
             the input holds no object of its kind"
        )
    );
}

/// `evaluate` given one object twice with different contents (issue 16, rule 18): which copy
/// is current cannot be told, so that object alone is unverifiable, its own root cause.
#[test]
fn differing_copies_of_one_object_make_it_unverifiable() {
    let apps = id("Kustomization", "flux-system", "apps");
    let places: &[&str] = &["copies.yaml#1", "copies.yaml#2"];
    let run = run_as_input(
        &fleet(vec![kustomization("apps", &[])]),
        &[(apps.as_str(), places)],
    );
    let verdict = run.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(
        (
            verdict.state,
            verdict.reason.as_str(),
            verdict.message.as_str()
        ),
        (
            Unverifiable,
            "2 differing copies in the input",
            "the input holds this object at copies.yaml#1, copies.yaml#2"
        )
    );
    assert_eq!(
        run.roots("Kustomization", "flux-system", "apps"),
        [apps.as_str()]
    );
    assert_eq!(
        run.state("GitRepository", "flux-system", "flux-system"),
        Healthy
    );
}

#[test]
fn a_dependency_cycle_is_a_root_cause_and_does_not_hang() {
    let values = fleet(vec![
        waiting_on("a", &["b"]),
        waiting_on("b", &["a"]),
        waiting_on("c", &["a"]),
    ]);
    let run = run(&values);
    for name in ["a", "b"] {
        let verdict = run.assert_verdict(
            "Kustomization",
            "flux-system",
            name,
            Failed,
            "dependency cycle: flux-system/a → flux-system/b → flux-system/a",
        );
        assert_eq!(verdict.root_causes, std::slice::from_ref(&verdict.id));
    }
    let c = run.verdict("Kustomization", "flux-system", "c");
    assert_eq!(c.state, Blocked);
    assert_eq!(c.root_causes.len(), 1);

    let selfish = run_with(
        &fleet(vec![waiting_on("self", &["self"])]),
        &[],
        &[],
        &Thresholds::default(),
    );
    assert!(
        selfish
            .verdict("Kustomization", "flux-system", "self")
            .reason
            .starts_with("dependency cycle")
    );
}

#[test]
fn a_ten_thousand_deep_chain_resolves_iteratively() {
    const DEPTH: usize = 10_000;
    let mut values = fleet(vec![with_conditions(
        kustomization("k0", &[]),
        vec![not_ready("BuildFailed", "x", 30)],
    )]);
    for i in 1..DEPTH {
        values.push(waiting_on(&format!("k{i}"), &[&format!("k{}", i - 1)]));
    }
    let run = run(&values);
    let last = run.verdict("Kustomization", "flux-system", &format!("k{}", DEPTH - 1));
    assert_eq!(last.state, Blocked);
    assert_eq!(
        last.root_causes,
        [crate::model::ObjectId(id(
            "Kustomization",
            "flux-system",
            "k0"
        ))]
    );
    assert_eq!(
        run.root_cause(&id("Kustomization", "flux-system", "k0"))
            .affected
            .len(),
        DEPTH
    );

    // And a 10k cycle.
    let mut ring = fleet(vec![]);
    for i in 0..DEPTH {
        ring.push(waiting_on(
            &format!("r{i}"),
            &[&format!("r{}", (i + 1) % DEPTH)],
        ));
    }
    let run = super::testkit::run(&ring);
    let verdict = run.verdict("Kustomization", "flux-system", "r0");
    assert_eq!(verdict.state, Failed);
    assert!(
        verdict.reason.contains("more)"),
        "long cycles are shortened: {}",
        verdict.reason
    );
}

#[test]
fn a_health_check_on_a_failed_release_makes_the_checker_a_symptom() {
    let mut root = with_conditions(
        kustomization("platform", &[]),
        vec![not_ready(
            "HealthCheckFailed",
            "health check failed after 9m: timeout waiting for: [HelmRelease/apps/podinfo status: 'Failed']",
            10,
        )],
    );
    root["spec"]["healthChecks"] = json!([{"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "name": "podinfo", "namespace": "apps"}]);
    let release = with_conditions(
        helm_release("apps", "podinfo", "charts"),
        vec![not_ready(
            "UpgradeFailed",
            "Helm upgrade failed: template error",
            20,
        )],
    );
    let run = run(&fleet(vec![
        root,
        release,
        helm_repository("charts"),
        helm_chart("apps", "podinfo", "charts", "2.14.0"),
    ]));
    assert_eq!(
        run.state("Kustomization", "flux-system", "platform"),
        Blocked
    );
    assert_eq!(
        run.roots("Kustomization", "flux-system", "platform"),
        [id("HelmRelease", "apps", "podinfo")]
    );
    let message = &run
        .verdict("Kustomization", "flux-system", "platform")
        .message;
    assert!(
        message.contains("health check failed: HelmRelease/apps/podinfo"),
        "{message}"
    );
}

#[test]
fn a_failing_source_blocks_its_consumers_through_the_helm_chart() {
    let repository = with_conditions(
        helm_repository("charts"),
        vec![not_ready(
            "FetchFailed",
            "failed to fetch index: 401 Unauthorized",
            40,
        )],
    );
    let chart = with_conditions(
        helm_chart("apps", "podinfo", "charts", "2.14.0"),
        vec![not_ready(
            "SourceNotReady",
            "HelmRepository 'flux-system/charts' is not ready",
            40,
        )],
    );
    let release = with_conditions(
        helm_release("apps", "podinfo", "charts"),
        vec![not_ready(
            "ArtifactFailed",
            "HelmChart 'flux-system/apps-podinfo' is not ready",
            40,
        )],
    );
    let run = run(&fleet(vec![repository, chart, release]));
    let repository_id = id("HelmRepository", "flux-system", "charts");
    assert_eq!(
        run.roots("HelmRelease", "apps", "podinfo"),
        [repository_id.as_str()]
    );
    assert_eq!(run.state("HelmRelease", "apps", "podinfo"), Blocked);
    assert_eq!(
        run.state("HelmChart", "flux-system", "apps-podinfo"),
        Blocked
    );
}

#[test]
fn stale_cluster_data_makes_everything_unverifiable() {
    let values = fleet(vec![kustomization("apps", &[])]);
    let stale = ClusterInfo {
        name: CLUSTER.into(),
        last_good: Some(now() - TimeDelta::minutes(10)),
        ..ClusterInfo::default()
    };
    let run = run_with(&values, &[stale], &[], &Thresholds::default());
    for verdict in &run.evaluation.objects {
        assert_eq!(verdict.state, Unverifiable);
        assert_eq!(verdict.root_causes, [cluster_id(CLUSTER)]);
        // Unverifiable since the data was last known good.
        assert_eq!(verdict.since, Some(now() - TimeDelta::minutes(10)));
    }
    let cause = run.root_cause(cluster_id(CLUSTER).as_str());
    assert_eq!(cause.state, Unverifiable);
    assert!(cause.reason.contains("10m old"), "{}", cause.reason);
    assert_eq!(cause.affected.len(), values.len());

    let unreachable = ClusterInfo {
        name: CLUSTER.into(),
        last_good: Some(now()),
        error: Some("401 Unauthorized".into()),
        ..ClusterInfo::default()
    };
    let run = run_with(&values, &[unreachable], &[], &Thresholds::default());
    assert!(
        run.verdict("Kustomization", "flux-system", "apps")
            .reason
            .contains("401 Unauthorized")
    );

    let fresh = ClusterInfo {
        name: CLUSTER.into(),
        last_good: Some(now() - TimeDelta::seconds(30)),
        ..ClusterInfo::default()
    };
    assert_eq!(
        run_with(&values, &[fresh], &[], &Thresholds::default()).state(
            "Kustomization",
            "flux-system",
            "apps"
        ),
        Healthy
    );
}

#[test]
fn a_kind_the_collector_cannot_read_is_unverifiable() {
    let mut info = ClusterInfo {
        name: CLUSTER.into(),
        last_good: Some(now()),
        ..ClusterInfo::default()
    };
    info.kind_errors.insert(
        Kind::HelmRelease,
        "helmreleases.helm.toolkit.fluxcd.io is forbidden".into(),
    );
    let values = fleet(vec![
        helm_release("apps", "podinfo", "charts"),
        kustomization("apps", &[]),
    ]);
    let run = run_with(&values, &[info], &[], &Thresholds::default());
    let verdict = run.verdict("HelmRelease", "apps", "podinfo");
    assert_eq!(verdict.state, Unverifiable);
    assert!(verdict.reason.contains("forbidden"));
    assert_eq!(verdict.root_causes, [cluster_id(CLUSTER)]);
    assert_eq!(run.state("Kustomization", "flux-system", "apps"), Healthy);
}

fn domain(yaml: &str) -> DomainSpec {
    crate::health::testkit::from_yaml(yaml).expect("valid domain")
}

#[test]
fn domains_select_by_labels_root_and_namespace_and_roll_up_per_cluster() {
    let child = applied_by(
        kustomization("gateway-apps", &[]),
        "kustomize",
        "flux-system",
        "gateway",
    );
    let grandchild = applied_by(
        helm_release("gateway", "envoy", "charts"),
        "kustomize",
        "flux-system",
        "gateway-apps",
    );
    let values = fleet(vec![
        kustomization("gateway", &[]),
        child,
        grandchild,
        helm_repository("charts"),
        helm_chart("gateway", "envoy", "charts", "2.14.0"),
        with_label(kustomization("observability", &[]), "team", "o11y"),
    ]);
    let domains = [
        domain(
            "{name: gateway, select: {root: flux-system/gateway}, version: {from: chart_version, namespace: gateway, name: envoy}}",
        ),
        domain(
            "{name: o11y, select: {labels: {team: o11y}}, version: {from: source_revision, kind: GitRepository, namespace: flux-system, name: flux-system}}",
        ),
        domain(
            "{name: gw-ns, select: {namespaces: [gateway]}, clusters: {ring: prod}, version: {from: image_tag, kind: Deployment, namespace: flux-system, name: helm-controller}}",
        ),
    ];
    let run = run_with(&values, &[], &domains, &Thresholds::default());
    let cells = &run.evaluation.domains;
    assert_eq!(
        cells.len(),
        2,
        "gw-ns wants ring=prod and the cluster has no ClusterInfo: {cells:?}"
    );
    let gateway = cells.iter().find(|c| c.domain == "gateway").unwrap();
    assert_eq!(
        (gateway.objects, gateway.healthy, gateway.fully_healthy),
        (3, 3, true)
    );
    assert_eq!(gateway.version.as_deref(), Some("2.14.0"));
    let o11y = cells.iter().find(|c| c.domain == "o11y").unwrap();
    assert_eq!(
        (o11y.objects, o11y.version.as_deref()),
        (1, Some("1111111"))
    );

    let ring = ClusterInfo {
        name: CLUSTER.into(),
        labels: [("ring".to_string(), "prod".to_string())].into(),
        ..ClusterInfo::default()
    };
    let run = run_with(&values, &[ring], &domains, &Thresholds::default());
    let by_namespace = run
        .evaluation
        .domains
        .iter()
        .find(|c| c.domain == "gw-ns")
        .unwrap();
    assert_eq!(
        (by_namespace.objects, by_namespace.version.as_deref()),
        (1, Some("v1.0.0"))
    );
}

#[test]
fn a_domain_is_not_fully_healthy_while_something_it_depends_on_is_not() {
    let infra = with_conditions(
        kustomization("infra", &[]),
        vec![not_ready("BuildFailed", "x", 30)],
    );
    let values = fleet(vec![
        infra,
        with_label(kustomization("apps", &["infra"]), "domain", "apps"),
    ]);
    let domains = [domain(
        "{name: apps, select: {labels: {domain: apps}}, version: {from: source_revision, kind: GitRepository, namespace: flux-system, name: flux-system}}",
    )];
    let run = run_with(&values, &[], &domains, &Thresholds::default());
    assert_eq!(
        run.state("Kustomization", "flux-system", "apps"),
        Healthy,
        "it applied the current revision"
    );
    // Green only when fully healthy: the blocker in another domain makes the cell blocked.
    let cell = &run.evaluation.domains[0];
    assert_eq!((cell.state, cell.fully_healthy), (Blocked, false));
    assert_eq!(
        cell.blockers,
        [crate::model::ObjectId(id(
            "Kustomization",
            "flux-system",
            "infra"
        ))]
    );

    let empty = [domain(
        "{name: ghost, select: {labels: {domain: ghost}}, version: {from: chart_version, namespace: x, name: y}}",
    )];
    let cell = &run_with(&values, &[], &empty, &Thresholds::default())
        .evaluation
        .domains[0];
    assert_eq!(
        (cell.state, cell.objects, cell.fully_healthy),
        (Unverifiable, 0, false)
    );
}

/// A Ready Kustomization over failed Deployments names the first and counts the others: over
/// one, no count (kills the `len() > 1` mutants of roots.rs `degraded`).
#[test]
fn a_degraded_reason_names_the_first_failing_object_and_counts_the_others() {
    let stalled = |name: &str| {
        let message = format!("ReplicaSet \"{name}-5d9c7b\" has timed out progressing.");
        let deployment = with_conditions(
            deployment("apps", name, 2, 0),
            vec![condition(
                "Progressing",
                "False",
                "ProgressDeadlineExceeded",
                &message,
                30,
            )],
        );
        applied_by(deployment, "kustomize", "flux-system", "apps")
    };
    let base = vec![
        git_repository("flux-system", SHA),
        kustomization("apps", &[]),
    ];
    let one = run(&[base.clone(), vec![stalled("api")]].concat());
    let verdict = one.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(verdict.state, Degraded);
    assert!(!verdict.reason.contains("more"), "{}", verdict.reason);
    let two = run(&[base, vec![stalled("api"), stalled("web")]].concat());
    let verdict = two.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(verdict.state, Degraded);
    assert!(
        verdict.reason.ends_with(" (and 1 more)"),
        "{}",
        verdict.reason
    );
}

#[test]
fn a_reason_blocked_by_several_root_causes_names_one_and_counts_the_others() {
    let failed = |name| {
        with_conditions(
            kustomization(name, &[]),
            vec![not_ready("BuildFailed", "kustomize build failed", 30)],
        )
    };
    let message = "dependency 'flux-system/infra' is not ready";
    let apps = with_conditions(
        kustomization("apps", &["infra", "network"]),
        vec![not_ready("DependencyNotReady", message, 90)],
    );
    let run = run(&fleet(vec![
        failed("infra"),
        failed("network"),
        apps,
        waiting_on("tenants", &["infra"]),
    ]));
    let apps = run.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(apps.root_causes.len(), 2, "{:?}", apps.root_causes);
    assert!(
        apps.reason
            .starts_with("blocked by Kustomization flux-system/")
            && apps.reason.ends_with(" (failed: build failed) and 1 more"),
        "{}",
        apps.reason
    );
    let tenants = run.verdict("Kustomization", "flux-system", "tenants");
    assert_eq!(
        tenants.reason, "blocked by Kustomization flux-system/infra (failed: build failed)",
        "one root cause: nothing more to count"
    );
}

/// The collector keeps a cluster's evaluation when a probe only moved `last_good` forward on
/// fresh data: the verdicts do not read it then. Stale, unreachable or partly unreadable data
/// (whose unverifiable verdicts date from `last_good`), or any other change, re-evaluates.
#[test]
fn only_a_fresh_cluster_whose_probe_moved_last_good_keeps_its_evaluation() {
    let freshness = Thresholds::default().freshness;
    let probed = |minutes_ago| ClusterInfo {
        name: CLUSTER.into(),
        last_good: Some(now() - TimeDelta::minutes(minutes_ago)),
        ..ClusterInfo::default()
    };
    let keeps = |before: &ClusterInfo, after: &ClusterInfo| {
        super::interchangeable(before, after, freshness, now())
    };
    let values = fleet(vec![kustomization("apps", &[])]);
    let verdicts = |info: &ClusterInfo| {
        run_with(
            &values,
            std::slice::from_ref(info),
            &[],
            &Thresholds::default(),
        )
        .evaluation
        .objects
    };
    // Fresh up to the freshness limit itself (2m), as data_problem judges it.
    for before in [probed(1), probed(2)] {
        assert!(keeps(&before, &probed(0)));
        assert_eq!(verdicts(&before), verdicts(&probed(0)));
    }
    assert!(!keeps(&probed(3), &probed(0)), "stale before");
    assert!(!keeps(&probed(0), &probed(3)), "stale after");
    assert_ne!(verdicts(&probed(3)), verdicts(&probed(0)));
    let never_good = ClusterInfo {
        last_good: None,
        ..probed(0)
    };
    assert!(!keeps(&never_good, &never_good));

    let unreachable = ClusterInfo {
        error: Some("connection refused".into()),
        ..probed(0)
    };
    let forbidden = ClusterInfo {
        kind_errors: [(Kind::HelmRelease, "forbidden".into())].into(),
        ..probed(0)
    };
    let relabelled = ClusterInfo {
        labels: [("ring".to_string(), "canary".to_string())].into(),
        ..probed(0)
    };
    for changed in [&unreachable, &forbidden] {
        assert!(!keeps(&probed(1), changed));
        assert!(!keeps(changed, &probed(1)));
        let moved = ClusterInfo {
            last_good: probed(1).last_good,
            ..changed.clone()
        };
        assert!(!keeps(&moved, changed), "{changed:?}");
    }
    assert!(!keeps(&probed(1), &relabelled));
}

/// A run that started and has not finished (kustomize-controller's Ready=Unknown/Progressing
/// "Reconciliation in progress", kustomization_controller.go `reconcile`) while what it needs
/// has failed since: the wait is explained by that failure, which is the root cause, for a
/// failed dependency and for a failed source alike.
#[test]
fn a_run_in_progress_over_a_failed_prerequisite_is_blocked_by_it() {
    let in_progress = |value: Value| {
        with_conditions(
            value,
            vec![
                condition(
                    "Ready",
                    "Unknown",
                    "Progressing",
                    "Reconciliation in progress",
                    60,
                ),
                condition(
                    "Reconciling",
                    "True",
                    "Progressing",
                    &format!("Fetching manifests for revision {SHA} with a timeout of 5m0s"),
                    60,
                ),
            ],
        )
    };
    let infra = with_conditions(
        kustomization("infra", &[]),
        vec![not_ready("BuildFailed", "kustomize build failed", 30)],
    );
    let mut site = with_conditions(
        git_repository("site", SHA),
        vec![not_ready(
            "GitOperationFailed",
            "failed to checkout and determine revision: unable to clone 'https://git.example.com/site': authentication required",
            30,
        )],
    );
    site["status"]["artifact"] = Value::Null;
    let mut web = kustomization("web", &[]);
    web["spec"]["sourceRef"]["name"] = json!("site");
    let run = run(&fleet(vec![
        infra,
        site,
        in_progress(kustomization("apps", &["infra"])),
        in_progress(web),
    ]));
    for (name, root) in [
        ("apps", id("Kustomization", "flux-system", "infra")),
        ("web", id("GitRepository", "flux-system", "site")),
    ] {
        let verdict = run.verdict("Kustomization", "flux-system", name);
        assert_eq!(verdict.state, Blocked, "{name}: {verdict:?}");
        assert_eq!(
            run.roots("Kustomization", "flux-system", name),
            [root.as_str()]
        );
    }
}
