//! Grouping root causes into incidents, their order, and what resolved ones leave behind.

use super::*;
use crate::health::{Cause as Why, CauseCode, Untrusted};
use chrono::TimeDelta;

fn ago(minutes: i64) -> Option<DateTime<Utc>> {
    Some(DateTime::from_timestamp(1_800_000_000, 0).unwrap() - TimeDelta::minutes(minutes))
}

/// A container of the cause's pods waiting for `reason`, as the engine names it.
fn waiting(reason: &str) -> Why {
    Why::new(CauseCode::ContainerWaiting)
        .with("container", "manager")
        .with("reason", reason)
}

fn cause(id: &str, ring: &str, reason: &str, affected: &[&str], blocks: &[&str]) -> Cause {
    Cause {
        id: id.to_string(),
        cluster: id.split('/').next().unwrap().to_string(),
        group: ring.to_string(),
        state: State::Failed,
        since: ago(10),
        cause: waiting("ImagePullBackOff"),
        reason: reason.to_string(),
        affected: affected.iter().map(|a| a.to_string()).collect(),
        blocks: blocks
            .iter()
            .map(|d| DomainVersion {
                domain: d.to_string(),
                version: Some("1.0.0".to_string()),
                offered: None,
            })
            .collect(),
    }
}

fn rings() -> RingOrder {
    RingOrder::new(&["prod".to_string(), "staging".to_string(), "dev".to_string()])
}

const TOFU: &str = "Deployment/flux-system/tofu-controller";

fn tofu(cluster: &str, pod: &str) -> Cause {
    let id = format!("{cluster}/{TOFU}");
    let reason = format!("1/1 pods failing: pod {pod}: ImagePullBackOff");
    let terraform = format!("{cluster}/Terraform/flux-system/nlb");
    cause(&id, "prod", &reason, &[&id, &terraform], &["networking"])
}

/// The engine's root cause for a cluster whose API server stopped answering, as it words
/// and names it (health/clusters.rs `data_problem`).
fn stale(cluster: &str, error: &str) -> Cause {
    let id = format!("{cluster}/Cluster//{cluster}");
    let why = Untrusted::Unreachable(error.to_string());
    Cause {
        state: State::Stale,
        cause: why.cause(),
        ..cause(&id, "prod", &why.reason(cluster), &[&id], &[])
    }
}

#[test]
fn clusters_unreachable_for_the_same_reason_are_one_incident() {
    let causes = [
        stale("prod-eu-2", "connection refused"),
        stale("prod-eu-1", "connection refused"),
        stale("prod-us-1", "connection refused"),
        stale("dev-1", "401 Unauthorized: credentials rejected"),
    ];
    let incidents = group(&causes, &rings());
    assert_eq!(incidents.len(), 2, "{incidents:#?}");
    let refused = &incidents[0];
    assert_eq!(refused.clusters, ["prod-eu-1", "prod-eu-2", "prod-us-1"]);
    assert_eq!(
        refused.root_causes,
        [
            "prod-eu-1/Cluster//prod-eu-1",
            "prod-eu-2/Cluster//prod-eu-2",
            "prod-us-1/Cluster//prod-us-1"
        ]
    );
    assert_eq!((refused.state, refused.affected_total), (State::Stale, 3));
    assert_eq!(incidents[1].clusters, ["dev-1"]);
    let failed = waiting("ImagePullBackOff");
    assert_ne!(
        key_of("a/Deployment/x/a", &failed),
        key_of("b/Deployment/x/b", &failed),
        "only a cluster that is itself the cause loses its name"
    );
}

#[test]
fn the_same_cause_on_two_clusters_is_one_incident_listing_both() {
    let causes = [
        tofu("prod-eu-2", "tofu-controller-5c8dd4f7b9-mz9wd"),
        tofu("prod-eu-1", "tofu-controller-7d9f8b6c5-x2k4q"),
    ];
    let incidents = group(&causes, &rings());
    assert_eq!(incidents.len(), 1);
    let one = &incidents[0];
    assert_eq!(one.clusters, ["prod-eu-1", "prod-eu-2"]);
    assert_eq!(
        one.root_causes,
        [format!("prod-eu-1/{TOFU}"), format!("prod-eu-2/{TOFU}")]
    );
    assert_eq!(
        (one.kind.as_str(), one.namespace.as_str(), one.name.as_str()),
        ("Deployment", "flux-system", "tofu-controller")
    );
    assert_eq!(one.affected_total, 4);
    assert_eq!(
        one.domains.len(),
        1,
        "networking 1.0.0 once, not per cluster"
    );
    assert!(one.key.starts_with(TOFU));
}

