//! The fixed state vocabulary (DESIGN.md): API, UI, alerts and tests all use these words.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// `Ord` is the declaration order, for maps keyed by state; how bad a state is, is
/// [`State::severity_rank`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Healthy,
    Progressing,
    Stuck,
    Stale,
    Failed,
    Blocked,
    Degraded,
    Unverifiable,
    Suspended,
}

impl State {
    /// Worst first: the order roll-ups and problem lists use. Every known problem (failed,
    /// stale, stuck, degraded) comes before `unverifiable`, so a roll-up never hides a known
    /// failure behind the grey of what cannot be verified (issue 43, f); DESIGN.md listed
    /// degraded after unverifiable.
    pub const BY_SEVERITY: [State; 9] = [
        State::Failed,
        State::Stale,
        State::Stuck,
        State::Degraded,
        State::Unverifiable,
        State::Blocked,
        State::Progressing,
        State::Suspended,
        State::Healthy,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            State::Healthy => "healthy",
            State::Progressing => "progressing",
            State::Stuck => "stuck",
            State::Stale => "stale",
            State::Failed => "failed",
            State::Blocked => "blocked",
            State::Degraded => "degraded",
            State::Unverifiable => "unverifiable",
            State::Suspended => "suspended",
        }
    }

    /// The icon shown beside the word, so a state never depends on colour alone.
    pub fn icon(self) -> &'static str {
        match self {
            State::Healthy => "●",
            State::Progressing => "◐",
            State::Stuck => "⏳",
            State::Stale => "⚠",
            State::Failed => "✖",
            State::Blocked => "⛓",
            State::Degraded => "▼",
            State::Unverifiable => "?",
            State::Suspended => "❚❚",
        }
    }

    /// 0 is the worst.
    pub fn severity_rank(self) -> usize {
        State::BY_SEVERITY
            .iter()
            .position(|s| *s == self)
            .unwrap_or(usize::MAX)
    }

    /// Healthy, progressing and suspended are not problems; everything else is.
    pub fn is_problem(self) -> bool {
        !matches!(self, State::Healthy | State::Progressing | State::Suspended)
    }

    /// The worse of two states.
    pub fn worst(self, other: State) -> State {
        if other.severity_rank() < self.severity_rank() {
            other
        } else {
            self
        }
    }
}

/// Problems worst first: the worse state, then the one affecting more objects, then by id.
/// The one order of root causes on every page and in the API.
pub fn worst_first(a: (State, usize, &str), b: (State, usize, &str)) -> std::cmp::Ordering {
    use std::cmp::Reverse;
    (a.0.severity_rank(), Reverse(a.1), a.2).cmp(&(b.0.severity_rank(), Reverse(b.1), b.2))
}

/// Objects by state, as a cluster's roll-up counts them: `{"healthy": 40, "failed": 2}`
/// (states with none are absent). Read back from the store as exactly this, never guessed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StateCounts(pub BTreeMap<State, u64>);

impl StateCounts {
    /// Counts each state of `states`.
    pub fn of(states: impl IntoIterator<Item = State>) -> StateCounts {
        let mut counts = StateCounts::default();
        for state in states {
            *counts.0.entry(state).or_default() += 1;
        }
        counts
    }

    pub fn get(&self, state: State) -> u64 {
        self.0.get(&state).copied().unwrap_or(0)
    }

    /// Adds `other`'s counts to these (the fleet's totals).
    pub fn add(&mut self, other: &StateCounts) {
        for (state, n) in &other.0 {
            *self.0.entry(*state).or_default() += n;
        }
    }

    /// The states counted, worst first, with their counts.
    pub fn worst_first(&self) -> Vec<(State, u64)> {
        State::BY_SEVERITY
            .into_iter()
            .filter_map(|s| Some((s, *self.0.get(&s)?)))
            .collect()
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for State {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        State::BY_SEVERITY
            .into_iter()
            .find(|s| s.as_str() == text)
            .ok_or_else(|| {
                let words: Vec<&str> = State::BY_SEVERITY.iter().map(|s| s.as_str()).collect();
                format!("unknown state {text:?} (one of: {})", words.join(", "))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocabulary_round_trips_and_orders_worst_first() {
        for state in State::BY_SEVERITY {
            assert_eq!(state.as_str().parse::<State>().unwrap(), state);
            assert_eq!(
                serde_json::to_string(&state).unwrap(),
                format!("\"{state}\"")
            );
        }
        assert_eq!(State::Healthy.worst(State::Failed), State::Failed);
        assert_eq!(State::Blocked.worst(State::Progressing), State::Blocked);
        for known in [State::Failed, State::Stale, State::Stuck, State::Degraded] {
            assert_eq!(
                State::Unverifiable.worst(known),
                known,
                "{known} outranks grey"
            );
            assert_eq!(known.worst(State::Unverifiable), known);
        }
        assert_eq!(
            State::Blocked.worst(State::Unverifiable),
            State::Unverifiable
        );
        assert!("green".parse::<State>().is_err());
    }

    #[test]
    fn problems_order_by_state_then_impact_then_id() {
        let mut causes = vec![
            (State::Stuck, 9, "c"),
            (State::Failed, 1, "b"),
            (State::Failed, 5, "z"),
            (State::Failed, 1, "a"),
        ];
        causes.sort_by(|a, b| worst_first(*a, *b));
        assert_eq!(
            causes,
            vec![
                (State::Failed, 5, "z"),
                (State::Failed, 1, "a"),
                (State::Failed, 1, "b"),
                (State::Stuck, 9, "c")
            ]
        );
    }

    #[test]
    fn counts_read_back_as_written_and_list_worst_first() {
        let counts = StateCounts::of([State::Healthy, State::Failed, State::Healthy]);
        let json = serde_json::to_value(&counts).unwrap();
        assert_eq!(json, serde_json::json!({"healthy": 2, "failed": 1}));
        assert_eq!(serde_json::from_value::<StateCounts>(json).unwrap(), counts);
        assert!(serde_json::from_value::<StateCounts>(serde_json::json!({"green": 1})).is_err());
        assert_eq!(
            counts.worst_first(),
            vec![(State::Failed, 1), (State::Healthy, 2)]
        );
        let mut total = counts.clone();
        total.add(&StateCounts::of([State::Stuck, State::Failed]));
        assert_eq!(
            (
                total.get(State::Failed),
                total.get(State::Stuck),
                total.get(State::Stale)
            ),
            (2, 1, 0)
        );
    }

    /// UI.md: a state is a word plus an icon, never colour alone.
    #[test]
    fn each_state_has_the_icon_ui_md_gives_it() {
        let shown: Vec<String> = State::BY_SEVERITY
            .into_iter()
            .map(|s| format!("{} {s}", s.icon()))
            .collect();
        assert_eq!(
            shown,
            [
                "✖ failed",
                "⚠ stale",
                "⏳ stuck",
                "▼ degraded",
                "? unverifiable",
                "⛓ blocked",
                "◐ progressing",
                "❚❚ suspended",
                "● healthy"
            ]
        );
    }
}
