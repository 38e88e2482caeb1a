//! A JSON file read in blocks and cut ([`JsonCut`]) on one thread while its pieces are parsed
//! from their slices on every core; what they hold is handed over in input order, as the
//! single read would hand it. A List's items are handed over as they are parsed, before its
//! `kind` (which `kubectl` prints after them) says it is one: a value that turns out not to be
//! a List takes them back ([`Sink::roll_back`]). Memory stays bounded by a few blocks in
//! flight (plus the objects read), never the whole file. Any piece that does not parse, or an input the cut finds
//! unusual, gives up ([`Unusual`]): the caller then reads the input in one go, for its errors.

use super::json_cut::{JsonCut, Piece, Unusual};
use super::stream::{DocumentSeed, Parsed};
use crate::model::{Object, Skip};
use serde::de::DeserializeSeed;
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::sync::{Mutex, PoisonError};

/// Bytes read at a time: large enough that a block holds hundreds of List items.
pub const BLOCK: usize = 4 << 20;

/// A block and the pieces that end in it, numbered in input order.
struct Batch {
    number: usize,
    bytes: Vec<u8>,
    pieces: Vec<Piece>,
}

/// What one piece held.
enum Held {
    Item(Parsed),
    /// A top-level value: nothing when it is a List (its items, read before, are its objects).
    Document(Parsed),
}

/// What one batch held, or None when one of its pieces did not parse.
type BatchRead = (usize, Option<Vec<Held>>);

/// Where the objects read go, in input order.
pub trait Sink {
    /// What was added so far, to roll back to.
    type Mark;
    fn mark(&self) -> Self::Mark;
    fn add(&mut self, at: String, object: Result<Object, Skip>);
    /// Forgets what was added since `mark`.
    fn roll_back(&mut self, mark: Self::Mark);
}

/// Reads `input` (named `name`) `block` bytes at a time ([`BLOCK`]), handing each object or
/// defect with where it was read (`file#0.items[3]`) to `sink` in input order, parsing on
/// `threads` threads.
pub fn read_json(
    input: impl std::io::Read + Send,
    name: &str,
    cluster: &str,
    (threads, block): (usize, usize),
    sink: &mut impl Sink,
) -> Result<(), Unusual> {
    let stop = AtomicBool::new(false);
    let (batches, to_parse) = sync_channel::<Batch>(threads);
    let to_parse = Mutex::new(to_parse);
    let (reads, read) = channel::<BatchRead>();
    let (spares, spare) = channel::<Vec<u8>>();
    std::thread::scope(|scope| {
        let cutter = scope.spawn(|| cut(input, block, batches, spare, &stop));
        for _ in 0..threads {
            let (reads, spares) = (reads.clone(), spares.clone());
            let (to_parse, stop) = (&to_parse, &stop);
            scope.spawn(move || parse_batches(to_parse, (reads, spares), stop, name, cluster));
        }
        drop(spares);
        drop(reads);
        let assembled = assemble(read, sink);
        if assembled.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        let cut = cutter
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        assembled.and(cut)
    })
}

/// Reads blocks, each beginning with the unfinished tail of the one before, and sends each
/// with its pieces. A block's buffer, once parsed, comes back (`spare`) to hold a later one:
/// a fresh buffer of megabytes is fresh pages, which the system must zero one by one.
fn cut(
    mut input: impl Read,
    block: usize,
    batches: SyncSender<Batch>,
    spare: Receiver<Vec<u8>>,
    stop: &AtomicBool,
) -> Result<(), Unusual> {
    let mut json = JsonCut::default();
    let mut bytes = Vec::new();
    let mut scanned = 0;
    let mut number = 0;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(Unusual);
        }
        let read = fill(&mut input, &mut bytes, block).map_err(|_| Unusual)?;
        if read == 0 {
            return json.finish();
        }
        let mut pieces = Vec::new();
        let tail = json.block(&bytes, scanned, &mut pieces)?;
        if json.frame_too_big() {
            return Err(Unusual);
        }
        let mut next = spare.try_recv().unwrap_or_default();
        next.clear();
        next.extend_from_slice(&bytes[tail..]);
        scanned = next.len();
        let batch = Batch {
            number,
            bytes: std::mem::replace(&mut bytes, next),
            pieces,
        };
        if batches.send(batch).is_err() {
            return Err(Unusual);
        }
        number += 1;
    }
}