/// Issue 46: one crash loop on two clusters whose pods have restarted a different number of
/// times (`health/pods.rs` writes "…, N restarts") is one incident, not one per count.
#[test]
fn one_crash_loop_with_different_restart_counts_is_one_incident() {
    let crash_loop = |cluster: &str, pod: &str, restarts: u32| Cause {
        cause: Why::new(CauseCode::CrashLoop)
            .with("container", "manager")
            .with("exit", "Error"),
        ..cause(
            &format!("{cluster}/{TOFU}"),
            "prod",
            &format!("1/1 pods failing: pod {pod}: CrashLoopBackOff: manager, {restarts} restarts"),
            &[],
            &[],
        )
    };
    let causes = [
        crash_loop("prod-eu-1", "tofu-controller-7d9f8b6c5-x2k4q", 7),
        crash_loop("prod-eu-2", "tofu-controller-5c8dd4f7b9-mz9wd", 112),
    ];
    let incidents = group(&causes, &rings());
    assert_eq!(incidents.len(), 1, "{incidents:#?}");
    assert_eq!(incidents[0].clusters, ["prod-eu-1", "prod-eu-2"]);
}

#[test]
fn a_different_cause_or_a_different_object_is_another_incident() {
    let oom = "1/1 pods failing: pod tofu-controller-5c8dd4f7b9-mz9wd: OOMKilled";
    let causes = [
        tofu("prod-eu-1", "tofu-controller-7d9f8b6c5-x2k4q"),
        Cause {
            cause: oom_or_pulls(oom),
            ..cause(&format!("prod-eu-2/{TOFU}"), "prod", oom, &[], &[])
        },
        cause(
            "prod-eu-2/Deployment/flux-system/source-controller",
            "prod",
            "1/1 pods failing: pod source-controller-5c8dd4f7b9-mz9wd: ImagePullBackOff",
            &[],
            &[],
        ),
    ];
    let incidents = group(&causes, &rings());
    assert_eq!(incidents.len(), 3);
    assert!(incidents.iter().all(|i| i.clusters.len() == 1));
}

#[test]
fn the_worst_state_and_the_earliest_start_speak_for_the_incident() {
    let mut stale = tofu("prod-eu-1", "tofu-controller-7d9f8b6c5-x2k4q");
    stale.state = State::Stale;
    stale.since = ago(60);
    let failed = tofu("prod-eu-2", "tofu-controller-5c8dd4f7b9-mz9wd");
    let incidents = group(&[stale, failed], &rings());
    assert_eq!(incidents[0].state, State::Failed);
    assert_eq!(incidents[0].since, ago(60));
}

#[test]
fn incidents_are_ordered_by_ring_then_domains_then_objects_then_age() {
    let dev_big = cause(
        "dev-1/Kustomization/apps/big",
        "dev",
        "x",
        &["a", "b", "c", "d"],
        &["gateway", "tenants"],
    );
    let prod_small = cause("prod-1/Kustomization/apps/small", "prod", "x", &["a"], &[]);
    let staging_two_domains = cause(
        "staging-1/Kustomization/apps/two",
        "staging",
        "x",
        &["a"],
        &["gateway", "tenants"],
    );
    let staging_one_domain_many = cause(
        "staging-1/Kustomization/apps/many",
        "staging",
        "x",
        &["a", "b", "c"],
        &["gateway"],
    );
    let staging_one_domain_few_old = {
        let mut c = cause(
            "staging-1/Kustomization/apps/old",
            "staging",
            "x",
            &["a"],
            &["gateway"],
        );
        c.since = ago(500);
        c
    };
    let staging_one_domain_few_new = cause(
        "staging-1/Kustomization/apps/new",
        "staging",
        "x",
        &["a"],
        &["gateway"],
    );
    let unlisted_ring = cause("lab-1/Kustomization/apps/lab", "lab", "x", &["a", "b"], &[]);
    let incidents = group(
        &[
            unlisted_ring,
            dev_big,
            staging_one_domain_few_new,
            staging_one_domain_many,
            prod_small,
            staging_one_domain_few_old,
            staging_two_domains,
        ],
        &rings(),
    );
    let names: Vec<&str> = incidents.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["small", "two", "many", "old", "new", "big", "lab"]);
}

