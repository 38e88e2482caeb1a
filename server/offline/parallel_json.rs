//! A JSON file read on every core ([`super::blocks`]): cut by [`JsonCut`] into each top-level
//! value and each element of a List's `items`, each piece parsed from its slice.

use super::blocks::{Cutter, Held, Unusual};
use super::json_cut::{JsonCut, Piece};
use super::stream::{DocumentSeed, Parsed};
use serde::de::DeserializeSeed;

impl Cutter for JsonCut {
    type Piece = Piece;

    fn block(
        &mut self,
        block: &[u8],
        from: usize,
        end: bool,
        pieces: &mut Vec<Piece>,
    ) -> Result<usize, Unusual> {
        let tail = self.cut(block, from, pieces)?;
        if end {
            self.finish()?;
        }
        Ok(tail)
    }

    fn read(piece: &Piece, block: &[u8], name: &str, cluster: &str) -> Option<Held> {
        match piece {
            Piece::Item {
                document,
                index,
                text,
            } => {
                let item = format!("{name}#{document}.items[{index}]");
                one_json_value(cluster, &item, &block[text.clone()], true).map(Held::Item)
            }
            Piece::Document { document, text } => {
                let document = format!("{name}#{document}");
                one_json_value(cluster, &document, text, false).map(Held::Document)
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Object, Skip};
    use crate::offline::blocks::{BLOCK, Sink, read_in_blocks};
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
        let cut = JsonCut::default();
        read_in_blocks(
            text.as_bytes(),
            ("f", "local"),
            (threads, block),
            cut,
            &mut parsed,
        )?;
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
            let cut = JsonCut::default();
            let read = read_in_blocks(&text[..], ("f", "local"), (threads, 4), cut, &mut parsed);
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
