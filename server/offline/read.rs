//! Reads what `kubectl get -o yaml|json` prints: multi-document YAML, JSON (one value or
//! several), or a `*List` with `items` (Lists inside Lists too). Unknown kinds are counted,
//! malformed objects are skipped with a reason, the same object given twice is kept once, and
//! unreadable or too deeply nested input is one error line naming file and position.

use super::blocks::{self, Cutter, Sink};
use super::depth::{JsonDepthGuard, TooDeep};
use super::json_cut::JsonCut;
use super::parallel_yaml;
use super::stream::DocumentSeed;
use crate::health;
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
    gather.inputs.objects = Vec::with_capacity(objects_at_most(sources));
    for source in sources {
        let (name, mut reader) = open(source)?;
        let failed = |problem: String| InputError {
            file: name.clone(),
            position: None,
            problem,
        };
        // JSON when the text starts like JSON (its errors are clearer), else YAML documents.
        if starts_like_json(&mut reader).map_err(|e| failed(e.to_string()))? {
            if file_on_every_core(source, &name, &mut gather, JsonCut::default()) {
                continue;
            }
            json_documents(&name, reader, &mut gather)?;
        } else {
            if file_on_every_core(source, &name, &mut gather, parallel_yaml::file_cut()) {
                continue;
            }
            // Sized once from the file: grown by doubling, a 184 MB text was copied and its
            // pages touched again at every step.
            let mut bytes = Vec::with_capacity(file_size(source).saturating_add(1));
            reader
                .read_to_end(&mut bytes)
                .map_err(|e| failed(e.to_string()))?;
            let text = String::from_utf8(bytes).map_err(|_| failed("not UTF-8 text".into()))?;
            yaml_documents(&name, &text, &mut gather)?;
        }
    }
    Ok(gather.finish())
}

fn open(source: &Path) -> Result<(String, BufReader<Box<dyn Read>>), InputError> {
    if source.as_os_str() == "-" {
        return Ok(("stdin".into(), BufReader::new(Box::new(std::io::stdin()))));
    }
    let name = source.display().to_string();
    match std::fs::File::open(source) {
        Ok(file) => Ok((name, BufReader::new(Box::new(file)))),
        Err(e) => Err(InputError {
            file: name,
            position: None,
            problem: e.to_string(),
        }),
    }
}

/// The size of a regular file (0 for stdin, a pipe, anything whose size is unknown).
fn file_size(source: &Path) -> usize {
    if source.as_os_str() == "-" {
        return 0;
    }
    std::fs::metadata(source)
        .ok()
        .filter(|m| m.is_file())
        .map_or(0, |m| usize::try_from(m.len()).unwrap_or(0))
}

/// Room for the objects that files of this size are likely to hold, as many as objects of
/// [`SMALL_OBJECT`] bytes would make (at most [`MANY_OBJECTS`]). Room never filled costs
/// address space only, while a list grown by doubling copies every object at each step into
/// fresh pages (100,000 objects: about 120 MB written for 46 MB kept).
fn objects_at_most(sources: &[PathBuf]) -> usize {
    let bytes: usize = sources.iter().map(|source| file_size(source)).sum();
    (bytes / SMALL_OBJECT).min(MANY_OBJECTS)
}

/// A small object as `kubectl` prints it: name, labels, a short spec and status.
const SMALL_OBJECT: usize = 512;

/// Past this many objects the list grows as usual.
const MANY_OBJECTS: usize = 1 << 20;

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

/// A file cut by `cutter` into pieces read on every core ([`blocks`]), from its first byte
/// that is not white space, as the single read starts; false, with nothing added, when it
/// must be read in one go. Only a regular file: a pipe (`<(kubectl get …)`) cannot be read a
/// second time, and its first bytes are already in the caller's buffer.
fn file_on_every_core(path: &Path, name: &str, gather: &mut Gather, cutter: impl Cutter) -> bool {
    // Asked before opening: opening a pipe's read end again waits for a writer.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut file = BufReader::new(file);
    if starts_like_json(&mut file).is_err() {
        return false;
    }
    let before = gather.mark();
    let cluster = gather.cluster.clone();
    let pieces = (health::cores(), blocks::BLOCK);
    let read = blocks::read_in_blocks(file, (name, &cluster), pieces, cutter, gather);
    if read.is_err() {
        gather.roll_back(before);
    }
    read.is_ok()
}

/// JSON values one after another, streamed from the reader (never the whole text in memory)
/// through the depth guard, each added as soon as it is read.
fn json_documents(name: &str, reader: impl Read, gather: &mut Gather) -> Result<(), InputError> {
    let error = |e: serde_json::Error| {
        if !e.is_io() {
            return input_error(name, e.to_string(), e.line(), e.column());
        }
        let io = std::io::Error::from(e);
        match io
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<TooDeep>())
        {
            Some(at) => input_error(name, at.to_string(), at.line, at.column),
            None => input_error(name, io.to_string(), 0, 0),
        }
    };
    // Buffered after the guard: serde_json reads byte by byte, and the guard checks a chunk at
    // a time.
    let guarded = BufReader::with_capacity(1 << 16, JsonDepthGuard::new(reader));
    let mut deserializer = serde_json::Deserializer::from_reader(guarded);
    let mut index = 0;
    loop {
        match deserializer.end() {
            Ok(()) => return Ok(()),
            Err(e) if e.is_io() => return Err(error(e)),
            Err(_) => {}
        }
        gather
            .document(&format!("{name}#{index}"), &mut deserializer)
            .map_err(error)?;
        index += 1;
    }
}

/// YAML documents: on every core ([`parallel_yaml`]) unless that gives up, then in one go
/// (its errors and positions are the whole text's).
fn yaml_documents(name: &str, text: &str, gather: &mut Gather) -> Result<(), InputError> {
    let before = gather.mark();
    let cluster = gather.cluster.clone();
    let read = parallel_yaml::read_yaml(text, name, &cluster, health::cores(), |at, object| {
        gather.add(at, object);
    });
    if read.is_ok() {
        return Ok(());
    }
    gather.roll_back(before);
    let parsed = parallel_yaml::read_in_one_go(text, name, &cluster).map_err(|e| {
        let (line, column) = crate::yaml::position(&e).unwrap_or((0, 0));
        let problem = if crate::yaml::is_too_deep(&e) {
            TooDeep { line, column }.to_string()
        } else {
            crate::yaml::message(&e)
        };
        input_error(name, problem, line, column)
    })?;
    for (at, object) in parsed {
        gather.add(at, object);
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

/// What a [`Gather`] held at one point ([`Sink::mark`]).
struct GatherMark {
    objects: usize,
    skipped: usize,
    ignored: Ignored,
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
        for (document, result) in parsed {
            self.add(document, result);
        }
        Ok(true)
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

/// Each object once: a copy of one read before is merged into it, and named when it differs.
impl Sink for Gather {
    type Mark = GatherMark;

    fn mark(&self) -> GatherMark {
        GatherMark {
            objects: self.inputs.objects.len(),
            skipped: self.inputs.skipped.len(),
            ignored: self.inputs.ignored.clone(),
            copies: self.copies.clone(),
        }
    }

    fn roll_back(&mut self, mark: GatherMark) {
        for object in self.inputs.objects.drain(mark.objects..) {
            self.first.remove(&object.id());
        }
        self.inputs.skipped.truncate(mark.skipped);
        self.inputs.ignored = mark.ignored;
        self.copies = mark.copies;
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
}
