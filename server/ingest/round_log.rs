//! What the runner's recent rounds did, one record each (sizes and where the time went), so a
//! bench or an operator can see whether a round costs what changed or what is held.

use super::runner::RoundTimes;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Rounds kept: at ten rounds a second, the last few minutes.
const KEPT: usize = 4_096;

/// One round.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RoundRecord {
    pub times: RoundTimes,
    /// Applying the events that arrived since the previous round began to the snapshot.
    pub apply: Duration,
    /// Objects changed since the previous round.
    pub objects: usize,
    /// Clusters re-evaluated.
    pub clusters: usize,
    /// When the runner took up the first event this round applied (None: no event), when the
    /// round began and when its write committed (None: nothing written): the stages a
    /// change's latency is made of (the propagation bench prints them).
    pub first_event: Option<Instant>,
    pub started: Option<Instant>,
    pub committed: Option<Instant>,
}

/// The most recent rounds, oldest first, and how many rounds ran in all.
#[derive(Debug, Clone, Default)]
pub struct RoundLog {
    recent: VecDeque<RoundRecord>,
    total: u64,
}

impl RoundLog {
    pub fn push(&mut self, record: RoundRecord) {
        if self.recent.len() == KEPT {
            self.recent.pop_front();
        }
        self.recent.push_back(record);
        self.total += 1;
    }

    /// Rounds run since the runner started.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The kept rounds after the first `total` (as `total()` returned it earlier).
    pub fn since(&self, total: u64) -> impl Iterator<Item = &RoundRecord> {
        let newer = usize::try_from(self.total.saturating_sub(total)).unwrap_or(usize::MAX);
        self.recent
            .iter()
            .skip(self.recent.len().saturating_sub(newer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(objects: usize) -> RoundRecord {
        RoundRecord {
            objects,
            ..RoundRecord::default()
        }
    }

    #[test]
    fn since_gives_the_rounds_after_a_count_and_the_log_keeps_the_newest() {
        let mut log = RoundLog::default();
        for n in 0..3 {
            log.push(record(n));
        }
        let mark = log.total();
        log.push(record(3));
        assert_eq!(log.since(mark).map(|r| r.objects).collect::<Vec<_>>(), [3]);
        for n in 4..KEPT + 10 {
            log.push(record(n));
        }
        assert_eq!(log.total(), (KEPT + 10) as u64);
        assert_eq!(log.since(0).count(), KEPT);
        assert_eq!(log.since(0).next().map(|r| r.objects), Some(10));
    }
}