/// Appends up to `wanted` bytes from `input`; fewer only at its end.
fn fill(input: &mut impl Read, bytes: &mut Vec<u8>, wanted: usize) -> std::io::Result<usize> {
    let before = bytes.len();
    bytes.reserve(wanted);
    input.by_ref().take(wanted as u64).read_to_end(bytes)?;
    Ok(bytes.len() - before)
}

/// Parses batches until there are none left; once stopped, drains them unparsed (so the
/// cutter never waits on a full channel).
fn parse_batches(
    to_parse: &Mutex<Receiver<Batch>>,
    (reads, spares): (Sender<BatchRead>, Sender<Vec<u8>>),
    stop: &AtomicBool,
    name: &str,
    cluster: &str,
) {
    loop {
        let batch = to_parse
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recv();
        let Ok(batch) = batch else { return };
        if stop.load(Ordering::Relaxed) {
            continue;
        }
        let read = parse_batch(&batch, name, cluster);
        if reads.send((batch.number, read)).is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        // Refused only once the cutter is done, when no buffer is needed any more.
        let _ = spares.send(batch.bytes);
    }
}

fn parse_batch(batch: &Batch, name: &str, cluster: &str) -> Option<Vec<Held>> {
    let read = |piece: &Piece| match piece {
        Piece::Item {
            document,
            index,
            text,
        } => {
            let item = format!("{name}#{document}.items[{index}]");
            one_json_value(cluster, &item, &batch.bytes[text.clone()], true).map(Held::Item)
        }
        Piece::Document { document, text } => {
            let document = format!("{name}#{document}");
            one_json_value(cluster, &document, text, false).map(Held::Document)
        }
    };
    batch.pieces.iter().map(read).collect()
}

/// `text` as exactly one JSON value, read as a document or (`item`) an element of `items`.
fn one_json_value(cluster: &str, document: &str, text: &[u8], item: bool) -> Option<Parsed> {
    // Checked once here: read from a `str`, the parser does not check every string again.
    // Text that is not UTF-8 gives up, and the single read names where it is.
    let text = std::str::from_utf8(text).ok()?;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let seed = DocumentSeed {
        cluster,
        document,
        item,
    };
    let parsed = seed.deserialize(&mut deserializer).ok()?;
    deserializer.end().ok()?;
    // Only an empty YAML document reads as None.
    parsed
}

