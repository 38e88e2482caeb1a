//! The pieces of one input ([`super::split`]) parsed on every core, results in input order.
//! Any failure gives up (None): the caller then reads the input in one go, so errors and
//! their positions are exactly those of a single parse.

use super::depth::{self, TooDeep};
use super::split::ListItems;
use super::stream::{DocumentSeed, Parsed};
use serde::de::DeserializeSeed;
use std::num::NonZero;
use std::ops::Range;

/// Above this much text around a List's `items`, the List is read in one go: reading it in
/// pieces copies that text.
const MAX_LIST_FRAME: usize = 1 << 20;

/// The objects of a JSON List read as document `document` (`file#0`), its items split over
/// `threads`. None when the text is not such a List or a piece does not parse.
pub fn json_list(
    cluster: &str,
    document: &str,
    text: &[u8],
    list: &ListItems,
    threads: usize,
) -> Option<Parsed> {
    // The List without its items tells whether it is one (a kind ending in List): it then
    // yields no object of its own.
    let frame = [&text[..list.open], b"[]", &text[list.close + 1..]].concat();
    if frame.len() > MAX_LIST_FRAME || !one_json_value(cluster, document, &frame, false)?.is_empty()
    {
        return None;
    }
    let items = &list.items;
    let per_thread = items.len().div_ceil(threads.max(1)).max(1);
    let parts: Vec<Range<usize>> = (0..items.len())
        .step_by(per_thread)
        .map(|from| from..(from + per_thread).min(items.len()))
        .collect();
    let read = on_threads(&parts, |part| {
        let mut parsed = Vec::new();
        for index in part.clone() {
            let item = format!("{document}.items[{index}]");
            let text = &text[items[index].clone()];
            parsed.extend(one_json_value(cluster, &item, text, true)?);
        }
        Some(parsed)
    })?;
    Some(read.into_iter().flatten().collect())
}

/// `text` as exactly one JSON value, read as a document or (`item`) an element of `items`.
fn one_json_value(cluster: &str, document: &str, text: &[u8], item: bool) -> Option<Parsed> {
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    let seed = DocumentSeed {
        cluster,
        document,
        item,
    };
    let parsed = seed.deserialize(&mut deserializer).ok()?;
    deserializer.end().ok()?;
    // Only an empty YAML document reads as None; a JSON item never does.
    Some(parsed.unwrap_or_default())
}

/// The non-empty YAML documents of each part, in order, each named relative to its document
/// (`""`, `.items[i]`). None when a part does not parse.
pub fn yaml_documents(cluster: &str, parts: &[&str]) -> Option<Vec<Parsed>> {
    let read = on_threads(parts, |part| {
        let mut documents = Vec::new();
        for document in serde_yaml::Deserializer::from_str(part) {
            let seed = DocumentSeed {
                cluster,
                document: "",
                item: false,
            };
            documents.extend(seed.deserialize(document).ok()?);
        }
        Some(documents)
    })?;
    Some(read.into_iter().flatten().collect())
}

/// The YAML depth check ([`depth::check_yaml`]) on runs of documents cut at `---` lines, each
/// on its own thread: the first error in input order, its line counted in the whole text. A
/// run that ends inside a flow collection or a quoted string leaves the next one unchecked
/// alone: the whole text is then checked in one go.
pub fn check_yaml(text: &str, parts: &[&str]) -> Result<(), TooDeep> {
    let runs = on_threads(parts, |part| Some(depth::check_yaml_run(part))).unwrap_or_default();
    let mut lines_before = 0;
    for (part, run) in parts.iter().zip(runs) {
        match run {
            Err(at) => {
                return Err(TooDeep {
                    line: lines_before + at.line,
                    ..at
                });
            }
            Ok(true) => return depth::check_yaml(text),
            Ok(false) => lines_before += memchr::memchr_iter(b'\n', part.as_bytes()).count(),
        }
    }
    Ok(())
}

/// The threads worth parsing on: the cores this process may use.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, NonZero::get)
}

/// `read` on every part, the first on this thread and each other on a thread of its own.
fn on_threads<P: Sync, T: Send>(
    parts: &[P],
    read: impl Fn(&P) -> Option<T> + Sync,
) -> Option<Vec<T>> {
    let Some((first, others)) = parts.split_first() else {
        return Some(Vec::new());
    };
    std::thread::scope(|scope| {
        let read = &read;
        let others: Vec<_> = others
            .iter()
            .map(|part| scope.spawn(move || read(part)))
            .collect();
        let mut all = vec![read(first)];
        all.extend(others.into_iter().map(|thread| {
            thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        }));
        all.into_iter().collect()
    })
}

