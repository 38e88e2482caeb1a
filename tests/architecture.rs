//! The crate's modules depend on each other one way: read from the sources, every `crate::`
//! path a top-level module names (outside comments) must point to a module below it in
//! [`LAYERS`]. A back edge (or a new module not placed in the order) fails here, with the file
//! that introduced it.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Bottom first; a module may use only the modules before it. `model`, `health` and
/// `objects` are the engine crate (server/engine), which cannot name the server at all.
const LAYERS: &[&str] = &[
    "model",
    "health",
    "objects",
    "yaml",
    "store",
    "config",
    "incidents",
    "delivery",
    "metrics",
    "offline",
    "sources",
    "ingest",
    "alerts",
    "web",
    "app",
    "cli",
];

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The top-level modules a file's code names through `crate::` (comments left out).
fn modules_named(source: &str) -> BTreeSet<String> {
    let code: String = source
        .lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let mut named = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        match rest.strip_prefix('{') {
            // `use crate::{a::X, b::{Y, Z}}`, over one line or several.
            Some(group) => named.extend(top_level_items(group).filter_map(first_segment)),
            None => named.extend(first_segment(rest)),
        }
    }
    named
}

/// The items of a `{...}` group whose opening brace is just before `group`.
fn top_level_items(group: &str) -> impl Iterator<Item = &str> {
    let mut depth = 0;
    let mut start = 0;
    let mut items = Vec::new();
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..at]);
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    items.into_iter().map(str::trim)
}

fn first_segment(path: &str) -> Option<String> {
    let name: String = path
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// Every (module, file, module it names) of the server crate.
fn edges() -> Vec<(String, PathBuf, String)> {
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("server");
    let mut edges = Vec::new();
    for entry in fs::read_dir(&server).unwrap() {
        let path = entry.unwrap().path();
        let Some(module) = path
            .file_stem()
            .and_then(|m| m.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        // The engine and the allocator are crates of their own; lib.rs and main.rs are the
        // crate's root.
        if ["engine", "allocator", "lib", "main"].contains(&module.as_str()) {
            continue;
        }
        let mut files = Vec::new();
        if path.is_dir() {
            rust_files(&path, &mut files);
        } else {
            files.push(path.clone());
        }
        for file in files {
            for named in modules_named(&fs::read_to_string(&file).unwrap()) {
                if named != module {
                    edges.push((module.clone(), file.clone(), named));
                }
            }
        }
    }
    edges
}

#[test]
fn every_module_depends_only_on_the_modules_below_it() {
    let layer = |module: &str| LAYERS.iter().position(|m| *m == module);
    let edges = edges();
    assert!(edges.len() > 20, "the sources were read: {edges:?}");
    let back: Vec<String> = edges
        .iter()
        .filter(|(from, _, to)| match (layer(from), layer(to)) {
            (Some(from), Some(to)) => to >= from,
            _ => true,
        })
        .map(|(from, file, to)| format!("{from} -> {to} ({})", file.display()))
        .collect();
    assert!(
        back.is_empty(),
        "dependencies against the order {LAYERS:?}:\n{}",
        back.join("\n")
    );
}

#[test]
fn the_crate_root_declares_its_modules_in_the_same_order() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("server/lib.rs");
    let declared: Vec<String> = fs::read_to_string(root)
        .unwrap()
        .lines()
        .filter_map(|line| line.strip_prefix("pub mod "))
        .map(|rest| rest.trim_end_matches(';').to_string())
        .collect();
    let engine = ["model", "health", "objects"];
    let expected: Vec<&str> = LAYERS
        .iter()
        .copied()
        .filter(|m| !engine.contains(m))
        .collect();
    assert_eq!(
        declared, expected,
        "server/lib.rs lists its modules bottom first"
    );
}

#[test]
fn a_back_edge_is_seen_in_code_and_not_in_comments() {
    let named = modules_named(
        "use crate::{\n    alerts::{X, Y},\n    web,\n};\n/// see `crate::app`\nlet x = crate::store::Store::new(); // crate::cli\n",
    );
    assert_eq!(
        named.into_iter().collect::<Vec<_>>(),
        ["alerts", "store", "web"]
    );
}
