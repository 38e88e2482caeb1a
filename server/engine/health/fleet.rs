//! A fleet's evaluation held as its clusters' evaluations, each shared (`Arc`): publishing a
//! round that re-evaluated k clusters costs those k and one pointer per other cluster, not a
//! copy of every verdict. Readers walk it cluster by cluster (`Parts`); the fleet-wide order of
//! root causes they need is a sort of references.

use super::output::cause_order;
use super::{Evaluation, RootCause, merge};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Each cluster's latest evaluation, by cluster name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fleet {
    clusters: BTreeMap<String, Arc<Evaluation>>,
}

impl Fleet {
    pub fn new(clusters: BTreeMap<String, Arc<Evaluation>>) -> Fleet {
        Fleet { clusters }
    }

    /// The one evaluation `evaluate` over every object would give (copies every verdict: for
    /// readers that need the whole, such as tests, not for every round).
    pub fn merged(&self) -> Evaluation {
        merge(self.parts())
    }
}

impl Fleet {
    /// The fleet without the parts of `skip` (clusters whose evaluation is no evidence yet).
    pub fn except<'a>(&'a self, skip: &'a BTreeSet<String>) -> Except<'a> {
        Except { fleet: self, skip }
    }
}

/// A fleet read without some clusters' parts.
pub struct Except<'a> {
    fleet: &'a Fleet,
    skip: &'a BTreeSet<String>,
}

impl Parts for Except<'_> {
    fn parts(&self) -> impl Iterator<Item = &Evaluation> {
        self.fleet
            .clusters
            .iter()
            .filter(|(cluster, _)| !self.skip.contains(*cluster))
            .map(|(_, evaluation)| evaluation.as_ref())
    }
}

/// Evaluations read cluster by cluster: a fleet's shared parts, or one evaluation whole.
pub trait Parts {
    fn parts(&self) -> impl Iterator<Item = &Evaluation>;

    /// Every part's root causes in the fleet's order (worst first, then most affected).
    fn root_causes(&self) -> Vec<&RootCause> {
        let mut causes: Vec<&RootCause> = self.parts().flat_map(|p| &p.root_causes).collect();
        causes.sort_by(|a, b| cause_order(a, b));
        causes
    }
}

impl Parts for Fleet {
    fn parts(&self) -> impl Iterator<Item = &Evaluation> {
        self.clusters.values().map(|e| e.as_ref())
    }
}

impl Parts for Evaluation {
    fn parts(&self) -> impl Iterator<Item = &Evaluation> {
        std::iter::once(self)
    }
}
