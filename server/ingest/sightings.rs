//! When each object was first seen in progress or failed (unsettled): the start of work that
//! carries no start time of its own, or whose own start moves at each attempt. Kept in Postgres (restored when a cluster is taken on), so a restart of the
//! collector does not reopen the window before such work can be called `stuck`. An entry
//! lives while its object is in progress, and goes when the object leaves progress or is gone.

use crate::health::{Evaluation, SeenInProgress, State};
use crate::model::ObjectId;
use crate::store::{ObjectKey, SightingChanges, Store};
use chrono::{DateTime, Utc};
use std::collections::BTreeSet;

#[derive(Debug, Default)]
pub struct Sightings {
    /// Every first sighting known, including restored ones whose object has not arrived yet.
    since: SeenInProgress,
    /// What the store holds, as far as this collector knows.
    stored: SeenInProgress,
    /// Whether the sightings of every cluster were read (without leases).
    loaded_all: bool,
}

impl Sightings {
    /// What the engine is given.
    pub fn seen(&self) -> &SeenInProgress {
        &self.since
    }

    /// Reads every stored sighting the first time it is needed (one collector for the whole
    /// fleet); an outage leaves it for the next round rather than stopping the collector.
    pub async fn load_all_once(&mut self, store: &Store) {
        if !self.loaded_all {
            self.loaded_all = self.restore(store, None).await;
        }
    }

    /// Reads the stored sightings of `cluster` (or of all); false when the store did not answer.
    pub async fn restore(&mut self, store: &Store, cluster: Option<&str>) -> bool {
        match store.seen_in_progress(cluster).await {
            Ok(rows) => {
                for (id, since) in rows {
                    self.stored.insert(id.clone(), since);
                    self.since.entry(id).or_insert(since);
                }
                true
            }
            Err(error) => {
                tracing::warn!(%error, "cannot read when objects were first seen in progress yet");
                false
            }
        }
    }

    /// Forgets a cluster this collector no longer holds (its rows stay for the next holder).
    pub fn forget_cluster(&mut self, cluster: &str) {
        let other = |id: &ObjectId| id.parts().is_none_or(|(c, ..)| c != cluster);
        self.since.retain(|id, _| other(id));
        self.stored.retain(|id, _| other(id));
    }

    /// Takes in the evaluations of the clusters re-evaluated (the others' verdicts did not
    /// change): objects in progress keep their first sighting (now when new), objects out of
    /// progress and objects gone (`deleted`) lose theirs. Returns the clusters whose sightings
    /// of present objects changed: the engine reads them, so those are due again.
    pub fn observe<'a>(
        &mut self,
        evaluations: impl IntoIterator<Item = &'a Evaluation>,
        deleted: &[ObjectKey],
        now: DateTime<Utc>,
    ) -> BTreeSet<String> {
        let mut changed = BTreeSet::new();
        for verdict in evaluations.into_iter().flat_map(|e| &e.objects) {
            // Failed too: a failure retried attempt after attempt is dated by its first sighting.
            let unsettled = matches!(
                verdict.state,
                State::Progressing | State::Stuck | State::Failed
            );
            let moved = if unsettled {
                !self.since.contains_key(&verdict.id)
                    && self.since.insert(verdict.id.clone(), now).is_none()
            } else {
                // Most verdicts are out of progress and few objects are in it: no hashing of
                // every id of every re-evaluated cluster when there is nothing to remove.
                !self.since.is_empty() && self.since.remove(&verdict.id).is_some()
            };
            if moved {
                changed.insert(verdict.cluster.to_string());
            }
        }
        for key in deleted {
            let id = format!(
                "{}/{}/{}/{}",
                key.cluster, key.kind, key.namespace, key.name
            );
            if let Ok(id) = id.parse::<ObjectId>() {
                self.since.remove(&id);
            }
        }
        changed
    }

    /// What to write so the store holds what is known now.
    pub fn changes(&self) -> SightingChanges {
        let upserts = self
            .since
            .iter()
            .filter(|&(id, since)| self.stored.get(id) != Some(since))
            .map(|(id, &since)| (id.clone(), since))
            .collect();
        let deletes = self
            .stored
            .keys()
            .filter(|id| !self.since.contains_key(*id))
            .cloned()
            .collect();
        SightingChanges { upserts, deletes }
    }

    /// Records that `changes` reached the store.
    pub fn written(&mut self, changes: SightingChanges) {
        for id in changes.deletes {
            self.stored.remove(&id);
        }
        self.stored.extend(changes.upserts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::testkit::{
        self, SHA, flux_controllers, git_repository, kustomization, not_ready, now, with_conditions,
    };
    use chrono::TimeDelta;

    fn evaluation(failing: bool) -> Evaluation {
        let mut apps = kustomization("apps", &[]);
        if failing {
            apps = with_conditions(
                apps,
                vec![not_ready("BuildFailed", "kustomize build failed", 1)],
            );
        }
        let mut values = flux_controllers();
        values.extend([git_repository("flux-system", SHA), apps]);
        testkit::run(&values).evaluation
    }

    /// A failure retried attempt after attempt keeps its first sighting (its Ready is rewritten
    /// at each attempt); it goes once the object is healthy again.
    #[test]
    fn a_failed_object_keeps_its_first_sighting_until_it_is_healthy() {
        let id = testkit::id("Kustomization", "flux-system", "apps")
            .parse::<ObjectId>()
            .unwrap();
        let mut sightings = Sightings::default();
        let first = now();
        sightings.observe([&evaluation(true)], &[], first);
        sightings.observe([&evaluation(true)], &[], first + TimeDelta::minutes(5));
        assert_eq!(sightings.seen().get(&id), Some(&first));
        sightings.observe([&evaluation(false)], &[], first + TimeDelta::minutes(6));
        assert_eq!(sightings.seen().get(&id), None);
    }
}
