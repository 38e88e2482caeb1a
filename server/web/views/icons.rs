//! State icons as inline SVG: they render the same on any machine, without an emoji or symbol
//! font (the glyphs of `State::icon` are for terminals). Shapes follow the glyphs: ● ◐ ⏳ ⚠ ✖
//! ⛓ ▼ ? ❚❚, drawn in `currentColor` so the state's colour still only reinforces its word.

use crate::health::State;

/// What templates call on a state (a method, so it works on `State` and `&State` alike).
pub trait Icon {
    /// The icon beside its state word: hidden from screen readers, the word says it.
    fn icon_beside_word(&self) -> String;
    /// The icon on its own (a chain link, a heading): it carries the state word as its label.
    fn icon_alone(&self) -> String;
}

impl Icon for State {
    fn icon_beside_word(&self) -> String {
        svg(*self, r#"aria-hidden="true""#)
    }

    fn icon_alone(&self) -> String {
        svg(*self, &format!(r#"role="img" aria-label="{self}""#))
    }
}

fn svg(state: State, accessibility: &str) -> String {
    format!(
        r#"<svg class="icon" viewBox="0 0 16 16" width="16" height="16" focusable="false" {accessibility}>{}</svg>"#,
        shape(state)
    )
}

fn shape(state: State) -> &'static str {
    match state {
        State::Healthy => r#"<circle cx="8" cy="8" r="6" fill="currentColor"/>"#,
        State::Progressing => {
            r#"<circle cx="8" cy="8" r="5.5" fill="none" stroke="currentColor" stroke-width="1.5"/><path d="M8 2.5a5.5 5.5 0 0 0 0 11z" fill="currentColor"/>"#
        }
        State::Stuck => {
            r#"<path d="M3.5 1.5h9M3.5 14.5h9M4.5 1.5c0 4 7 4.5 7 6.5s-7 2.5-7 6.5M11.5 1.5c0 4-7 4.5-7 6.5s7 2.5 7 6.5" fill="none" stroke="currentColor" stroke-width="1.5"/>"#
        }
        State::Stale => {
            r#"<path d="M8 1.5 15 14.5H1z" fill="currentColor"/><path d="M8 6v4.5M8 12v1.2" stroke="white" stroke-width="1.6"/>"#
        }
        State::Failed => {
            r#"<circle cx="8" cy="8" r="7" fill="currentColor"/><path d="M5 5l6 6M11 5l-6 6" stroke="white" stroke-width="2"/>"#
        }
        State::Blocked => {
            r#"<rect x="1" y="5" width="8" height="6" rx="3" fill="none" stroke="currentColor" stroke-width="1.8"/><rect x="7" y="5" width="8" height="6" rx="3" fill="none" stroke="currentColor" stroke-width="1.8"/>"#
        }
        State::Degraded => r#"<path d="M1.5 3.5h13L8 14z" fill="currentColor"/>"#,
        State::Unverifiable => {
            r#"<circle cx="8" cy="8" r="6.5" fill="none" stroke="currentColor" stroke-width="1.5" stroke-dasharray="2.5 1.6"/><path d="M6 6.2a2 2 0 1 1 2.8 1.8c-.6.3-.8.7-.8 1.4v.6M8 11.3v1.2" fill="none" stroke="currentColor" stroke-width="1.5"/>"#
        }
        State::Suspended => {
            r#"<rect x="3" y="2" width="3.5" height="12" fill="currentColor"/><rect x="9.5" y="2" width="3.5" height="12" fill="currentColor"/>"#
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_has_a_drawn_icon_without_any_font_glyph() {
        for state in State::BY_SEVERITY {
            let beside = state.icon_beside_word();
            let alone = state.icon_alone();
            assert!(beside.starts_with("<svg") && beside.contains(r#"aria-hidden="true""#));
            assert!(
                alone.contains(&format!(r#"aria-label="{state}""#)),
                "{alone}"
            );
            // Nothing but ASCII: no character needs a font that may be missing.
            assert!(alone.is_ascii(), "{state}: {alone}");
        }
    }

    #[test]
    fn each_state_looks_different() {
        let shapes: std::collections::BTreeSet<&str> =
            State::BY_SEVERITY.iter().map(|s| shape(*s)).collect();
        assert_eq!(shapes.len(), State::BY_SEVERITY.len());
    }
}
