//! One object's own finding, in precedence order: data that cannot be trusted first (cluster,
//! kind), then what the user asked for (suspend), then structural faults (cycles, missing
//! references, no controller), then the kind's own rules; malformed fields never pass as green.

use super::Thresholds;
use super::classify::classify;
use super::clusters::Clusters;
use super::controllers::{Liveness, down_reason};
use super::cycles::Cycle;
use super::deadlines::Clock;
use super::finding::{EdgeSet, Finding, Propagation};
use super::flux::{self, FluxContext};
use super::graph::{Graph, Uncovered};
use super::index::Index;
use super::index::controller_of;
use super::jobs::{assess_cron_job, assess_job, cron_job_of, succeeded_after};
use super::pods::{assess_deleting_pod, assess_pod};
use super::revisions::same_revision;
use super::threshold::{Timing, threshold};
use super::workloads::assess_workload;
use super::{Cause, CauseCode, State};
use crate::model::{Kind, Object, ObjectId};
use chrono::{DateTime, TimeDelta, Utc};

pub(super) struct Assessor<'a> {
    pub index: &'a Index<'a>,
    pub clusters: &'a Clusters<'a>,
    pub graph: &'a Graph,
    pub cycle_of: &'a [Option<usize>],
    pub cycles: &'a [Cycle],
    pub thresholds: &'a Thresholds,
    /// Per object: the stuck_after of the domains it belongs to, if any overrides it.
    pub domain_stuck_after: &'a [Option<TimeDelta>],
    /// Per object: a consumed CRD or Namespace that is gone (cross-stack, Day-0 rule).
    pub broken_consumers: &'a [Option<Finding>],
    pub ids: &'a [ObjectId],
    pub seen_in_progress: &'a super::SeenInProgress,
    pub clock: Clock<'a>,
}

impl<'a> Assessor<'a> {
    pub fn assess(&self, i: usize) -> Finding {
        let object = &self.index.objects[i];
        let mut finding = self
            .precondition(i, object)
            .unwrap_or_else(|| self.by_kind(i, object));
        // A controller whose clock runs ahead writes transition times in the future: no start
        // the state can be said to have had yet. A failure retried attempt after attempt (its
        // Ready rewritten each time) has failed since it was first seen unsettled.
        finding.since = match finding.state {
            State::Failed => self.timing(i, object).start(finding.since),
            _ => finding.since.and_then(|since| self.clock.trusted(since)),
        };
        with_defects(object, finding)
    }

