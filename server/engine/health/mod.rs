//! The health engine: pure functions from objects, clusters, thresholds and `now` to verdicts,
//! root causes and domain roll-ups. No I/O and no clock, so it is the same in the CLI, the
//! server and the tests.
//!
//! Pipeline: index the input → build each object's prerequisite edges → find dependsOn cycles
//! → assess each object on its own evidence → resolve root causes through the edges → roll up
//! domains. The edges go out with the verdicts: the engine is the graph's only owner.
//!
//! Decisions worth knowing:
//! - Own-evidence precedence (assess.rs): stale cluster data / unreadable kind (unverifiable,
//!   root = the cluster) → spec.suspend (suspended) → dependsOn cycle (failed) → missing
//!   reference or a source its shard's source-controller cannot see (failed) → controller (or
//!   its shard) absent while the cluster's other Flux controllers are in the input, with 0
//!   available, or only crash-looping pods
//!   (unverifiable, root = that controller) → deletion pending → the kind's rules. Malformed
//!   fields turn anything but failed/suspended/unverifiable into unverifiable.
//! - A suspended object that is not ready is the root cause of whatever waits on it (it
//!   stays `suspended`); one nobody waits on is no root cause.
//! - Ready=True + Reconciling=True is `progressing` below the threshold (every Helm run shows
//!   it; not a problem, so nothing flaps into alerts) and `stale` past it.
//! - An object with its own problem and problem prerequisites is a symptom (`blocked`, their
//!   root causes) only when its reason is one those prerequisites explain (DependencyNotReady →
//!   dependsOn, SourceNotReady/ArtifactFailed/HelmChartNotReady → source, HealthCheckFailed →
//!   what it checks or applied, in-progress → any of these). A Helm action that failed (its
//!   wait on the workloads, a hook, retries exhausted) for no independent reason stays
//!   `failed`, with its failing workloads' root causes as its own.
//!   Independent failures (build, apply, RBAC, admission, stale status) stay their own root
//!   cause. A Ready object whose applied objects or health-check targets are problems is
//!   `degraded`.

mod assess;
mod cause;
mod classify;
mod clusters;
mod controllers;
mod cores;
mod crossstack;
mod cycles;
mod deadlines;
mod domains;
mod edges;
mod finding;
mod fleet;
mod flux;
mod graph;
mod index;
mod input;
mod jobs;
mod merge;
mod output;
mod paths;
mod pods;
pub mod reasons;
mod revisions;
mod rollout;
mod roots;
mod state;
mod state_schema;
mod threshold;
mod verdict;
mod versions;
mod workloads;

#[cfg(test)]
mod cause_tests;
#[cfg(test)]
mod controller_tests;
#[cfg(test)]
mod crossstack_tests;
#[cfg(test)]
mod cycle_tests;
#[cfg(test)]
mod domains_tests;
#[cfg(test)]
mod edge_tests;
#[cfg(test)]
mod families_tests;
#[cfg(test)]
mod fleet_tests;
#[cfg(test)]
mod flux_tests;
#[cfg(any(test, feature = "testkit"))]
pub mod generators;
#[cfg(test)]
mod incident_tests;
#[cfg(test)]
mod inventory_tests;
#[cfg(test)]
mod job_tests;
#[cfg(test)]
mod listing_tests;
#[cfg(test)]
mod liveness_tests;
#[cfg(test)]
mod proof_tests;
#[cfg(test)]
mod property_tests;
#[cfg(test)]
mod reasons_tests;
#[cfg(test)]
mod release_tests;
#[cfg(test)]
mod revision_tests;
#[cfg(test)]
mod roots_tests;
#[cfg(test)]
mod sharding_tests;
#[cfg(test)]
mod suspension_tests;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
#[cfg(test)]
mod verdict_tests;
#[cfg(test)]
mod workload_tests;

pub use cause::{Cause, CauseCode};
pub use clusters::{
    NOT_YET_LISTED, Untrusted, interchangeable, reason_beside_clusters, untrusted_data,
};
pub use cores::cores;
pub use crossstack::InventoryEntry;
pub use finding::EdgeKind;
pub use fleet::{Except, Fleet, Parts};
pub use input::{
    ClusterInfo, DomainSpec, FormerCrdProvider, InputEvidence, Selection, Thresholds, VersionSource,
};
pub use merge::merge;
pub use paths::PathsToRoot;
pub use state::{State, StateCounts, worst_first};
pub use verdict::{
    CLUSTER_KIND, CoOwnership, CrdProvider, Dependency, DomainVerdict, Evaluation, ObjectEdge,
    RootCause, Subject, Verdict, cluster_id, cluster_of_cluster_id, same_cause_on,
};
pub use versions::{image_tag, short_revision};

