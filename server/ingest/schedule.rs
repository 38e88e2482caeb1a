//! When the runner's next round starts. A change starts one at once, but no sooner than a gap
//! after the previous round began that grows with what that round cost: twice its time, at
//! least `COALESCE`, at most `MIN_GAP`. A quiet fleet's rounds take milliseconds, so it reacts in
//! milliseconds; a flooded one's rounds grow with their batches, so the gap grows to `MIN_GAP`
//! and rounds batch instead of spinning (the runner spends at most half its time in rounds while
//! they are quick). Without changes a round starts when a kept evaluation falls due (a threshold
//! passing), when unwritten changes wait for a retry, and at least every `REFRESH`, which
//! republishes the evaluation so time moves on for its readers.

use std::time::{Duration, Instant};

/// The longest gap between two rounds' starts while changes wait.
pub const MIN_GAP: Duration = Duration::from_millis(100);
/// The shortest: changes arriving together (one apply touching many objects) share a round.
pub const COALESCE: Duration = Duration::from_millis(5);
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
    /// How long the last round took (None: not known, the gap is `MIN_GAP`).
    last_took: Option<Duration>,
}

impl Schedule {
    /// No round yet: the first starts at once.
    pub fn new() -> Self {
        Schedule {
            last_start: None,
            last_took: None,
        }
    }

    /// A round started at `at`.
    pub fn started(&mut self, at: Instant) {
        self.last_start = Some(at);
        self.last_took = None;
    }

    /// The round started last ended at `at`.
    pub fn ended(&mut self, at: Instant) {
        self.last_took = self
            .last_start
            .map(|start| at.saturating_duration_since(start));
    }

    /// The least time between the last round's start and the next one's while changes wait.
    fn gap(&self) -> Duration {
        self.last_took
            .map_or(MIN_GAP, |took| (2 * took).clamp(COALESCE, MIN_GAP))
    }

    /// When the next round starts, given the work waiting; `now` for the first round.
    pub fn next(&self, work: Work, now: Instant) -> Instant {
        let Some(last) = self.last_start else {
            return now;
        };
        let earliest = last + self.gap();
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

    /// A quick round (a quiet fleet's) lets the next follow after twice its time, so a change
    /// waits milliseconds; a slow one (a flood's) keeps rounds `MIN_GAP` apart, so they batch.
    #[test]
    fn the_gap_after_a_round_grows_with_what_it_cost_up_to_min_gap() {
        let changed = Work {
            changed: true,
            ..Work::default()
        };
        let gap_after = |took: Duration| {
            let start = Instant::now();
            let mut schedule = Schedule::new();
            schedule.started(start);
            schedule.ended(start + took);
            schedule.next(changed, start + took) - start
        };
        assert_eq!(gap_after(Duration::from_millis(1)), COALESCE);
        assert_eq!(
            gap_after(Duration::from_millis(10)),
            Duration::from_millis(20)
        );
        assert_eq!(gap_after(Duration::from_millis(80)), MIN_GAP);
        assert_eq!(gap_after(Duration::from_secs(2)), MIN_GAP);
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
