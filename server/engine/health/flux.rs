//! Per-object rules for Flux kinds, from the object's own status only: conditions, observed
//! generations, revisions, and time. Prerequisites are combined later (roots.rs).

use super::classify::{Classified, Outcome, classify, helm_action, waited_for};
use super::finding::{EdgeSet, Finding, Propagation};
use super::reasons::ready_is_proof;
use super::revisions::{converged_revision, same_chart, same_revision};
use super::threshold::Timing;
use super::{Cause, CauseCode, State};
use crate::model::{Condition, ConditionStatus, Kind, Object};

/// What a Flux object's rules need besides the object.
pub(super) struct FluxContext<'a> {
    pub timing: Timing<'a>,
    /// The source object, for comparing applied with offered revisions.
    pub source: Option<&'a Object>,
}

pub(super) fn assess(object: &Object, context: &FluxContext) -> Finding {
    if object.status.conditions.is_empty() {
        return without_conditions(object, context);
    }
    if let Some(stalled) = object.condition("Stalled").filter(|c| c.is_true()) {
        return gave_up(object, stalled);
    }
    let Some(ready) = object.condition("Ready") else {
        let since = object
            .status
            .conditions
            .iter()
            .filter_map(|c| c.last_transition)
            .min();
        let cause = Cause::new(CauseCode::NoStatusYet).with("what", "Ready");
        return context.timing.in_progress(
            cause,
            "no Ready condition yet",
            "",
            since,
            EdgeSet::WAITING,
        );
    };
    match ready.status {
        ConditionStatus::True => when_ready(object, ready, context),
        ConditionStatus::Unknown => {
            let classified = classify(object.kind, &ready.reason, &ready.message);
            let since = reconciling(object)
                .and_then(|r| r.last_transition)
                .or(ready.last_transition);
            let message = with_revision_lag(object, &ready.message);
            context.timing.in_progress(
                classified.cause,
                &classified.reason,
                &message,
                since,
                EdgeSet::WAITING,
            )
        }
        ConditionStatus::False => {
            let (classified, message) = remediated(object, ready).unwrap_or_else(|| {
                let classified = classify(object.kind, &ready.reason, &ready.message);
                (classified, ready.message.clone())
            });
            match classified.outcome {
                Outcome::Failure | Outcome::FailedBy => {
                    let propagation = failure_cause(&classified);
                    Finding::new(State::Failed, classified.cause, classified.reason, message)
                        .since(ready.last_transition)
                        .propagation(propagation)
                }
                Outcome::Waiting | Outcome::InProgress => context.timing.in_progress(
                    classified.cause,
                    &classified.reason,
                    &with_revision_lag(object, &message),
                    ready.last_transition,
                    classified.explained_by,
                ),
            }
        }
    }
}

/// A failure is explainable (blocked when its prerequisites are problems), unless its cause
/// is them (a Helm wait on failing workloads): then it stays failed and takes their roots.
fn failure_cause(classified: &Classified) -> Propagation {
    match classified.outcome {
        Outcome::FailedBy => Propagation::Symptom(classified.explained_by),
        _ => Propagation::Explainable(classified.explained_by),
    }
}

