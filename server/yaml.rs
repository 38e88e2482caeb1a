//! How fleetglass reads YAML (the configuration, `evaluate`'s inputs, the demo's domains): one
//! crate, serde-saphyr (kube reads kubeconfigs with it too), with one set of options.

use serde::de::DeserializeOwned;
use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::{Budget, Error, NonFiniteFloatPolicy, Options};

/// YAML 1.2's booleans (`yes`, `on` are words, as serde_yaml and Kubernetes' own YAML 1.2
/// readers take them), `.inf`/`.nan` handed on as text where the type is not known (the
/// engine's lenient fields skip what they cannot use, never the whole input), errors without
/// a source excerpt (callers print the position their own way), and no size caps but nesting:
/// `max_depth` levels at most, and the crate's guards against alias expansion.
pub fn options(max_depth: usize) -> Options {
    let budget = Budget {
        max_depth,
        max_reader_input_bytes: None,
        max_events: usize::MAX,
        max_documents: usize::MAX,
        max_nodes: usize::MAX,
        max_total_scalar_bytes: usize::MAX,
        ..Budget::default()
    };
    Options {
        budget: Some(budget),
        strict_booleans: true,
        non_finite_float_policy: NonFiniteFloatPolicy::AsString,
        with_snippet: false,
        ..Options::default()
    }
}

/// Nesting allowed in a configuration file (Kubernetes objects' own limit is in `offline`).
pub const CONFIG_DEPTH: usize = 64;

/// One document of YAML read as `T`.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    serde_saphyr::from_str_with_options(text, options(CONFIG_DEPTH))
}

/// Whether the text nests deeper than the options allow.
pub fn is_too_deep(error: &Error) -> bool {
    matches!(
        error.without_snippet(),
        Error::Budget {
            breach: BudgetBreach::Depth { .. },
            ..
        }
    )
}

/// The error's message without the position the crate appends ("… at line 3, column 7"):
/// callers print the position once, their way.
pub fn message(error: &Error) -> String {
    let text = error.without_snippet().to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].trim_end_matches(',').to_string(),
        None => text,
    }
}

/// 1-based line and column, when the crate knows them.
pub fn position(error: &Error) -> Option<(usize, usize)> {
    let location = error.location()?;
    let as_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    (location.line() > 0).then(|| (as_usize(location.line()), as_usize(location.column())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn yes_and_on_are_words_and_true_is_a_boolean() {
        let read: BTreeMap<String, serde_json::Value> =
            from_str("a: yes\nb: on\nc: true\nd: .inf\n").unwrap();
        assert_eq!(read["a"], "yes");
        assert_eq!(read["b"], "on");
        assert_eq!(read["c"], true);
        assert_eq!(read["d"], ".inf");
    }

    #[test]
    fn errors_say_where_once() {
        let error = from_str::<BTreeMap<String, u16>>("a: 1\nb: [x\n").unwrap_err();
        assert_eq!(position(&error), Some((2, 4)));
        assert!(!message(&error).contains("line"), "{}", message(&error));
        let deep = format!("a: {}1{}", "[".repeat(100), "]".repeat(100));
        let error = from_str::<serde_json::Value>(&deep).unwrap_err();
        assert!(is_too_deep(&error), "{error}");
        assert!(!is_too_deep(&from_str::<u16>("x").unwrap_err()));
    }
}
