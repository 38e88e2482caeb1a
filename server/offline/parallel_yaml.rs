//! Multi-document YAML read on every core: the text is cut at its `---` lines, each document
//! read by serde-saphyr on its own, and what they hold handed over in input order, numbered as
//! the single read numbers them. A document that does not read (malformed, too deep), or a
//! text the cut might split otherwise than the parser (directives, `...`, a `---` line
//! carrying more, a document that reads as nothing), gives up ([`Unusual`]): the caller then
//! reads the whole text in one go, for its errors and positions. A large document written as
//! `kubectl get -o yaml` writes a List has its `items` cut out too, each element read on its
//! own (any that does not read sends the whole text to the single read).

use super::blocks::{self, Cutter, Unusual};
use super::depth::MAX_DEPTH;
use super::stream::{Anonymous, DocumentSeed, OneEntry, Parsed};
use super::yaml_cut::{Document, YamlCut};
use crate::model::{Object, Skip};
use serde::de::DeserializeSeed;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::channel;

/// Pieces a thread reads at a time: enough to make taking the next batch cheap.
const BATCH: usize = 64;

/// Documents from this size on have a List's `items` cut out, to read them on every core.
const CUT_ITEMS_FROM: usize = 1 << 20;

/// A piece of the text that reads on its own, in input order.
#[derive(Debug, PartialEq, Eq)]
enum Piece {
    /// A document read whole.
    Document(Document),
    /// Element `item` of document `index`'s `items`.
    Item {
        index: usize,
        item: usize,
        text: Range<usize>,
    },
    /// Document `index` with its items (the pieces before) left out as `items: []`.
    Frame { index: usize, text: String },
}

/// What one piece held (None: a piece the block reader gave up on that only a whole read
/// of the text may read).
enum Held {
    Document(Parsed),
    Item(Parsed),
    Frame(Parsed),
}

/// The cut of a YAML file read in blocks ([`blocks`]), never the whole text at once. A
/// document large enough to be a List worth cutting into items gives up, as anything unusual
/// does: the caller then reads the whole text ([`read_yaml`]).
pub fn file_cut() -> YamlCut {
    YamlCut::new(CUT_ITEMS_FROM)
}

impl Cutter for YamlCut {
    type Piece = Document;

    fn block(
        &mut self,
        block: &[u8],
        _from: usize,
        end: bool,
        pieces: &mut Vec<Document>,
    ) -> Result<usize, Unusual> {
        self.cut(block, end, pieces)
    }

    fn read(piece: &Document, block: &[u8], name: &str, cluster: &str) -> Option<blocks::Held> {
        let text = std::str::from_utf8(&block[piece.text.clone()]).ok()?;
        let at = format!("{name}#{}", piece.index);
        read_document(text, &at, cluster).map(blocks::Held::Document)
    }
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
    let pieces = pieces(text)?;
    let batches: Vec<&[Piece]> = pieces.chunks(BATCH).collect();
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (sender, read) = channel::<(usize, Option<Vec<Held>>)>();
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
                    let held = batches[number]
                        .iter()
                        .map(|piece| read_piece(text, piece, name, cluster))
                        .collect();
                    if sender.send((number, held)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(sender);
        let mut early = BTreeMap::new();
        let mut wanted = 0;
        let mut items = Vec::new();
        for (number, held) in read {
            let Some(held) = held else {
                stop.store(true, Ordering::Relaxed);
                return Err(Unusual);
            };
            early.insert(number, held);
            while let Some(batch) = early.remove(&wanted) {
                wanted += 1;
                for held in batch {
                    match held {
                        Held::Item(parsed) => items.extend(parsed),
                        // A List: its objects are its items (as the single read decides
                        // once it has read the whole document).
                        Held::Frame(parsed) if parsed.is_empty() => {
                            items.drain(..).for_each(|(at, object)| add(at, object));
                        }
                        Held::Frame(parsed) | Held::Document(parsed) => {
                            items.clear();
                            parsed.into_iter().for_each(|(at, object)| add(at, object));
                        }
                    }
                }
            }
        }
        Ok(())
    })
}