    /// Findings that make the object's own status irrelevant.
    fn precondition(&self, i: usize, object: &Object) -> Option<Finding> {
        let cluster = object.cluster.as_str();
        if let Some((cause, problem)) = self.clusters.data_problem(cluster) {
            let finding = Finding::new(State::Unverifiable, cause, problem, "");
            return Some(
                finding
                    .since(self.clusters.last_good(cluster))
                    .propagation(Propagation::Cluster),
            );
        }
        if let Some(error) = self.clusters.kind_error(cluster, object.kind) {
            let (code, reason) = if error == super::NOT_YET_LISTED {
                let reason = format!("{} on cluster {cluster} {error}", object.kind);
                (CauseCode::KindNotYetListed, reason)
            } else {
                let reason = format!("cannot read {} on cluster {cluster}: {error}", object.kind);
                (CauseCode::KindUnreadable, reason)
            };
            let cause = Cause::new(code).with("kind", object.kind.as_str());
            return Some(
                Finding::new(State::Unverifiable, cause, reason, error)
                    .propagation(Propagation::Cluster),
            );
        }
        if let Some(copies) = self.clusters.conflicting_copies(cluster, &self.ids[i]) {
            return Some(conflicting_copies(copies));
        }
        if object.spec.flux.suspend && object.kind.is_flux() {
            let ready = object.condition("Ready");
            let message = ready.map(|c| c.message.as_str()).unwrap_or("");
            let suspended = |message| {
                let cause = Cause::new(CauseCode::Suspended);
                Finding::new(State::Suspended, cause, "suspended (spec.suspend)", message)
            };
            let finding = suspended(message.to_string());
            // Suspended while ready holds nothing up; suspended while not ready, or behind
            // its source, holds up whatever waits on it.
            return Some(match self.behind_source(i, object) {
                Some(lag) => suspended(lag).propagation(Propagation::HoldsWaiters),
                None if ready.is_some_and(|c| c.is_true()) => finding,
                None => finding.propagation(Propagation::HoldsWaiters),
            });
        }
        if let Some(cycle) = self.cycle_of[i] {
            let path = &self.cycles[cycle].path;
            let cause = Cause::new(CauseCode::DependencyCycle).with("cycle", path);
            let reason = format!("dependency cycle: {path}");
            let message = "Flux waits on a dependsOn cycle forever";
            return Some(
                Finding::new(State::Failed, cause, reason, message).since(not_ready_since(object)),
            );
        }
        if let Some((cause, first)) = self.graph.missing[i].first() {
            let more = self.graph.missing[i].len() - 1;
            let reason = if more > 0 {
                format!("{first} (and {more} more)")
            } else {
                first.clone()
            };
            let all: Vec<&str> = self.graph.missing[i]
                .iter()
                .map(|(_, m)| m.as_str())
                .collect();
            return Some(
                Finding::new(State::Failed, cause.clone(), reason, all.join("; "))
                    .since(not_ready_since(object)),
            );
        }
        if let Some(finding) = uncovered(&self.graph.uncovered[i]) {
            return Some(finding);
        }
        match &self.graph.liveness[i] {
            &Liveness::Missing(absent) => {
                let missing = &self.graph.absent.list[absent];
                let shard = if missing.shard.is_empty() {
                    String::new()
                } else {
                    format!(" for its shard {:?}", missing.shard)
                };
                let reason = format!(
                    "no controller{shard}: Deployment {}/{} not found",
                    missing.namespace, missing.deployment
                );
                let cause = missing.cause();
                Some(
                    Finding::new(
                        State::Unverifiable,
                        cause,
                        reason,
                        "nothing reconciles this object; its status is whatever was last written",
                    )
                    .propagation(Propagation::Absent(absent)),
                )
            }
            &Liveness::Down(controller) => {
                let (cause, reason) = down_reason(self.index, controller, self.clock);
                let since = self.index.objects[controller]
                    .condition("Available")
                    .and_then(|c| c.last_transition);
                let message =
                    "status written by a controller that is not running cannot be trusted";
                Some(
                    Finding::new(State::Unverifiable, cause, reason, message)
                        .since(since)
                        .propagation(Propagation::Symptom(EdgeSet::CONTROLLER)),
                )
            }
            // A vanished CRD or Namespace breaks the object whatever its conditions say.
            Liveness::Alive(_) | Liveness::Unknown => self.broken_consumers[i].clone(),
        }
    }

    /// kustomize-controller holds a dependent until each dependency on the same source has
    /// applied the source's current revision (kustomize-controller@v1.9.6
    /// kustomization_controller.go checkDependencies: "dependency '%s' revision is not up to
    /// date"): a suspended Kustomization behind its source holds such dependents, Ready or not.
    fn behind_source(&self, i: usize, object: &Object) -> Option<String> {
        if object.kind != Kind::Kustomization {
            return None;
        }
        let source = &self.index.objects[self.graph.source[i]?];
        let offered = source.status.flux.artifact_revision.as_deref()?;
        let applied = object.status.flux.last_applied_revision.as_deref();
        if applied.is_some_and(|applied| same_revision(applied, offered)) {
            return None;
        }
        Some(format!(
            "suspended at {}; its source offers {offered}, which dependents on the same source wait for",
            applied.unwrap_or("no applied revision")
        ))
    }

