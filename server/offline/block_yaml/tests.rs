//! The block reader against serde_yaml as the oracle: whatever it reads must read the same in
//! serde_yaml (values, key text, nulls, scalar typing), and kubectl-shaped text must not make
//! it give up.

use super::{GaveUp, read_document};
use proptest::prelude::*;
use serde::de::IgnoredAny;
use serde_json::Value;
use std::marker::PhantomData;

fn fast(text: &str) -> Result<Value, GaveUp> {
    read_document(text, PhantomData::<Value>)
}

fn oracle(text: &str) -> Result<Value, serde_yaml::Error> {
    serde_yaml::from_str(text)
}

/// Whatever the block reader reads (as values or skipped), serde_yaml reads the same.
fn agrees(text: &str) -> Result<(), String> {
    if let Ok(read) = fast(text) {
        match oracle(text) {
            Ok(expected) if expected == read => {}
            other => return Err(format!("read {read:?}, serde_yaml {other:?}")),
        }
    }
    let skipped = read_document(text, PhantomData::<IgnoredAny>);
    if skipped.is_ok() && serde_yaml::from_str::<IgnoredAny>(text).is_err() {
        return Err("skipped what serde_yaml refuses".into());
    }
    Ok(())
}

/// Plain words of every resolution: nulls, booleans, integers in each radix, floats, words
/// that only look numeric, and some serde_yaml refuses.
const PLAIN: &[&str] = &[
    "a",
    "Deployment",
    "null",
    "Null",
    "NULL",
    "~",
    "true",
    "False",
    "TRUE",
    "yes",
    "no",
    "on",
    "0",
    "1",
    "42",
    "-1",
    "+1",
    "-0",
    "007",
    "0x1F",
    "0o17",
    "0b101",
    "-0x1f",
    "+0x1",
    "1.5",
    "-1.5e3",
    "1e5",
    ".inf",
    "-.inf",
    "+.inf",
    ".nan",
    ".NaN",
    "+.5",
    "0.",
    ".5",
    ".",
    "1.2.3",
    "12345678901234567890",
    "9223372036854775808",
    "-9223372036854775809",
    "99999999999999999999999999999999999999999",
    "100m",
    "256Mi",
    "info",
    "nan",
    "inf",
    "face",
    "--port=9898",
    "-x",
    "a:b",
    "a#b",
    "http://x/y?z=1",
    "a b  c",
    "x[0]",
    "a, b",
    "a{b}",
    "2026-11-29T11:00:00Z",
    "1_000",
    "é",
    "a'b",
    "a\"b",
    "main@sha1:1111aaaa",
    "---x",
    "...x",
    "x: y",
    "x #y",
    "x:",
    "@x",
    "`x`",
    "!x",
    "&a x",
    "*a",
    "? x",
    "-",
    "- x",
    "[x]",
    "{a: 1}",
    "|",
    ">-",
    "%x",
];

/// Text for quoted and block scalars, with what needs escaping.
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "a", "b c", " ", "  ", "'", "\"", "\\", "#", ": ", "\n", "\t", "é", "“x”", "\u{85}",
            "\u{2028}", "\u{7}", "0", "null", "- ", "---", "{}",
        ]),
        0..6,
    )
    .prop_map(|parts| parts.concat())
}

#[derive(Debug, Clone)]
enum Node {
    /// Written on the key's or dash's line as is.
    Inline(String),
    /// A block scalar: its header and text lines.
    Block(String, Vec<String>),
    Map(Vec<(String, Node)>),
    Seq(Vec<Node>),
}

fn inline() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(PLAIN).prop_map(str::to_string),
        1 => text().prop_map(|t| format!("'{}'", t.replace('\'', "''"))),
        1 => text().prop_map(|t| serde_json::to_string(&t).unwrap()),
        1 => text().prop_map(|t| format!("\"{}\"", t.replace('"', "\\\"").replace('\n', "\\n"))),
        1 => Just("{}".to_string()),
        1 => Just("[]".to_string()),
        1 => Just(String::new()),
        2 => prop::sample::select(vec![
            "'a b\nc d'", "'a\n\nb'", "'a\n   \n  b ' # c", "\"a\nb\"", "\"a\\\nb\"", "plain words\nwrapped here",
            "plain\n\nwith blank", "x\n- y", "x\n'y'", "x\n#y", "x # c\ny", "x\ny: z", "'k'\n",
            "'it''s\nit''s'", "\"\\\"q\\\"\nr\"",
        ])
        .prop_map(str::to_string),
        1 => Just("x # comment".to_string()),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec![
            "name", "kind", "app.kubernetes.io/name", "null", "1", "true", "~", "a b", "-x",
            "<<", "0x1f", "x#y", "items",
        ])
        .prop_map(str::to_string),
        1 => text().prop_map(|t| serde_json::to_string(&t).unwrap()),
        1 => text().prop_map(|t| format!("'{}'", t.replace('\'', "''"))),
    ]
}

