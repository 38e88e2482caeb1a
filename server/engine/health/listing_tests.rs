//! Evidence a collector has not finished gathering (issue 43): a cluster never reached, or
//! whose first full list has not completed, and a kind whose first list has not completed,
//! prove nothing, and their absence never reads as "not found".

use super::testkit::*;
use super::{ClusterInfo, DomainSpec, State, cluster_id};
use crate::model::Kind;
use chrono::TimeDelta;
use std::collections::BTreeMap;

fn healthy_pair() -> Vec<serde_json::Value> {
    let mut values = flux_controllers();
    values.push(git_repository("flux-system", SHA));
    values.push(kustomization("apps", &[]));
    values
}

fn listed(info: ClusterInfo) -> ClusterInfo {
    ClusterInfo {
        name: CLUSTER.into(),
        last_good: Some(now()),
        ..info
    }
}

/// The verdict on Kustomization flux-system/apps, evaluated with `info`.
fn apps(values: &[serde_json::Value], info: ClusterInfo) -> super::Verdict {
    let run = run_with(values, &[info], &[], &Default::default());
    run.verdict("Kustomization", "flux-system", "apps").clone()
}

/// Controllers and a Kustomization whose GitRepository is not in the objects.
fn without_source() -> Vec<serde_json::Value> {
    let mut values = flux_controllers();
    values.push(kustomization("apps", &[]));
    values
}

fn domain() -> DomainSpec {
    serde_json::from_value(serde_json::json!({
        "name": "apps",
        "select": {"root": "flux-system/apps"},
        "version": {"from": "source_revision", "kind": "GitRepository",
                    "namespace": "flux-system", "name": "flux-system"},
    }))
    .unwrap()
}

#[test]
fn a_listed_cluster_is_the_control_its_objects_are_healthy() {
    let run = run_with(
        &healthy_pair(),
        &[listed(ClusterInfo::default())],
        &[],
        &Default::default(),
    );
    assert_eq!(
        run.verdict("Kustomization", "flux-system", "apps").state,
        State::Healthy
    );
    assert!(run.evaluation.root_causes.is_empty());
}

#[test]
fn before_its_first_full_list_a_clusters_objects_are_unverifiable_not_yet_listed() {
    let info = ClusterInfo {
        name: CLUSTER.into(),
        ..ClusterInfo::default()
    };
    let run = run_with(&healthy_pair(), &[info], &[], &Default::default());
    let verdict = run.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(verdict.state, State::Unverifiable);
    assert!(
        verdict.reason.contains("not yet listed"),
        "{}",
        verdict.reason
    );
    assert_eq!(
        run.roots("Kustomization", "flux-system", "apps"),
        vec![cluster_id(CLUSTER).as_str()]
    );
}

#[test]
fn a_cluster_never_reached_is_a_root_cause_with_nothing_listed_and_blocks_its_cells() {
    let info = ClusterInfo {
        name: CLUSTER.into(),
        error: Some("connection refused".into()),
        ..ClusterInfo::default()
    };
    let run = run_with(&[], &[info], &[domain()], &Default::default());
    let cause = run.root_cause(cluster_id(CLUSTER).as_str());
    assert_eq!(cause.state, State::Unverifiable);
    assert_eq!(
        cause.reason,
        "cluster prod never reached: connection refused"
    );
    assert!(cause.affected.is_empty());
    let [cell] = run.evaluation.domains.as_slice() else {
        panic!("one cell: {:?}", run.evaluation.domains)
    };
    assert_eq!(cell.state, State::Unverifiable);
    assert!(!cell.fully_healthy);
    assert_eq!(cell.blockers, vec![cluster_id(CLUSTER)]);
}

#[test]
fn a_reference_to_a_kind_not_yet_listed_is_unverifiable_never_not_found() {
    let info = listed(ClusterInfo {
        unlisted: [Kind::GitRepository].into(),
        ..ClusterInfo::default()
    });
    let verdict = apps(&without_source(), info);
    assert_eq!(
        (verdict.state, verdict.reason.as_str()),
        (State::Unverifiable, "GitRepository not yet listed")
    );
    // Once listed, the same absence is evidence.
    let verdict = apps(&without_source(), listed(ClusterInfo::default()));
    assert_eq!(verdict.state, State::Failed, "{}", verdict.reason);
    assert!(verdict.reason.ends_with("not found"), "{}", verdict.reason);
}