    fn timing(&self, i: usize, object: &Object) -> Timing<'a> {
        Timing {
            threshold: threshold(object, self.thresholds, self.domain_stuck_after[i]),
            clock: self.clock,
            seen_since: self.seen_in_progress.get(&self.ids[i]).copied(),
        }
    }

    /// Job `i` judged by its pods, a failure a later run of its CronJob superseded aside.
    fn job(&self, i: usize, timing: Timing) -> Finding {
        let object = &self.index.objects[i];
        let later = cron_job_of(object).and_then(|cron_job| {
            self.index
                .jobs_of_cron_job(&object.cluster, &object.namespace, cron_job)
                .into_iter()
                .map(|j| &self.index.objects[j])
                .find(|sibling| succeeded_after(object, sibling))
        });
        assess_job(object, &self.pods_of(i), later, timing)
    }

    /// CronJob `i` judged by its latest run.
    fn cron_job(&self, i: usize, object: &Object) -> Finding {
        let latest = self.index.latest_job_of_cron_job(i).map(|j| {
            let job = &self.index.objects[j];
            (job, self.job(j, self.timing(j, job)))
        });
        assess_cron_job(object, latest)
    }

    /// The pods of workload or Job `i`.
    fn pods_of(&self, i: usize) -> Vec<&'a Object> {
        let objects = self.index.objects;
        self.index
            .pods_of(i)
            .into_iter()
            .map(|p| &objects[p])
            .collect()
    }

    fn by_kind(&self, i: usize, object: &Object) -> Finding {
        let timing = self.timing(i, object);
        if object.deleting {
            return match object.kind {
                Kind::Pod => assess_deleting_pod(object, timing),
                _ => being_deleted(object, timing),
            };
        }
        match object.kind {
            kind if kind.is_flux() => {
                let source = self.graph.source[i].map(|s| &self.index.objects[s]);
                let finding = flux::assess(object, &FluxContext { timing, source });
                inventory_checked(finding, &self.graph.inventory_missing[i])
            }
            kind if kind.is_workload() => {
                let pods = self.pods_of(i);
                assess_workload(object, &pods, timing, controller_of(object).is_some())
            }
            Kind::Pod => assess_pod(object, timing),
            Kind::Job => self.job(i, timing),
            // Its runs are its evidence: with Jobs unreadable there is none.
            Kind::CronJob => match self.clusters.kind_error(&object.cluster, Kind::Job) {
                Some(error) => Finding::new(
                    State::Unverifiable,
                    Cause::new(CauseCode::KindUnreadable).with("kind", Kind::Job.as_str()),
                    format!("its runs cannot be read: Job {error}"),
                    error,
                )
                .propagation(Propagation::Cluster),
                None => self.cron_job(i, object),
            },
            // The API server sets a Namespace's deletionTimestamp and phase Terminating in the
            // same update (pkg/registry/core/namespace/storage, REST.Delete), so a live one is
            // `deleting` above; a hand-written phase alone still reads as terminating, as the
            // cross-stack rule reads it, never as a healthy namespace.
            Kind::Namespace if object.status.phase.as_deref() == Some("Terminating") => timing
                .in_progress(
                    Cause::new(CauseCode::NamespaceTerminating),
                    "namespace terminating",
                    "",
                    object.deleting_since,
                    EdgeSet::NONE,
                ),
            Kind::CustomResourceDefinition => match object.condition("Established") {
                Some(established) if !established.is_true() => timing.in_progress(
                    Cause::new(CauseCode::CrdNotEstablished),
                    "CRD not established",
                    &established.message,
                    established.last_transition,
                    EdgeSet::NONE,
                ),
                _ => exists(),
            },
            _ => exists(),
        }
    }
}

