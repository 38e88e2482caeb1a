//! Flapping: a cause that keeps failing, recovering and failing again says so ("failed 5
//! times in 16m"), read from the stored state transitions of its objects.

use crate::model::human;
use chrono::{DateTime, TimeDelta, Utc};
use std::fmt;

/// How far back the transitions are read.
pub const FLAP_WINDOW: TimeDelta = TimeDelta::hours(1);
/// Entries into a problem state within the window that make a cause flapping.
const FLAPPING_AT: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flap {
    pub times: usize,
    /// From the first of those entries to the last.
    pub within: TimeDelta,
}

impl fmt::Display for Flap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // At least a minute: "in 0s" reads like a glitch.
        let within = human(self.within.max(TimeDelta::minutes(1)));
        write!(f, "failed {} times in {within}", self.times)
    }
}

/// Whether one object's entries into a problem state (within [`FLAP_WINDOW`]) make it flap.
pub fn flapping(entries: &[DateTime<Utc>]) -> Option<Flap> {
    if entries.len() < FLAPPING_AT {
        return None;
    }
    let first = entries.iter().min()?;
    let last = entries.iter().max()?;
    Some(Flap {
        times: entries.len(),
        within: *last - *first,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(minute: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + minute * 60, 0).unwrap()
    }

    #[test]
    fn five_failures_in_sixteen_minutes_are_a_flap() {
        let entries = [at(0), at(4), at(8), at(12), at(16)];
        let flap = flapping(&entries).unwrap();
        assert_eq!(flap.to_string(), "failed 5 times in 16m");
    }

    #[test]
    fn failing_once_or_twice_is_no_flap() {
        assert_eq!(flapping(&[]), None);
        assert_eq!(flapping(&[at(0), at(30)]), None);
    }

    #[test]
    fn entries_in_the_same_second_still_read_as_a_minute() {
        let flap = flapping(&[at(1), at(1), at(1)]).unwrap();
        assert_eq!(flap.to_string(), "failed 3 times in 1m");
    }
}
