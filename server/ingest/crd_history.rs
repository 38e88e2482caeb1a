//! Who provided each CRD, as last seen: loaded from the store once, handed to the engine with
//! every evaluation (so a consumer of a vanished CRD can name the stack that removed it), and
//! kept current from each evaluation's providers.

use crate::health::{ClusterInfo, CrdProvider, FormerCrdProvider};
use crate::store::Store;
use chrono::{DateTime, TimeDelta, Utc};
use std::collections::HashMap;

/// A provider still present is re-recorded this often, so "last seen" stays close to the truth.
const REFRESH: TimeDelta = TimeDelta::minutes(1);

#[derive(Debug, Default)]
pub struct CrdHistory {
    loaded: bool,
    /// (cluster, group, kind) → the provider as last seen.
    known: HashMap<(String, String, String), FormerCrdProvider>,
}

impl CrdHistory {
    /// Reads the stored history the first time it is needed; a database outage leaves it empty
    /// (and retried next round) rather than stopping the collector.
    pub async fn load_once(&mut self, store: &Store) {
        if self.loaded {
            return;
        }
        match store.crd_provider_history().await {
            Ok(rows) => {
                for (cluster, former) in rows {
                    let key = (cluster, former.group.clone(), former.kind.clone());
                    self.known.entry(key).or_insert(former);
                }
                self.loaded = true;
            }
            Err(error) => tracing::warn!(%error, "cannot read the CRD provider history yet"),
        }
    }

    /// Gives each cluster the providers last seen on it. One pass over the history, not one
    /// per cluster: at a thousand clusters that was clusters × providers comparisons a round.
    pub fn inject(&self, clusters: &mut [ClusterInfo]) {
        let mut by_cluster: HashMap<&str, Vec<FormerCrdProvider>> = HashMap::new();
        for ((cluster, ..), former) in &self.known {
            by_cluster
                .entry(cluster.as_str())
                .or_default()
                .push(former.clone());
        }
        for info in clusters {
            let mut former = by_cluster.remove(info.name.as_str()).unwrap_or_default();
            // In a fixed order, so an unchanged history is an unchanged input.
            former.sort_by(|a, b| (&a.group, &a.kind).cmp(&(&b.group, &b.kind)));
            info.former_crd_providers = former;
        }
    }

    /// Takes in the providers seen now; returns those to record (new, changed or due a refresh).
    pub fn observe<'a>(
        &mut self,
        providers: impl IntoIterator<Item = &'a CrdProvider>,
        now: DateTime<Utc>,
    ) -> Vec<CrdProvider> {
        let mut to_record = Vec::new();
        for provider in providers {
            let key = (
                provider.cluster.clone(),
                provider.group.clone(),
                provider.kind.clone(),
            );
            let due = self.known.get(&key).is_none_or(|known| {
                known.provider != provider.provider
                    || known.crd != provider.crd
                    || now - known.last_seen >= REFRESH
            });
            if due {
                self.known.insert(
                    key,
                    FormerCrdProvider {
                        group: provider.group.clone(),
                        kind: provider.kind.clone(),
                        crd: provider.crd.clone(),
                        provider: provider.provider.clone(),
                        last_seen: now,
                    },
                );
                to_record.push(provider.clone());
            }
        }
        to_record
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Kind, ObjectId};

    fn provider(by: &str) -> CrdProvider {
        CrdProvider {
            cluster: "dev-1".into(),
            group: "ratelimit.solo.io".into(),
            kind: "RateLimitConfig".into(),
            crd: "ratelimitconfigs.ratelimit.solo.io".into(),
            provider: ObjectId::new("dev-1", Kind::HelmRelease, "gateway", by),
        }
    }

    #[test]
    fn providers_are_recorded_when_new_changed_or_due_and_remembered_after_they_vanish() {
        let mut history = CrdHistory::default();
        let now = Utc::now();
        assert_eq!(history.observe(&[provider("a")], now).len(), 1);
        assert!(
            history
                .observe(&[provider("a")], now + TimeDelta::seconds(5))
                .is_empty()
        );
        assert_eq!(
            history
                .observe(&[provider("b")], now + TimeDelta::seconds(6))
                .len(),
            1
        );
        assert_eq!(
            history
                .observe(&[provider("b")], now + TimeDelta::minutes(2))
                .len(),
            1
        );
        // Gone from the evaluation: still known, for the engine to name.
        assert!(history.observe(&[], now + TimeDelta::minutes(3)).is_empty());
        let mut clusters = vec![ClusterInfo {
            name: "dev-1".into(),
            ..ClusterInfo::default()
        }];
        history.inject(&mut clusters);
        assert_eq!(
            clusters[0].former_crd_providers[0].provider.as_str(),
            "dev-1/HelmRelease/gateway/b"
        );
    }
}