#[test]
fn an_object_of_a_kind_not_yet_listed_is_unverifiable_whatever_it_says() {
    let info = listed(ClusterInfo {
        unlisted: [Kind::Kustomization].into(),
        ..ClusterInfo::default()
    });
    let verdict = apps(&healthy_pair(), info);
    assert_eq!(verdict.state, State::Unverifiable);
    assert_eq!(
        verdict.reason,
        "Kustomization on cluster prod not yet listed"
    );
}

#[test]
fn a_reference_to_a_kind_that_cannot_be_read_is_unverifiable_not_judged_without_it() {
    let info = listed(ClusterInfo {
        kind_errors: BTreeMap::from([(Kind::GitRepository, "forbidden".to_string())]),
        ..ClusterInfo::default()
    });
    let verdict = apps(&without_source(), info);
    assert_eq!(
        (verdict.state, verdict.reason.as_str()),
        (State::Unverifiable, "cannot read GitRepository")
    );
    assert!(verdict.message.contains("forbidden"), "{}", verdict.message);
}

/// A CronJob's runs are its evidence: with Jobs not yet listed, or forbidden, it is not healthy
/// on its own say.
#[test]
fn a_cron_job_whose_jobs_cannot_be_read_is_unverifiable() {
    let cron_job = serde_json::json!({"apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": "nightly", "namespace": "apps", "generation": 1},
        "spec": {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": {"spec": {"containers": []}}}}},
        "status": {"lastScheduleTime": ago(30)}});
    let verdict = |info: ClusterInfo| {
        let run = run_with(
            std::slice::from_ref(&cron_job),
            &[info],
            &[],
            &Default::default(),
        );
        run.verdict("CronJob", "apps", "nightly").clone()
    };
    let read = verdict(listed(ClusterInfo::default()));
    assert_eq!(
        (read.state, read.reason.as_str()),
        (State::Healthy, "scheduled")
    );
    let unlisted = verdict(listed(ClusterInfo {
        unlisted: [Kind::Job].into(),
        ..ClusterInfo::default()
    }));
    assert_eq!(unlisted.state, State::Unverifiable);
    assert_eq!(
        unlisted.reason,
        "its runs cannot be read: Job not yet listed"
    );
    let forbidden = verdict(listed(ClusterInfo {
        kind_errors: BTreeMap::from([(Kind::Job, "forbidden".to_string())]),
        ..ClusterInfo::default()
    }));
    assert_eq!(forbidden.state, State::Unverifiable);
    assert!(
        forbidden.reason.ends_with("Job forbidden"),
        "{}",
        forbidden.reason
    );
}

#[test]
fn data_older_than_the_limit_is_untrusted_and_the_age_is_said() {
    let info = ClusterInfo {
        name: CLUSTER.into(),
        last_good: Some(now() - TimeDelta::minutes(5)),
        ..ClusterInfo::default()
    };
    let verdict = apps(&healthy_pair(), info);
    assert_eq!(verdict.state, State::Unverifiable);
    assert_eq!(
        verdict.reason,
        "cluster prod data is 5m old (freshness limit 2m)"
    );
}

/// Issue 43 (f): a cell whose objects cannot be verified because a known problem (their
/// controller down) is their root cause shows that problem, never only grey.
#[test]
fn a_cell_shows_the_known_failure_behind_its_unverifiable_objects() {
    let mut values: Vec<serde_json::Value> = flux_controllers()
        .into_iter()
        .filter(|v| v["metadata"]["name"] != "kustomize-controller")
        .collect();
    values.push(controller("kustomize-controller", 0));
    values.push(git_repository("flux-system", SHA));
    values.push(kustomization("apps", &[]));
    let run = run_with(
        &values,
        &[listed(ClusterInfo::default())],
        &[domain()],
        &Default::default(),
    );
    let member = run.verdict("Kustomization", "flux-system", "apps");
    assert_eq!(member.state, State::Unverifiable, "{}", member.reason);
    let controller = run.verdict("Deployment", "flux-system", "kustomize-controller");
    assert!(controller.state.is_problem(), "{:?}", controller.state);
    let [cell] = run.evaluation.domains.as_slice() else {
        panic!("one cell")
    };
    assert_eq!(cell.state, controller.state, "the known problem, not grey");
    assert!(!cell.fully_healthy);
}
