//! Merges several label-selected watches of one kind into one view: an object is present while
//! any selection reports it, and each selection's re-list sweeps only its own members. With a
//! single selection nothing is stored here (the snapshot sweeps instead).

use crate::model::ObjectId;
use std::collections::{BTreeSet, HashMap, HashSet};

pub struct Merge {
    /// Which selections (bits) report each object; `None` with a single selection.
    members: Option<HashMap<ObjectId, u8>>,
    relisting: Vec<Option<HashSet<ObjectId>>>,
    listed_once: Vec<bool>,
    membership_changed: bool,
}

impl Merge {
    pub fn new(selections: usize) -> Merge {
        assert!(selections <= 8, "at most 8 selections per kind");
        Merge {
            members: (selections > 1).then(HashMap::new),
            relisting: vec![None; selections],
            listed_once: vec![false; selections],
            membership_changed: false,
        }
    }

    pub fn insert(&mut self, selection: usize, id: ObjectId) {
        let Some(members) = &mut self.members else {
            return;
        };
        if let Some(seen) = &mut self.relisting[selection] {
            seen.insert(id.clone());
        }
        let bits = members.entry(id).or_insert_with(|| {
            self.membership_changed = true;
            0
        });
        *bits |= 1 << selection;
    }

    /// Removes the object from one selection; true when no selection reports it any more.
    pub fn remove(&mut self, selection: usize, id: &ObjectId) -> bool {
        let Some(members) = &mut self.members else {
            return true;
        };
        let Some(bits) = members.get_mut(id) else {
            return false;
        };
        *bits &= !(1 << selection);
        if *bits == 0 {
            members.remove(id);
            self.membership_changed = true;
            return true;
        }
        false
    }

    pub fn relist_start(&mut self, selection: usize) {
        if self.members.is_some() {
            self.relisting[selection] = Some(HashSet::new());
        }
    }

    /// Ends a selection's re-list; returns the objects no selection reports any more.
    pub fn relist_done(&mut self, selection: usize) -> Vec<ObjectId> {
        self.listed_once[selection] = true;
        let (Some(members), Some(seen)) = (&self.members, self.relisting[selection].take()) else {
            return Vec::new();
        };
        let stale: Vec<ObjectId> = members
            .iter()
            .filter(|(id, bits)| *bits & (1 << selection) != 0 && !seen.contains(*id))
            .map(|(id, _)| id.clone())
            .collect();
        stale
            .into_iter()
            .filter(|id| self.remove(selection, id))
            .collect()
    }

    pub fn every_selection_listed(&self) -> bool {
        self.listed_once.iter().all(|listed| *listed)
    }

    /// Whether an object joined or left since the last call.
    pub fn take_membership_changed(&mut self) -> bool {
        std::mem::take(&mut self.membership_changed)
    }

    /// Namespaces of the objects present.
    pub fn namespaces(&self) -> BTreeSet<String> {
        self.members
            .iter()
            .flat_map(|m| m.keys())
            .filter_map(|id| id.parts().map(|p| p.2.to_string()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Kind;

    fn id(ns: &str, name: &str) -> ObjectId {
        ObjectId::new("c", Kind::Deployment, ns, name)
    }

    #[test]
    fn an_object_stays_while_any_selection_reports_it() {
        let mut merge = Merge::new(2);
        merge.insert(0, id("a", "x"));
        merge.insert(1, id("a", "x"));
        assert!(!merge.remove(0, &id("a", "x")));
        assert!(merge.remove(1, &id("a", "x")));
        assert!(!merge.remove(1, &id("a", "x")));
    }

    #[test]
    fn a_relist_sweeps_only_its_own_selection() {
        let mut merge = Merge::new(2);
        merge.insert(0, id("a", "gone"));
        merge.insert(0, id("b", "kept"));
        merge.insert(1, id("c", "other"));
        merge.insert(0, id("c", "both"));
        merge.insert(1, id("c", "both"));
        merge.relist_start(0);
        merge.insert(0, id("b", "kept"));
        assert_eq!(merge.relist_done(0), vec![id("a", "gone")]);
        assert!(!merge.every_selection_listed());
        assert_eq!(
            merge.namespaces().into_iter().collect::<Vec<_>>(),
            vec!["b", "c"]
        );
        merge.relist_done(1);
        assert!(merge.every_selection_listed());
    }

    #[test]
    fn a_single_selection_stores_nothing() {
        let mut merge = Merge::new(1);
        merge.insert(0, id("a", "x"));
        assert!(merge.remove(0, &id("a", "x")));
        assert!(merge.relist_done(0).is_empty());
        assert!(merge.namespaces().is_empty());
    }
}