#[test]
fn an_incident_ranks_by_its_highest_ring_and_lists_that_ring_first() {
    let rs = "1/1 pods failing: pod x-5c8dd4f7b9-mz9wd: ImagePullBackOff";
    let id = |c: &str| format!("{c}/Deployment/apps/x");
    let incidents = group(
        &[
            cause(&id("dev-1"), "dev", rs, &[], &[]),
            cause(&id("prod-1"), "prod", rs, &[], &[]),
            cause(
                "staging-1/Deployment/apps/y",
                "staging",
                "x",
                &["a", "b"],
                &["g"],
            ),
        ],
        &rings(),
    );
    assert_eq!(incidents[0].clusters, ["prod-1", "dev-1"]);
    assert_eq!(incidents[1].name, "y");
}

#[test]
fn each_affected_object_counts_once_and_causes_count_themselves() {
    let a = ["c/K/n/cause-a".to_string(), "c/K/n/shared".to_string()];
    let b = ["c/K/n/cause-b".to_string(), "c/K/n/shared".to_string()];
    assert_eq!(affected_total([a.as_slice(), b.as_slice()]), 3);
    assert_eq!(affected_total(std::iter::empty::<&[String]>()), 0);
}

#[test]
fn resolved_causes_group_like_active_ones_and_leave_out_what_is_active_again() {
    let at = |minutes| ago(minutes).unwrap();
    let resolved = |cluster: &str, reason: &str, minutes| ResolvedCause {
        id: format!("{cluster}/{TOFU}"),
        cluster: cluster.to_string(),
        state: State::Failed,
        since: ago(90),
        cause: oom_or_pulls(reason),
        reason: reason.to_string(),
        resolved_at: at(minutes),
    };
    let pulls = |pod: &str| format!("1/1 pods failing: pod {pod}: ImagePullBackOff");
    let oom = "1/1 pods failing: pod tofu-controller-5c8dd4f7b9-mz9wd: OOMKilled";
    let cleared = [
        resolved("prod-eu-1", &pulls("tofu-controller-7d9f8b6c5-x2k4q"), 30),
        resolved("prod-eu-2", &pulls("tofu-controller-5c8dd4f7b9-mz9wd"), 20),
        resolved("prod-eu-2", &pulls("tofu-controller-5c8dd4f7b9-mz9wd"), 50),
        resolved("prod-eu-1", oom, 5),
    ];
    let listed = recently_resolved(&cleared, []);
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].reason, oom, "newest first");
    assert_eq!(listed[1].clusters, ["prod-eu-1", "prod-eu-2"]);
    assert_eq!(listed[1].resolved_at, at(20));

    let active = group(
        &[Cause {
            cause: oom_or_pulls(oom),
            ..cause(&format!("prod-eu-3/{TOFU}"), "prod", oom, &[], &[])
        }],
        &rings(),
    );
    let listed = recently_resolved(&cleared, active.iter().map(|i| i.key.as_str()));
    assert_eq!(
        listed.len(),
        1,
        "the OOM incident is active again on prod-eu-3"
    );
    assert!(listed[0].reason.contains("ImagePullBackOff"));
}

/// The cause the engine names for the words these tests give.
fn oom_or_pulls(reason: &str) -> Why {
    if reason.contains("OOMKilled") {
        Why::new(CauseCode::CrashLoop)
            .with("container", "manager")
            .with("exit", "OOMKilled")
    } else {
        waiting("ImagePullBackOff")
    }
}
