//! A JSON file cut, without parsing, into pieces that parse on their own: each top-level value,
//! and each element of a top-level object's `items` array (a `kubectl get -o json` List). The
//! bytes are scanned once, block by block as they are read (never the whole file): strings are
//! jumped through with `memchr`, the nesting depth is held to [`MAX_DEPTH`], and anything
//! unusual stops the cut ([`Unusual`]): the caller then reads the input in one go, which gives
//! today's errors and positions.

use super::blocks::Unusual;
use super::depth::MAX_DEPTH;
use std::ops::Range;

/// Above this, a top-level value's text outside its `items` (a whole object that is not a
/// List) is left to the single read: the cut holds that text until the value closes.
const MAX_FRAME: usize = 16 << 20;

/// One piece, in input order.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece {
    /// An element of the `items` of top-level value `document`: its text in the block.
    Item {
        document: usize,
        index: usize,
        text: Range<usize>,
    },
    /// Top-level value `document`, its items (if any were cut) left out as `"items": []`.
    Document { document: usize, text: Vec<u8> },
}

#[derive(Debug, Default)]
pub struct JsonCut {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// Top-level values closed so far.
    documents: usize,
    top_is_object: bool,
    /// The current top-level value's text, without its items.
    frame: Vec<u8>,
    /// Block offset from which bytes still belong to the frame (outside the items).
    frame_from: usize,
    /// Where in the frame each string directly inside the top-level object opens.
    top_strings: Vec<usize>,
    items: Option<Items>,
    items_cut: bool,
}

/// Inside the `items` array being cut.
#[derive(Debug)]
struct Items {
    /// Block offset of the current element's first byte.
    start: usize,
    index: usize,
}

/// Bytes the scan stops at outside strings; every other byte is skipped.
const STRUCTURAL: [bool; 256] = {
    let mut table = [false; 256];
    let mut at = 0;
    let bytes = b"\"{}[],";
    while at < bytes.len() {
        table[bytes[at] as usize] = true;
        at += 1;
    }
    table
};

impl JsonCut {
    /// Scans `block[from..]` (the bytes before `from` were scanned with the previous block),
    /// adding the pieces that end in it. Returns where the block's unfinished tail starts:
    /// the next block must begin with `block[tail..]`. Unusual input (too deep, malformed
    /// between values, an `items` key spelled twice or with escapes, a huge object) stops it.
    pub fn cut(
        &mut self,
        block: &[u8],
        from: usize,
        pieces: &mut Vec<Piece>,
    ) -> Result<usize, Unusual> {
        let mut at = from;
        while at < block.len() {
            if self.in_string {
                at = self.string(block, at)?;
                continue;
            }
            if self.depth == 0 {
                at = self.between_values(block, at)?;
                continue;
            }
            match block[at..].iter().position(|&b| STRUCTURAL[b as usize]) {
                None => break,
                Some(skipped) => at += skipped,
            }
            self.structural(block, at, pieces)?;
            at += 1;
        }
        let tail = self.tail(block);
        if self.frame.len() > MAX_FRAME {
            return Err(Unusual);
        }
        Ok(tail)
    }

    /// The input ended: every value must be closed.
    pub fn finish(&self) -> Result<(), Unusual> {
        if self.depth > 0 || self.in_string {
            return Err(Unusual);
        }
        Ok(())
    }

    /// Inside a string: past its closing quote, or to the end of the block.
    fn string(&mut self, block: &[u8], at: usize) -> Result<usize, Unusual> {
        if self.escaped {
            self.escaped = false;
            return Ok(at + 1);
        }
        let Some(found) = memchr::memchr2(b'"', b'\\', &block[at..]) else {
            return Ok(block.len());
        };
        let at = at + found;
        if block[at] == b'\\' {
            // A key directly in the top-level object spelled with escapes could be `items`.
            if self.depth == 1 {
                return Err(Unusual);
            }
            self.escaped = true;
        } else {
            self.in_string = false;
        }
        Ok(at + 1)
    }

    /// Between top-level values: only whitespace, then `{` or `[`.
    fn between_values(&mut self, block: &[u8], at: usize) -> Result<usize, Unusual> {
        match block[at] {
            b' ' | b'\t' | b'\n' | b'\r' => Ok(at + 1),
            open @ (b'{' | b'[') => {
                self.depth = 1;
                self.top_is_object = open == b'{';
                self.frame_from = at;
                Ok(at + 1)
            }
            _ => Err(Unusual),
        }
    }