fn block() -> impl Strategy<Value = Node> {
    (
        prop::sample::select(vec![
            "|", "|-", "|+", ">", ">-", ">+", "|2", "| # note", ">#x",
        ]),
        prop::collection::vec(
            prop::sample::select(vec![
                "line",
                "  more",
                "",
                "   ",
                "# not a comment",
                "a: b",
                "x",
            ]),
            0..5,
        ),
    )
        .prop_map(|(header, lines)| {
            Node::Block(
                header.into(),
                lines.into_iter().map(str::to_string).collect(),
            )
        })
}

fn node() -> impl Strategy<Value = Node> {
    let leaf = prop_oneof![4 => inline().prop_map(Node::Inline), 1 => block()];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec((key(), inner.clone()), 1..5).prop_map(Node::Map),
            prop::collection::vec(inner, 1..4).prop_map(Node::Seq),
        ]
    })
}

/// How the writer lays things out, varied as different writers (and hands) do.
#[derive(Debug, Clone)]
struct Layout {
    /// Sequences under a key at the key's own indentation (kubectl) or two deeper.
    indentless: bool,
    /// `- key: value` (kubectl) or the mapping on the lines below the dash.
    compact: bool,
    comments: bool,
    step: usize,
}

fn layout() -> impl Strategy<Value = Layout> {
    (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop::sample::select(vec![2usize, 4]),
    )
        .prop_map(|(indentless, compact, comments, step)| Layout {
            indentless,
            compact,
            comments,
            step,
        })
}

/// Writes `node`, held at `indent`, after `lead` (`key:` or `-`) on the current line.
fn write(out: &mut String, node: &Node, indent: usize, layout: &Layout, under_key: bool) {
    let pad = |n: usize| " ".repeat(n);
    match node {
        Node::Inline(text) if text.is_empty() => out.push('\n'),
        Node::Inline(text) => {
            // Lines a scalar runs on to sit one step deeper.
            out.push(' ');
            out.push_str(&text.replace('\n', &format!("\n{}", pad(indent + layout.step))));
            out.push('\n');
        }
        Node::Block(header, lines) => {
            out.push(' ');
            out.push_str(header);
            out.push('\n');
            for line in lines {
                if !line.trim().is_empty() {
                    out.push_str(&pad(indent + layout.step));
                }
                out.push_str(line);
                out.push('\n');
            }
        }
        Node::Map(entries) => {
            out.push('\n');
            let inner = indent + layout.step;
            for (key, value) in entries {
                if layout.comments {
                    out.push_str(&format!("{}# about {key}\n\n", pad(inner + 1)));
                }
                out.push_str(&pad(inner));
                out.push_str(key);
                out.push(':');
                write(out, value, inner, layout, true);
            }
        }
        Node::Seq(items) => {
            out.push('\n');
            let at = if under_key && layout.indentless {
                indent
            } else {
                indent + layout.step
            };
            for item in items {
                out.push_str(&pad(at));
                out.push('-');
                match item {
                    Node::Map(entries) if layout.compact => {
                        let inner = at + 2;
                        for (index, (key, value)) in entries.iter().enumerate() {
                            if index == 0 {
                                out.push(' ');
                            } else {
                                out.push_str(&pad(inner));
                            }
                            out.push_str(key);
                            out.push(':');
                            write(out, value, inner, layout, true);
                        }
                    }
                    _ => write(out, item, at, layout, false),
                }
            }
        }
    }
}

