//! Domains: which objects belong to a domain, on which clusters, and the one rule for a cell's
//! state (green only when fully healthy).

use super::State::*;
use super::domains::cell_state;
use super::testkit::*;
use super::{ClusterInfo, DomainSpec, DomainVerdict, Selection, Thresholds};
use serde_json::{Value, json};

fn domain(yaml: &str) -> DomainSpec {
    crate::health::testkit::from_yaml(yaml).expect("valid domain")
}

const VERSION: &str = "version: {from: source_revision, kind: GitRepository, namespace: flux-system, name: flux-system}";

fn labelled(name: &str, label: &str) -> Value {
    with_label(kustomization(name, &[]), "domain", label)
}

fn fleet(extra: Vec<Value>) -> Vec<Value> {
    let mut values = flux_controllers();
    values.push(git_repository("flux-system", SHA));
    values.extend(extra);
    values
}

fn cell<'a>(run: &'a Run, domain: &str) -> &'a DomainVerdict {
    run.evaluation
        .domains
        .iter()
        .find(|c| c.domain == domain && c.cluster == CLUSTER)
        .unwrap_or_else(|| panic!("no cell for {domain}"))
}

fn member_names(run: &Run, domain: &str) -> Vec<String> {
    let mut names: Vec<String> = run
        .evaluation
        .objects
        .iter()
        .filter(|v| v.domains.iter().any(|d| d == domain))
        .map(|v| format!("{}/{}", v.kind, v.name))
        .collect();
    names.sort();
    names
}

/// The invariant the page, the API, `wait` and the alerts rely on.
fn assert_cells_agree(cells: &[DomainVerdict]) {
    for cell in cells {
        assert_eq!(cell.state == Healthy, cell.fully_healthy, "{cell:?}");
        if !cell.blockers.is_empty() {
            assert!(!cell.fully_healthy, "{cell:?}");
        }
    }
}

#[test]
fn a_blocker_in_another_domain_keeps_the_cell_from_green() {
    let infra = with_conditions(
        labelled("infra", "infra"),
        vec![not_ready(
            "BuildFailed",
            "kustomize build failed: accumulating resources",
            30,
        )],
    );
    let apps = with_label(kustomization("apps", &["infra"]), "domain", "apps");
    let domains = [
        domain(&format!(
            "{{name: apps, select: {{labels: {{domain: apps}}}}, {VERSION}}}"
        )),
        domain(&format!(
            "{{name: infra, select: {{labels: {{domain: infra}}}}, {VERSION}}}"
        )),
    ];
    let run = run_with(
        &fleet(vec![infra, apps]),
        &[],
        &domains,
        &Thresholds::default(),
    );
    assert_eq!(run.state("Kustomization", "flux-system", "apps"), Healthy);
    let apps = cell(&run, "apps");
    assert_eq!(
        (apps.state, apps.fully_healthy, apps.objects, apps.healthy),
        (Blocked, false, 1, 1)
    );
    assert_eq!(
        apps.blockers[0].as_str(),
        id("Kustomization", "flux-system", "infra")
    );
    let infra = cell(&run, "infra");
    assert_eq!(
        (infra.state, infra.fully_healthy, infra.healthy),
        (Failed, false, 0)
    );
    assert_cells_agree(&run.evaluation.domains);
}

#[test]
fn the_cell_state_is_healthy_exactly_when_fully_healthy() {
    let all = |states: &[super::State], blocked, version| {
        cell_state(states.iter().copied(), blocked, version)
    };
    assert_eq!(all(&[Healthy, Healthy], false, true), Healthy);
    assert_eq!(all(&[Healthy], true, true), Blocked, "blocked from outside");
    assert_eq!(
        all(&[Healthy], false, false),
        Unverifiable,
        "no version read"
    );
    assert_eq!(
        all(&[], false, true),
        Unverifiable,
        "no objects: no evidence"
    );
    assert_eq!(all(&[Healthy, Progressing], false, true), Progressing);
    assert_eq!(all(&[Progressing], true, true), Blocked);
    assert_eq!(
        all(&[Failed, Healthy], true, true),
        Failed,
        "the worst wins"
    );
    assert_eq!(all(&[Failed], false, false), Failed);
    assert_eq!(all(&[Suspended, Healthy], false, true), Suspended);
}

#[test]
fn a_cell_without_its_version_is_not_green() {
    let domains = [domain(
        "{name: apps, select: {labels: {domain: apps}}, version: {from: chart_version, namespace: apps, name: absent}}",
    )];
    let run = run_with(
        &fleet(vec![labelled("apps", "apps")]),
        &[],
        &domains,
        &Thresholds::default(),
    );
    let apps = cell(&run, "apps");
    assert_eq!(
        (
            apps.state,
            apps.fully_healthy,
            apps.version.as_deref(),
            apps.healthy
        ),
        (Unverifiable, false, None, 1)
    );
}

