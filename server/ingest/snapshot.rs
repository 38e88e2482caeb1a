//! The in-memory fleet: every object the sources reported, and what is known about each
//! cluster's data. Applying an event is cheap; evaluation reads each cluster's objects as one
//! slice, so a cluster can be evaluated without the others.

use crate::health::ClusterInfo;
use crate::model::{Interner, Kind, Object, ObjectId};
use crate::sources::SourceEvent;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

#[derive(Debug, Default)]
pub struct Snapshot {
    /// Per cluster, its objects.
    objects: BTreeMap<String, Vec<Object>>,
    /// Where each object is in its cluster's list.
    index: HashMap<ObjectId, usize>,
    /// Ids seen since a `SyncStart`, per (cluster, kind); the rest are swept at `SyncDone`.
    listing: HashMap<(String, Kind), HashSet<ObjectId>>,
    clusters: BTreeMap<String, ClusterInfo>,
    /// The (cluster, kind)s whose first full list completed: a relist of one is not partial.
    listed_once: HashSet<(String, Kind)>,
    /// Ids applied or deleted since the last `take_touched`.
    touched: HashSet<ObjectId>,
    /// Clusters whose info was added or reported on since the last `take_reported`.
    reported: BTreeSet<String>,
    /// Objects per (cluster, kind), kept as objects come and go so no round has to count.
    tracked: BTreeMap<(String, Kind), u64>,
    /// The cluster names, namespaces and API versions the objects share.
    names: Interner,
}

impl Snapshot {
    pub fn new(clusters: impl IntoIterator<Item = ClusterInfo>) -> Snapshot {
        let clusters: BTreeMap<String, ClusterInfo> =
            clusters.into_iter().map(|c| (c.name.clone(), c)).collect();
        Snapshot {
            reported: clusters.keys().cloned().collect(),
            clusters,
            ..Snapshot::default()
        }
    }

    /// Every cluster holding objects, with its objects.
    pub fn by_cluster(&self) -> BTreeMap<&str, &[Object]> {
        self.objects
            .iter()
            .map(|(cluster, objects)| (cluster.as_str(), objects.as_slice()))
            .collect()
    }

    /// One cluster's objects (None: it holds none).
    pub fn objects_of(&self, cluster: &str) -> Option<&[Object]> {
        self.objects.get(cluster).map(Vec::as_slice)
    }

    /// How many objects are held.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// How many objects of a kind a cluster holds.
    pub fn tracked(&self, cluster: &str, kind: Kind) -> u64 {
        let key = (cluster.to_string(), kind);
        self.tracked.get(&key).copied().unwrap_or(0)
    }

    pub fn get(&self, id: &ObjectId) -> Option<&Object> {
        let &i = self.index.get(id)?;
        self.objects.get(cluster_of(id))?.get(i)
    }

    pub fn clusters(&self) -> impl Iterator<Item = &ClusterInfo> {
        self.clusters.values()
    }

    pub fn cluster(&self, name: &str) -> Option<&ClusterInfo> {
        self.clusters.get(name)
    }

    /// Starts tracking a cluster (a collector lease was won).
    pub fn add_cluster(&mut self, info: ClusterInfo) {
        self.reported.insert(info.name.clone());
        self.clusters.entry(info.name.clone()).or_insert(info);
    }

    /// Forgets a cluster and its objects without recording them as touched: another collector
    /// owns it now, so nothing about it is to be written from here.
    pub fn drop_cluster(&mut self, name: &str) {
        self.clusters.remove(name);
        self.reported.remove(name);
        self.listing.retain(|(cluster, _), _| cluster != name);
        self.listed_once.retain(|(cluster, _)| cluster != name);
        for object in self.objects.remove(name).unwrap_or_default() {
            self.index.remove(&object.id());
        }
        self.tracked.retain(|(cluster, _), _| cluster != name);
        self.touched.retain(|id| cluster_of(id) != name);
    }

    /// Marks every object of a cluster touched, so all their rows are written next time.
    pub fn touch_cluster(&mut self, name: &str) {
        let ids = self.objects.get(name).into_iter().flatten().map(Object::id);
        self.touched.extend(ids);
    }