fn document(root: &[(String, Node)], layout: &Layout) -> String {
    let mut out = String::new();
    for (key, value) in root {
        out.push_str(key);
        out.push(':');
        write(&mut out, value, 0, layout, true);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn what_the_block_reader_reads_serde_yaml_reads_the_same(
        root in prop::collection::vec((key(), node()), 1..5),
        layout in layout(),
        edit in (any::<prop::sample::Index>(), prop::sample::select(vec!["", " ", "  ", "-", ":", "#", "'", "\n", "\t", "x"]), 0usize..3),
    ) {
        let text = document(&root, &layout);
        prop_assert_eq!(agrees(&text), Ok(()), "{}", text);
        // The same text damaged: an insertion, or a deleted byte.
        let (at, insert, deleted) = edit;
        let mut edited = text.clone().into_bytes();
        let at = at.index(edited.len() + 1);
        edited.splice(at..(at + deleted).min(edited.len()), insert.bytes());
        if let Ok(edited) = String::from_utf8(edited) {
            prop_assert_eq!(agrees(&edited), Ok(()), "{}", edited);
        }
    }

    /// kubectl-shaped text (plain words, quoted text, literal blocks) is read, not given up.
    #[test]
    fn kubectl_shaped_documents_are_read(
        names in prop::collection::vec("[a-z][a-z0-9-]{0,12}", 1..4),
        count in 0u64..1000,
        message in "[ -~&&[^'\\\\]]{0,40}",
    ) {
        let text = kubectl_pod(&names, count, &message);
        prop_assert_eq!(fast(&text).ok(), oracle(&text).ok(), "{}", text);
        prop_assert!(fast(&text).is_ok(), "{}", text);
    }
}

fn kubectl_pod(names: &[String], count: u64, message: &str) -> String {
    let containers: String = names
        .iter()
        .map(|name| {
            format!(
                "  - image: ghcr.io/{name}:6.0.{count}\n    name: {name}\n    args:\n    - --port={count}\n    resources: {{}}\n"
            )
        })
        .collect();
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  annotations:\n    note: |\n      {{\"a\": [1, 2]}}\n      # text\n  creationTimestamp: \"2026-12-01T04:11:46Z\"\n  labels:\n    app.kubernetes.io/name: {}\n  name: {}\n  resourceVersion: \"{count}\"\nspec:\n  containers:\n{containers}status:\n  conditions:\n  - lastTransitionTime: null\n    message: '{}'\n    status: \"True\"\n    type: Ready\n  restartCount: {count}\n",
        names[0],
        names[0],
        message.replace('\'', "''"),
    )
}

#[test]
fn scalars_resolve_as_serde_yaml_resolves_them() {
    for word in PLAIN {
        let text = format!("a: {word}\nb:\n- {word}\n");
        assert_eq!(agrees(&text), Ok(()), "{text}");
    }
    let read =
        fast("a: 1\nb: '1'\nc: 1.5\nd: ~\ne: 0x1F\nf: 007\ng: true\nh: \"x\\ty\"\n").unwrap();
    assert_eq!(
        read,
        serde_json::json!({"a": 1, "b": "1", "c": 1.5, "d": null, "e": 31, "f": "007", "g": true, "h": "x\ty"})
    );
}

#[test]
fn what_it_does_not_read_it_gives_up_on() {
    for text in [
        "a: &x 1\nb: *x\n",
        "a: !tag 1\n",
        "a: [1, 2]\n",
        "a: {b: 1}\n",
        "a: b\n  c: d\n",
        "a: \"b\\\n  c\"\n",
        "a:\n\tb: 1\n",
        "a: 1\n b: 2\n",
        "a: 'x\n",
        "? a\n: b\n",
        "a: b: c\n",
        "- - a\n",
        "a: |2\n   x\n",
        "plain\n",
    ] {
        assert_eq!(fast(text), Err(GaveUp), "{text}");
    }
}

#[test]
fn block_and_multi_line_scalars_fold_as_serde_yaml() {
    for text in [
        "a: |\n  x\n  y\n\n  z\nb: 1\n",
        "a: |-\n  x\n\n",
        "a: |+\n  x\nb: 1\n",
        "a: >\n  x\n  y\n\n  z\n",
        "a: >-\n  x\n  y\n",
        "- |\n  x\n   more\n- b\n",
        "a:\n- |\n  x\n",
        "a: |\n\n  x\n",
        "a: 'x y\n  z\n\n  w'\nb: plain text\n  wrapped\n\n  again\nc: \"d\n  e\"\n",
        "- 'x\n  y'\n- a b\n  c\n",
    ] {
        assert!(fast(text).is_ok(), "{text}");
        assert_eq!(agrees(text), Ok(()), "{text}");
    }
}
