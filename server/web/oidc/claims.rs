//! What a provider says about a person, as one set of claims: the ID token's, with the
//! userinfo endpoint's filling in what the token left out (never overriding it), and the
//! name and groups read from the claims the configuration names.

use serde::Serialize;
use serde_json::{Map, Value};

/// Longest name and group kept (a provider is trusted, but not to bloat every request).
const KEPT_CHARS: usize = 200;
/// Most groups kept for one person.
const KEPT_GROUPS: usize = 500;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Claims(Map<String, Value>);

impl Claims {
    /// The claims of a token or userinfo response as its JSON names them.
    pub fn of(claims: &impl Serialize) -> Claims {
        match serde_json::to_value(claims) {
            Ok(Value::Object(map)) => Claims(map),
            _ => Claims::default(),
        }
    }

    pub fn has(&self, name: &str) -> bool {
        self.0.get(name).is_some_and(|v| !v.is_null())
    }

    /// Adds the claims of `other` this set lacks.
    pub fn add_missing(&mut self, other: &impl Serialize) {
        for (name, value) in Claims::of(other).0 {
            if !self.has(&name) {
                self.0.insert(name, value);
            }
        }
    }

    pub fn subject(&self) -> &str {
        self.text("sub").unwrap_or_default()
    }

    /// The person's name: the configured claim, else `email`, else the subject.
    pub fn username(&self, claim: &str) -> String {
        let name = [claim, "email", "sub"]
            .into_iter()
            .find_map(|claim| self.text(claim).filter(|t| !t.trim().is_empty()))
            .unwrap_or_default();
        name.trim().chars().take(KEPT_CHARS).collect()
    }

    /// The person's groups: the configured claim as a list of strings (or one string);
    /// anything else in it is ignored.
    pub fn groups(&self, claim: &str) -> Vec<String> {
        let mut groups: Vec<String> = match self.0.get(claim) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .map(|g| g.chars().take(KEPT_CHARS).collect())
                .take(KEPT_GROUPS)
                .collect(),
            Some(Value::String(one)) => vec![one.chars().take(KEPT_CHARS).collect()],
            _ => Vec::new(),
        };
        groups.sort_unstable();
        groups.dedup();
        groups
    }

    fn text(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(Value::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(value: Value) -> Claims {
        Claims::of(&value)
    }

    #[test]
    fn the_name_comes_from_the_configured_claim_then_email_then_subject() {
        let all = claims(json!({"sub": "u1", "email": "a@x", "preferred_username": "alice"}));
        assert_eq!(all.username("preferred_username"), "alice");
        assert_eq!(all.username("upn"), "a@x");
        let bare = claims(json!({"sub": "u1", "preferred_username": "  "}));
        assert_eq!(bare.username("preferred_username"), "u1");
        assert_eq!(bare.subject(), "u1");
    }

    #[test]
    fn groups_are_a_list_or_one_string_and_nothing_else() {
        let list = claims(json!({"groups": ["b", "a", 3, "a", null]}));
        assert_eq!(list.groups("groups"), ["a", "b"]);
        assert_eq!(claims(json!({"roles": "admin"})).groups("roles"), ["admin"]);
        assert!(
            claims(json!({"groups": {"a": 1}}))
                .groups("groups")
                .is_empty()
        );
        assert!(claims(json!({})).groups("groups").is_empty());
    }

    #[test]
    fn userinfo_fills_in_and_never_overrides_the_id_token() {
        let mut token = claims(json!({"sub": "u1", "email": "token@x", "groups": null}));
        token.add_missing(&json!({"sub": "other", "email": "info@x", "groups": ["g"]}));
        assert_eq!(token.subject(), "u1");
        assert_eq!(token.username("preferred_username"), "token@x");
        assert_eq!(token.groups("groups"), ["g"]);
        assert!(token.has("groups") && !token.has("name"));
    }
}
