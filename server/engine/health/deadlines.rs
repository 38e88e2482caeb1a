//! The evaluation's clock: `now`, and the earliest later instant at which any decision taken
//! against it (a threshold passed, a window still open, an age printed in a reason) would come
//! out differently. Until then the same input gives the same evaluation, so a caller that keeps
//! evaluations (the collector, per cluster) knows when one is due again without the input
//! changing.

use crate::model::human;
use chrono::{DateTime, TimeDelta, Utc};
use std::sync::{Mutex, PoisonError};

/// The smallest step of time chrono represents: "strictly after" an instant.
const TICK: TimeDelta = TimeDelta::nanoseconds(1);

/// The earliest instant found so far at which the evaluation is due again. Shared, so that
/// the threads assessing a large input's objects side by side add to one.
#[derive(Debug, Default)]
pub(super) struct Due(Mutex<Option<DateTime<Utc>>>);

impl Due {
    pub fn get(&self) -> Option<DateTime<Utc>> {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn at(&self, at: DateTime<Utc>) {
        let mut due = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *due = Some(due.map_or(at, |due| due.min(at)));
    }
}

/// Copy, so it travels through the engine like the timestamp it stands for.
#[derive(Debug, Clone, Copy)]
pub(super) struct Clock<'a> {
    pub now: DateTime<Utc>,
    due: &'a Due,
}

impl<'a> Clock<'a> {
    pub fn new(now: DateTime<Utc>, due: &'a Due) -> Self {
        Clock { now, due }
    }

    /// Whether more than `limit` has passed since `since`. Until it has, the evaluation is due
    /// again just after `since + limit`; once it has, time only keeps it so.
    pub fn past(&self, since: DateTime<Utc>, limit: TimeDelta) -> bool {
        let passed = self.now - since > limit;
        if !passed && let Some(at) = since.checked_add_signed(limit) {
            self.due_at(at + TICK);
        }
        passed
    }

    /// `now - since` as people read it ("5m", "2h 3m"); due again when the text would change.
    pub fn age(&self, since: DateTime<Utc>) -> String {
        let age = self.now - since;
        if let Some(next) = since.checked_add_signed(next_text_change(age)) {
            self.due_at(next);
        }
        human(age)
    }

    /// `at` when it is not after now. A time in the future (written by a clock running ahead)
    /// is no start the engine can count from: none until it arrives, and the evaluation is due
    /// again then, not at once (every evaluation reading it as "now" would change the verdict
    /// each round, and its cluster would be re-evaluated and re-written without pause).
    pub fn trusted(&self, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
        if at > self.now {
            self.due_at(at);
            return None;
        }
        Some(at)
    }

    fn due_at(&self, at: DateTime<Utc>) {
        self.due.at(at);
    }
}

/// The age at which `human(age)` next reads differently: it shows seconds under a minute,
/// minutes under a day, hours beyond (model::human).
fn next_text_change(age: TimeDelta) -> TimeDelta {
    // An age below zero (a clock running ahead) reads as zero, as `human` prints it.
    let seconds = age.num_seconds().max(0);
    let step = match seconds {
        0..60 => 1,
        60..86_400 => 60,
        _ => 3_600,
    };
    TimeDelta::seconds((seconds / step + 1) * step)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        text.parse().unwrap()
    }

    #[test]
    fn a_threshold_not_yet_passed_is_due_just_after_it_and_a_passed_one_never() {
        let due = Due::default();
        let clock = Clock::new(at("2026-12-01T12:00:00Z"), &due);
        assert!(!clock.past(at("2026-12-01T11:50:00Z"), TimeDelta::minutes(15)));
        assert_eq!(due.get(), Some(at("2026-12-01T12:05:00Z") + TICK));
        let due = Due::default();
        let clock = Clock::new(at("2026-12-01T12:00:00Z"), &due);
        assert!(clock.past(at("2026-12-01T11:40:00Z"), TimeDelta::minutes(15)));
        assert_eq!(due.get(), None);
    }

    #[test]
    fn the_earliest_deadline_wins() {
        let due = Due::default();
        let clock = Clock::new(at("2026-12-01T12:00:00Z"), &due);
        clock.past(at("2026-12-01T11:59:00Z"), TimeDelta::minutes(15));
        clock.past(at("2026-12-01T11:59:00Z"), TimeDelta::minutes(2));
        clock.past(at("2026-12-01T11:59:00Z"), TimeDelta::minutes(5));
        assert_eq!(due.get(), Some(at("2026-12-01T12:01:00Z") + TICK));
    }

    /// At every deadline the printed age really changes, and just before it does not.
    #[test]
    fn an_age_is_due_when_its_text_changes() {
        let since = at("2026-12-01T00:00:00Z");
        for seconds in [-5, 0, 59, 60, 61, 3_599, 3_600, 86_399, 86_400, 90_000] {
            let now = since + TimeDelta::seconds(seconds) + TimeDelta::milliseconds(300);
            let due = Due::default();
            let text = Clock::new(now, &due).age(since);
            let next = due.get().unwrap();
            assert!(next > now, "{seconds}s");
            let before = Clock::new(next - TICK, &Due::default()).age(since);
            let after = Clock::new(next, &Due::default()).age(since);
            assert_eq!(before, text, "{seconds}s");
            assert_ne!(after, text, "{seconds}s");
        }
    }

    #[test]
    fn a_future_time_is_untrusted_until_it_arrives_and_due_then() {
        let due = Due::default();
        let now = at("2026-12-01T12:00:00Z");
        let clock = Clock::new(now, &due);
        assert_eq!(
            clock.trusted(at("2026-12-01T11:00:00Z")),
            Some(at("2026-12-01T11:00:00Z"))
        );
        assert_eq!(due.get(), None);
        // Now itself is no future time.
        assert_eq!(clock.trusted(now), Some(now));
        assert_eq!(due.get(), None);
        assert_eq!(clock.trusted(at("2026-12-01T13:00:00Z")), None);
        assert_eq!(due.get(), Some(at("2026-12-01T13:00:00Z")));
        let arrived = Clock::new(at("2026-12-01T13:00:00Z"), &due);
        assert_eq!(
            arrived.trusted(at("2026-12-01T13:00:00Z")),
            Some(at("2026-12-01T13:00:00Z"))
        );
    }
}
