//! Where an input falls apart into pieces that parse independently, so they can be parsed on
//! several threads: the elements of a lone JSON List's `items`, and runs of YAML documents.
//! Found without parsing; anything unusual finds no pieces, and the input is read in one go.

use super::depth::{JsonDepth, Mark, TooDeep};
use std::ops::Range;

/// A text that is one JSON object holding one `items` array.
#[derive(Debug, PartialEq, Eq)]
pub struct ListItems {
    /// Offsets of the array's `[` and `]`.
    pub open: usize,
    pub close: usize,
    /// Each element's text (whitespace around it included).
    pub items: Vec<Range<usize>>,
}

/// Checks the nesting depth of `text` (the one JSON depth rule, [`JsonDepth`]) and, when the
/// text is exactly one object with a single `items` key whose value is an array, says where
/// its elements lie. No pieces when a key at the top may be spelled with escapes (it could be
/// another `items`), or anything but whitespace surrounds the object.
pub fn json_list_items(text: &[u8]) -> Result<Option<ListItems>, TooDeep> {
    let mut scan = ListScan::default();
    JsonDepth::default().scan(text, |mark| scan.mark(text, mark))?;
    Ok(scan.finish(text))
}

#[derive(Default)]
struct ListScan {
    /// Top-level values opened, and the end of the first.
    values: usize,
    start: Option<usize>,
    end: Option<usize>,
    /// The last string opened directly inside the top-level object.
    key: usize,
    /// Strings `"items"` directly inside the top-level object.
    items_keys: usize,
    escaped_at_top: bool,
    open: Option<usize>,
    /// Commas between the elements, while inside the array.
    commas: Vec<usize>,
    close: Option<usize>,
}

impl ListScan {
    fn mark(&mut self, text: &[u8], mark: Mark) {
        match mark {
            Mark::Open { at, depth: 1 } => {
                self.values += 1;
                self.start.get_or_insert(at);
            }
            Mark::Close { at, depth: 1 } => {
                self.end.get_or_insert(at);
            }
            Mark::Quote { at, depth: 1 } => {
                self.key = at;
                if text[at..].starts_with(b"\"items\"") {
                    self.items_keys += 1;
                }
            }
            Mark::Escape { depth: 1 } => self.escaped_at_top = true,
            Mark::Open { at, depth: 2 } if self.open.is_none() && self.follows_items(text, at) => {
                self.open = Some(at);
            }
            Mark::Comma { at, depth: 2 } if self.open.is_some() && self.close.is_none() => {
                self.commas.push(at);
            }
            Mark::Close { at, depth: 2 } if self.open.is_some() && self.close.is_none() => {
                self.close = Some(at);
            }
            _ => {}
        }
    }

    /// Whether the `[` at `at` is the value of the key `"items"`.
    fn follows_items(&self, text: &[u8], at: usize) -> bool {
        let Some(after_key) = text[self.key..at].strip_prefix(b"\"items\"") else {
            return false;
        };
        let colon = trim_whitespace(after_key);
        text[at] == b'[' && colon == b":"
    }

    fn finish(self, text: &[u8]) -> Option<ListItems> {
        let (start, end, open, close) = (self.start?, self.end?, self.open?, self.close?);
        let alone = trim_whitespace(&text[..start]).is_empty()
            && trim_whitespace(&text[end + 1..]).is_empty();
        if !alone || text[start] != b'{' || self.values != 1 || self.items_keys != 1 {
            return None;
        }
        if self.escaped_at_top {
            return None;
        }
        let bounds = std::iter::once(open)
            .chain(self.commas)
            .chain(std::iter::once(close));
        let mut items: Vec<Range<usize>> = Vec::new();
        let mut from = None;
        for bound in bounds {
            if let Some(from) = from {
                items.push(from + 1..bound);
            }
            from = Some(bound);
        }
        if let [only] = items.as_slice()
            && trim_whitespace(&text[only.clone()]).is_empty()
        {
            items.clear();
        }
        Some(ListItems { open, close, items })
    }
}

/// JSON's whitespace.
fn trim_whitespace(bytes: &[u8]) -> &[u8] {
    let blank = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let start = bytes.iter().position(|b| !blank(b)).unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !blank(b))
        .map_or(start, |e| e + 1);
    &bytes[start..end]
}

