//! The demo fleet as a source: once a second it computes the world as of now and sends what
//! changed since the last second, through the same events the kube watchers send.

use super::warnings::warnings_of;
use super::{DEMO_CLUSTERS, DEMO_DOMAINS_YAML, world};
use crate::config::{ClusterConfig, Config};
use crate::health::DomainSpec;
use crate::model::{ObjectId, parse_object};
use crate::sources::{ClusterSet, Collect, EventSender, SourceEvent};
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// Fills in the demo clusters and domains where the config has none of its own.
pub fn apply_to_config(config: &mut Config) {
    if config.clusters.is_empty() {
        config.clusters = DEMO_CLUSTERS
            .iter()
            .map(|cluster| ClusterConfig {
                name: cluster.name.to_string(),
                kubeconfig: None,
                context: None,
                in_cluster: false,
                labels: cluster
                    .labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            })
            .collect();
    }
    if config.domains.is_empty() {
        config.domains = demo_domains();
    }
}

pub fn demo_domains() -> Vec<DomainSpec> {
    crate::yaml::from_str(DEMO_DOMAINS_YAML).unwrap_or_else(|error| {
        tracing::error!(%error, "the built-in demo domains do not parse");
        Vec::new()
    })
}

/// Sends the changes of the demo clusters in `collect` once a second, until the receiver or
/// `collect`'s sender is gone.
pub async fn run(mut collect: Collect, sender: EventSender) {
    let started = Utc::now();
    let mut differ = WorldDiff::default();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            // A cluster just adopted is sent at once rather than at the next tick.
            changed = collect.changed() => if changed.is_err() { return },
        }
        differ.collect_only(&collect.borrow_and_update());
        for event in differ.step(started, Utc::now()) {
            if sender.send(event).await.is_err() {
                return;
            }
        }
    }
}

/// Remembers the last world so each step sends only differences.
#[derive(Default)]
pub struct WorldDiff {
    previous: HashMap<ObjectId, Value>,
    /// The clusters sent; every demo cluster when `None`.
    only: Option<ClusterSet>,
}

impl WorldDiff {
    /// Sends only these clusters from now on. One left out is forgotten, so when it comes back
    /// (its lease won again) the next step sends it whole, as a watcher's first list would.
    pub fn collect_only(&mut self, clusters: &ClusterSet) {
        self.previous
            .retain(|id, _| id.parts().is_some_and(|(c, ..)| clusters.contains(c)));
        self.only = Some(clusters.clone());
    }

    fn sends(&self, cluster: &str) -> bool {
        self.only.as_ref().is_none_or(|only| only.contains(cluster))
    }

    pub fn step(&mut self, started: DateTime<Utc>, now: DateTime<Utc>) -> Vec<SourceEvent> {
        let mut events = Vec::new();
        let mut seen = HashSet::new();
        for (cluster, value) in world(started, now) {
            if !self.sends(&cluster) {
                continue;
            }
            match parse_object(&cluster, &value) {
                Ok(object) => {
                    let id = object.id();
                    if self.previous.get(&id) != Some(&value) {
                        events.push(SourceEvent::Apply(Box::new(object)));
                        // What the kubelet and the controllers would say of it, as it changes.
                        events.extend(
                            warnings_of(&cluster, &value, now)
                                .into_iter()
                                .map(|w| SourceEvent::Warning(Box::new(w))),
                        );
                        self.previous.insert(id.clone(), value);
                    }
                    seen.insert(id);
                }
                Err(skip) => tracing::warn!(%cluster, %skip, "demo object skipped"),
            }
        }
        let gone: Vec<ObjectId> = self
            .previous
            .keys()
            .filter(|id| !seen.contains(*id))
            .cloned()
            .collect();
        for id in gone {
            self.previous.remove(&id);
            events.push(SourceEvent::Delete(id));
        }
        events.extend(
            DEMO_CLUSTERS
                .iter()
                .filter(|cluster| self.sends(cluster.name))
                .map(|cluster| SourceEvent::ClusterAlive {
                    cluster: cluster.name.to_string(),
                    at: now,
                }),
        );
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_config_has_the_clusters_and_domains_it_promises() {
        let mut config = Config::default();
        apply_to_config(&mut config);
        assert!(config.clusters.len() >= 3);
        assert_eq!(
            demo_domains().len(),
            DEMO_DOMAINS_YAML.matches("- name:").count()
        );
        assert!(config.domains.len() >= 4);
    }

    #[test]
    fn each_step_sends_only_what_changed() {
        let started = Utc::now();
        let mut diff = WorldDiff::default();
        let first = diff.step(started, started);
        let applies = |events: &[SourceEvent]| {
            events
                .iter()
                .filter(|e| matches!(e, SourceEvent::Apply(_)))
                .count()
        };
        assert!(
            applies(&first) > 100,
            "the first step sends the whole fleet"
        );
        let again = diff.step(started, started);
        assert_eq!(applies(&again), 0, "nothing changed, nothing sent");
        assert!(
            again
                .iter()
                .all(|e| matches!(e, SourceEvent::ClusterAlive { .. }))
        );
    }

    #[test]
    fn a_cluster_not_collected_is_not_sent_and_is_sent_whole_once_collected_again() {
        let started = Utc::now();
        let clusters_in = |events: &[SourceEvent]| -> ClusterSet {
            events.iter().map(|e| e.cluster().to_string()).collect()
        };
        let whole = WorldDiff::default().step(started, started);
        let of_dev = |events: &[SourceEvent]| {
            events
                .iter()
                .filter(|e| matches!(e, SourceEvent::Apply(o) if o.cluster == "dev-1"))
                .count()
        };
        let mut diff = WorldDiff::default();
        let prod: ClusterSet = ["prod-eu-1".to_string()].into();
        diff.collect_only(&prod);
        assert_eq!(clusters_in(&diff.step(started, started)), prod);
        let both: ClusterSet = ["dev-1".to_string(), "prod-eu-1".to_string()].into();
        diff.collect_only(&both);
        let adopted = diff.step(started, started);
        assert_eq!(of_dev(&adopted), of_dev(&whole), "dev-1 arrives whole");
        assert!(
            !adopted
                .iter()
                .any(|e| matches!(e, SourceEvent::Apply(o) if o.cluster == "prod-eu-1")),
            "prod-eu-1 was sent already"
        );
        diff.collect_only(&prod);
        diff.collect_only(&both);
        assert_eq!(
            of_dev(&diff.step(started, started)),
            of_dev(&whole),
            "dropped and adopted again: dev-1 arrives whole again"
        );
    }
}

/// The demo's standing incidents, read by the real engine: each has the root cause the seeds
/// describe, in the state words of DESIGN.md.
#[cfg(test)]
mod verdict_tests {
    use crate::health::{Input, State, Thresholds, evaluate};
    use crate::model::{ObjectId, parse_object};
    use chrono::{TimeDelta, Utc};

