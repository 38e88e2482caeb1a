//! How long an object may stay in progress before it is `stuck` (or `stale`): the larger of
//! the configured stuck_after (domain override > per-kind > global) and twice the object's
//! effective timeout, so a slow but legitimate run is never flagged.

use super::deadlines::Clock;
use super::finding::{EdgeSet, Finding, Propagation};
use super::{Cause, State, Thresholds};
use crate::model::{Kind, Object};
use chrono::{DateTime, TimeDelta, Utc};

const HELM_ACTION_TIMEOUT: TimeDelta = TimeDelta::minutes(5);
const SOURCE_TIMEOUT: TimeDelta = TimeDelta::seconds(60);
const KUSTOMIZATION_MIN_TIMEOUT: TimeDelta = TimeDelta::seconds(30);

pub(super) fn threshold(
    object: &Object,
    thresholds: &Thresholds,
    domain_override: Option<TimeDelta>,
) -> TimeDelta {
    let configured = domain_override
        .or_else(|| thresholds.by_kind.get(&object.kind).copied())
        .unwrap_or(thresholds.stuck_after);
    let timeout = effective_timeout(object).unwrap_or(TimeDelta::zero());
    configured.max(timeout * 2)
}

/// The timeout the controller itself applies to one run, with Flux's defaults.
pub(super) fn effective_timeout(object: &Object) -> Option<TimeDelta> {
    let declared = object.spec.timeout();
    match object.kind {
        Kind::Kustomization => Some(declared.unwrap_or_else(|| {
            let interval = object.spec.interval().unwrap_or(TimeDelta::zero());
            (interval - TimeDelta::seconds(30)).max(KUSTOMIZATION_MIN_TIMEOUT)
        })),
        Kind::HelmRelease => Some(declared.unwrap_or(HELM_ACTION_TIMEOUT)),
        kind if kind.is_source() => Some(declared.unwrap_or(SOURCE_TIMEOUT)),
        _ => declared,
    }
}

/// An object's threshold and the evaluation time: what turns `progressing` into `stuck`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Timing<'a> {
    pub threshold: TimeDelta,
    pub clock: Clock<'a>,
    /// When the engine's caller first saw the object in progress: the start of work that
    /// has no start time of its own.
    pub seen_since: Option<DateTime<Utc>>,
}