use crate::model::{Object, ObjectId};
use chrono::{DateTime, Utc};

/// Everything the engine looks at. `now` is an argument: the engine never reads a clock.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    pub objects: &'a [Object],
    pub clusters: &'a [ClusterInfo],
    pub domains: &'a [DomainSpec],
    pub thresholds: &'a Thresholds,
    pub now: DateTime<Utc>,
    /// When the caller first saw each object in progress. Some work in progress carries no
    /// start time of its own (a generation not yet observed and no Reconciling condition, a
    /// partial StatefulSet or DaemonSet rollout); this is its start, so it can become `stuck`.
    pub seen_in_progress: &'a SeenInProgress,
}

/// First sighting in progress, per object (empty for a one-off evaluation).
pub type SeenInProgress = std::collections::HashMap<ObjectId, DateTime<Utc>>;

pub fn evaluate(input: &Input) -> Evaluation {
    evaluate_timed(input).evaluation
}

/// An evaluation, and the instant from which the same input may evaluate differently because
/// time passed (a threshold, a window, an age in a reason); None when time alone changes nothing.
#[derive(Debug, Clone, Default)]
pub struct Timed {
    pub evaluation: Evaluation,
    pub due: Option<DateTime<Utc>>,
}

pub fn evaluate_timed(input: &Input) -> Timed {
    let due = deadlines::Due::default();
    let clock = deadlines::Clock::new(input.now, &due);
    let evaluation = evaluate_with(input, clock);
    Timed {
        evaluation,
        due: due.get(),
    }
}

fn evaluate_with(input: &Input, clock: deadlines::Clock) -> Evaluation {
    let objects = input.objects;
    let index = index::Index::new(objects);
    let clusters = clusters::Clusters::new(input.clusters, input.thresholds.freshness, clock);
    // The graph, and what reads only the index, at once: each step of a 100,000-object
    // evaluation spends much of its time on fresh pages, which two cores fault in side by side.
    let (graph, (membership, ids, cross)) = cores::join(
        objects.len(),
        || graph::build(&index, &clusters, input.thresholds, clock),
        || {
            let membership = domains::membership(&index, input.domains);
            let ids: Vec<ObjectId> = cores::map_indices(objects.len(), |i| objects[i].id());
            let cross = crossstack::analyse(&index, input.clusters, &ids);
            (membership, ids, cross)
        },
    );
    let (cycle_of, cycles) = cycles::find(objects, &graph.edges);
    let assessor = assess::Assessor {
        index: &index,
        clusters: &clusters,
        graph: &graph,
        cycle_of: &cycle_of,
        cycles: &cycles,
        thresholds: input.thresholds,
        domain_stuck_after: &membership.stuck_after,
        broken_consumers: &cross.broken,
        ids: &ids,
        seen_in_progress: input.seen_in_progress,
        clock,
    };
    let own = cores::map_indices(objects.len(), |i| assessor.assess(i));
    let (resolved, edges) = cores::join(
        objects.len(),
        || roots::resolve(objects, &graph.absent.list, &graph.edges, own, &cycle_of),
        || edges::of_objects(&ids, &graph),
    );
    let controllers = edges::controllers(&index, &ids, &graph);
    let root_causes = output::root_causes(&ids, &resolved, &clusters);
    let untrusted = clusters.untrusted().collect();
    let domains = domains::roll_up(
        &index,
        input.domains,
        &membership,
        input.clusters,
        &domains::Findings {
            resolved: &resolved,
            root_id: &output::root_id(&ids),
            untrusted: &untrusted,
            sources: &graph.source,
        },
    );
    let names = domains::names_by_object(&index, input.domains, &membership, input.clusters);
    let verdicts = output::verdicts(objects, ids, resolved, names, edges);
    Evaluation {
        objects: verdicts,
        root_causes,
        domains,
        dependencies: cross.dependencies,
        co_ownerships: cross.co_ownerships,
        crd_providers: cross.crd_providers,
        controllers,
    }
}