/// Stalled=True: the controller gave up. Its message says only that ("Failed to upgrade after
/// 1 attempt(s)", helm-controller internal/reconcile atomic_release.go); why is in the Ready
/// or Released condition the failed action wrote, which the verdict keeps.
fn gave_up(object: &Object, stalled: &Condition) -> Finding {
    let stalled_as = classify(object.kind, &stalled.reason, &stalled.message);
    if let Some((remediated, message)) = object
        .condition("Ready")
        .and_then(|ready| remediated(object, ready))
    {
        let propagation = failure_cause(&remediated);
        return Finding::new(
            State::Failed,
            remediated.cause.with("stalled", stalled.reason.as_ref()),
            format!("{} ({})", remediated.reason, stalled_as.reason),
            format!("{}: {message}", stalled.message),
        )
        .since(stalled.last_transition)
        .propagation(propagation);
    }
    let why = ["Released", "Ready"]
        .into_iter()
        .filter_map(|type_| object.condition(type_))
        .filter(|c| c.status == ConditionStatus::False)
        .map(|c| (c, classify(object.kind, &c.reason, &c.message)))
        // the one naming what the action waited on, else Ready
        .max_by_key(|(condition, _)| waited_for(&condition.message).is_some());
    let finding = |classified: Classified, reason: String, message: String, propagation| {
        let cause = classified.cause.with("stalled", stalled.reason.as_ref());
        Finding::new(State::Failed, cause, reason, message)
            .since(stalled.last_transition)
            .propagation(propagation)
    };
    match why {
        Some((condition, why)) if why.reason != stalled_as.reason => {
            let propagation = failure_cause(&why);
            let reason = format!("{} ({})", why.reason, stalled_as.reason);
            let message = format!("{}: {}", stalled.message, condition.message);
            finding(why, reason, message, propagation)
        }
        _ => {
            let propagation = Propagation::Explainable(stalled_as.explained_by);
            let reason = stalled_as.reason.clone();
            finding(stalled_as, reason, stalled.message.clone(), propagation)
        }
    }
}

/// After a failed action helm-controller remediates (rolls back or uninstalls) and summarises
/// Ready from the Remediated condition, False whatever the remediation's outcome, with its
/// reason (helm-controller@v1.6.4 internal/reconcile/release.go summarize: "Any remediated
/// state is considered an error"): "rollback succeeded" hides what failed. The failed
/// action's own words are on Released (or TestSuccess) with status False; the verdict's
/// message leads with them, then the remediation's.
fn remediated(object: &Object, ready: &Condition) -> Option<(Classified, String)> {
    let outcome = match ready.reason.as_ref() {
        "RollbackSucceeded" => "rolled back",
        "RollbackFailed" => "rollback failed too",
        "UninstallSucceeded" => "uninstalled",
        "UninstallFailed" => "uninstall failed too",
        _ => return None,
    };
    let failed = ["TestSuccess", "Released"]
        .into_iter()
        .filter_map(|type_| object.condition(type_))
        .find(|c| c.status == ConditionStatus::False);
    let Some(failed) = failed else {
        let classified = Classified {
            cause: Cause::new(CauseCode::FluxFailure).with("reason", ready.reason.as_ref()),
            reason: format!("Helm action failed ({outcome})"),
            outcome: Outcome::FailedBy,
            explained_by: EdgeSet::DEPLOYED,
        };
        return Some((classified, ready.message.clone()));
    };
    let mut classified = classify(object.kind, &failed.reason, &failed.message);
    classified.cause = classified
        .cause
        .with("condition", failed.type_.as_ref())
        .with("remediation", ready.reason.as_ref());
    let action = helm_action(&failed.reason);
    classified.reason = if classified.reason.starts_with(action) {
        format!("{} ({outcome})", classified.reason)
    } else {
        format!("{action}: {} ({outcome})", classified.reason)
    };
    Some((classified, format!("{}; {}", failed.message, ready.message)))
}

/// Ready=True is necessary, not sufficient (FLUX_FACTS "What healthy means here"). Work in
/// progress under it is still Ready: what it deployed degrades it rather than blocking it.
fn when_ready(object: &Object, ready: &Condition, context: &FluxContext) -> Finding {
    let mut finding = ready_evidence(object, ready, context);
    if let Propagation::Explainable(set) = finding.propagation
        && finding.state != State::Healthy
    {
        finding.propagation = Propagation::ReadyInProgress(set);
    }
    finding
}

