//! Which rule (if any) covers a root cause: the first configured rule whose scope — states,
//! kinds, controllers, cluster labels, domains — matches it.

use super::Candidate;
use crate::config::{AlertRule, AlertsConfig};
use crate::model::controller_of_deployment;
use chrono::TimeDelta;

/// The rules and timers of the lifecycle.
#[derive(Debug, Clone)]
pub struct Policy {
    pub rules: Vec<AlertRule>,
    pub renotify: TimeDelta,
    pub flap_window: TimeDelta,
}

impl Policy {
    pub fn from_config(config: &AlertsConfig) -> Policy {
        Policy {
            rules: config.rules.clone(),
            renotify: config.renotify,
            flap_window: config.flap_window,
        }
    }

    pub fn rule_for(&self, candidate: &Candidate) -> Option<&AlertRule> {
        rule_for(&self.rules, candidate)
    }
}

/// The first of `rules` that covers the root cause, if it is worth an alert at all (the pages
/// show the severity it gives).
pub fn rule_for<'r>(rules: &'r [AlertRule], candidate: &Candidate) -> Option<&'r AlertRule> {
    if !super::alertable(candidate.verdict.state) {
        return None;
    }
    rules.iter().find(|rule| matches(rule, candidate))
}

fn matches(rule: &AlertRule, candidate: &Candidate) -> bool {
    let (kind, name) = (candidate.verdict.kind.as_str(), &candidate.verdict.name);
    (rule.states.is_empty() || rule.states.contains(&candidate.verdict.state))
        && (rule.kinds.is_empty() || rule.kinds.iter().any(|k| k == kind))
        && (!rule.controllers_only
            || (kind == "Deployment" && controller_of_deployment(name).is_some()))
        && rule
            .clusters
            .iter()
            .all(|(key, value)| candidate.cluster_labels.get(key) == Some(value))
        && (rule.domains.is_empty() || rule.domains.iter().any(|d| candidate.domains.contains(d)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::from_yaml_str;
    use crate::health::State;
    use crate::model::ObjectId;
    use crate::store::ObjectVerdict;

    fn cause(id: &str, state: State, ring: &str, domains: &[&str]) -> Candidate {
        Candidate {
            verdict: ObjectVerdict::new(
                id.parse::<ObjectId>().unwrap(),
                state,
                None,
                String::new(),
                String::new(),
            ),
            cause: Default::default(),
            affected_count: 1,
            affected_sample: Vec::new(),
            domains: domains.iter().map(|d| d.to_string()).collect(),
            cluster_labels: [("ring".to_string(), ring.to_string())].into(),
        }
    }

    #[test]
    fn the_first_matching_rule_decides() {
        let config = from_yaml_str(
            "alerts:
  rules:
    - {name: prod-gateway, domains: [gateway], clusters: {ring: prod}, severity: critical}
    - {name: stuck, states: [stuck, stale], for: 30m}
    - {name: clusters, kinds: [Cluster]}
",
        )
        .unwrap();
        let policy = Policy::from_config(&config.alerts);
        let rule = |c: &Candidate| policy.rule_for(c).map(|r| r.name.as_str());
        let gw = "prod-eu-1/Kustomization/flux-system/gateway";
        assert_eq!(
            rule(&cause(gw, State::Failed, "prod", &["gateway"])),
            Some("prod-gateway")
        );
        assert_eq!(rule(&cause(gw, State::Failed, "dev", &["gateway"])), None);
        assert_eq!(
            rule(&cause(gw, State::Stuck, "dev", &["gateway"])),
            Some("stuck")
        );
        let cluster = "dev-1/Cluster//dev-1";
        assert_eq!(
            rule(&cause(cluster, State::Unverifiable, "dev", &[])),
            Some("clusters")
        );
    }

    #[test]
    fn default_rules_single_out_controllers_and_clusters() {
        let policy = Policy::from_config(&AlertsConfig::default());
        let rule = |id: &str| {
            policy
                .rule_for(&cause(id, State::Failed, "prod", &[]))
                .map(|r| (r.name.as_str(), r.for_.num_minutes()))
        };
        assert_eq!(
            rule("p/Deployment/flux-system/kustomize-controller-shard1"),
            Some(("controller-unavailable", 5))
        );
        assert_eq!(
            rule("p/Deployment/networking/netop"),
            Some(("root-cause", 0))
        );
        assert_eq!(rule("p/Cluster//p"), Some(("cluster-not-fresh", 5)));
    }

    #[test]
    fn a_suspension_named_as_a_root_cause_pages_and_work_in_progress_does_not() {
        let policy = Policy::from_config(&AlertsConfig::default());
        let rule = |state| {
            policy
                .rule_for(&cause(
                    "p/Kustomization/flux-system/infra",
                    state,
                    "prod",
                    &[],
                ))
                .map(|r| r.name.as_str())
        };
        assert_eq!(rule(State::Suspended), Some("root-cause"));
        assert_eq!(rule(State::Progressing), None);
        assert_eq!(rule(State::Healthy), None);
    }
}