fn read_piece(text: &str, piece: &Piece, name: &str, cluster: &str) -> Option<Held> {
    match piece {
        Piece::Document(document) => {
            let at = format!("{name}#{}", document.index);
            read_document(&text[document.text.clone()], &at, cluster).map(Held::Document)
        }
        Piece::Item {
            index,
            item,
            text: range,
        } => {
            let at = format!("{name}#{index}.items[{item}]");
            let entry = OneEntry(DocumentSeed {
                cluster,
                document: &at,
                item: true,
            });
            // The entry alone is a sequence of one: its document's mapping is the level above.
            let options = options(MAX_DEPTH - 1);
            serde_saphyr::with_deserializer_from_str_with_options(
                &text[range.clone()],
                options,
                |yaml| entry.deserialize(yaml),
            )
            .ok()
            .flatten()
            .map(Held::Item)
        }
        Piece::Frame { index, text } => {
            read_document(text, &format!("{name}#{index}"), cluster).map(Held::Frame)
        }
    }
}

/// One document, read on its own (the cut keeps whatever could tie documents together
/// whole, so it reads as it does in the whole text); None when it does not read, nests too
/// deep, or holds nothing (the cut numbered it: the single read numbers otherwise).
fn read_document(text: &str, at: &str, cluster: &str) -> Option<Parsed> {
    let seed = DocumentSeed {
        cluster,
        document: at,
        item: false,
    };
    let options = options(MAX_DEPTH);
    serde_saphyr::with_deserializer_from_str_with_options(text, options, |yaml| {
        seed.deserialize(yaml)
    })
    .ok()
    .flatten()
}

/// The documents of `text` (named `name`) read in one go, numbered as the cut numbers them
/// (only documents that hold something count).
pub fn read_in_one_go(
    text: &str,
    name: &str,
    cluster: &str,
) -> Result<Parsed, serde_saphyr::Error> {
    let options = options(MAX_DEPTH);
    let documents: Vec<Anonymous> = serde_saphyr::from_str_multiple_with_options(text, options)?;
    let mut parsed = Vec::new();
    let mut index = 0;
    for document in documents {
        if let Some(read) = document.named(&format!("{name}#{index}"), cluster) {
            parsed.extend(read);
            index += 1;
        }
    }
    Ok(parsed)
}

/// How objects are read: as the configuration is, except that a key given twice keeps its
/// last value, as a JSON object's does (`kubectl` never writes one twice; a hand-edited file
/// might, and the lenient reader takes what a JSON reader would).
fn options(max_depth: usize) -> serde_saphyr::Options {
    let mut options = crate::yaml::options(max_depth);
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::LastWins;
    options
}

/// The pieces of `text`: its documents, large ones with their items cut out.
fn pieces(text: &str) -> Result<Vec<Piece>, Unusual> {
    let mut documents = Vec::new();
    YamlCut::new(usize::MAX).cut(text.as_bytes(), true, &mut documents)?;
    let mut pieces = Vec::new();
    for document in documents {
        let (index, range) = (document.index, document.text.clone());
        let cut = (range.len() >= CUT_ITEMS_FROM)
            .then(|| cut_items(text, range.clone()))
            .flatten();
        match cut {
            Some((items, frame)) => {
                pieces.extend(
                    items
                        .into_iter()
                        .enumerate()
                        .map(|(item, text)| Piece::Item { index, item, text }),
                );
                pieces.push(Piece::Frame { index, text: frame });
            }
            None => pieces.push(Piece::Document(document)),
        }
    }
    Ok(pieces)
}

/// A document's `items` as `kubectl get -o yaml` writes a List's: one `items:` line at the
/// left edge, each element a `-` at the left edge. Returns each element's text and the
/// document with `items: []` in their place; None when the document is not written so.
fn cut_items(text: &str, document: Range<usize>) -> Option<(Vec<Range<usize>>, String)> {
    let bytes = &text.as_bytes()[..document.end];
    let from = document.start;
    let key = b"items:\n";
    let mut keys = memchr::memmem::find_iter(&bytes[from..], b"\nitems:")
        .map(|at| from + at + 1)
        .chain(bytes[from..].starts_with(b"items:").then_some(from));
    let key_line = keys.next()?;
    if keys.next().is_some() || !bytes[key_line..].starts_with(key) {
        return None;
    }
    let first = key_line + key.len();
    if !is_entry(bytes, first) {
        return None;
    }
    let mut items = Vec::new();
    let mut entry = first;
    let mut end = bytes.len();
    for newline in memchr::memchr_iter(b'\n', &bytes[first..]) {
        let line = first + newline + 1;
        match bytes.get(line) {
            None => break,
            Some(b' ' | b'\n' | b'#') => {}
            Some(_) if is_entry(bytes, line) => {
                items.push(entry..line);
                entry = line;
            }
            Some(_) => {
                end = line;
                break;
            }
        }
    }
    items.push(entry..end);
    let frame = [
        &text[from..key_line],
        "items: []\n",
        &text[end..document.end],
    ]
    .concat();
    Some((items, frame))
}

