//! One alert per incident: the root causes an evaluation names, grouped by incident key (the
//! same key `/` and `/problems` group by), and an open alert's members brought up to date —
//! the clusters this round evaluated as it saw them, the others as last stored (another
//! collector evaluates those).

use super::Candidate;
use super::rules::Policy;
use crate::config::AlertRule;
use crate::incidents::key_of;
use std::collections::{BTreeMap, BTreeSet};

/// The same cause on every cluster it hits: what one alert is about.
#[derive(Debug, Clone, PartialEq)]
pub struct CauseGroup {
    pub key: String,
    /// Never empty; the order clusters joined in.
    pub members: Vec<Candidate>,
}

impl CauseGroup {
    /// A cause on one cluster, alone.
    pub fn single(candidate: Candidate) -> CauseGroup {
        CauseGroup {
            key: key_of(candidate.verdict.id.as_str(), &candidate.cause),
            members: vec![candidate],
        }
    }

    /// The most severe rule any member matches (the incident pages as its worst cluster
    /// does; among equals, the rule listed first).
    pub fn rule<'p>(&self, policy: &'p Policy) -> Option<&'p AlertRule> {
        self.members
            .iter()
            .filter_map(|m| policy.rule_for(m))
            .min_by_key(|rule| rule.severity)
    }
}

/// The causes some rule covers, by incident key, each group's clusters in name order.
pub fn by_incident(causes: Vec<Candidate>, policy: &Policy) -> BTreeMap<String, Vec<Candidate>> {
    let mut groups: BTreeMap<String, Vec<Candidate>> = BTreeMap::new();
    for cause in causes.into_iter().filter(|c| policy.rule_for(c).is_some()) {
        let key = key_of(cause.verdict.id.as_str(), &cause.cause);
        groups.entry(key).or_default().push(cause);
    }
    for members in groups.values_mut() {
        members.sort_by(|a, b| a.verdict.cluster.cmp(&b.verdict.cluster));
    }
    groups
}

/// An open alert's members after this round: stored members on clusters this round did not
/// evaluate stay; on the clusters it did, what it saw replaces them (a cluster whose cause is
/// gone has left). Clusters keep the order they joined in; labels come from the config.
pub fn merged(
    stored: &[Candidate],
    seen: Vec<Candidate>,
    covered: &BTreeSet<String>,
    labels: &BTreeMap<String, BTreeMap<String, String>>,
) -> Vec<Candidate> {
    let mut seen: BTreeMap<String, Candidate> = seen
        .into_iter()
        .map(|c| (c.verdict.cluster.clone(), c))
        .collect();
    let mut members: Vec<Candidate> = stored
        .iter()
        .filter_map(|m| match seen.remove(&m.verdict.cluster) {
            Some(now) => Some(now),
            None if covered.contains(&m.verdict.cluster) => None,
            None => Some(m.clone()),
        })
        .collect();
    members.extend(seen.into_values());
    for member in &mut members {
        member.cluster_labels = labels
            .get(&member.verdict.cluster)
            .cloned()
            .unwrap_or_default();
    }
    members
}

/// The key an open alert whose own key no group has moves to: the group that holds one of its
/// root causes, unless another open alert has that key. So an alert stays the same alert when
/// its cause's reason changes words (and alerts stored before incidents, keyed by root cause,
/// carry on instead of resolving and paging again).
pub fn adopted_key(
    root_causes: &[&str],
    groups: &BTreeMap<String, Vec<Candidate>>,
    held: &BTreeSet<String>,
) -> Option<String> {
    groups
        .iter()
        .filter(|(key, _)| !held.contains(*key))
        .find(|(_, members)| {
            members
                .iter()
                .any(|m| root_causes.contains(&m.verdict.id.as_str()))
        })
        .map(|(key, _)| key.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AlertsConfig;
    use crate::health::{Cause, CauseCode, State};
    use crate::model::ObjectId;
    use crate::store::ObjectVerdict;

    /// A Flux failure the engine names by the controller's `reason`.
    fn cause(cluster: &str, reason: &str) -> Candidate {
        Candidate {
            cause: Cause::new(CauseCode::FluxFailure).with("reason", reason),
            verdict: ObjectVerdict::new(
                format!("{cluster}/Deployment/flux-system/tofu-controller")
                    .parse::<ObjectId>()
                    .unwrap(),
                State::Failed,
                None,
                reason.into(),
                String::new(),
            ),
            affected_count: 1,
            affected_sample: Vec::new(),
            domains: Vec::new(),
            cluster_labels: Default::default(),
        }
    }

    fn clusters(members: &[Candidate]) -> Vec<&str> {
        members.iter().map(|m| m.verdict.cluster.as_str()).collect()
    }

    #[test]
    fn the_same_cause_on_two_clusters_is_one_group() {
        let policy = Policy::from_config(&AlertsConfig::default());
        let groups = by_incident(
            vec![
                cause("prod-eu-2", "ImagePullBackOff"),
                cause("prod-eu-1", "ImagePullBackOff"),
                cause("dev-1", "CrashLoopBackOff"),
            ],
            &policy,
        );
        let sizes: Vec<Vec<&str>> = groups.values().map(|m| clusters(m)).collect();
        assert_eq!(sizes.len(), 2, "{groups:#?}");
        assert!(sizes.contains(&vec!["prod-eu-1", "prod-eu-2"]));
    }

    /// Issue 46: the restart count in a crash loop's reason differs per cluster and grows;
    /// one crash loop on two clusters is one alert.
    #[test]
    fn one_crash_loop_with_different_restart_counts_is_one_alert() {
        let policy = Policy::from_config(&AlertsConfig::default());
        let crash_loop = |cluster: &str, restarts: u32| Candidate {
            cause: Cause::new(CauseCode::CrashLoop)
                .with("container", "manager")
                .with("exit", "Error"),
            ..cause(
                cluster,
                &format!(
                    "1/1 pods failing: pod tofu-controller-7d9f8b6c5-x2k4q: CrashLoopBackOff: manager, {restarts} restarts"
                ),
            )
        };
        let groups = by_incident(vec![crash_loop("a", 4), crash_loop("b", 57)], &policy);
        let members: Vec<Vec<&str>> = groups.values().map(|m| clusters(m)).collect();
        assert_eq!(members, [vec!["a", "b"]], "{groups:#?}");
    }

    #[test]
    fn members_on_clusters_not_evaluated_stay_and_the_rest_follow_the_round() {
        let stored = vec![cause("a", "x"), cause("b", "x"), cause("c", "x")];
        let covered: BTreeSet<String> = ["a", "c", "d"].map(String::from).into();
        let merged = merged(
            &stored,
            vec![cause("d", "x"), cause("a", "x")],
            &covered,
            &BTreeMap::new(),
        );
        assert_eq!(clusters(&merged), ["a", "b", "d"], "c left, d joined");
    }

    #[test]
    fn an_alert_keeps_its_cause_when_the_reason_changes_words() {
        let groups: BTreeMap<String, Vec<Candidate>> =
            [("new".to_string(), vec![cause("a", "y")])].into();
        let id = "a/Deployment/flux-system/tofu-controller";
        assert_eq!(
            adopted_key(&[id], &groups, &BTreeSet::new()),
            Some("new".into())
        );
        let held: BTreeSet<String> = ["new".to_string()].into();
        assert_eq!(adopted_key(&[id], &groups, &held), None);
    }
}
