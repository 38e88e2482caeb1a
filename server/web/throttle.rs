//! Bounds on signing in: failed attempts per client (guessing tokens from one address), and
//! sign-ins per token name (minting sessions with a leaked token). Counted in this process
//! over a sliding window; beyond a bound the answer is 429 with Retry-After.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failed sign-ins one client may make per [`WINDOW`].
pub const FAILURES_PER_CLIENT: usize = 10;
/// Sign-ins made with one token per [`WINDOW`].
pub const SIGN_INS_PER_NAME: usize = 30;
pub const WINDOW: Duration = Duration::from_secs(300);
/// Clients (or names) remembered at most; beyond, the idlest are forgotten first.
const MAX_KEYS: usize = 10_000;

/// Recent events per key, each key's oldest first.
#[derive(Default)]
pub struct Window {
    events: Mutex<HashMap<String, VecDeque<Instant>>>,
}

impl Window {
    /// How long `key` must wait before another event is allowed, if it has had `limit` in the
    /// last [`WINDOW`]; None when it may go on.
    pub fn wait(&self, key: &str, limit: usize, now: Instant) -> Option<Duration> {
        let mut events = self.events.lock().expect("not poisoned");
        let recent = events.get_mut(key)?;
        forget_old(recent, now);
        (recent.len() >= limit).then(|| {
            WINDOW
                .saturating_sub(now - recent[0])
                .max(Duration::from_secs(1))
        })
    }

    /// Counts one event of `key`.
    pub fn record(&self, key: &str, now: Instant) {
        let mut events = self.events.lock().expect("not poisoned");
        if events.len() >= MAX_KEYS && !events.contains_key(key) {
            events.retain(|_, recent| {
                forget_old(recent, now);
                !recent.is_empty()
            });
            if events.len() >= MAX_KEYS
                && let Some(idlest) = events
                    .iter()
                    .min_by_key(|(_, recent)| recent.back().copied())
                    .map(|(key, _)| key.clone())
            {
                events.remove(&idlest);
            }
        }
        events.entry(key.to_string()).or_default().push_back(now);
    }
}

fn forget_old(recent: &mut VecDeque<Instant>, now: Instant) {
    while recent.front().is_some_and(|at| now - *at >= WINDOW) {
        recent.pop_front();
    }
}

/// The sign-in bounds of one server.
#[derive(Default)]
pub struct SignInThrottle {
    pub failures: Window,
    pub sign_ins: Window,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_waits_once_it_has_its_limit_until_the_oldest_event_leaves_the_window() {
        let window = Window::default();
        let start = Instant::now();
        for i in 0..3 {
            assert_eq!(window.wait("a", 3, start), None, "event {i}");
            window.record("a", start + Duration::from_secs(i));
        }
        let now = start + Duration::from_secs(10);
        assert_eq!(
            window.wait("a", 3, now),
            Some(WINDOW - Duration::from_secs(10))
        );
        assert_eq!(
            window.wait("b", 3, now),
            None,
            "another key is not held back"
        );
        assert_eq!(
            window.wait("a", 3, start + WINDOW),
            None,
            "the first one left"
        );
        assert_eq!(
            window.wait("a", 3, start + WINDOW + Duration::from_secs(2)),
            None
        );
    }

    #[test]
    fn memory_is_bounded_by_forgetting_the_idlest_key() {
        let window = Window::default();
        let start = Instant::now();
        for i in 0..MAX_KEYS + 5 {
            window.record(
                &format!("client-{i}"),
                start + Duration::from_millis(i as u64),
            );
        }
        let events = window.events.lock().unwrap();
        assert_eq!(events.len(), MAX_KEYS);
        assert!(!events.contains_key("client-0") && events.contains_key("client-10004"));
    }
}