#[test]
fn labels_select_flux_objects_matching_every_label() {
    let both = with_label(labelled("both", "apps"), "tier", "web");
    let one = labelled("one", "apps");
    let workload = with_label(deployment("apps", "web", 1, 1), "domain", "apps");
    let domains = [domain(&format!(
        "{{name: apps, select: {{labels: {{domain: apps, tier: web}}}}, {VERSION}}}"
    ))];
    let run = run_with(
        &fleet(vec![both, one, workload]),
        &[],
        &domains,
        &Thresholds::default(),
    );
    assert_eq!(member_names(&run, "apps"), ["Kustomization/both"]);
    assert_eq!(cell(&run, "apps").objects, 1);
}

#[test]
fn namespaces_select_every_flux_object_in_them_and_nothing_else() {
    let domains = [domain(&format!(
        "{{name: edge, select: {{namespaces: [edge]}}, {VERSION}}}"
    ))];
    let run = run_with(
        &fleet(vec![
            helm_release("edge", "envoy", "charts"),
            helm_release("other", "envoy", "charts"),
            helm_repository("charts"),
            helm_chart("edge", "envoy", "charts", "2.14.0"),
            helm_chart("other", "envoy", "charts", "2.14.0"),
        ]),
        &[],
        &domains,
        &Thresholds::default(),
    );
    assert_eq!(member_names(&run, "edge"), ["HelmRelease/envoy"]);
    assert_eq!(
        run.verdict("HelmRelease", "edge", "envoy").domains,
        ["edge"]
    );
    assert!(
        run.verdict("HelmRelease", "other", "envoy")
            .domains
            .is_empty()
    );
}

#[test]
fn a_root_is_that_kustomization_and_the_flux_objects_it_applied_recursively() {
    let child = applied_by(
        kustomization("child", &[]),
        "kustomize",
        "flux-system",
        "root",
    );
    let grandchild = applied_by(
        helm_release("apps", "web", "charts"),
        "kustomize",
        "flux-system",
        "child",
    );
    // Applied by two members: named once.
    let workload = applied_by(
        applied_by(deployment("apps", "web", 1, 1), "helm", "apps", "web"),
        "kustomize",
        "flux-system",
        "child",
    );
    let namesake = helm_release("flux-system", "root", "charts");
    let elsewhere = {
        let mut other = kustomization("root", &[]);
        other["metadata"]["namespace"] = json!("other");
        other
    };
    let domains = [domain(&format!(
        "{{name: tree, select: {{root: flux-system/root}}, {VERSION}}}"
    ))];
    let run = run_with(
        &fleet(vec![
            kustomization("root", &[]),
            child,
            grandchild,
            workload,
            pod("apps", "web", "a1", None),
            namesake,
            elsewhere,
            kustomization("unrelated", &[]),
            helm_repository("charts"),
        ]),
        &[],
        &domains,
        &Thresholds::default(),
    );
    // Flux objects are members; the cell counts them and the workloads and pods they applied,
    // the objects listed for the domain (3 Flux objects, the Deployment and its pod).
    assert_eq!(cell(&run, "tree").objects, 5);
    assert_eq!(
        member_names(&run, "tree"),
        [
            "Deployment/web",
            "HelmRelease/web",
            "Kustomization/child",
            "Kustomization/root",
            "Pod/web-5d9c7b-a1"
        ]
    );
    assert_eq!(run.verdict("Deployment", "apps", "web").domains, ["tree"]);
}

#[test]
fn an_object_in_several_domains_takes_the_strictest_stuck_after() {
    let mut slow = with_conditions(
        with_label(labelled("slow", "a"), "team", "b"),
        vec![condition(
            "Ready",
            "Unknown",
            "Progressing",
            "Reconciliation in progress",
            10,
        )],
    );
    slow["spec"]["interval"] = json!("1m");
    let lenient =
        format!("{{name: a, stuck_after: 30m, select: {{labels: {{domain: a}}}}, {VERSION}}}");
    let strict =
        format!("{{name: b, stuck_after: 5m, select: {{labels: {{team: b}}}}, {VERSION}}}");
    let state = |domains: &[DomainSpec]| {
        run_with(
            &fleet(vec![slow.clone()]),
            &[],
            domains,
            &Thresholds::default(),
        )
        .state("Kustomization", "flux-system", "slow")
    };
    assert_eq!(state(&[domain(&lenient)]), Progressing, "10m < 30m");
    assert_eq!(state(&[domain(&strict)]), Stuck, "10m > 5m");
    assert_eq!(state(&[domain(&lenient), domain(&strict)]), Stuck);
    assert_eq!(state(&[domain(&strict), domain(&lenient)]), Stuck);
    let run = run_with(
        &fleet(vec![slow.clone()]),
        &[],
        &[domain(&strict), domain(&lenient)],
        &Thresholds::default(),
    );
    assert_eq!(
        run.verdict("Kustomization", "flux-system", "slow").domains,
        ["a", "b"],
        "sorted"
    );
}

