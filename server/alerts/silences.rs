//! Silences: "don't tell anyone about this root cause / domain / cluster until then". Silenced
//! alerts are still recorded; their notifications are not sent.

pub use super::records::{NewSilence, Silence};
use chrono::{DateTime, Utc};

impl Silence {
    /// Every matcher that is set must match; at least one is always set.
    pub fn matches(
        &self,
        root_cause: &str,
        cluster: &str,
        domains: &[String],
        now: DateTime<Utc>,
    ) -> bool {
        now < self.until
            && self.root_cause.as_deref().is_none_or(|r| r == root_cause)
            && self.cluster.as_deref().is_none_or(|c| c == cluster)
            && self
                .domain
                .as_deref()
                .is_none_or(|d| domains.iter().any(|x| x == d))
    }
}

/// The longest a silence lasts: a forgotten one must not hide a cluster for years.
pub const MAX_SILENCE: chrono::TimeDelta = chrono::TimeDelta::days(90);

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SilenceError {
    #[error("a silence needs at least one of root_cause, domain or cluster")]
    NoMatcher,
    #[error("until must be in the future")]
    InThePast,
    #[error("a silence lasts at most 90 days; set a new one when it ends")]
    TooFar,
    #[error("{0} is too long (at most 1000 characters)")]
    TooLong(&'static str),
    #[error("{0} contains a control character (NUL and the like are not text)")]
    ControlCharacter(&'static str),
}

impl NewSilence {
    /// Blank matchers count as absent (an empty form field), so "" never silences everything.
    pub fn validated(mut self, now: DateTime<Utc>) -> Result<NewSilence, SilenceError> {
        for field in [&mut self.root_cause, &mut self.domain, &mut self.cluster] {
            *field = field
                .take()
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty());
        }
        if self.root_cause.is_none() && self.domain.is_none() && self.cluster.is_none() {
            return Err(SilenceError::NoMatcher);
        }
        if self.until <= now {
            return Err(SilenceError::InThePast);
        }
        if self.until - now > MAX_SILENCE {
            return Err(SilenceError::TooFar);
        }
        let fields = [
            ("root_cause", self.root_cause.as_deref().unwrap_or("")),
            ("domain", self.domain.as_deref().unwrap_or("")),
            ("cluster", self.cluster.as_deref().unwrap_or("")),
            ("comment", self.comment.as_str()),
        ];
        if let Some((name, _)) = fields.iter().find(|(_, v)| v.chars().count() > 1000) {
            return Err(SilenceError::TooLong(name));
        }
        // Postgres refuses NUL in text; the rest would only garble pages and messages. A
        // comment may span lines.
        let allowed = |name: &str, c: char| name == "comment" && matches!(c, '\n' | '\r' | '\t');
        if let Some((name, _)) = fields
            .iter()
            .find(|(name, v)| v.chars().any(|c| c.is_control() && !allowed(name, c)))
        {
            return Err(SilenceError::ControlCharacter(name));
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_matchers_do_not_silence_everything() {
        let now: DateTime<Utc> = "2026-11-29T10:00:00Z".parse().unwrap();
        let blank = NewSilence {
            root_cause: Some("  ".into()),
            domain: Some(String::new()),
            cluster: None,
            until: now + chrono::TimeDelta::hours(1),
            comment: String::new(),
        };
        assert_eq!(blank.validated(now).unwrap_err(), SilenceError::NoMatcher);
    }

    #[test]
    fn control_characters_are_refused_but_a_comment_may_span_lines() {
        let now: DateTime<Utc> = "2026-11-29T10:00:00Z".parse().unwrap();
        let silence = |domain: &str, comment: &str| NewSilence {
            root_cause: None,
            domain: Some(domain.into()),
            cluster: None,
            until: now + chrono::TimeDelta::hours(1),
            comment: comment.into(),
        };
        assert_eq!(
            silence("gate\0way", "").validated(now).unwrap_err(),
            SilenceError::ControlCharacter("domain")
        );
        assert_eq!(
            silence("gateway", "x\u{1b}[2J").validated(now).unwrap_err(),
            SilenceError::ControlCharacter("comment")
        );
        assert!(
            silence("gateway", "line one\nline two")
                .validated(now)
                .is_ok()
        );
    }

    #[test]
    fn every_set_matcher_must_match_and_time_ends_it() {
        let now: DateTime<Utc> = "2026-11-29T10:00:00Z".parse().unwrap();
        let silence = Silence {
            id: 1,
            root_cause: None,
            domain: Some("gateway".into()),
            cluster: Some("prod-eu-1".into()),
            until: now + chrono::TimeDelta::hours(1),
            comment: String::new(),
            created_by: "anonymous".into(),
            created_at: now,
        };
        let gateway = ["gateway".to_string()];
        assert!(silence.matches("x", "prod-eu-1", &gateway, now));
        assert!(!silence.matches("x", "prod-eu-2", &gateway, now));
        assert!(!silence.matches("x", "prod-eu-1", &[], now));
        assert!(!silence.matches("x", "prod-eu-1", &gateway, silence.until));
    }
}
