//! From an evaluation to the root causes the alerts consider, each with its cluster's labels,
//! the domains it blocks and a sample of what it affects.

use super::Candidate;
use crate::health::{Parts, cluster_id};
use crate::store::ObjectVerdict;
use std::collections::{BTreeMap, BTreeSet};

/// How many affected objects a message names; the count says the rest.
pub const SAMPLE: usize = 5;

/// The root causes worth alerting on, and the clusters the evaluation covered (an alert on a
/// covered cluster whose root cause is absent has cleared; other clusters' alerts belong to
/// whichever collector evaluates them). A cluster whose data cannot be trusted (the cluster
/// itself a root cause) covers nothing: what was open there is not known to have cleared.
/// Reads the evaluation's parts in place: nothing is copied but what the candidates say.
pub fn candidates(
    evaluation: &impl Parts,
    cluster_labels: &BTreeMap<String, BTreeMap<String, String>>,
) -> (Vec<Candidate>, BTreeSet<String>) {
    let mut covered: BTreeSet<String> = BTreeSet::new();
    for part in evaluation.parts() {
        let clusters = part.objects.iter().map(|v| v.cluster.as_str());
        for cluster in clusters.chain(part.domains.iter().map(|d| d.cluster.as_str())) {
            // A part is mostly one cluster: one copy each, not one per object.
            if !covered.contains(cluster) {
                covered.insert(cluster.to_string());
            }
        }
    }
    let causes = evaluation
        .root_causes()
        .into_iter()
        .filter(|cause| super::alertable(cause.state))
        .map(|cause| {
            let id = cause.id.as_str();
            let cluster = cause
                .id
                .parts()
                .map_or(id, |(cluster, ..)| cluster)
                .to_string();
            covered.insert(cluster.clone());
            let domains: BTreeSet<String> = evaluation
                .parts()
                .flat_map(|part| &part.domains)
                .filter(|d| d.blockers.contains(&cause.id))
                .map(|d| d.domain.clone())
                .collect();
            let verdict = ObjectVerdict::new(
                cause.id.clone(),
                cause.state,
                cause.since,
                cause.reason.clone(),
                cause.message.clone(),
            );
            Candidate {
                cluster_labels: cluster_labels.get(&cluster).cloned().unwrap_or_default(),
                verdict: ObjectVerdict { cluster, ..verdict },
                cause: cause.cause.clone(),
                affected_count: cause.affected.len(),
                affected_sample: cause
                    .affected
                    .iter()
                    .filter(|a| **a != cause.id)
                    .take(SAMPLE)
                    .map(|a| a.to_string())
                    .collect(),
                domains: domains.into_iter().collect(),
            }
        })
        .collect();
    for cause in evaluation.parts().flat_map(|part| &part.root_causes) {
        if let Some((cluster, ..)) = cause.id.parts()
            && cause.id == cluster_id(cluster)
        {
            covered.remove(cluster);
        }
    }
    (causes, covered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::ClusterInfo;
    use crate::health::testkit::{evaluate_on, git_repository, kustomization, now};

    /// Two clusters, both holding a failing-free pair; `b`'s data cannot be trusted.
    fn covered_with_b(b: ClusterInfo) -> BTreeSet<String> {
        let a = ClusterInfo {
            name: "a".into(),
            last_good: Some(now()),
            ..ClusterInfo::default()
        };
        let placed: Vec<(&str, serde_json::Value)> = ["a", "b"]
            .into_iter()
            .flat_map(|c| {
                [
                    (c, git_repository("flux-system", "main@sha1:1111111")),
                    (c, kustomization("apps", &[])),
                ]
            })
            .collect();
        let evaluation = evaluate_on(&placed, &[a, b], &[], &Default::default());
        candidates(&evaluation, &BTreeMap::new()).1
    }

    #[test]
    fn a_cluster_whose_data_cannot_be_trusted_covers_nothing_so_its_alerts_stay_open() {
        let listed = ClusterInfo {
            name: "b".into(),
            last_good: Some(now()),
            ..ClusterInfo::default()
        };
        assert!(covered_with_b(listed).contains("b"), "the control");
        let not_listed = ClusterInfo {
            name: "b".into(),
            ..ClusterInfo::default()
        };
        let covered = covered_with_b(not_listed);
        assert!(covered.contains("a"));
        assert!(!covered.contains("b"), "{covered:?}");
    }
}