    #[test]
    fn the_engine_names_each_standing_incident() {
        let started = Utc::now();
        let now = started + TimeDelta::seconds(100);
        let objects: Vec<_> = super::world(started, now)
            .iter()
            .filter_map(|(cluster, value)| parse_object(cluster, value).ok())
            .collect();
        let domains = super::demo_domains();
        let evaluation = evaluate(&Input {
            objects: &objects,
            clusters: &[],
            domains: &domains,
            thresholds: &Thresholds::default(),
            now,
            seen_in_progress: &Default::default(),
        });
        let verdict = |id: &str| {
            evaluation
                .objects
                .iter()
                .find(|v| v.id.as_str() == id)
                .unwrap_or_else(|| panic!("no verdict for {id}"))
        };
        let id = |s: &str| s.parse::<ObjectId>().unwrap();
        let tofu = "prod-eu-1/Deployment/flux-system/tofu-controller";
        let terraform = verdict("prod-eu-1/Terraform/flux-system/nlb-security-groups");
        assert_eq!(terraform.state, State::Unverifiable);
        assert_eq!(terraform.root_causes, vec![id(tofu)]);
        assert_eq!(
            verdict("prod-eu-1/Kustomization/tenants/tenants").state,
            State::Blocked
        );
        assert!(verdict(tofu).reason.contains("ImagePullBackOff"));

        let netop = verdict("dev-1/HelmRelease/networking/netop");
        assert_eq!(
            netop.state,
            State::Degraded,
            "Ready=True while its pods crash-loop"
        );
        assert_eq!(
            netop.root_causes,
            vec![id("dev-1/Deployment/networking/netop")]
        );

        let forbidden = verdict("staging-1/Kustomization/flux-system/gateway-config");
        assert_eq!(forbidden.state, State::Failed);
        assert!(
            forbidden.reason.contains("RBAC Forbidden"),
            "{}",
            forbidden.reason
        );
        assert_eq!(
            verdict("staging-1/Kustomization/flux-system/gateway").state,
            State::Blocked
        );

        let stuck = verdict("prod-us-1/Kustomization/flux-system/observability");
        assert_eq!(stuck.state, State::Stuck);

        let denied = verdict("prod-us-1/Kustomization/flux-system/gateway-edge");
        assert_eq!(
            denied.state,
            State::Failed,
            "phase 100 is inside the denial window"
        );
        assert!(
            denied.reason.contains("admission denied"),
            "{}",
            denied.reason
        );

        let unhealthy_domains = evaluation
            .domains
            .iter()
            .filter(|d| !d.fully_healthy)
            .count();
        assert!(unhealthy_domains >= 4, "{:?}", evaluation.domains);
    }
}