    fn structural(
        &mut self,
        block: &[u8],
        at: usize,
        pieces: &mut Vec<Piece>,
    ) -> Result<(), Unusual> {
        match block[at] {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 {
                    let in_frame = self.frame.len() + (at - self.frame_from);
                    self.top_strings.push(in_frame);
                }
            }
            open @ (b'{' | b'[') => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(Unusual);
                }
                if self.depth == 2 && open == b'[' && self.top_is_object {
                    self.frame.extend_from_slice(&block[self.frame_from..at]);
                    self.frame_from = at;
                    if ends_with_items_key(&self.frame) {
                        if self.items_cut {
                            return Err(Unusual);
                        }
                        self.frame.push(b'[');
                        self.items = Some(Items {
                            start: at + 1,
                            index: 0,
                        });
                        self.items_cut = true;
                    }
                }
            }
            b',' if self.depth == 2 => {
                if let Some(items) = &mut self.items {
                    pieces.push(Piece::Item {
                        document: self.documents,
                        index: items.index,
                        text: items.start..at,
                    });
                    items.index += 1;
                    items.start = at + 1;
                }
            }
            b']' | b'}' => {
                if self.depth == 2
                    && let Some(items) = self.items.take()
                {
                    let text = items.start..at;
                    if items.index > 0 || !is_blank(&block[text.clone()]) {
                        pieces.push(Piece::Item {
                            document: self.documents,
                            index: items.index,
                            text,
                        });
                    }
                    self.frame_from = at;
                }
                self.depth -= 1;
                if self.depth == 0 {
                    self.frame.extend_from_slice(&block[self.frame_from..=at]);
                    self.close_document(pieces)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The top-level value closed: its frame is a piece, unless an `items` key is spelled more
    /// than once (the single read keeps the last one).
    fn close_document(&mut self, pieces: &mut Vec<Piece>) -> Result<(), Unusual> {
        let frame = std::mem::take(&mut self.frame);
        let items_keys = self
            .top_strings
            .drain(..)
            .filter(|&at| frame[at..].starts_with(b"\"items\""))
            .count();
        if self.items_cut && items_keys != 1 {
            return Err(Unusual);
        }
        pieces.push(Piece::Document {
            document: self.documents,
            text: frame,
        });
        self.documents += 1;
        self.items_cut = false;
        Ok(())
    }

    /// Keeps the frame's part of the block, and says where the unfinished element starts.
    fn tail(&mut self, block: &[u8]) -> usize {
        if let Some(items) = &mut self.items {
            let tail = items.start;
            items.start = 0;
            return tail;
        }
        if self.depth > 0 {
            self.frame.extend_from_slice(&block[self.frame_from..]);
            self.frame_from = 0;
        }
        block.len()
    }
}

/// `…"items" :` (whitespace allowed around the colon): the array opening next is the items.
fn ends_with_items_key(frame: &[u8]) -> bool {
    let before = trim_blank_end(frame);
    let Some(before) = before.strip_suffix(b":") else {
        return false;
    };
    trim_blank_end(before).ends_with(b"\"items\"")
}

fn trim_blank_end(bytes: &[u8]) -> &[u8] {
    let end = bytes
        .iter()
        .rposition(|b| !is_blank(std::slice::from_ref(b)))
        .map_or(0, |at| at + 1);
    &bytes[..end]
}

/// JSON's whitespace only.
fn is_blank(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pieces of `text` fed in blocks of `size` bytes, each block starting with the tail
    /// the one before left: items as their trimmed text, documents as their frame.
    fn cut(text: &str, size: usize) -> Result<Vec<String>, Unusual> {
        let mut json = JsonCut::default();
        let (mut block, mut scanned, mut pieces) = (Vec::new(), 0, Vec::new());
        for chunk in text.as_bytes().chunks(size) {
            block.extend_from_slice(chunk);
            let mut found = Vec::new();
            let tail = json.cut(&block, scanned, &mut found)?;
            pieces.extend(found.into_iter().map(|piece| match piece {
                Piece::Item {
                    document,
                    index,
                    text,
                } => format!(
                    "{document}.{index}: {}",
                    String::from_utf8_lossy(&block[text]).trim()
                ),
                Piece::Document { document, text } => {
                    format!("{document}: {}", String::from_utf8_lossy(&text))
                }
            }));
            block.drain(..tail);
            scanned = block.len();
        }
        json.finish()?;
        Ok(pieces)
    }

    #[test]
    fn cuts_a_lists_items_and_each_top_level_value_in_blocks_of_any_size() {
        let text = r#" {"apiVersion": "v1", "items" : [ {"a": [1, 2], "b": "x,]\"["}, "s", [3,4] ,
            {"items": [5, 6]}], "kind": "List", "metadata": {"x": [7, 8]}}
          {"kind": "Pod", "items": 5} [1, {"items": [2]}] {"items": [ ]}"#;
        let expected = vec![
            r#"0.0: {"a": [1, 2], "b": "x,]\"["}"#.to_string(),
            r#"0.1: "s""#.into(),
            "0.2: [3,4]".into(),
            r#"0.3: {"items": [5, 6]}"#.into(),
            r#"0: {"apiVersion": "v1", "items" : [], "kind": "List", "metadata": {"x": [7, 8]}}"#
                .into(),
            r#"1: {"kind": "Pod", "items": 5}"#.into(),
            r#"2: [1, {"items": [2]}]"#.into(),
            r#"3: {"items": []}"#.into(),
        ];
        for size in [1, 2, 3, 7, 16, 64, text.len()] {
            assert_eq!(cut(text, size), Ok(expected.clone()), "blocks of {size}");
        }
    }

    #[test]
    fn a_trailing_comma_is_an_empty_item_for_the_parser_to_refuse() {
        assert_eq!(
            cut(r#"{"items": [1,]}"#, 4),
            Ok(vec![
                "0.0: 1".into(),
                "0.1: ".into(),
                r#"0: {"items": []}"#.into()
            ])
        );
    }

    #[test]
    fn anything_unusual_stops_the_cut() {
        let deep = |n: usize| format!("{{\"a\": {}1{}}}", "[".repeat(n), "]".repeat(n));
        // The object's `{` is the first level.
        assert!(cut(&deep(MAX_DEPTH - 1), 5).is_ok(), "at the limit");
        let too_deep = deep(MAX_DEPTH);
        for text in [
            too_deep.as_str(),
            r#"{"items": [1], "items": [2]}"#,
            r#"{"items": [1], "x": "items"}"#,
            r#"{"items": [1], "it\u0065ms": 2}"#,
            r#"{"kind": "List", "items": [1]} x"#,
            r#"{"kind": "List"}, {"kind": "List"}"#,
            r#"5"#,
            r#"{"kind": "List", "items": [1]"#,
            r#"{"kind": "Li"#,
            "]",
        ] {
            assert_eq!(cut(text, 3), Err(Unusual), "{text}");
        }
    }
}
