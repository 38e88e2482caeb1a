//! Multi-document YAML read on every core: the text is cut at its `---` lines, each document
//! read by the block reader ([`block_yaml`]) or, where that gives up, by serde_yaml alone, and
//! what they hold handed over in input order, numbered as the single read numbers them. A
//! document serde_yaml cannot read, or a text the cut might split otherwise than serde_yaml
//! (directives, `...`, a `---` line carrying more, a document that reads as nothing), gives up
//! ([`Unusual`]): the caller then reads the whole text as before, for its errors and positions.

use super::block_yaml::{self, lines::next_line};
use super::json_cut::Unusual;
use super::stream::{DocumentSeed, Parsed};
use crate::model::{Object, Skip};
use serde::de::DeserializeSeed;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::channel;

/// Documents a thread reads at a time: enough to make taking the next batch cheap.
const BATCH: usize = 64;

/// A document holding something, and its number among those (`file#index`).
#[derive(Debug, PartialEq, Eq)]
struct Document {
    index: usize,
    text: Range<usize>,
}

/// Reads the documents of `text` (named `name`) on `threads` threads, handing each object or
/// defect with where it was read to `add` in input order.
pub fn read_yaml(
    text: &str,
    name: &str,
    cluster: &str,
    threads: usize,
    mut add: impl FnMut(String, Result<Object, Skip>),
) -> Result<(), Unusual> {
    let documents = documents(text)?;
    let batches: Vec<&[Document]> = documents.chunks(BATCH).collect();
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (sender, read) = channel::<(usize, Option<Vec<Parsed>>)>();
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            let sender = sender.clone();
            let (next, stop, batches) = (&next, &stop, &batches);
            scope.spawn(move || {
                loop {
                    let number = next.fetch_add(1, Ordering::Relaxed);
                    if number >= batches.len() || stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let parsed = batches[number]
                        .iter()
                        .map(|document| read_document(text, document, name, cluster))
                        .collect();
                    if sender.send((number, parsed)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(sender);
        let mut early = BTreeMap::new();
        let mut wanted = 0;
        for (number, parsed) in read {
            let Some(parsed) = parsed else {
                stop.store(true, Ordering::Relaxed);
                return Err(Unusual);
            };
            early.insert(number, parsed);
            while let Some(batch) = early.remove(&wanted) {
                wanted += 1;
                for (at, object) in batch.into_iter().flatten() {
                    add(at, object);
                }
            }
        }
        Ok(())
    })
}

/// One document: by the block reader, else by serde_yaml alone (the same values wherever the
/// document stands, as the cut keeps whatever could tie documents together whole); None when
/// serde_yaml fails on it or does not read it as exactly one document.
fn read_document(text: &str, document: &Document, name: &str, cluster: &str) -> Option<Parsed> {
    let text = &text[document.text.clone()];
    let at = format!("{name}#{}", document.index);
    let seed = || DocumentSeed {
        cluster,
        document: &at,
        item: false,
    };
    if let Ok(parsed) = block_yaml::read_document(text, seed()) {
        // None (nothing in it) cannot be: the cut numbered only documents holding something.
        return parsed;
    }
    let mut documents = serde_yaml::Deserializer::from_str(text);
    let parsed = seed().deserialize(documents.next()?).ok()??;
    documents.next().is_none().then_some(parsed)
}

/// The documents that hold something (not only blank lines and comments), each from after
/// its `---` line to the next, numbered in order.
fn documents(text: &str) -> Result<Vec<Document>, Unusual> {
    let bytes = text.as_bytes();
    let mut documents = Vec::new();
    let mut start = 0;
    let mut add = |range: Range<usize>| {
        if next_line(&bytes[range.clone()], 0).is_some() {
            documents.push(Document {
                index: documents.len(),
                text: range,
            });
        }
    };
    let line_starts = std::iter::once(0).chain(memchr::memchr_iter(b'\n', bytes).map(|n| n + 1));
    for line in line_starts {
        let rest = &bytes[line..];
        let marked = |mark: &[u8]| rest.starts_with(mark).then(|| rest.get(3).copied());
        if let Some(next) = marked(b"---") {
            match next {
                None | Some(b'\n') => {
                    add(start..line);
                    start = (line + 4).min(bytes.len());
                }
                Some(b' ' | b'\t' | b'\r') => return Err(Unusual),
                Some(_) => {}
            }
        } else if let Some(None | Some(b'\n' | b' ' | b'\t' | b'\r')) = marked(b"...") {
            return Err(Unusual);
        } else if rest.first() == Some(&b'%') {
            return Err(Unusual);
        }
    }
    add(start..bytes.len());
    Ok(documents)
}