    /// Ids whose object changed since the last call.
    pub fn take_touched(&mut self) -> HashSet<ObjectId> {
        std::mem::take(&mut self.touched)
    }

    /// Clusters added, or whose info a source reported on (alive, an error, a kind's error),
    /// since the last call: only their cluster rows can have changed, besides those of the
    /// clusters re-evaluated.
    pub fn take_reported(&mut self) -> BTreeSet<String> {
        std::mem::take(&mut self.reported)
    }

    /// Applies one event; returns whether anything changed.
    pub fn apply(&mut self, event: SourceEvent) -> bool {
        match event {
            SourceEvent::SyncStart { cluster, kind } => {
                self.listing.insert((cluster, kind), HashSet::new());
                false
            }
            SourceEvent::Apply(mut object) => {
                let id = object.id();
                if let Some(seen) = self
                    .listing
                    .get_mut(&(object.cluster.to_string(), object.kind))
                {
                    seen.insert(id.clone());
                }
                object.share_names(&mut self.names);
                self.upsert(id, *object)
            }
            SourceEvent::Delete(id) => self.remove(&id),
            // Evidence kept beside the verdicts, written by the runner: not an object.
            SourceEvent::Warning(_) => false,
            SourceEvent::SyncDone { cluster, kind } => self.sweep(cluster, kind),
            SourceEvent::FirstList {
                cluster,
                kind,
                complete,
            } => {
                if complete {
                    self.listed_once.insert((cluster.clone(), kind));
                    self.cluster_mut(&cluster).unlisted.remove(&kind)
                } else if self.listed_once.contains(&(cluster.clone(), kind)) {
                    false
                } else {
                    self.cluster_mut(&cluster).unlisted.insert(kind)
                }
            }
            SourceEvent::ClusterAlive { cluster, at } => {
                let info = self.cluster_mut(&cluster);
                let first = info.last_good.is_none();
                let changed = info.error.is_some() || first;
                info.error = None;
                info.last_good = Some(info.last_good.map_or(at, |t| t.max(at)));
                if first {
                    // Listed in full at last: every object is written from this evaluation.
                    self.touch_cluster(&cluster);
                }
                changed
            }
            SourceEvent::ClusterError { cluster, error } => {
                let info = self.cluster_mut(&cluster);
                let changed = info.error.as_deref() != Some(error.as_str());
                info.error = Some(error);
                changed
            }
            SourceEvent::KindError {
                cluster,
                kind,
                error,
            } => {
                let info = self.cluster_mut(&cluster);
                match error {
                    Some(error) => {
                        info.kind_errors.insert(kind, error.clone()).as_ref() != Some(&error)
                    }
                    None => info.kind_errors.remove(&kind).is_some(),
                }
            }
        }
    }

    fn cluster_mut(&mut self, name: &str) -> &mut ClusterInfo {
        if !self.reported.contains(name) {
            self.reported.insert(name.to_string());
        }
        self.clusters
            .entry(name.to_string())
            .or_insert_with(|| ClusterInfo {
                name: name.to_string(),
                ..ClusterInfo::default()
            })
    }

    fn upsert(&mut self, id: ObjectId, object: Object) -> bool {
        if !self.objects.contains_key(object.cluster.as_str()) {
            self.objects.insert(object.cluster.to_string(), Vec::new());
        }
        let Some(list) = self.objects.get_mut(object.cluster.as_str()) else {
            return false;
        };
        match self.index.get(&id) {
            Some(&i) if list[i] == object => false,
            Some(&i) => {
                list[i] = object;
                self.touched.insert(id);
                true
            }
            None => {
                *self
                    .tracked
                    .entry((object.cluster.to_string(), object.kind))
                    .or_default() += 1;
                self.index.insert(id.clone(), list.len());
                list.push(object);
                self.touched.insert(id);
                true
            }
        }
    }

