//! The fixed state vocabulary (DESIGN.md): API, UI, alerts and tests all use these words.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