/// Hands what the batches held to `sink` in input order: a value's items as they come (taken
/// back if its frame says it is not a List), then the value's own object if it is not one (as
/// the single read decides after the value).
fn assemble<S: Sink>(read: Receiver<BatchRead>, sink: &mut S) -> Result<(), Unusual> {
    let mut early = BTreeMap::new();
    let mut next = 0;
    let mut value_start = sink.mark();
    for (number, batch) in read {
        early.insert(number, batch.ok_or(Unusual)?);
        while let Some(batch) = early.remove(&next) {
            next += 1;
            for piece in batch {
                match piece {
                    Held::Item(parsed) => {
                        parsed
                            .into_iter()
                            .for_each(|(at, object)| sink.add(at, object));
                    }
                    Held::Document(parsed) => {
                        if !parsed.is_empty() {
                            sink.roll_back(value_start);
                            parsed
                                .into_iter()
                                .for_each(|(at, object)| sink.add(at, object));
                        }
                        value_start = sink.mark();
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// Objects of every outcome: evaluated, ignored, skipped, a nested List, the same object
    /// twice with different contents, a null item.
    fn values() -> Vec<Value> {
        let repo = |name: &str, url: &str| {
            json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
                   "metadata": {"name": name, "namespace": "flux-system"}, "spec": {"url": url}})
        };
        let mut values = vec![
            repo("a", "https://a"),
            json!({"apiVersion": "v1", "kind": "List",
                   "items": [repo("b", "https://b"), "garbage", {"kind": "List", "items": [repo("c", "https://c")]}]}),
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"}}),
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "default"}}),
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "items": [1, 2]}),
            Value::Null,
            json!([1, 2]),
        ];
        values.extend((0..20).map(|i| repo(&format!("r{i}"), "https://r")));
        values.push(repo("a", "https://elsewhere"));
        values
    }

    /// What the single read finds: every value of `text` read in one go, in order.
    fn in_one_go(text: &str) -> Parsed {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let mut parsed = Vec::new();
        for index in 0.. {
            if deserializer.end().is_ok() {
                break;
            }
            let document = format!("f#{index}");
            let seed = DocumentSeed {
                cluster: "local",
                document: &document,
                item: false,
            };
            parsed.extend(seed.deserialize(&mut deserializer).unwrap().unwrap());
        }
        parsed
    }

    impl Sink for Parsed {
        type Mark = usize;
        fn mark(&self) -> usize {
            self.len()
        }
        fn add(&mut self, at: String, object: Result<Object, Skip>) {
            self.push((at, object));
        }
        fn roll_back(&mut self, mark: usize) {
            self.truncate(mark);
        }
    }

    fn in_pieces(text: &str, threads: usize, block: usize) -> Result<Parsed, Unusual> {
        let mut parsed = Vec::new();
        read_json(text.as_bytes(), "f", "local", (threads, block), &mut parsed)?;
        Ok(parsed)
    }

    #[test]
    fn lists_and_values_read_in_pieces_read_as_in_one_go() {
        let list = json!({"apiVersion": "v1", "kind": "List", "items": values(), "metadata": {}});
        let not_a_list = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                "items": values()});
        let texts = [
            serde_json::to_string_pretty(&list).unwrap(),
            list.to_string(),
            not_a_list.to_string(),
            // A top-level null is left to the single read (the cut takes objects and arrays).
            values()
                .iter()
                .filter(|value| !value.is_null())
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join("\n"),
            format!("{list} {not_a_list}\n{list}"),
        ];
        for text in &texts {
            let whole = in_one_go(text);
            assert!(!whole.is_empty(), "{text}");
            for threads in [1, 2, 3] {
                for block in [1, 5, 64, 1000, BLOCK] {
                    let pieces = in_pieces(text, threads, block);
                    assert_eq!(
                        pieces.as_ref(),
                        Ok(&whole),
                        "{threads} threads, blocks of {block}"
                    );
                }
            }
        }
        let names: Vec<_> = in_one_go(&texts[0]).into_iter().map(|(at, _)| at).collect();
        assert!(names.contains(&"f#0.items[1].items[2].items[0]".to_string()));
    }

    #[test]
    fn a_piece_that_is_not_utf8_gives_up() {
        let mut text =
            br#"{"kind": "List", "items": [{"kind": "Pod", "metadata": {"name": "p"#.to_vec();
        text.push(0xff);
        text.extend_from_slice(br#""}}]}"#);
        for threads in [1, 2] {
            let mut parsed = Vec::new();
            let read = read_json(&text[..], "f", "local", (threads, 4), &mut parsed);
            assert_eq!(read, Err(Unusual));
        }
    }

    #[test]
    fn a_piece_that_does_not_parse_gives_up() {
        for broken in [
            r#"{"kind": "List", "items": [{"kind": "Pod"}, {"kind": }]}"#,
            r#"{"kind": "List", "items": [1, ]}"#,
            r#"{"kind": "List", "items": [1], "metadata": }"#,
            r#"{"kind": "List", "items": [1}]"#,
            r#"{"kind": "Pod"} {"kind": "Pod" 1}"#,
        ] {
            for threads in [1, 2] {
                assert_eq!(in_pieces(broken, threads, 4), Err(Unusual), "{broken}");
            }
        }
    }
}
