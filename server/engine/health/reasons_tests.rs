//! Every row of the reason catalogue fed through the engine: the verdict its class promises
//! is the verdict the engine gives, so the table cannot drift from the rules. docs/REASONS.md
//! is generated from the table here (`FLEETGLASS_WRITE_REASONS=1`) and must not be stale.

use super::State::{self, *};
use super::reasons::{CATALOGUE, Class, Reason, Site};
use super::testkit::*;
use crate::model::Kind;
use serde_json::{Value, json};

/// The verdict a reason's class gives an object with no other trouble.
fn promised(class: Class) -> State {
    match class {
        Class::Healthy | Class::Informational => Healthy,
        Class::InProgress | Class::Waiting => Progressing,
        Class::Failure | Class::FailedBy => Failed,
    }
}

/// A converged, healthy object of a Flux kind, and its sources and controllers.
fn flux_fixture(kind: Kind) -> (Vec<Value>, &'static str, &'static str) {
    let mut values = flux_controllers();
    values.push(controller("tofu-controller", 1));
    values.push(controller("source-watcher", 1));
    let source = |kind: &str, api: &str| {
        let mut value = git_repository("other", SHA);
        value["kind"] = json!(kind);
        value["apiVersion"] = json!(api);
        value
    };
    let (object, namespace, name) = match kind {
        Kind::Kustomization => (kustomization("apps", &[]), "flux-system", "apps"),
        Kind::HelmRelease => (helm_release("apps", "web", "charts"), "apps", "web"),
        Kind::GitRepository => (git_repository("other", SHA), "flux-system", "other"),
        Kind::HelmRepository => (helm_repository("other"), "flux-system", "other"),
        Kind::HelmChart => (
            helm_chart("apps", "web", "charts", "2.14.0"),
            "flux-system",
            "apps-web",
        ),
        Kind::Terraform => (terraform("nlb"), "flux-system", "nlb"),
        Kind::OCIRepository => (
            source("OCIRepository", "source.toolkit.fluxcd.io/v1"),
            "flux-system",
            "other",
        ),
        Kind::Bucket => (
            source("Bucket", "source.toolkit.fluxcd.io/v1"),
            "flux-system",
            "other",
        ),
        Kind::ExternalArtifact => (
            source("ExternalArtifact", "source.toolkit.fluxcd.io/v1"),
            "flux-system",
            "other",
        ),
        other => panic!("{other} is no Flux kind"),
    };
    values.extend([
        git_repository("flux-system", SHA),
        helm_repository("charts"),
    ]);
    if kind != Kind::HelmChart {
        values.push(helm_chart("apps", "web", "charts", "2.14.0"));
    }
    values.retain(|v| {
        !(v["kind"] == object["kind"] && v["metadata"]["name"] == object["metadata"]["name"])
    });
    values.push(object);
    (values, namespace, name)
}

fn place(values: &mut [Value], kind: Kind, name: &str) -> usize {
    values
        .iter()
        .position(|v| v["kind"] == kind.as_str() && v["metadata"]["name"] == name)
        .expect("the fixture holds the object")
}

/// A Flux condition row, on each kind fleetglass reads that carries it.
fn feed_flux(row: &Reason, type_: &str, kind: Kind) -> State {
    let (mut values, namespace, name) = flux_fixture(kind);
    let at = place(&mut values, kind, name);
    let object = &mut values[at];
    let status = match row.class {
        Class::Healthy => "True",
        _ => "False",
    };
    let fed = condition(type_, status, row.reason, row.shape, 1);
    if type_ == "Ready" {
        object["status"]["conditions"] = json!([fed]);
    } else {
        let status = if type_ == "Stalled" || type_ == "Reconciling" {
            "True"
        } else {
            status
        };
        let fed = condition(type_, status, row.reason, row.shape, 1);
        object["status"]["conditions"]
            .as_array_mut()
            .expect("conditions")
            .push(fed);
    }
    run(&values).state(kind.as_str(), namespace, name)
}

/// What a non-Ready Flux condition does beside Ready=True: Stalled=True means the controller
/// gave up, Reconciling=True is a run under way; the others say nothing on their own.
fn promised_beside_ready(type_: &str, class: Class) -> State {
    match type_ {
        "Stalled" => Failed,
        "Reconciling" => Progressing,
        _ if class == Class::Informational => Healthy,
        _ => promised(class),
    }
}

