//! Reads what `kubectl get -o yaml|json` prints: multi-document YAML, JSON (one value or
//! several), or a `*List` with `items`. Unknown kinds are counted, malformed objects are
//! skipped with a reason, and unreadable input is one error line naming file and position.

use crate::model::{Kind, Object, Skip, parse_object};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The cluster name objects read from files get until the caller names one.
pub const LOCAL_CLUSTER: &str = "local";

#[derive(Debug, Default)]
pub struct Inputs {
    pub objects: Vec<Object>,
    pub skipped: Vec<Skipped>,
    pub ignored: Ignored,
}

/// A document that was not an object fleetglass can evaluate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// `file#index` (documents counted from 0), `file#index.items[i]` inside a List.
    pub document: String,
    pub reason: String,
}

/// Objects of kinds fleetglass does not evaluate (ConfigMaps, Services…), by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ignored {
    pub count: usize,
    pub kinds: BTreeMap<String, usize>,
}

/// Unreadable input. Displays as one line: `apps.yaml: line 12 column 3: did not find expected key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    pub file: String,
    /// 1-based line and column, when the parser knows them.
    pub position: Option<(usize, usize)>,
    pub problem: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some((line, column)) => write!(
                f,
                "{}: line {line} column {column}: {}",
                self.file, self.problem
            ),
            None => write!(f, "{}: {}", self.file, self.problem),
        }
    }
}

impl std::error::Error for InputError {}

/// Reads every source in order; `-` is stdin.
pub fn read_inputs(sources: &[PathBuf]) -> Result<Inputs, InputError> {
    let mut inputs = Inputs::default();
    for source in sources {
        let (name, text) = read_source(source)?;
        for (index, document) in documents(&name, &text)?.into_iter().enumerate() {
            inputs.add_document(&format!("{name}#{index}"), &document);
        }
    }
    Ok(inputs)
}

fn read_source(source: &Path) -> Result<(String, String), InputError> {
    let is_stdin = source.as_os_str() == "-";
    let name = if is_stdin {
        "stdin".to_string()
    } else {
        source.display().to_string()
    };
    let failed = |problem: String| InputError {
        file: name.clone(),
        position: None,
        problem,
    };
    let mut bytes = Vec::new();
    let read = if is_stdin {
        std::io::stdin().read_to_end(&mut bytes).map(drop)
    } else {
        std::fs::read(source).map(|b| bytes = b)
    };
    read.map_err(|e| failed(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|_| failed("not UTF-8 text".into()))?;
    Ok((name, text))
}

/// JSON when the text starts like JSON (its errors are clearer), else YAML documents.
fn documents(name: &str, text: &str) -> Result<Vec<Value>, InputError> {
    let error = |problem: String, line: usize, column: usize| InputError {
        file: name.to_string(),
        position: (line > 0).then_some((line, column)),
        problem: without_position(&problem),
    };
    if text.trim_start().starts_with(['{', '[']) {
        return serde_json::Deserializer::from_str(text)
            .into_iter::<Value>()
            .map(|value| value.map_err(|e| error(e.to_string(), e.line(), e.column())))
            .collect();
    }
    let mut values = Vec::new();
    for document in serde_yaml::Deserializer::from_str(text) {
        let value = Value::deserialize(document).map_err(|e| {
            let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
            error(e.to_string(), line, column)
        })?;
        if !value.is_null() {
            values.push(value);
        }
    }
    Ok(values)
}

/// Parser messages end with "at line N column M…"; the position is printed separately.
fn without_position(problem: &str) -> String {
    problem
        .split(" at line ")
        .next()
        .unwrap_or(problem)
        .trim_end_matches(',')
        .to_string()
}

impl Inputs {
    fn add_document(&mut self, document: &str, value: &Value) {
        let is_list = value
            .get("kind")
            .and_then(Value::as_str)
            .is_some_and(|k| k.ends_with("List"));
        match value.get("items").and_then(Value::as_array) {
            Some(items) if is_list => {
                for (index, item) in items.iter().enumerate() {
                    self.add_object(&format!("{document}.items[{index}]"), item);
                }
            }
            _ => self.add_object(document, value),
        }
    }

    fn add_object(&mut self, document: &str, value: &Value) {
        match parse_object(LOCAL_CLUSTER, value) {
            Ok(object) => self.objects.push(object),
            Err(Skip::UnknownKind { api_version, kind }) => {
                // A known kind under another group (kustomize.config.k8s.io Kustomization) says so.
                let key = if kind.parse::<Kind>().is_ok() {
                    format!("{kind} ({api_version})")
                } else {
                    kind
                };
                self.ignored.count += 1;
                *self.ignored.kinds.entry(key).or_default() += 1;
            }
            Err(Skip::Invalid(reason)) => self.skipped.push(Skipped {
                document: document.to_string(),
                reason,
            }),
        }
    }
}
