//! Reads what `kubectl get -o yaml|json` prints: multi-document YAML, JSON (one value or
//! several), or a `*List` with `items` (Lists inside Lists too). Unknown kinds are counted,
//! malformed objects are skipped with a reason, the same object given twice is kept once, and
//! unreadable or too deeply nested input is one error line naming file and position. Large
//! inputs are parsed on every core, with exactly the result of one parse.

use super::depth::{JsonDepthGuard, TooDeep};
use super::stream::DocumentSeed;
use super::{parallel, split};
use crate::model::{Kind, Object, ObjectId, Skip};
use serde::de::DeserializeSeed;
use std::collections::BTreeMap;
use std::collections::hash_map::{Entry, HashMap};
use std::fmt;
use std::io::{BufRead, BufReader, Read};
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
        if source.as_os_str() == "-" {
            read_stdin(&mut gather)?;
        } else {
            read_file(source, &mut gather)?;
        }
    }
    Ok(gather.finish())
}

/// JSON when the text starts like JSON (its errors are clearer), else YAML documents. JSON
/// is streamed (never the whole text in memory); YAML is read whole (the parser needs it).
fn read_stdin(gather: &mut Gather) -> Result<(), InputError> {
    let name = "stdin";
    let failed = |problem: String| InputError {
        file: name.into(),
        position: None,
        problem,
    };
    let mut reader = BufReader::new(std::io::stdin());
    if starts_like_json(&mut reader).map_err(|e| failed(e.to_string()))? {
        return json_stream(name, reader, gather);
    }
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| failed(e.to_string()))?;
    yaml_text(name, bytes, gather)
}

/// A file is read whole and parsed from memory: faster than through a reader, and a List's
/// items can be parsed on every core. The text is freed before the evaluation, which needs
/// more memory than the text.
fn read_file(source: &Path, gather: &mut Gather) -> Result<(), InputError> {
    let name = source.display().to_string();
    let bytes = std::fs::read(source).map_err(|e| InputError {
        file: name.clone(),
        position: None,
        problem: e.to_string(),
    })?;
    let mut start = bytes.as_slice();
    if starts_like_json(&mut start).unwrap_or(false) {
        json_text(&name, &bytes, gather)
    } else {
        yaml_text(&name, bytes, gather)
    }
}

fn yaml_text(name: &str, bytes: Vec<u8>, gather: &mut Gather) -> Result<(), InputError> {
    let text = String::from_utf8(bytes).map_err(|_| InputError {
        file: name.into(),
        position: None,
        problem: "not UTF-8 text".into(),
    })?;
    yaml_documents(name, &text, gather)
}

/// Whether the first byte after leading whitespace opens a JSON object or array.
fn starts_like_json(reader: &mut impl BufRead) -> std::io::Result<bool> {
    loop {
        let buffer = reader.fill_buf()?;
        let Some(&first) = buffer.first() else {
            return Ok(false);
        };
        if !first.is_ascii_whitespace() {
            return Ok(matches!(first, b'{' | b'['));
        }
        let blank = buffer
            .iter()
            .take_while(|b| b.is_ascii_whitespace())
            .count();
        reader.consume(blank);
    }
}

fn input_error(name: &str, problem: String, line: usize, column: usize) -> InputError {
    InputError {
        file: name.to_string(),
        position: (line > 0).then_some((line, column)),
        problem: without_position(&problem),
    }
}

fn too_deep(name: &str, at: TooDeep) -> InputError {
    input_error(name, at.to_string(), at.line, at.column)
}

/// JSON values one after another, streamed from the reader through the depth guard.
fn json_stream(name: &str, reader: impl Read, gather: &mut Gather) -> Result<(), InputError> {
    let error = |e: serde_json::Error| {
        if !e.is_io() {
            return input_error(name, e.to_string(), e.line(), e.column());
        }
        let io = std::io::Error::from(e);
        match io
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<TooDeep>())
        {
            Some(&at) => too_deep(name, at),
            None => input_error(name, io.to_string(), 0, 0),
        }
    };
    // Buffered after the guard: serde_json reads byte by byte, and the guard checks a chunk at
    // a time.
    let guarded = BufReader::with_capacity(1 << 16, JsonDepthGuard::new(reader));
    json_values(
        name,
        &mut serde_json::Deserializer::from_reader(guarded),
        gather,
        error,
    )
}

/// JSON values in memory, the depth checked on the whole text first; a lone List's items are
/// parsed on every core.
fn json_text(name: &str, text: &[u8], gather: &mut Gather) -> Result<(), InputError> {
    let list = split::json_list_items(text).map_err(|at| too_deep(name, at))?;
    let document = format!("{name}#0");
    let threads = parallel::threads();
    let in_parallel =
        list.and_then(|list| parallel::json_list(&gather.cluster, &document, text, &list, threads));
    if let Some(parsed) = in_parallel {
        gather.parsed(parsed);
        return Ok(());
    }
    let error = |e: serde_json::Error| input_error(name, e.to_string(), e.line(), e.column());
    json_values(
        name,
        &mut serde_json::Deserializer::from_slice(text),
        gather,
        error,
    )
}

/// Each JSON value added as soon as it is read (`file#0`, `file#1`…).
fn json_values<'de, R: serde_json::de::Read<'de>>(
    name: &str,
    deserializer: &mut serde_json::Deserializer<R>,
    gather: &mut Gather,
    error: impl Fn(serde_json::Error) -> InputError,
) -> Result<(), InputError> {
    let mut index = 0;
    loop {
        match deserializer.end() {
            Ok(()) => return Ok(()),
            Err(e) if e.is_io() => return Err(error(e)),
            Err(_) => {}
        }
        gather
            .document(&format!("{name}#{index}"), &mut *deserializer)
            .map_err(&error)?;
        index += 1;
    }
}

/// YAML documents, the nesting depth checked on the whole text first, then runs of documents
/// parsed on every core (both in runs); one parse of the whole text when a run does not parse, for its
/// error.
fn yaml_documents(name: &str, text: &str, gather: &mut Gather) -> Result<(), InputError> {
    let parts = split::yaml_parts(text, parallel::threads());
    parallel::check_yaml(text, &parts).map_err(|at| too_deep(name, at))?;
    if let Some(documents) = parallel::yaml_documents(&gather.cluster, &parts) {
        for (index, parsed) in documents.into_iter().enumerate() {
            let named = parsed
                .into_iter()
                .map(|(within, result)| (format!("{name}#{index}{within}"), result));
            gather.parsed(named);
        }
        return Ok(());
    }
    let mut index = 0;
    for document in serde_yaml::Deserializer::from_str(text) {
        let added = gather.document(&format!("{name}#{index}"), document);
        if added.map_err(|e| {
            let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
            input_error(name, e.to_string(), line, column)
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
        let seed = DocumentSeed {
            cluster: &self.cluster,
            document,
            item: false,
        };
        let Some(parsed) = seed.deserialize(deserializer)? else {
            return Ok(false);
        };
        self.parsed(parsed);
        Ok(true)
    }

    /// Adds what was read, in input order.
    fn parsed(&mut self, parsed: impl IntoIterator<Item = (String, Result<Object, Skip>)>) {
        for (document, result) in parsed {
            self.add(document, result);
        }
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