#[test]
fn every_flux_reason_on_a_kind_fleetglass_reads_gives_the_verdict_of_its_class() {
    let mut fed = 0;
    for row in CATALOGUE {
        let Site::Condition(type_) = row.site else {
            continue;
        };
        for kind in row.kinds.split(',').filter_map(Kind::named) {
            let expected = if type_ == "Ready" {
                promised(row.class)
            } else {
                promised_beside_ready(type_, row.class)
            };
            assert_eq!(feed_flux(row, type_, kind), expected, "{row:?} on {kind}");
            fed += 1;
        }
    }
    assert!(fed > 100, "{fed} Flux rows fed");
}

/// Kinds the catalogue lists for completeness (notification and image automation objects,
/// Nodes, ReplicaSets) that fleetglass does not read: documented, never judged.
#[test]
fn rows_of_kinds_fleetglass_does_not_read_are_documented_only() {
    let unread: Vec<&str> = CATALOGUE
        .iter()
        .flat_map(|row| row.kinds.split(','))
        .filter(|kind| Kind::named(kind).is_none())
        .collect();
    for kind in [
        "Receiver",
        "ImageRepository",
        "ImagePolicy",
        "ImageUpdateAutomation",
        "Node",
        "ReplicaSet",
    ] {
        assert!(unread.contains(&kind), "{kind}");
    }
    assert!(unread.iter().all(|kind| Kind::named(kind).is_none()));
}

fn pod_with(waiting: Option<(&str, &str)>) -> Value {
    let mut pod = pod("apps", "solo", "a", waiting);
    pod["metadata"]["ownerReferences"] = json!([]);
    // a minute old: past the scheduling window, well within the threshold
    pod["metadata"]["creationTimestamp"] = json!(ago(1));
    pod["status"]["startTime"] = json!(ago(1));
    pod
}

fn pod_state(pod: Value) -> State {
    run(&[pod]).state("Pod", "apps", "solo-5d9c7b-a")
}

#[test]
fn every_container_waiting_reason_gives_the_verdict_of_its_class() {
    for row in CATALOGUE
        .iter()
        .filter(|r| r.site == Site::ContainerWaiting)
    {
        let state = pod_state(pod_with(Some((row.reason, "m"))));
        assert_eq!(state, promised(row.class), "{row:?}");
    }
}

/// A running container that exited with `reason` before: an error exit between restarts is
/// a crash loop; `Completed` (exit 0) is not.
#[test]
fn every_container_exit_reason_gives_the_verdict_of_its_class() {
    for row in CATALOGUE
        .iter()
        .filter(|r| r.site == Site::ContainerTerminated)
    {
        let mut pod = pod_with(None);
        let code = if row.class == Class::Failure { 1 } else { 0 };
        pod["status"]["containerStatuses"][0]["restartCount"] = json!(3);
        pod["status"]["containerStatuses"][0]["lastState"] = json!({"terminated": {
            "reason": row.reason, "exitCode": code, "finishedAt": ago(1)}});
        let expected = match row.class {
            Class::Failure => Failed,
            _ => Healthy,
        };
        assert_eq!(pod_state(pod), expected, "{row:?}");
    }
}

/// A pod that ended with `status.reason` (evicted, rejected by the kubelet, shut down), owned
/// by nothing that replaces it.
#[test]
fn every_pod_end_reason_fails_an_unreplaced_pod_and_is_named() {
    for row in CATALOGUE.iter().filter(|r| r.site == Site::PodEnded) {
        let mut pod = pod_with(None);
        pod["status"]["phase"] = json!("Failed");
        pod["status"]["reason"] = json!(row.reason);
        pod["status"]["message"] = json!("Pod was rejected: m");
        let verdict_state = pod_state(pod.clone());
        assert_eq!(verdict_state, promised(row.class), "{row:?}");
        let run = run(&[pod]);
        let reason = &run.verdict("Pod", "apps", "solo-5d9c7b-a").reason;
        assert!(reason.starts_with(row.reason), "{reason}");
    }
}

/// Pod, Deployment and Job conditions: each on an object whose evidence is otherwise
/// settled, so the verdict is the condition's.
#[test]
fn every_kubernetes_condition_reason_gives_the_verdict_of_its_class() {
    for row in CATALOGUE {
        let Site::KubeCondition(type_) = row.site else {
            continue;
        };
        let Some(kind) = Kind::named(row.kinds) else {
            continue;
        };
        let state = match kind {
            Kind::Pod => feed_pod_condition(row, type_),
            Kind::Deployment | Kind::StatefulSet => feed_workload_condition(row, kind, type_),
            Kind::Job => feed_job_condition(row, type_),
            other => panic!("no feeder for {other}"),
        };
        assert_eq!(state, promised(row.class), "{row:?}");
    }
}

