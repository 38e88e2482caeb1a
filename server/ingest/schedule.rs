//! When the runner's next round starts. A change starts one at once, but no sooner than
//! `MIN_GAP` after the previous round began, so a quiet fleet reacts in milliseconds and a
//! flooded one batches instead of spinning. Without changes a round starts when a kept
//! evaluation falls due (a threshold passing), when unwritten changes wait for a retry, and at
//! least every `REFRESH`, which republishes the evaluation so time moves on for its readers.

use std::time::{Duration, Instant};

/// Rounds start at most this often.
pub const MIN_GAP: Duration = Duration::from_millis(100);
/// A round starts at least this often, changes or not.
pub const REFRESH: Duration = Duration::from_secs(5);
/// Unwritten changes (the database did not answer) are retried this often.
pub const RETRY: Duration = Duration::from_millis(200);

/// What waits for a round.
#[derive(Debug, Clone, Copy, Default)]
pub struct Work {
    /// Something arrived that can change an evaluation.
    pub changed: bool,
    /// Changes not yet written.
    pub unwritten: bool,
    /// When the earliest kept evaluation falls due.
    pub due: Option<Instant>,
}

#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    last_start: Option<Instant>,
}

impl Schedule {
    /// No round yet: the first starts at once.
    pub fn new() -> Self {
        Schedule { last_start: None }
    }

    /// A round started at `at`.
    pub fn started(&mut self, at: Instant) {
        self.last_start = Some(at);
    }

    /// When the next round starts, given the work waiting; `now` for the first round.
    pub fn next(&self, work: Work, now: Instant) -> Instant {
        let Some(last) = self.last_start else {
            return now;
        };
        let earliest = last + MIN_GAP;
        let mut at = last + REFRESH;
        if work.changed {
            at = earliest;
        }
        if work.unwritten {
            at = at.min(last + RETRY);
        }
        if let Some(due) = work.due {
            at = at.min(due.max(earliest));
        }
        at
    }
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn after(last: Instant, work: Work) -> Duration {
        let mut schedule = Schedule::new();
        schedule.started(last);
        schedule.next(work, last) - last
    }

    #[test]
    fn the_first_round_starts_at_once() {
        let now = Instant::now();
        assert_eq!(Schedule::new().next(Work::default(), now), now);
    }

    /// The old runner looked every 200 ms; now a change after a quiet spell starts a round the
    /// moment it arrives, and during a flood rounds follow each other MIN_GAP apart.
    #[test]
    fn a_change_starts_a_round_at_once_after_a_quiet_spell_and_min_gap_apart_in_a_flood() {
        let quiet_since = Instant::now();
        let mut schedule = Schedule::new();
        schedule.started(quiet_since);
        let arrival = quiet_since + Duration::from_secs(3);
        let changed = Work {
            changed: true,
            ..Work::default()
        };
        assert!(schedule.next(changed, arrival) <= arrival);
        assert_eq!(after(quiet_since, changed), MIN_GAP);
    }

    #[test]
    fn without_changes_a_round_waits_for_the_refresh() {
        assert_eq!(after(Instant::now(), Work::default()), REFRESH);
    }

    #[test]
    fn a_deadline_starts_a_round_when_it_falls_due_but_not_before_the_gap() {
        let last = Instant::now();
        let due = |d: Duration| Work {
            due: Some(last + d),
            ..Work::default()
        };
        assert_eq!(
            after(last, due(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
        assert_eq!(after(last, due(Duration::from_millis(1))), MIN_GAP);
        assert_eq!(after(last, due(Duration::from_secs(60))), REFRESH);
    }

    #[test]
    fn unwritten_changes_are_retried() {
        let work = Work {
            unwritten: true,
            ..Work::default()
        };
        assert_eq!(after(Instant::now(), work), RETRY);
    }
}
