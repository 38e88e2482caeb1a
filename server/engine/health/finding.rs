//! The engine's intermediate vocabulary: one object's own finding (from its own evidence only)
//! and the edge kinds that say which prerequisites could explain it.

use super::{Cause, State};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Why one object is a prerequisite of another (DESIGN.md "Root causes"). The names are
/// stored with the verdicts (`depends_on`, `source`, …), so renaming one is a migration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    DependsOn,
    Source,
    Controller,
    HealthCheck,
    /// A parent depends on what it applied (Flux objects and workloads carrying its labels).
    Applied,
    /// A Pod is evidence of the workload that owns it.
    Owner,
}

impl EdgeKind {
    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of edge kinds, small enough to copy around freely.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct EdgeSet(u8);

impl EdgeSet {
    pub const NONE: EdgeSet = EdgeSet(0);
    pub const DEPENDS_ON: EdgeSet = EdgeSet(EdgeKind::DependsOn.bit());
    pub const SOURCE: EdgeSet = EdgeSet(EdgeKind::Source.bit());
    pub const CONTROLLER: EdgeSet = EdgeSet(EdgeKind::Controller.bit());
    pub const OWNER: EdgeSet = EdgeSet(EdgeKind::Owner.bit());
    /// What a health check or a Helm wait looks at.
    pub const DEPLOYED: EdgeSet = EdgeSet(EdgeKind::HealthCheck.bit() | EdgeKind::Applied.bit());
    /// Everything an in-progress object may be waiting on (its controller excepted: a live
    /// controller with a bad pod does not hold anything up; a dead one is handled before this).
    pub const WAITING: EdgeSet = EdgeSet(Self::DEPENDS_ON.0 | Self::SOURCE.0 | Self::DEPLOYED.0);

    pub const fn contains(self, kind: EdgeKind) -> bool {
        self.0 & kind.bit() != 0
    }

    pub const fn without(self, other: EdgeSet) -> EdgeSet {
        EdgeSet(self.0 & !other.0)
    }

    pub const fn and(self, other: EdgeSet) -> EdgeSet {
        EdgeSet(self.0 & other.0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Edge {
    pub kind: EdgeKind,
    pub target: usize,
}

/// How an object's own finding combines with the state of its prerequisites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Propagation {
    /// The cluster's data cannot be trusted: the cluster is the root cause.
    Cluster,
    /// No Deployment reconciles the object: that absent controller (an index into the
    /// graph's absences) is the root cause.
    Absent(usize),
    /// The state stands; a problem is explained by problem prerequisites over these edges
    /// (their root causes become its own), otherwise it is its own root cause.
    Symptom(EdgeSet),
    /// A problem or in-progress state that problem prerequisites over these edges turn into
    /// `blocked` (`degraded` when the object itself is healthy).
    Explainable(EdgeSet),
    /// Ready by its own conditions but not converged yet (reconciling, a revision in flight):
    /// problem prerequisites over these edges other than what it deployed turn it `blocked`;
    /// problems among what it deployed make it `degraded` (round two's rule 1: it claims to run
    /// what is failing), never blocked by them.
    ReadyInProgress(EdgeSet),
    /// Not a problem by itself (a suspended object that is not ready), but the root cause of
    /// whatever waits on it: a suspension holding a rollout.
    HoldsWaiters,
}

impl Propagation {
    pub const ITSELF: Propagation = Propagation::Symptom(EdgeSet::NONE);
}

/// What one object's own evidence says, before its prerequisites are considered: the cause as
/// fields, and its rendered text.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Finding {
    pub state: State,
    pub since: Option<DateTime<Utc>>,
    pub cause: Cause,
    pub reason: String,
    pub message: String,
    pub propagation: Propagation,
}

impl Finding {
    pub fn new(
        state: State,
        cause: Cause,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Finding {
            state,
            since: None,
            cause,
            reason: reason.into(),
            message: message.into(),
            propagation: Propagation::ITSELF,
        }
    }

    pub fn since(mut self, since: Option<DateTime<Utc>>) -> Self {
        self.since = since;
        self
    }

    pub fn propagation(mut self, propagation: Propagation) -> Self {
        self.propagation = propagation;
        self
    }
}