fn feed_pod_condition(row: &Reason, type_: &str) -> State {
    let mut pod = pod_with(None);
    let status = match (type_, row.class) {
        ("DisruptionTarget", _) => "True",
        (_, Class::Informational) => "True",
        _ => "False",
    };
    let first = type_.split(" / ").next().unwrap_or(type_);
    let fed = json!({"type": first, "status": status, "reason": row.reason, "message": "m", "lastTransitionTime": ago(1)});
    match (first, row.reason) {
        ("PodScheduled", _) => {
            pod["status"]["phase"] = json!("Pending");
            pod["status"]["containerStatuses"] = json!([]);
        }
        (_, "PodCompleted") => pod["status"]["phase"] = json!("Succeeded"),
        (_, "PodFailed") => pod["status"]["phase"] = json!("Failed"),
        ("Ready" | "ContainersReady" | "Initialized", _) => {
            pod["status"]["containerStatuses"][0]["ready"] = json!(false);
        }
        _ => {}
    }
    pod["status"]["conditions"] = json!([fed]);
    pod_state(pod)
}

fn feed_workload_condition(row: &Reason, kind: Kind, type_: &str) -> State {
    let status = match row.class {
        Class::Healthy | Class::InProgress => "True",
        _ => "False",
    };
    let status = if type_ == "ReplicaFailure" || row.reason == "MinimumReplicasUnavailable" {
        if row.reason == "MinimumReplicasUnavailable" {
            "False"
        } else {
            "True"
        }
    } else if row.class == Class::Informational {
        "Unknown"
    } else {
        status
    };
    let available = if row.class == Class::Healthy || row.class == Class::Informational {
        2
    } else {
        1
    };
    let mut deployment = deployment("apps", "web", 2, available);
    deployment["status"]["conditions"] = json!([{"type": type_, "status": status, "reason": row.reason,
        "message": "m", "lastTransitionTime": ago(1), "lastUpdateTime": ago(1)}]);
    deployment["kind"] = json!(kind.as_str());
    let mut values = vec![deployment];
    for suffix in ["a", "b"].iter().take(available as usize) {
        values.push(pod("apps", "web", suffix, None));
    }
    run(&values).state(kind.as_str(), "apps", "web")
}

fn feed_job_condition(row: &Reason, type_: &str) -> State {
    let first = type_.split(' ').next_back().unwrap_or(type_);
    let status = if row.class == Class::Informational {
        "False"
    } else {
        "True"
    };
    let job = json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "once", "namespace": "apps", "creationTimestamp": ago(5)},
        "spec": {"template": {"spec": {"containers": []}}},
        "status": {"conditions": [{"type": first, "status": status, "reason": row.reason, "message": "m",
                                    "lastTransitionTime": ago(1)}]}});
    let state = run(&[job]).state("Job", "apps", "once");
    // A Job whose only condition says nothing is running.
    if row.class == Class::Informational && state == Progressing {
        return Healthy;
    }
    state
}

/// Where each row is fed, as docs/REASONS.md names it.
fn fed_by(row: &Reason) -> &'static str {
    let read = row.kinds.split(',').any(|k| Kind::named(k).is_some());
    match row.site {
        _ if !read => "rows_of_kinds_fleetglass_does_not_read_are_documented_only",
        Site::Condition(_) => {
            "every_flux_reason_on_a_kind_fleetglass_reads_gives_the_verdict_of_its_class"
        }
        Site::ContainerWaiting => "every_container_waiting_reason_gives_the_verdict_of_its_class",
        Site::ContainerTerminated => "every_container_exit_reason_gives_the_verdict_of_its_class",
        Site::PodEnded => "every_pod_end_reason_fails_an_unreplaced_pod_and_is_named",
        Site::KubeCondition(_) => {
            "every_kubernetes_condition_reason_gives_the_verdict_of_its_class"
        }
    }
}

fn site_text(site: Site) -> String {
    match site {
        Site::Condition(type_) => format!("{type_} condition"),
        Site::ContainerWaiting => "container waiting".into(),
        Site::ContainerTerminated => "container terminated".into(),
        Site::PodEnded => "pod status.reason".into(),
        Site::KubeCondition(type_) => format!("{type_} condition"),
    }
}

