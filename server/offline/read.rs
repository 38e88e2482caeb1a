//! Reads what `kubectl get -o yaml|json` prints: multi-document YAML, JSON (one value or
//! several), or a `*List` with `items` (Lists inside Lists too). Unknown kinds are counted,
//! malformed objects are skipped with a reason, the same object given twice is kept once, and
//! unreadable or too deeply nested input is one error line naming file and position.

use super::depth::{self, MAX_DEPTH};
use super::stream::{Document, DocumentSeed};
use crate::model::{Kind, Object, ObjectId, Skip, parse_object};
use serde::de::DeserializeSeed;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::collections::hash_map::{Entry, HashMap};
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
    /// Objects given more than once with different contents (one verdict each, unverifiable),
    /// with where each copy was read.
    pub conflicting: HashMap<ObjectId, Vec<String>>,
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

/// Reads every source in order (`-` is stdin), naming the objects' cluster `cluster`.
pub fn read_inputs(sources: &[PathBuf], cluster: &str) -> Result<Inputs, InputError> {
    let mut gather = Gather::new(cluster);
    for source in sources {
        let (name, text) = read_source(source)?;
        documents(&name, &text, &mut gather)?;
    }
    Ok(gather.finish())
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

/// JSON when the text starts like JSON (its errors are clearer), else YAML documents; each
/// document is added as soon as it is read. The nesting depth is checked first.
fn documents(name: &str, text: &str, gather: &mut Gather) -> Result<(), InputError> {
    let error = |problem: String, line: usize, column: usize| InputError {
        file: name.to_string(),
        position: (line > 0).then_some((line, column)),
        problem: without_position(&problem),
    };
    let is_json = text.trim_start().starts_with(['{', '[']);
    let depth = if is_json {
        depth::check_json(text)
    } else {
        depth::check_yaml(text)
    };
    depth.map_err(|at| {
        let problem = format!("nested more than {MAX_DEPTH} levels deep (the limit)");
        error(problem, at.line, at.column)
    })?;
    let mut index = 0;
    if is_json {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        while deserializer.end().is_err() {
            let added = gather.document(&format!("{name}#{index}"), &mut deserializer);
            added.map_err(|e| error(e.to_string(), e.line(), e.column()))?;
            index += 1;
        }
        return Ok(());
    }
    for document in serde_yaml::Deserializer::from_str(text) {
        let added = gather.document(&format!("{name}#{index}"), document);
        if added.map_err(|e| {
            let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
            error(e.to_string(), line, column)
        })? {
            index += 1;
        }
    }
    Ok(())
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

/// What one value of the input is: a List (its items, Lists inside Lists too) or an object.
type Parsed = Vec<(String, Result<Object, Skip>)>;

/// Inputs as they are read: each object once (copies of one object merged, and named when
/// they differ).
struct Gather {
    cluster: String,
    inputs: Inputs,
    /// Where each object was first read, by id.
    first: HashMap<ObjectId, (usize, String)>,
    /// Objects read more than once: every place, and whether the copies differ.
    copies: BTreeMap<usize, (Vec<String>, bool)>,
}

impl Gather {
    fn new(cluster: &str) -> Self {
        Gather {
            cluster: cluster.to_string(),
            inputs: Inputs::default(),
            first: HashMap::new(),
            copies: BTreeMap::new(),
        }
    }

    /// Reads one document; false when it was empty.
    fn document<'de, D: serde::Deserializer<'de>>(
        &mut self,
        document: &str,
        deserializer: D,
    ) -> Result<bool, D::Error> {
        let cluster = self.cluster.clone();
        let read = DocumentSeed(|index, item: Value| {
            parse_value(&cluster, &format!("{document}.items[{index}]"), &item)
        })
        .deserialize(deserializer)?;
        let parsed = match read {
            Document::Empty => return Ok(false),
            Document::NotAMapping => vec![(document.to_string(), Err(not_a_mapping()))],
            Document::Mapping { fields, items } => match items {
                Some(items) if is_list(&fields) => items.into_iter().flatten().collect(),
                _ => {
                    let object = Value::Object(fields);
                    vec![(document.to_string(), parse_object(&cluster, &object))]
                }
            },
        };
        for (document, result) in parsed {
            self.add(document, result);
        }
        Ok(true)
    }

    fn add(&mut self, document: String, parsed: Result<Object, Skip>) {
        let inputs = &mut self.inputs;
        match parsed {
            Ok(object) => match self.first.entry(object.id()) {
                Entry::Vacant(entry) => {
                    entry.insert((inputs.objects.len(), document));
                    inputs.objects.push(object);
                }
                Entry::Occupied(entry) => {
                    let (at, first) = entry.get();
                    let (places, differ) = self
                        .copies
                        .entry(*at)
                        .or_insert_with(|| (vec![first.clone()], false));
                    places.push(document);
                    *differ |= inputs.objects[*at] != object;
                }
            },
            Err(Skip::UnknownKind { api_version, kind }) => {
                // A known kind under another group (kustomize.config.k8s.io Kustomization) says so.
                let key = if kind.parse::<Kind>().is_ok() {
                    format!("{kind} ({api_version})")
                } else {
                    kind
                };
                inputs.ignored.count += 1;
                *inputs.ignored.kinds.entry(key).or_default() += 1;
            }
            Err(Skip::Invalid(reason)) => inputs.skipped.push(Skipped { document, reason }),
        }
    }

    fn finish(mut self) -> Inputs {
        for (at, (places, differ)) in self.copies {
            if differ {
                let id = self.inputs.objects[at].id();
                self.inputs.conflicting.insert(id, places);
            }
        }
        self.inputs
    }
}

fn is_list(fields: &Map<String, Value>) -> bool {
    fields
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(|kind| kind.ends_with("List"))
}

fn not_a_mapping() -> Skip {
    Skip::Invalid("not a mapping".into())
}

/// A value inside a List: an object, or a List whose items are read in turn.
fn parse_value(cluster: &str, document: &str, value: &Value) -> Parsed {
    let items = value.get("items").and_then(Value::as_array);
    match items {
        Some(items) if value.as_object().is_some_and(is_list) => items
            .iter()
            .enumerate()
            .flat_map(|(index, item)| {
                parse_value(cluster, &format!("{document}.items[{index}]"), item)
            })
            .collect(),
        _ => vec![(document.to_string(), parse_object(cluster, value))],
    }
}