#[test]
fn cluster_labels_pick_the_cells() {
    let info = |name: &str, ring: &str| ClusterInfo {
        name: name.into(),
        labels: [("ring".to_string(), ring.to_string())].into(),
        last_good: Some(now()),
        ..ClusterInfo::default()
    };
    let clusters = [
        info("prod-1", "prod"),
        info("canary-1", "canary"),
        info("prod-2", "prod"),
    ];
    let placed: Vec<(&str, Value)> = ["prod-1", "canary-1", "unlabelled"]
        .into_iter()
        .flat_map(|cluster| {
            fleet(vec![labelled("apps", "apps")])
                .into_iter()
                .map(move |value| (cluster, value))
        })
        .collect();
    let prod = domain(&format!(
        "{{name: apps, clusters: {{ring: prod}}, select: {{labels: {{domain: apps}}}}, {VERSION}}}"
    ));
    let everywhere = domain(&format!(
        "{{name: all, select: {{labels: {{domain: apps}}}}, {VERSION}}}"
    ));
    let evaluation = evaluate_on(
        &placed,
        &clusters,
        &[prod, everywhere],
        &Thresholds::default(),
    );
    let cells: Vec<(&str, &str, super::State, usize)> = evaluation
        .domains
        .iter()
        .map(|c| (c.domain.as_str(), c.cluster.as_str(), c.state, c.objects))
        .collect();
    assert_eq!(
        cells,
        [
            ("all", "canary-1", Healthy, 1),
            ("all", "prod-1", Healthy, 1),
            ("all", "prod-2", Unverifiable, 0),
            ("all", "unlabelled", Healthy, 1),
            ("apps", "prod-1", Healthy, 1),
            ("apps", "prod-2", Unverifiable, 0),
        ]
    );
    assert_cells_agree(&evaluation.domains);
    let on = |cluster: &str| {
        evaluation
            .objects
            .iter()
            .find(|v| v.cluster == cluster && v.name == "apps")
            .map(|v| v.domains.clone())
            .unwrap()
    };
    assert_eq!(on("prod-1"), ["all", "apps"]);
    assert_eq!(on("canary-1"), ["all"]);
}

/// A domain must select its objects one way at least (the config loader refuses one that
/// selects none): labels, a root Kustomization or namespaces, each enough on its own.
#[test]
fn a_selection_is_empty_only_without_labels_root_and_namespaces() {
    let selection = |yaml: &str| -> Selection {
        crate::health::testkit::from_yaml(yaml).expect("valid selection")
    };
    assert!(selection("{}").is_empty());
    for one_way in [
        "{labels: {domain: shop}}",
        "{root: flux-system/apps}",
        "{namespaces: [shop]}",
    ] {
        assert!(!selection(one_way).is_empty(), "{one_way}");
    }
}

/// Issue 43 (e): the version a cell shows is the one applied; what the source offers beyond it
/// is pending beside it, and the cell is not fully healthy at either.
#[test]
fn a_cell_shows_the_applied_version_and_the_offered_one_as_pending() {
    let domains = [domain(&format!(
        "{{name: apps, select: {{root: flux-system/apps}}, {VERSION}}}"
    ))];
    // The control: applied what the source offers.
    let run = run_with(
        &fleet(vec![kustomization("apps", &[])]),
        &[],
        &domains,
        &Thresholds::default(),
    );
    let apps = cell(&run, "apps");
    assert_eq!(
        (apps.version.as_deref(), apps.offered.as_deref()),
        (Some("1111111"), None)
    );
    assert!(apps.fully_healthy);
    // The source moved on; the Kustomization still applied the old revision.
    let mut values = flux_controllers();
    values.push(git_repository("flux-system", NEW_SHA));
    values.push(kustomization("apps", &[]));
    let run = run_with(&values, &[], &domains, &Thresholds::default());
    let apps = cell(&run, "apps");
    assert_eq!(
        (apps.version.as_deref(), apps.offered.as_deref()),
        (Some("1111111"), Some("2222222"))
    );
    assert!(!apps.fully_healthy, "{apps:?}");
    assert_cells_agree(&run.evaluation.domains);
}

/// Issue 43 (e), charts: the release's history says what runs; an upgrade attempted beyond it
/// is pending, and the cell is not fully healthy even while Ready still reads True.
#[test]
fn a_chart_attempted_beyond_the_release_history_is_pending() {
    let domains = [domain(
        "{name: apps, select: {namespaces: [apps]}, version: {from: chart_version, namespace: apps, name: podinfo}}",
    )];
    let mut release = helm_release("apps", "podinfo", "podinfo");
    let control = run_with(
        &fleet(vec![release.clone()]),
        &[],
        &domains,
        &Thresholds::default(),
    );
    let apps = cell(&control, "apps");
    assert_eq!(
        (apps.version.as_deref(), apps.offered.as_deref()),
        (Some("2.14.0"), None)
    );
    release["status"]["lastAttemptedRevision"] = "2.15.0".into();
    let run = run_with(&fleet(vec![release]), &[], &domains, &Thresholds::default());
    let apps = cell(&run, "apps");
    assert_eq!(
        (apps.version.as_deref(), apps.offered.as_deref()),
        (Some("2.14.0"), Some("2.15.0"))
    );
    assert!(!apps.fully_healthy, "{apps:?}");
    assert_cells_agree(&run.evaluation.domains);
}