    fn remove(&mut self, id: &ObjectId) -> bool {
        let Some(i) = self.index.remove(id) else {
            return false;
        };
        let cluster = cluster_of(id);
        let Some(list) = self.objects.get_mut(cluster) else {
            return false;
        };
        let removed = list.swap_remove(i);
        if let Some(moved) = list.get(i) {
            self.index.insert(moved.id(), i);
        }
        if list.is_empty() {
            self.objects.remove(cluster);
        }
        let key = (removed.cluster.to_string(), removed.kind);
        if let Some(count) = self.tracked.get_mut(&key) {
            *count -= 1;
            if *count == 0 {
                self.tracked.remove(&key);
            }
        }
        self.touched.insert(id.clone());
        true
    }

    fn sweep(&mut self, cluster: String, kind: Kind) -> bool {
        let Some(seen) = self.listing.remove(&(cluster.clone(), kind)) else {
            return false;
        };
        let gone: Vec<ObjectId> = self
            .objects
            .get(&cluster)
            .into_iter()
            .flatten()
            .filter(|o| o.kind == kind)
            .map(Object::id)
            .filter(|id| !seen.contains(id))
            .collect();
        let mut changed = false;
        for id in gone {
            changed |= self.remove(&id);
        }
        changed
    }
}

/// The cluster an id names (ids are `cluster/Kind/namespace/name`).
fn cluster_of(id: &ObjectId) -> &str {
    id.parts().map_or("", |(cluster, ..)| cluster)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(cluster: &str, name: &str, revision: &str) -> Object {
        crate::model::parse_object(
            cluster,
            &json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
                    "metadata": {"name": name, "namespace": "flux-system"},
                    "status": {"artifact": {"revision": revision}}}),
        )
        .unwrap()
    }

    #[test]
    fn apply_is_change_only_and_delete_keeps_the_index_right() {
        let mut snap = Snapshot::default();
        assert!(snap.apply(SourceEvent::Apply(Box::new(object("a", "x", "r1")))));
        assert!(!snap.apply(SourceEvent::Apply(Box::new(object("a", "x", "r1")))));
        assert!(snap.apply(SourceEvent::Apply(Box::new(object("a", "y", "r1")))));
        assert!(snap.apply(SourceEvent::Apply(Box::new(object("a", "x", "r2")))));
        assert!(snap.apply(SourceEvent::Delete(object("a", "x", "").id())));
        let y = object("a", "y", "r1");
        assert_eq!(snap.get(&y.id()), Some(&y));
        assert_eq!(snap.len(), 1);
        assert_eq!(snap.take_touched().len(), 2);
        assert_eq!(tracked(&snap), vec![("a", 1)]);
    }

    #[test]
    fn objects_share_one_copy_of_their_cluster_namespace_and_api_version() {
        let mut snap = Snapshot::default();
        for name in ["x", "y"] {
            snap.apply(SourceEvent::Apply(Box::new(object("a", name, "r"))));
        }
        let by_cluster = snap.by_cluster();
        let [x, y] = by_cluster["a"] else {
            panic!("two objects on a");
        };
        assert!(std::ptr::eq(x.cluster.as_str(), y.cluster.as_str()));
        assert!(std::ptr::eq(x.namespace.as_str(), y.namespace.as_str()));
        assert!(std::ptr::eq(x.api_version.as_str(), y.api_version.as_str()));
    }

    /// GitRepositories held per cluster, of the clusters `a` and `b` (those holding any).
    fn tracked(snap: &Snapshot) -> Vec<(&'static str, u64)> {
        ["a", "b"]
            .into_iter()
            .map(|cluster| (cluster, snap.tracked(cluster, Kind::GitRepository)))
            .filter(|&(_, count)| count > 0)
            .collect()
    }

    #[test]
    fn a_relist_sweeps_what_vanished_on_that_cluster_and_kind_only() {
        let mut snap = Snapshot::default();
        for (cluster, name) in [("a", "keep"), ("a", "gone"), ("b", "other")] {
            snap.apply(SourceEvent::Apply(Box::new(object(cluster, name, "r"))));
        }
        snap.apply(SourceEvent::SyncStart {
            cluster: "a".into(),
            kind: Kind::GitRepository,
        });
        snap.apply(SourceEvent::Apply(Box::new(object("a", "keep", "r"))));
        assert!(snap.apply(SourceEvent::SyncDone {
            cluster: "a".into(),
            kind: Kind::GitRepository
        }));
        let mut names: Vec<_> = snap
            .by_cluster()
            .into_values()
            .flatten()
            .map(|o| o.name.as_str())
            .collect();
        names.sort();
        assert_eq!(names, vec!["keep", "other"]);
        assert_eq!(tracked(&snap), vec![("a", 1), ("b", 1)]);
    }

    #[test]
    fn a_dropped_cluster_leaves_nothing_behind_and_others_stay_indexed() {
        let mut snap = Snapshot::default();
        for (cluster, name) in [("a", "x"), ("b", "y"), ("a", "z"), ("b", "w")] {
            snap.apply(SourceEvent::Apply(Box::new(object(cluster, name, "r"))));
        }
        snap.take_touched();
        snap.drop_cluster("a");
        assert!(snap.take_touched().is_empty());
        assert!(snap.clusters().all(|c| c.name != "a"));
        for name in ["y", "w"] {
            let o = object("b", name, "r");
            assert_eq!(snap.get(&o.id()), Some(&o));
        }
        assert_eq!(snap.len(), 2);
        assert_eq!(tracked(&snap), vec![("b", 2)]);
        snap.touch_cluster("b");
        assert_eq!(snap.take_touched().len(), 2);
    }

    fn first_list(kind: Kind, complete: bool) -> SourceEvent {
        SourceEvent::FirstList {
            cluster: "a".into(),
            kind,
            complete,
        }
    }

    #[test]
    fn a_kind_is_unlisted_until_its_first_list_completes_and_a_relist_keeps_it_listed() {
        let mut snap = Snapshot::default();
        let unlisted = |snap: &Snapshot| snap.cluster("a").unwrap().unlisted.clone();
        assert!(snap.apply(first_list(Kind::GitRepository, false)));
        assert_eq!(unlisted(&snap), [Kind::GitRepository].into());
        assert!(snap.apply(first_list(Kind::GitRepository, true)));
        assert!(unlisted(&snap).is_empty());
        // A relist (410 Gone, a reconnect) keeps what was held: the kind is not partial.
        assert!(!snap.apply(first_list(Kind::GitRepository, false)));
        assert!(unlisted(&snap).is_empty());
    }

    #[test]
    fn the_first_sign_of_life_after_the_first_list_writes_every_object_anew() {
        let mut snap = Snapshot::default();
        snap.apply(SourceEvent::Apply(Box::new(object("a", "x", "r"))));
        snap.take_touched();
        let alive = |snap: &mut Snapshot| {
            snap.apply(SourceEvent::ClusterAlive {
                cluster: "a".into(),
                at: chrono::Utc::now(),
            })
        };
        assert!(alive(&mut snap), "first alive changes the cluster");
        assert_eq!(snap.take_touched().len(), 1);
        assert!(!alive(&mut snap));
        assert!(snap.take_touched().is_empty());
    }

    #[test]
    fn cluster_errors_and_recovery_are_tracked() {
        let mut snap = Snapshot::default();
        let at = chrono::Utc::now();
        snap.apply(SourceEvent::ClusterAlive {
            cluster: "a".into(),
            at,
        });
        assert!(snap.apply(SourceEvent::ClusterError {
            cluster: "a".into(),
            error: "connection refused".into()
        }));
        assert!(!snap.apply(SourceEvent::ClusterError {
            cluster: "a".into(),
            error: "connection refused".into()
        }));
        let info = snap.clusters().next().unwrap();
        assert_eq!(
            (info.last_good, info.error.as_deref()),
            (Some(at), Some("connection refused"))
        );
        assert!(snap.apply(SourceEvent::ClusterAlive {
            cluster: "a".into(),
            at
        }));
        assert!(snap.apply(SourceEvent::KindError {
            cluster: "a".into(),
            kind: Kind::HelmRelease,
            error: Some("forbidden".into())
        }));
        assert!(snap.apply(SourceEvent::KindError {
            cluster: "a".into(),
            kind: Kind::HelmRelease,
            error: None
        }));
    }
}