impl Timing<'_> {
    /// Work in progress: `progressing` until the threshold, `stuck` after. Without a start
    /// time of its own, its age counts from when it was first seen in progress; never seen
    /// before, it is `progressing` (never `healthy`).
    /// Stuck or not, the cause is the same: the age is in the reason only.
    pub fn in_progress(
        &self,
        cause: Cause,
        reason: &str,
        message: &str,
        since: Option<DateTime<Utc>>,
        explained_by: EdgeSet,
    ) -> Finding {
        let propagation = Propagation::Explainable(explained_by);
        if let Some((since, age)) = self.overdue(since) {
            let reason = format!("stuck for {age}: {reason}");
            return Finding::new(State::Stuck, cause, reason, message)
                .since(Some(since))
                .propagation(propagation);
        }
        Finding::new(State::Progressing, cause, reason, message)
            .since(self.start(since))
            .propagation(propagation)
    }

    /// The start of work begun at `since` (else first seen in progress) and its age as people
    /// read it, when it has been in progress for longer than the threshold.
    pub fn overdue(&self, since: Option<DateTime<Utc>>) -> Option<(DateTime<Utc>, String)> {
        let since = self.start(since)?;
        self.clock
            .past(since, self.threshold)
            .then(|| (since, self.clock.age(since)))
    }

    /// Where the work's age counts from: the earlier of its own start (unless that lies in
    /// the future: its controller's clock runs ahead) and when it was first seen unsettled.
    /// kustomize-controller rewrites Ready at the start of every attempt
    /// (kustomize-controller@v1.9.6 kustomization_controller.go reconcile: Ready Unknown
    /// "Reconciliation in progress"), so an object retrying the same failing step has a fresh
    /// start each time; the sighting, kept across attempts and restarts, is what ages it.
    pub fn start(&self, since: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
        let own = since.and_then(|since| self.clock.trusted(since));
        match (own, self.seen_since) {
            (Some(own), Some(seen)) => Some(own.min(seen)),
            (own, seen) => own.or(seen),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::CauseCode;
    use crate::model::{FluxSpec, Sparse, Spec};

    fn progressing() -> Cause {
        Cause::new(CauseCode::FluxInProgress).with("reason", "Progressing")
    }

    fn object(kind: Kind, interval: Option<i64>, timeout: Option<i64>) -> Object {
        Object {
            cluster: "c".into(),
            kind,
            api_version: "".into(),
            namespace: "ns".into(),
            name: "x".into(),
            generation: None,
            labels: Default::default(),
            deleting: false,
            created: None,
            deleting_since: None,
            owners: vec![],
            reconcile_requested: None,
            spec: Spec {
                flux: Sparse::new(FluxSpec {
                    interval_secs: interval,
                    timeout_secs: timeout,
                    ..FluxSpec::default()
                }),
                ..Spec::default()
            },
            status: Default::default(),
            defects: vec![],
        }
    }

    #[test]
    fn effective_timeouts_follow_flux_defaults() {
        let minutes = TimeDelta::minutes;
        assert_eq!(
            effective_timeout(&object(Kind::Kustomization, Some(600), None)),
            Some(TimeDelta::seconds(570))
        );
        assert_eq!(
            effective_timeout(&object(Kind::Kustomization, Some(40), None)),
            Some(TimeDelta::seconds(30))
        );
        assert_eq!(
            effective_timeout(&object(Kind::Kustomization, Some(600), Some(120))),
            Some(minutes(2))
        );
        assert_eq!(
            effective_timeout(&object(Kind::HelmRelease, None, None)),
            Some(minutes(5))
        );
        assert_eq!(
            effective_timeout(&object(Kind::GitRepository, None, None)),
            Some(minutes(1))
        );
        assert_eq!(
            effective_timeout(&object(Kind::Terraform, None, None)),
            None
        );
        assert_eq!(
            effective_timeout(&object(Kind::Terraform, None, Some(3600))),
            Some(minutes(60))
        );
    }

    #[test]
    fn threshold_is_the_larger_of_configured_and_twice_the_timeout() {
        let mut thresholds = Thresholds::default();
        let release = object(Kind::HelmRelease, None, Some(1800));
        assert_eq!(
            threshold(&release, &thresholds, None),
            TimeDelta::minutes(60)
        );
        let quick = object(Kind::HelmRelease, None, Some(60));
        assert_eq!(threshold(&quick, &thresholds, None), TimeDelta::minutes(15));
        thresholds
            .by_kind
            .insert(Kind::HelmRelease, TimeDelta::minutes(20));
        assert_eq!(threshold(&quick, &thresholds, None), TimeDelta::minutes(20));
        assert_eq!(
            threshold(&quick, &thresholds, Some(TimeDelta::minutes(3))),
            TimeDelta::minutes(3)
        );
    }

    fn timing(seen_since: Option<DateTime<Utc>>) -> Timing<'static> {
        Timing {
            threshold: TimeDelta::minutes(15),
            clock: Clock::new(
                "2026-11-29T12:00:00Z".parse().unwrap(),
                Box::leak(Box::default()),
            ),
            seen_since,
        }
    }

    fn state_after(timing: &Timing, since: Option<DateTime<Utc>>) -> State {
        timing
            .in_progress(progressing(), "Progressing", "", since, EdgeSet::NONE)
            .state
    }

    #[test]
    fn exactly_at_the_threshold_is_progressing_one_second_past_is_stuck() {
        let timing = timing(None);
        let at = timing.clock.now - timing.threshold;
        assert_eq!(state_after(&timing, Some(at)), State::Progressing);
        let past = at - TimeDelta::seconds(1);
        let finding = timing.in_progress(
            progressing(),
            "Progressing",
            "msg",
            Some(past),
            EdgeSet::NONE,
        );
        assert_eq!(finding.state, State::Stuck);
        assert_eq!(finding.reason, "stuck for 15m: Progressing");
        assert_eq!(finding.since, Some(past));
        assert_eq!(
            state_after(&timing, None),
            State::Progressing,
            "no start known"
        );
    }

    #[test]
    fn without_a_start_of_its_own_the_first_sighting_counts() {
        let now: DateTime<Utc> = "2026-11-29T12:00:00Z".parse().unwrap();
        let at = now - TimeDelta::minutes(15);
        assert_eq!(state_after(&timing(Some(at)), None), State::Progressing);
        let past = at - TimeDelta::seconds(1);
        let seen = timing(Some(past));
        let finding = seen.in_progress(progressing(), "Progressing", "", None, EdgeSet::NONE);
        assert_eq!((finding.state, finding.since), (State::Stuck, Some(past)));
        // A fresh start of its own (a new attempt, Ready rewritten) does not reset the age of
        // work first seen unsettled earlier: the earlier of the two counts.
        assert_eq!(state_after(&seen, Some(now)), State::Stuck);
        let earlier = timing(Some(now - TimeDelta::minutes(1)));
        assert_eq!(
            state_after(&earlier, Some(past)),
            State::Stuck,
            "its own start earlier"
        );
    }

    #[test]
    fn a_start_from_a_clock_ahead_gives_way_to_the_first_sighting() {
        let now: DateTime<Utc> = "2026-11-29T12:00:00Z".parse().unwrap();
        let ahead = Some(now + TimeDelta::hours(2));
        let unseen =
            timing(None).in_progress(progressing(), "Progressing", "", ahead, EdgeSet::NONE);
        assert_eq!((unseen.state, unseen.since), (State::Progressing, None));
        let recently = now - TimeDelta::minutes(1);
        let seen = timing(Some(recently)).in_progress(
            progressing(),
            "Progressing",
            "",
            ahead,
            EdgeSet::NONE,
        );
        assert_eq!(
            (seen.state, seen.since),
            (State::Progressing, Some(recently))
        );
        let long_ago = now - TimeDelta::minutes(16);
        let timing = timing(Some(long_ago));
        let stuck = timing.in_progress(progressing(), "Progressing", "", ahead, EdgeSet::NONE);
        assert_eq!((stuck.state, stuck.since), (State::Stuck, Some(long_ago)));
        assert_eq!(
            timing.overdue(ahead).map(|(since, _)| since),
            Some(long_ago)
        );
    }

    #[test]
    fn twice_the_timeout_against_the_configured_minimum_at_the_boundary() {
        let thresholds = Thresholds::default();
        // 7m30s timeout: twice is exactly the 15m default.
        let equal = object(Kind::HelmRelease, None, Some(450));
        assert_eq!(threshold(&equal, &thresholds, None), TimeDelta::minutes(15));
        let above = object(Kind::HelmRelease, None, Some(451));
        assert_eq!(
            threshold(&above, &thresholds, None),
            TimeDelta::seconds(902)
        );
        // No timeout of its own (a Deployment): the configured value.
        let plain = object(Kind::Deployment, None, None);
        assert_eq!(threshold(&plain, &thresholds, None), TimeDelta::minutes(15));
        // A Kustomization's default timeout is its interval less 30s: 1h interval → 59m30s.
        let hourly = object(Kind::Kustomization, Some(3600), None);
        assert_eq!(
            threshold(&hourly, &thresholds, None),
            TimeDelta::seconds(2 * 3570)
        );
        let exact = object(Kind::Kustomization, Some(60), None);
        assert_eq!(effective_timeout(&exact), Some(TimeDelta::seconds(30)));
    }
}