/// Finalizers pending, and what holds them when the controller says so: a HelmRelease whose
/// uninstall fails (helm-controller@v1.6.4 internal/reconcile/uninstall.go failure: Released
/// False UninstallFailed "Helm uninstall failed for release …: <error>", summarised onto Ready)
/// is stuck on that error past the threshold, named.
fn being_deleted(object: &Object, timing: Timing) -> Finding {
    let failing = ["Ready", "Released"]
        .into_iter()
        .filter_map(|type_| object.condition(type_))
        .find(|c| c.status == crate::model::ConditionStatus::False && object.kind.is_flux());
    let deleting = Cause::new(CauseCode::Deleting);
    let (cause, reason, message) = match failing {
        Some(ready) => {
            let classified = classify(object.kind, &ready.reason, &ready.message);
            (
                deleting.with("reason", ready.reason.as_ref()),
                format!("being deleted: {}", classified.reason),
                ready.message.as_str(),
            )
        }
        None => (
            deleting,
            "being deleted (finalizers pending)".to_string(),
            "",
        ),
    };
    timing.in_progress(
        cause,
        &reason,
        message,
        object.deleting_since,
        EdgeSet::NONE,
    )
}

/// Ready and converged, but what its inventory lists is not all there: it claims to run what
/// was deleted behind its back (helm-controller does not reinstall it before the next upgrade;
/// kustomize-controller not before its next apply).
/// When it went is unknown: no start time.
fn inventory_checked(finding: Finding, missing: &[String]) -> Finding {
    let Some(first) = missing.first().filter(|_| finding.state == State::Healthy) else {
        return finding;
    };
    let more = match missing.len() - 1 {
        0 => String::new(),
        more => format!(" (and {more} more)"),
    };
    let message = format!(
        "{} listed in its inventory but not found on the cluster",
        missing.join(", ")
    );
    Finding::new(
        State::Degraded,
        Cause::new(CauseCode::InventoryObjectMissing).with("object", first),
        format!("inventory object {first} not found{more}"),
        message,
    )
}

/// Copies of one object that disagree: which one is current cannot be told.
fn conflicting_copies(copies: &[String]) -> Finding {
    let reason = format!("{} differing copies in the input", copies.len());
    let message = format!("the input holds this object at {}", copies.join(", "));
    let cause = Cause::new(CauseCode::ConflictingCopies);
    Finding::new(State::Unverifiable, cause, reason, message)
}

/// An object whose existence is its health.
fn exists() -> Finding {
    Finding::new(State::Healthy, Cause::new(CauseCode::Exists), "exists", "")
}

/// References to kinds the input holds nothing of: neither present nor proven absent. Only a
/// source can be one: dependsOn names the object's own kind, which the input holds.
fn uncovered(references: &[Uncovered]) -> Option<Finding> {
    let first = references.first()?;
    let named: Vec<&str> = references.iter().map(|r| r.named.as_str()).collect();
    let message = format!(
        "{} cannot be checked: {}",
        named.join("; "),
        first.explained
    );
    Some(Finding::new(
        State::Unverifiable,
        first.cause.clone(),
        first.why.clone(),
        message,
    ))
}

/// A structural fault shows since the object last stopped being Ready, when it says so.
fn not_ready_since(object: &Object) -> Option<DateTime<Utc>> {
    object
        .condition("Ready")
        .filter(|c| !c.is_true())
        .and_then(|c| c.last_transition)
}

/// Malformed fields make the verdict unverifiable: whatever was derived from them (healthy,
/// progressing, even stuck) may be wrong. Explicit failures and suspensions keep their state
/// and say what else was wrong.
fn with_defects(object: &Object, mut finding: Finding) -> Finding {
    let Some(first) = object.defects.first() else {
        return finding;
    };
    let all = object.defects.join("; ");
    if matches!(
        finding.state,
        State::Failed | State::Suspended | State::Unverifiable
    ) {
        finding.message = format!("{} (malformed: {all})", finding.message);
        return finding;
    }
    let more = object.defects.len() - 1;
    let reason = if more > 0 {
        format!("malformed object: {first} (and {more} more)")
    } else {
        format!("malformed object: {first}")
    };
    let cause = Cause::new(CauseCode::Malformed);
    Finding::new(State::Unverifiable, cause, reason, all)
}