fn ready_evidence(object: &Object, ready: &Condition, context: &FluxContext) -> Finding {
    if let Some(generation) = object.generation {
        let observed = [ready.observed_generation, object.status.observed_generation];
        if let Some(behind) = observed.into_iter().flatten().find(|&o| o < generation) {
            let reason = format!("generation {generation} not yet reconciled (observed {behind})");
            // The controller marks Reconciling when it starts on the new generation; before
            // that there is no trustworthy start time, so it cannot be called stuck yet.
            let since = reconciling(object).and_then(|r| r.last_transition);
            let cause = Cause::new(CauseCode::GenerationPending);
            return context.timing.in_progress(
                cause,
                &reason,
                &ready.message,
                since,
                EdgeSet::WAITING,
            );
        }
    }
    if let Some(flag) = reconciling(object) {
        return reconciling_while_ready(flag, context);
    }
    let lag = match object.kind {
        Kind::Kustomization | Kind::Terraform => revision_lag(object, ready, context),
        Kind::HelmRelease => chart_lag(object, ready, context),
        _ => None,
    };
    if let Some(finding) = lag {
        return finding;
    }
    if !ready_is_proof(object.kind, &ready.reason) {
        // Not a success its controller is known to write: its words, never green.
        let reason = format!(
            "Ready=True with reason {:?}, which no known {} controller writes",
            ready.reason.as_ref(),
            object.kind
        );
        let cause = Cause::new(CauseCode::UnknownReadyReason).with("reason", ready.reason.as_ref());
        return Finding::new(State::Unverifiable, cause, reason, &ready.message)
            .since(ready.last_transition);
    }
    // Healthy is never a root cause: the code alone, so a large fleet's verdicts carry no
    // parameters (an empty map allocates nothing).
    let cause = Cause::new(CauseCode::Ready);
    Finding::new(
        State::Healthy,
        cause,
        ready.reason.to_string(),
        &ready.message,
    )
    .since(ready.last_transition)
    .propagation(Propagation::Explainable(EdgeSet::DEPLOYED))
}

/// Ready=True + Reconciling=True: a routine run for a few minutes (every HelmRelease run shows
/// it), a self-contradicting status past the threshold (seed 000, incident 4).
fn reconciling_while_ready(flag: &Condition, context: &FluxContext) -> Finding {
    let since = flag.last_transition;
    let timing = &context.timing;
    let overdue = since.filter(|&s| timing.clock.past(s, timing.threshold));
    let detail = if flag.message.is_empty() {
        flag.reason.as_str()
    } else {
        flag.message.as_str()
    };
    match overdue {
        Some(began) => Finding::new(
            State::Stale,
            Cause::new(CauseCode::StaleStatus).with("reason", flag.reason.as_ref()),
            format!(
                "stale status: Ready=True but Reconciling=True for {} ({detail})",
                timing.clock.age(began)
            ),
            &flag.message,
        )
        .since(since),
        _ => Finding::new(
            State::Progressing,
            Cause::new(CauseCode::FluxInProgress)
                .with("condition", "Reconciling")
                .with("reason", flag.reason.as_ref()),
            format!("reconciling ({detail})"),
            &flag.message,
        )
        .since(since)
        .propagation(Propagation::Explainable(EdgeSet::WAITING)),
    }
}

/// Kustomization/Terraform: attempted ≠ applied, or applied behind what the source offers.
fn revision_lag(object: &Object, ready: &Condition, context: &FluxContext) -> Option<Finding> {
    if let Some((attempted, applied)) = revision_in_flight(object) {
        let reason = format!("revision {attempted} attempted but {applied} applied");
        return Some(lagging(
            context,
            CauseCode::RevisionInFlight,
            &reason,
            ready,
            ready.last_transition,
        ));
    }
    let applied = converged_revision(object);
    let source = context.source?;
    let offered = source.status.flux.artifact_revision.as_deref()?;
    if applied.is_some_and(|applied| same_revision(applied, offered)) {
        return None;
    }
    let reason = format!(
        "source offers {offered}, applied {}",
        applied.unwrap_or("nothing")
    );
    Some(behind_source(context, source, &reason, ready))
}