#[cfg(test)]
mod tests {
    use super::super::split::{json_list_items, yaml_parts};
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
            Value::Null,
        ];
        values.extend((0..20).map(|i| repo(&format!("r{i}"), "https://r")));
        values.push(repo("a", "https://elsewhere"));
        values
    }

    /// What one parse of the whole text reads.
    fn in_one_go(text: &[u8]) -> Parsed {
        one_json_value("local", "f#0", text, false).unwrap()
    }

    #[test]
    fn a_list_read_in_pieces_reads_as_in_one_go() {
        let list = json!({"apiVersion": "v1", "kind": "List", "items": values(), "metadata": {}});
        let text = serde_json::to_string_pretty(&list).unwrap();
        let pieces = json_list_items(text.as_bytes()).unwrap().unwrap();
        let whole = in_one_go(text.as_bytes());
        assert!(
            whole
                .iter()
                .any(|(name, _)| name == "f#0.items[1].items[2].items[0]")
        );
        for threads in [1, 2, 3, 7, 100] {
            let parsed = json_list("local", "f#0", text.as_bytes(), &pieces, threads);
            assert_eq!(parsed.as_ref(), Some(&whole), "{threads} threads");
        }
    }

    #[test]
    fn a_list_that_is_not_one_or_does_not_parse_is_left_to_one_parse() {
        let object = json!({"apiVersion": "v1", "kind": "Pod", "items": [1, 2]}).to_string();
        let pieces = json_list_items(object.as_bytes()).unwrap().unwrap();
        assert_eq!(
            json_list("local", "f#0", object.as_bytes(), &pieces, 2),
            None
        );

        for broken in [
            r#"{"kind": "List", "items": [{"kind": "Pod"}, {"kind": }]}"#,
            r#"{"kind": "List", "items": [1, ]}"#,
            r#"{"kind": "List", "items": [1], "metadata": }"#,
        ] {
            let pieces = json_list_items(broken.as_bytes()).unwrap().unwrap();
            assert_eq!(
                json_list("local", "f#0", broken.as_bytes(), &pieces, 2),
                None
            );
        }
    }

    #[test]
    fn yaml_read_in_pieces_reads_as_in_one_go() {
        let text: String = values()
            .iter()
            .map(|value| format!("---\n{}", serde_yaml::to_string(value).unwrap()))
            .collect();
        let whole: Vec<Parsed> = serde_yaml::Deserializer::from_str(&text)
            .filter_map(|document| {
                let seed = DocumentSeed {
                    cluster: "local",
                    document: "",
                    item: false,
                };
                seed.deserialize(document).unwrap()
            })
            .collect();
        assert_eq!(
            whole.len(),
            values().len() - 1,
            "the null document is empty"
        );
        for parts in [1, 2, 3, 7, 100] {
            let parsed = yaml_documents("local", &yaml_parts(&text, parts));
            assert_eq!(parsed.as_ref(), Some(&whole), "{parts} parts");
        }
        let broken = format!("{text}---\nkind: Pod\n  name: x\n");
        assert_eq!(yaml_documents("local", &yaml_parts(&broken, 2)), None);
    }

    #[test]
    fn the_yaml_depth_checked_in_runs_is_checked_as_in_one_go() {
        let deep = |levels: usize| -> String {
            (0..levels)
                .map(|level| format!("{}k{level}:\n", " ".repeat(level)))
                .collect()
        };
        let shallow = "---\na: 1\n".repeat(50);
        let limit = depth::MAX_DEPTH;
        for (text, deep_enough) in [
            (format!("{shallow}---\n{}{shallow}", deep(limit)), false),
            (format!("{shallow}---\n{}{shallow}", deep(limit + 1)), true),
            (format!("{shallow}---\n{}", deep(limit + 1)), true),
            // A flow collection left open across a `---` line: only one scan of the whole
            // text sees it.
            (
                format!("a: [\n{shallow}---\nb: {}\n", "[".repeat(limit - 1)),
                true,
            ),
            (
                format!("a: '\n{shallow}---\nb: {}\n", "[".repeat(limit + 1)),
                false,
            ),
        ] {
            let whole = depth::check_yaml(&text);
            assert_eq!(whole.is_err(), deep_enough, "{text}");
            for parts in [1, 2, 3, 7] {
                assert_eq!(
                    check_yaml(&text, &yaml_parts(&text, parts)),
                    whole,
                    "{parts}"
                );
            }
        }
    }
}
