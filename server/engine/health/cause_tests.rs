//! Causes as fields (issue 46): codes stored by name, and the same cause reading the same on
//! every cluster and for as long as it lasts, whatever its words say.

use super::State::*;
use super::testkit::*;
use super::{Cause, CauseCode, ClusterInfo, Thresholds, Untrusted, reason_beside_clusters};
use chrono::TimeDelta;
use serde_json::json;

#[test]
fn every_code_is_stored_by_the_name_it_gives_and_reads_back() {
    for &code in CauseCode::ALL {
        let stored = serde_json::to_value(code).unwrap();
        assert_eq!(stored, json!(code.as_str()), "{code:?}");
        assert_eq!(serde_json::from_value::<CauseCode>(stored).unwrap(), code);
    }
    let names: std::collections::BTreeSet<&str> =
        CauseCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(names.len(), CauseCode::ALL.len(), "names are unique");
}

#[test]
fn a_code_this_version_does_not_know_reads_as_unrecorded_with_its_parameters() {
    let cause: Cause =
        serde_json::from_value(json!({"code": "from_the_future", "params": {"a": "b"}})).unwrap();
    assert_eq!(cause.code, CauseCode::Unrecorded);
    assert_eq!(cause.params["a"], "b");
    let bare: Cause = serde_json::from_value(json!({"code": "crash_loop"})).unwrap();
    assert_eq!(bare, Cause::new(CauseCode::CrashLoop));
}

#[test]
fn the_identity_holds_the_code_and_every_parameter_and_nothing_empty() {
    let cause = Cause::new(CauseCode::CrashLoop)
        .with("container", "manager")
        .with("init", "");
    assert_eq!(cause.params.len(), 1, "an empty value is left out");
    let other = Cause::new(CauseCode::CrashLoop).with("container", "sidecar");
    assert_ne!(cause.identity(), other.identity());
    assert_ne!(
        cause.identity(),
        Cause::new(CauseCode::ContainerWaiting)
            .with("container", "manager")
            .identity()
    );
}

/// A container crash-looping on two clusters: the pods' suffixes, the restart counts and the
/// back-off differ, and so do the reasons; the cause is one.
#[test]
fn one_crash_loop_on_two_clusters_with_different_restart_counts_is_one_cause() {
    let crashing = |suffix: &str, restarts: i64, backoff: &str| {
        let mut value = pod(
            "apps",
            "web",
            suffix,
            Some((
                "CrashLoopBackOff",
                &format!("back-off {backoff} restarting failed container=manager"),
            )),
        );
        value["status"]["containerStatuses"][0]["restartCount"] = json!(restarts);
        value
    };
    let placed = [
        ("prod-1", deployment("apps", "web", 1, 0)),
        ("prod-1", crashing("x2k4q", 4, "40s")),
        ("prod-2", deployment("apps", "web", 1, 0)),
        ("prod-2", crashing("b7z9m", 57, "5m0s")),
    ];
    let clusters: Vec<ClusterInfo> = ["prod-1", "prod-2"]
        .map(|name| ClusterInfo {
            name: name.into(),
            last_good: Some(now()),
            ..ClusterInfo::default()
        })
        .into();
    let evaluation = evaluate_on(&placed, &clusters, &[], &Thresholds::default());
    let roots: Vec<_> = evaluation
        .root_causes
        .iter()
        .filter(|r| r.id.as_str().ends_with("/Deployment/apps/web"))
        .collect();
    assert_eq!(roots.len(), 2, "{:#?}", evaluation.root_causes);
    assert_ne!(roots[0].reason, roots[1].reason, "the words differ");
    assert_eq!(roots[0].cause, roots[1].cause);
    assert_eq!(
        roots[0].cause,
        Cause::new(CauseCode::ContainerWaiting)
            .with("container", "manager")
            .with("reason", "CrashLoopBackOff")
    );
}

/// Progressing, then stuck past the threshold: the age is in the reason, the cause stays.
#[test]
fn a_cause_stays_the_same_when_its_object_turns_stuck() {
    let reconciling = |minutes: i64| {
        with_conditions(
            kustomization("apps", &[]),
            vec![condition(
                "Ready",
                "Unknown",
                "Progressing",
                "Running health checks",
                minutes,
            )],
        )
    };
    let source = || git_repository("flux-system", "main@sha1:0123456789abcdef");
    let early = run(&[source(), reconciling(1)]);
    let late = run(&[source(), reconciling(600)]);
    let (early, late) = (
        early.verdict("Kustomization", "flux-system", "apps"),
        late.verdict("Kustomization", "flux-system", "apps"),
    );
    assert_eq!((early.state, late.state), (Progressing, Stuck));
    assert_ne!(early.reason, late.reason);
    assert_eq!(early.cause, late.cause);
    assert_eq!(early.cause.code, CauseCode::FluxInProgress);
}

/// A cluster is its own root cause: its cause says which of the ways data goes untrusted,
/// never the error's words or the age, so stale clusters are one cause however old.
#[test]
fn a_stale_cluster_is_the_same_cause_whatever_its_age() {
    let stale = |minutes: i64| ClusterInfo {
        name: "prod-1".into(),
        last_good: Some(now() - TimeDelta::minutes(minutes)),
        ..ClusterInfo::default()
    };
    let at = |minutes| evaluate_on(&[], &[stale(minutes)], &[], &Thresholds::default());
    let (young, old) = (at(10), at(300));
    assert_ne!(young.root_causes[0].reason, old.root_causes[0].reason);
    assert_eq!(young.root_causes[0].cause, old.root_causes[0].cause);
    assert_eq!(
        young.root_causes[0].cause,
        Cause::new(CauseCode::ClusterStale)
    );
}

/// Where an incident lists its clusters, a cluster's own cause reads without the cluster its
/// reason names; any other reason is left as it is.
#[test]
fn a_cluster_causes_reason_beside_its_clusters_leaves_out_the_cluster_it_names() {
    let reason = Untrusted::Unreachable("connection refused".into()).reason("prod-1");
    assert_eq!(
        reason_beside_clusters("prod-1/Cluster//prod-1", &reason),
        "unreachable: connection refused"
    );
    assert_eq!(
        reason_beside_clusters("prod-2/Cluster//prod-2", &reason),
        reason,
        "another cluster's words are not this one's"
    );
    assert_eq!(
        reason_beside_clusters("prod-1/Deployment/apps/web", "cluster prod-1 x"),
        "cluster prod-1 x"
    );
}

/// A fleet is mostly healthy: a healthy verdict's cause is its code alone, so the verdicts
/// held for every object carry no parameters (an empty map allocates nothing).
#[test]
fn healthy_verdicts_carry_a_code_and_no_parameters() {
    let run = run(&[
        git_repository("flux-system", SHA),
        kustomization("apps", &[]),
        deployment("apps", "web", 2, 2),
        pod("apps", "web", "x2k4q", None),
    ]);
    let healthy: Vec<_> = run
        .evaluation
        .objects
        .iter()
        .filter(|v| v.state == Healthy)
        .collect();
    assert_eq!(healthy.len(), 4, "{:#?}", run.evaluation.objects);
    for verdict in healthy {
        assert!(verdict.cause.params.is_empty(), "{verdict:?}");
        assert_ne!(verdict.cause.code, CauseCode::Unrecorded, "{verdict:?}");
    }
}