/// Ready, and behind what its source offers: since the source's artifact changed.
fn behind_source(
    context: &FluxContext,
    source: &Object,
    reason: &str,
    ready: &Condition,
) -> Finding {
    let since = source
        .status
        .flux
        .artifact_updated
        .or(ready.last_transition);
    lagging(context, CauseCode::BehindSource, reason, ready, since)
}

/// Ready, and behind: a revision in flight or one the source offers not applied yet.
fn lagging(
    context: &FluxContext,
    code: CauseCode,
    reason: &str,
    ready: &Condition,
    since: Option<chrono::DateTime<chrono::Utc>>,
) -> Finding {
    let cause = Cause::new(code);
    context
        .timing
        .in_progress(cause, reason, &ready.message, since, EdgeSet::WAITING)
}

/// HelmRelease: Ready on a chart other than the one last attempted (an upgrade in flight or
/// one whose outcome Ready does not show yet), or older than what its HelmChart or
/// OCIRepository offers.
fn chart_lag(object: &Object, ready: &Condition, context: &FluxContext) -> Option<Finding> {
    let release = object.status.flux.release.as_ref();
    let deployed = release.and_then(|r| r.chart_version.as_deref()).or(object
        .status
        .flux
        .last_applied_revision
        .as_deref())?;
    if let Some(attempted) = object.status.flux.last_attempted_revision.as_deref()
        && attempted != deployed
    {
        let reason = format!("chart {attempted} attempted, {deployed} deployed");
        let since = ready.last_transition;
        return Some(lagging(
            context,
            CauseCode::RevisionInFlight,
            &reason,
            ready,
            since,
        ));
    }
    let source = context.source?;
    let offered = source.status.flux.artifact_revision.as_deref()?;
    let oci_digest = release.and_then(|r| r.oci_digest.as_deref());
    if same_chart(deployed, oci_digest, offered) {
        return None;
    }
    let reason = format!("chart {offered} offered, {deployed} deployed");
    Some(behind_source(context, source, &reason, ready))
}

/// The controller's message, plus the revision it is trying when that is not the one applied:
/// while a new commit is in flight, what is running is still the old one.
fn with_revision_lag(object: &Object, message: &str) -> String {
    match revision_in_flight(object) {
        Some((attempted, applied)) => {
            let lag = format!("attempting {attempted}, last applied {applied}");
            if message.is_empty() {
                lag
            } else {
                format!("{message} ({lag})")
            }
        }
        None => message.to_string(),
    }
}

/// (lastAttemptedRevision, lastAppliedRevision) when they differ: a new revision in flight.
fn revision_in_flight(object: &Object) -> Option<(&str, &str)> {
    let attempted = object.status.flux.last_attempted_revision.as_deref()?;
    let applied = converged_revision(object)?;
    (!same_revision(attempted, applied)).then_some((attempted, applied))
}

fn reconciling(object: &Object) -> Option<&Condition> {
    object.condition("Reconciling").filter(|c| c.is_true())
}

/// No conditions: a new object the controller has not reached yet, or a kind that has none.
fn without_conditions(object: &Object, context: &FluxContext) -> Finding {
    if object.kind == Kind::HelmRepository && object.spec.flux.source_type.as_deref() == Some("oci")
    {
        return Finding::new(
            State::Healthy,
            Cause::new(CauseCode::NoStatusByDesign),
            "OCI HelmRepository (no status by design)",
            "",
        );
    }
    let (what, reason) = if object.status.present {
        ("conditions", "no conditions yet")
    } else {
        ("status", "no status yet")
    };
    let cause = Cause::new(CauseCode::NoStatusYet).with("what", what);
    context
        .timing
        .in_progress(cause, reason, "", object.created, EdgeSet::NONE)
}