/// Cuts multi-document YAML into at most `parts` runs of whole documents of about equal
/// size, each cut at the start of a `---` line (where a YAML parser ends any document, even
/// inside a block or quoted scalar).
pub fn yaml_parts(text: &str, parts: usize) -> Vec<&str> {
    let mut cuts = vec![0];
    for part in 1..parts {
        let target = text.len() * part / parts;
        let from = target.max(*cuts.last().unwrap_or(&0));
        if let Some(cut) = next_document_start(text.as_bytes(), from) {
            cuts.push(cut);
        }
    }
    cuts.push(text.len());
    cuts.dedup();
    cuts.windows(2).map(|cut| &text[cut[0]..cut[1]]).collect()
}

/// The offset of the first line at or after `from` that is a document start marker (`---`
/// followed by a blank or the end), past the first line.
fn next_document_start(text: &[u8], from: usize) -> Option<usize> {
    let finder = memchr::memmem::Finder::new(b"\n---");
    let mut search = from;
    while let Some(found) = finder.find(&text[search..]) {
        let line = search + found + 1;
        if text
            .get(line + 3)
            .is_none_or(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        {
            return Some(line);
        }
        search = line;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(text: &str) -> Option<Vec<&str>> {
        let list = json_list_items(text.as_bytes()).unwrap()?;
        assert_eq!(&text[list.open..=list.open], "[");
        assert_eq!(&text[list.close..=list.close], "]");
        Some(list.items.into_iter().map(|r| text[r].trim()).collect())
    }

    #[test]
    fn finds_the_elements_of_a_lone_lists_items() {
        let list = r#" {"apiVersion": "v1", "items" : [ {"a": [1, 2], "b": "x,]"}, "s", [3,4] ,
            {"items": [5, 6]}], "kind": "List", "metadata": {"x": [7, 8]}}
        "#;
        assert_eq!(
            items(list),
            Some(vec![
                r#"{"a": [1, 2], "b": "x,]"}"#,
                r#""s""#,
                "[3,4]",
                r#"{"items": [5, 6]}"#
            ])
        );
        assert_eq!(items(r#"{"kind": "List", "items": [ ]}"#), Some(vec![]));
        assert_eq!(items(r#"{"items": [1,]}"#), Some(vec!["1", ""]));
    }

    #[test]
    fn finds_no_pieces_when_anything_is_unusual() {
        for text in [
            r#"{"kind": "Pod"}"#,
            r#"{"items": 5}"#,
            r#"{"items": [1], "items": 2}"#,
            r#"{"items": [1], "it\u0065ms": [2]}"#,
            r#"{"kind": "List", "items": [1]} {"kind": "Pod"}"#,
            r#"{"kind": "List", "items": [1]} x"#,
            r#"[{"items": [1]}]"#,
            r#"{"notitems": [1], "x": "items"}"#,
            r#"{"items": {"a": [1]}}"#,
        ] {
            assert_eq!(items(text), None, "{text}");
        }
    }

    #[test]
    fn the_list_scan_keeps_the_depth_limit() {
        let deep = format!(r#"{{"items": [{}"#, "[".repeat(200));
        let error = json_list_items(deep.as_bytes()).unwrap_err();
        assert_eq!(
            (error.line, error.column),
            (1, 11 + super::super::depth::MAX_DEPTH - 1)
        );
    }

    #[test]
    fn yaml_is_cut_only_at_document_starts() {
        let text = "a: 1\n---\nb: |\n  x\n  ---\n---x: 2\n--- # c\nc: 3\n---\n";
        for parts in 1..8 {
            let pieces = yaml_parts(text, parts);
            assert_eq!(pieces.concat(), text);
            assert!(pieces.len() <= parts);
            for piece in &pieces[1..] {
                assert!(
                    piece.starts_with("---\n") || piece.starts_with("--- "),
                    "{parts}: {pieces:?}"
                );
            }
        }
        // Not inside the block scalar, nor at `---x`.
        assert_eq!(
            yaml_parts(text, 2),
            vec![
                "a: 1\n---\nb: |\n  x\n  ---\n---x: 2\n",
                "--- # c\nc: 3\n---\n"
            ]
        );
        assert_eq!(yaml_parts("a: 1\n", 4), vec!["a: 1\n"]);
    }
}
