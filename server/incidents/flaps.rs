//! Flapping: a cause that keeps failing, recovering and failing again says so ("failed 5
//! times in 16m"), read from the stored state transitions of its objects.

use crate::model::human;
use crate::store::ProblemEntries;
use chrono::TimeDelta;
use std::fmt;

/// How far back the transitions are read.
pub const FLAP_WINDOW: TimeDelta = TimeDelta::hours(1);
/// Entries into a problem state within the window that make a cause flapping.
const FLAPPING_AT: usize = 3;
/// The newest entries counted per object, at most: enough to say that it flaps and how fast,
/// while a flapping storm's whole hour of history (thousands of entries per object under
/// churn) is never read on a page request.
pub const ENTRIES_COUNTED: usize = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flap {
    pub times: usize,
    /// From the first of those entries to the last.
    pub within: TimeDelta,
    /// `times` is [`ENTRIES_COUNTED`]: it failed at least that often.
    pub at_least: bool,
}

impl fmt::Display for Flap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // At least a minute: "in 0s" reads like a glitch.
        let within = human(self.within.max(TimeDelta::minutes(1)));
        let more = if self.at_least { "+" } else { "" };
        write!(f, "failed {}{more} times in {within}", self.times)
    }
}

/// Whether one object's newest entries into a problem state (within [`FLAP_WINDOW`], at most
/// [`ENTRIES_COUNTED`] of them) make it flap.
pub fn flapping(entries: &ProblemEntries) -> Option<Flap> {
    (entries.times >= FLAPPING_AT).then(|| Flap {
        times: entries.times,
        within: entries.last - entries.first,
        at_least: entries.times >= ENTRIES_COUNTED,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};

    fn at(minute: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + minute * 60, 0).unwrap()
    }

    fn entries(times: usize, first: i64, last: i64) -> ProblemEntries {
        ProblemEntries {
            times,
            first: at(first),
            last: at(last),
        }
    }

    #[test]
    fn five_failures_in_sixteen_minutes_are_a_flap() {
        let flap = flapping(&entries(5, 0, 16)).unwrap();
        assert_eq!(flap.to_string(), "failed 5 times in 16m");
    }

    #[test]
    fn failing_once_or_twice_is_no_flap() {
        assert_eq!(flapping(&entries(1, 0, 0)), None);
        assert_eq!(flapping(&entries(2, 0, 30)), None);
        assert_eq!(
            flapping(&entries(3, 0, 30)),
            Some(Flap {
                times: 3,
                within: TimeDelta::minutes(30),
                at_least: false,
            })
        );
    }

    #[test]
    fn a_count_that_reached_the_cap_says_at_least() {
        let flap = flapping(&entries(ENTRIES_COUNTED, 0, 3)).unwrap();
        assert_eq!(
            flap.to_string(),
            format!("failed {ENTRIES_COUNTED}+ times in 3m")
        );
        let below = flapping(&entries(ENTRIES_COUNTED - 1, 0, 3)).unwrap();
        assert_eq!(
            below.to_string(),
            format!("failed {} times in 3m", ENTRIES_COUNTED - 1)
        );
    }

    #[test]
    fn entries_in_the_same_second_still_read_as_a_minute() {
        let flap = flapping(&entries(3, 1, 1)).unwrap();
        assert_eq!(flap.to_string(), "failed 3 times in 1m");
    }
}