/// `-` at `at`, followed by a space or a line break.
fn is_entry(bytes: &[u8], at: usize) -> bool {
    bytes.get(at) == Some(&b'-') && matches!(bytes.get(at + 1), Some(b' ' | b'\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the single read finds.
    fn in_one_go(text: &str) -> Parsed {
        read_in_one_go(text, "f", "local").unwrap()
    }

    fn in_pieces(text: &str, threads: usize) -> Result<Parsed, Unusual> {
        let mut parsed = Vec::new();
        read_yaml(text, "f", "local", threads, |at, object| {
            parsed.push((at, object))
        })?;
        Ok(parsed)
    }

    /// The streaming read of `text`, in blocks of `block` bytes on `threads` threads.
    fn in_blocks(text: &str, threads: usize, block: usize) -> Result<Parsed, Unusual> {
        let mut parsed = Vec::new();
        let input = text.as_bytes();
        blocks::read_in_blocks(
            input,
            ("f", "local"),
            (threads, block),
            file_cut(),
            &mut parsed,
        )?;
        Ok(parsed)
    }

    const FIXTURES: [&str; 4] = [
        include_str!("../../tests/fixtures/real-flux/crash-loop.yaml"),
        include_str!("../../tests/fixtures/real-flux/healthy.yaml"),
        include_str!("../../tests/fixtures/real-flux/shard-trap.yaml"),
        include_str!("../../tests/fixtures/real-flux/wait-failed.yaml"),
    ];

    /// A `kubectl get -o yaml` List past [`CUT_ITEMS_FROM`], its items cut out.
    fn large_list(kind: &str) -> String {
        let fixture = FIXTURES[0];
        let items_at = fixture.find("\nitems:\n").unwrap() + "\nitems:\n".len();
        let items_end = fixture.find("\nkind: List").unwrap() + 1;
        let items = &fixture[items_at..items_end];
        let copies = CUT_ITEMS_FROM / items.len() + 2;
        format!(
            "apiVersion: v1\nitems:\n{}kind: {kind}\nmetadata:\n  resourceVersion: \"\"\n",
            items.repeat(copies)
        )
    }

    #[test]
    fn kubectl_output_reads_in_pieces_as_in_one_go() {
        let multi = format!(
            "# head\n{}---\n---\n# only a comment\n---\n{}",
            FIXTURES[1], FIXTURES[2]
        );
        let texts = [
            FIXTURES[0].to_string(),
            FIXTURES[3].to_string(),
            multi,
            large_list("List"),
            large_list("Pod"),
        ];
        for text in &texts {
            let whole = in_one_go(text);
            assert!(!whole.is_empty());
            for threads in [1, 2, 3] {
                assert_eq!(in_pieces(text, threads).as_ref(), Ok(&whole));
            }
        }
        let cut = pieces(&texts[3]).unwrap();
        assert!(cut.len() > 100, "the large List is cut into its items");
        assert!(matches!(cut.last(), Some(Piece::Frame { .. })));
    }

    #[test]
    fn a_file_read_in_blocks_reads_as_in_one_go() {
        let multi = format!(
            "# head\n{}---\n---\n# only a comment\n---\n{}---\n{}",
            FIXTURES[1], FIXTURES[2], FIXTURES[0]
        );
        let documents: String = FIXTURES.iter().map(|f| format!("---\n{f}")).collect();
        for text in [multi, documents.repeat(3), FIXTURES[3].to_string()] {
            let whole = in_one_go(&text);
            assert!(!whole.is_empty());
            for threads in [1, 2, 3] {
                // Blocks smaller than a line too (each block copies the unfinished
                // document again, so the tiny ones are slow on these fixtures).
                for block in [13, 1000, blocks::BLOCK] {
                    let read = in_blocks(&text, threads, block);
                    assert_eq!(
                        read.as_ref(),
                        Ok(&whole),
                        "{threads} threads, blocks of {block}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_file_read_in_blocks_leaves_large_lists_and_anything_unusual_to_the_whole_read() {
        // A List worth cutting into items: the whole text's read cuts it.
        let list = large_list("List");
        assert_eq!(in_blocks(&list, 2, blocks::BLOCK), Err(Unusual));
        assert!(in_pieces(&list, 2).is_ok());
        for text in [
            "%YAML 1.1\n---\na: 1\n",
            "a: 1\n...\n---\nb: 1\n",
            "a: 1\n---\nb: [1\n",
            "kind: Pod\n---\n~\n",
        ] {
            for block in [3, 64] {
                assert_eq!(in_blocks(text, 2, block), Err(Unusual), "{text}");
            }
        }
        // Too deep, found in the block reader's piece.
        let deep = format!("a: 1\n---\nb: {}\n", "[".repeat(MAX_DEPTH + 1));
        assert_eq!(in_blocks(&deep, 1, 16), Err(Unusual));
        // Not UTF-8 inside a document.
        let mut text = b"kind: Pod\nmetadata:\n  name: p".to_vec();
        text.push(0xff);
        let mut parsed = Vec::new();
        let read =
            blocks::read_in_blocks(&text[..], ("f", "local"), (1, 8), file_cut(), &mut parsed);
        assert_eq!(read, Err(Unusual));
    }

    #[test]
    fn a_key_given_twice_keeps_its_last_value_in_pieces_and_in_one_go() {
        let text = "kind: Pod\nmetadata: {name: a, name: b, namespace: n}\n---\nkind: Pod\nmetadata:\n  name: c\n";
        let whole = in_one_go(text);
        let names: Vec<&str> = whole
            .iter()
            .map(|(_, read)| read.as_ref().unwrap().name.as_str())
            .collect();
        assert_eq!(names, ["b", "c"]);
        assert_eq!(in_pieces(text, 2).as_ref(), Ok(&whole));
    }

    #[test]
    fn anchors_inside_a_document_read_in_pieces() {
        let text = "a: &x 1\nb: *x\nkind: Pod\n---\nkind: Service\nmetadata: {name: s}\n---\n~\n";
        let whole = in_one_go(text);
        // `~` reads as no document at all: the cut numbered it, so the whole text is read in
        // one go instead.
        assert_eq!(in_pieces(text, 2), Err(Unusual));
        let text = &text[..text.rfind("---").unwrap()];
        assert_eq!(in_pieces(text, 2).as_ref(), Ok(&whole));
    }

    #[test]
    fn what_may_tie_documents_together_is_left_to_the_single_read() {
        for text in [
            "%YAML 1.1\n---\na: 1\n",
            "a: 1\n...\n---\nb: 1\n",
            "a: 1\n--- # comment\nb: 1\n",
            "a: 1\n--- !tag\nb: 1\n",
        ] {
            assert_eq!(in_pieces(text, 2), Err(Unusual), "{text}");
        }
        // A broken document, one too deep, a quote running on into the next document: the
        // single read reports them.
        assert_eq!(in_pieces("a: 1\n---\nb: [1\n", 2), Err(Unusual));
        let deep = format!("a: 1\n---\nb: {}\n---\nc: 1\n", "[".repeat(MAX_DEPTH + 1));
        assert_eq!(in_pieces(&deep, 2), Err(Unusual));
        let spanning = format!("a: '{}\n---\nb: ' \n---\nc: 1\n", "[".repeat(10));
        assert_eq!(in_pieces(&spanning, 2), Err(Unusual));
    }

    /// The single read takes what the cut leaves to it: a directive, a document end, a tag or
    /// a comment on the marker line; documents are numbered as the cut numbers them (only
    /// those that hold something), and the objects are on the reader's cluster.
    #[test]
    fn the_single_read_reads_what_the_cut_leaves_numbered_as_the_cut_numbers() {
        let pod = |name: &str| format!("kind: Pod\nmetadata: {{name: {name}, namespace: n}}\n");
        for (text, places) in [
            (format!("%YAML 1.2\n---\n{}", pod("a")), vec!["f#0"]),
            (
                format!("{}...\n---\n{}", pod("a"), pod("b")),
                vec!["f#0", "f#1"],
            ),
            (
                format!("{}--- # c\n{}", pod("a"), pod("b")),
                vec!["f#0", "f#1"],
            ),
            (format!("---\n---\n~\n---\n{}", pod("b")), vec!["f#0"]),
            (format!("--- !tag\n{}", pod("a")), vec!["f#0"]),
        ] {
            let read = in_one_go(&text);
            let at: Vec<&str> = read.iter().map(|(at, _)| at.as_str()).collect();
            assert_eq!(at, places, "{text}");
            for (_, object) in &read {
                let object = object.as_ref().unwrap();
                assert_eq!(&*object.cluster, "local", "{text}");
            }
        }
        let list = "kind: List\nitems:\n- kind: Pod\n  metadata: {name: a, namespace: n}\n";
        let read = in_one_go(&format!("%YAML 1.2\n---\n{list}"));
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].0, "f#0.items[0]");
    }
}