fn class_text(class: Class) -> &'static str {
    match class {
        Class::Healthy => "healthy (proof, on Ready=True)",
        Class::InProgress => "progressing, stuck past the threshold",
        Class::Waiting => "progressing; blocked by the prerequisite when it is a problem",
        Class::Failure => "failed (blocked when a prerequisite explains it)",
        Class::FailedBy => "failed, with what it deployed as root causes",
        Class::Informational => "informational (no verdict on its own)",
    }
}

fn render() -> String {
    let mut out = String::from(
        "# Reasons the engine reads\n\n\
         Generated from the catalogue in `server/engine/health/reasons.rs` by\n\
         `FLEETGLASS_WRITE_REASONS=1 cargo test -p fleetglass-engine reasons`; a test fails when this\n\
         file is stale. Every row is fed through the engine by the test named in its last column\n\
         (in `server/engine/health/reasons_tests.rs`).\n\n\
         Versions: source-controller v1.9.6, kustomize-controller v1.9.6, helm-controller v1.6.4,\n\
         fluxcd/pkg apis/meta v1.30.2, notification-controller v1.9.3, image-reflector-controller v1.2.0,\n\
         image-automation-controller v1.2.1, tofu-controller v0.16.5, Kubernetes v1.37.2.\n\n\
         **A reason that is not in this table is never `healthy`.** Ready=True with an unknown reason\n\
         reads `unverifiable` and shows the controller's message verbatim; Ready=False with an unknown\n\
         reason reads `failed`, Ready=Unknown `progressing` (then `stuck`); a container waiting for an\n\
         unknown reason is not ready, so its pod is in progress, never green.\n\n",
    );
    out.push_str(&format!("{} rows.\n\n", CATALOGUE.len()));
    out.push_str("| Reason | Written on | Kinds | Verdict | Defined in | When | Fed by |\n");
    out.push_str("|---|---|---|---|---|---|---|\n");
    for row in CATALOGUE {
        let reason = if row.shape.is_empty() {
            format!("`{}`", row.reason)
        } else {
            format!("`{}` (message: \"{}\")", row.reason, row.shape)
        };
        out.push_str(&format!(
            "| {reason} | {} | {} | {} | {} | {} | `{}` |\n",
            site_text(row.site),
            row.kinds.replace(',', ", "),
            class_text(row.class),
            row.origin.replace('|', "\\|"),
            row.written_when.replace('|', "\\|"),
            fed_by(row),
        ));
    }
    out
}

#[test]
fn docs_reasons_md_is_generated_from_the_catalogue() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/REASONS.md");
    let rendered = render();
    if std::env::var_os("FLEETGLASS_WRITE_REASONS").is_some() {
        std::fs::write(path, &rendered).expect("write docs/REASONS.md");
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == rendered,
        "docs/REASONS.md is stale: run FLEETGLASS_WRITE_REASONS=1 cargo test -p fleetglass-engine reasons"
    );
}

/// A Ready=True reason that no controller is known to write proves nothing: the message is
/// shown verbatim and the object is never green.
#[test]
fn an_unknown_ready_reason_is_never_healthy_and_keeps_the_controllers_words() {
    let mut values = flux_controllers();
    let mut apps = kustomization("apps", &[]);
    apps["status"]["conditions"] = json!([ready("AllGood", "Applied revision: main@sha1:1111111")]);
    values.extend([git_repository("flux-system", SHA), apps]);
    let run = run(&values);
    let verdict = run.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(verdict.state, Unverifiable);
    assert_eq!(verdict.message, "Applied revision: main@sha1:1111111");
    assert!(verdict.reason.contains("\"AllGood\""), "{}", verdict.reason);
}

#[test]
fn every_reason_row_is_unique_and_has_an_origin() {
    let mut seen = std::collections::BTreeSet::new();
    for row in CATALOGUE {
        assert!(
            !row.origin.is_empty() && !row.written_when.is_empty(),
            "{row:?}"
        );
        let key = (row.reason, format!("{:?}", row.site), row.kinds, row.shape);
        assert!(seen.insert(key), "duplicate {row:?}");
    }
}

/// A success reason proves health only for the kinds whose controller writes it: a
/// Kustomization Ready=True "Succeeded" (a source's success) proves nothing.
#[test]
fn a_success_reason_of_another_kind_is_no_proof() {
    let mut values = flux_controllers();
    let mut apps = kustomization("apps", &[]);
    apps["status"]["conditions"] = json!([ready("Succeeded", "stored artifact")]);
    values.extend([git_repository("flux-system", SHA), apps]);
    let run = run(&values);
    assert_eq!(
        run.state("Kustomization", "flux-system", "apps"),
        Unverifiable
    );
}
