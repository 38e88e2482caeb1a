//! How fleetglass reads YAML (the configuration, `evaluate`'s inputs, the demo's domains): one
//! crate, serde-saphyr (kube reads kubeconfigs with it too), with one set of options.

use serde::de::DeserializeOwned;
use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::granit_parser::ErrorKind;
use serde_saphyr::{Budget, Error, ExternalMessageSource, NonFiniteFloatPolicy, Options};

/// YAML 1.2's booleans (`yes`, `on`, `y` are words, as serde_yaml and Kubernetes' own YAML
/// 1.2 readers take them), `1_000` a word too, `.inf`/`.nan` handed on as text where the type is not known (the
/// engine's lenient fields skip what they cannot use, never the whole input), errors without
/// a source excerpt (callers print the position their own way), and no size caps but nesting:
/// `max_depth` levels at most, and the crate's guards against alias expansion.
pub fn options(max_depth: usize) -> Options {
    // Both types are non-exhaustive: set on their defaults.
    let mut budget = Budget::default();
    budget.max_depth = max_depth;
    budget.flow_nesting_limit = max_depth;
    budget.max_reader_input_bytes = None;
    budget.max_events = usize::MAX;
    budget.max_documents = usize::MAX;
    budget.max_nodes = usize::MAX;
    budget.max_total_scalar_bytes = usize::MAX;
    let mut options = Options::default();
    options.budget = Some(budget);
    options.strict_booleans = true;
    options.underscored_numbers_as_strings = true;
    options.non_finite_float_policy = NonFiniteFloatPolicy::AsString;
    options.with_snippet = false;
    options
}

/// Nesting allowed in a configuration file (Kubernetes objects' own limit is in `offline`).
pub const CONFIG_DEPTH: usize = 64;

/// One document of YAML read as `T`.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    serde_saphyr::from_str_with_options(text, options(CONFIG_DEPTH))
}

/// Whether the text nests deeper than the options allow: past the budget's depth, or past the
/// scanner's flow limit (it counts `[` and `{` ahead of the events the budget sees).
pub fn is_too_deep(error: &Error) -> bool {
    match error.without_snippet() {
        Error::Budget {
            breach: BudgetBreach::Depth { .. },
            ..
        } => true,
        Error::ExternalMessage { source, .. } => matches!(
            &**source,
            ExternalMessageSource::Parser(scan) if *scan.kind() == ErrorKind::RecursionLimitExceeded
        ),
        _ => false,
    }
}

/// The error's message without the position the crate appends ("… at line 3, column 7"):
/// callers print the position once, their way.
pub fn message(error: &Error) -> String {
    if let Error::MultipleDocuments { .. } = error.without_snippet() {
        // The crate's own words name its API.
        return "a second YAML document: one is expected".to_string();
    }
    let text = error.without_snippet().to_string();
    // "duplicate mapping key: port, set DuplicateKeyPolicy in Options if acceptable": the
    // crate's advice names its API, not the reader's file.
    let text = text.replace(", set DuplicateKeyPolicy in Options if acceptable", "");
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
            from_str("a: yes\nb: on\nc: true\nd: .inf\ne: y\nf: 1_000\ng: 12\n").unwrap();
        assert_eq!(read["a"], "yes");
        assert_eq!(read["b"], "on");
        assert_eq!(read["c"], true);
        assert_eq!(read["d"], ".inf");
        assert_eq!(read["e"], "y");
        assert_eq!(read["f"], "1_000");
        assert_eq!(read["g"], 12);
    }

    #[test]
    fn errors_say_where_once() {
        let error = from_str::<BTreeMap<String, u16>>("a: 1\nb: [x\n").unwrap_err();
        assert_eq!(position(&error), Some((2, 4)));
        assert!(!message(&error).contains("line"), "{}", message(&error));
        for depth in [CONFIG_DEPTH, 1000] {
            let deep = format!("a: {}1{}", "[".repeat(depth), "]".repeat(depth));
            let error = from_str::<serde_json::Value>(&deep).unwrap_err();
            assert!(is_too_deep(&error), "{error}");
            assert_eq!(position(&error).map(|(line, _)| line), Some(1));
        }
        let fits = format!(
            "{}1{}",
            "[".repeat(CONFIG_DEPTH - 1),
            "]".repeat(CONFIG_DEPTH - 1)
        );
        assert!(from_str::<serde_json::Value>(&format!("a: {fits}")).is_ok());
        assert!(!is_too_deep(&from_str::<u16>("x").unwrap_err()));
        let twice = from_str::<BTreeMap<String, u16>>("a: 1\na: 2\n").unwrap_err();
        assert_eq!(message(&twice), "duplicate mapping key: a");
        assert_eq!(position(&twice), Some((2, 1)));
    }
}
