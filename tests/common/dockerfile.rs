//! Reading a Dockerfile and a build context the way `docker build` does, for the replay test:
//! instructions (continuation lines joined, comments dropped), stages, and the files a clean
//! checkout sends as context once `.dockerignore` has removed its patterns.

use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug, Clone, PartialEq)]
pub struct Instruction {
    pub keyword: String,
    /// Leading `--flag=value` words (`--from=build`, `--mount=…`).
    pub flags: Vec<String>,
    /// The rest, as written.
    pub args: String,
}

impl Instruction {
    pub fn parse(line: &str) -> Instruction {
        let (keyword, mut rest) = line
            .trim()
            .split_once(char::is_whitespace)
            .unwrap_or((line, ""));
        let mut flags = Vec::new();
        loop {
            rest = rest.trim_start();
            if !rest.starts_with("--") {
                break;
            }
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            flags.push(rest[..end].to_string());
            rest = &rest[end..];
        }
        Instruction {
            keyword: keyword.to_ascii_uppercase(),
            flags,
            args: rest.trim().to_string(),
        }
    }

    /// The arguments split on whitespace (COPY sources and destination).
    pub fn words(&self) -> Vec<String> {
        self.args.split_whitespace().map(String::from).collect()
    }
}

#[derive(Debug)]
pub struct Stage {
    pub from: String,
    pub name: String,
    pub instructions: Vec<Instruction>,
}

impl Stage {
    pub fn instruction(&self, keyword: &str) -> &Instruction {
        self.instructions
            .iter()
            .find(|i| i.keyword == keyword)
            .unwrap_or_else(|| panic!("stage {} has no {keyword}", self.name))
    }
}

#[derive(Debug)]
pub struct Dockerfile {
    pub stages: Vec<Stage>,
}

impl Dockerfile {
    pub fn read(path: &Path) -> Dockerfile {
        let text = std::fs::read_to_string(path).expect("read the Dockerfile");
        let mut stages: Vec<Stage> = Vec::new();
        for line in logical_lines(&text) {
            let instruction = Instruction::parse(&line);
            if instruction.keyword == "FROM" {
                let words = instruction.words();
                let name = match words.as_slice() {
                    [_, as_, name] if as_.eq_ignore_ascii_case("as") => name.clone(),
                    _ => stages.len().to_string(),
                };
                stages.push(Stage {
                    from: words[0].clone(),
                    name,
                    instructions: Vec::new(),
                });
            } else {
                stages
                    .last_mut()
                    .expect("an instruction before FROM")
                    .instructions
                    .push(instruction);
            }
        }
        Dockerfile { stages }
    }
}

/// Joins `\` continuations and drops comment and blank lines (also inside a continuation, as
/// the Dockerfile parser does).
fn logical_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        match trimmed.strip_suffix('\\') {
            Some(head) => {
                current.push_str(head);
                current.push(' ');
            }
            None => {
                current.push_str(trimmed);
                lines.push(std::mem::take(&mut current));
            }
        }
    }
    assert!(
        current.is_empty(),
        "the Dockerfile ends inside a continuation"
    );
    lines
}

/// `.dockerignore`: patterns relative to the context root with `*`, `?` and `**`; a pattern
/// that matches a directory excludes everything in it; later `!pattern` lines re-include.
pub struct Ignore {
    rules: Vec<(bool, Vec<String>)>,
}

impl Ignore {
    pub fn parse(text: &str) -> Ignore {
        let rules = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|line| {
                let (keep, pattern) = match line.strip_prefix('!') {
                    Some(p) => (true, p),
                    None => (false, line),
                };
                let parts = pattern
                    .trim_start_matches("./")
                    .trim_matches('/')
                    .split('/')
                    .map(String::from)
                    .collect();
                (!keep, parts)
            })
            .collect();
        Ignore { rules }
    }

    /// The repository's `.dockerignore` (nothing excluded when there is none).
    pub fn read(repo: &Path) -> Ignore {
        Ignore::parse(&std::fs::read_to_string(repo.join(".dockerignore")).unwrap_or_default())
    }

    pub fn excludes(&self, path: &Path) -> bool {
        let parts: Vec<&str> = path.iter().map(|p| p.to_str().unwrap()).collect();
        let mut excluded = false;
        for (exclude, pattern) in &self.rules {
            // The path or one of its parent directories matches.
            if (1..=parts.len()).any(|n| matches(pattern, &parts[..n])) {
                excluded = *exclude;
            }
        }
        excluded
    }
}

fn matches(pattern: &[String], path: &[&str]) -> bool {
    match (pattern.split_first(), path.split_first()) {
        (None, None) => true,
        (Some((head, rest)), _) if head == "**" => {
            (0..=path.len()).any(|skip| matches(rest, &path[skip..]))
        }
        (Some((head, rest)), Some((part, path_rest))) => {
            glob(head.as_bytes(), part.as_bytes()) && matches(rest, path_rest)
        }
        _ => false,
    }
}

/// One path element against `*` and `?`.
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    match (pattern.split_first(), text.split_first()) {
        (None, None) => true,
        (Some((b'*', rest)), _) => (0..=text.len()).any(|skip| glob(rest, &text[skip..])),
        (Some((b'?', rest)), Some((_, text_rest))) => glob(rest, text_rest),
        (Some((p, rest)), Some((t, text_rest))) => p == t && glob(rest, text_rest),
        _ => false,
    }
}

/// The files a clean checkout holds (tracked, plus new files not ignored by git), less what
/// `.dockerignore` excludes: the build context `docker build .` sends.
pub fn context_files(repo: &Path) -> Vec<PathBuf> {
    let output = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(repo)
        .output()
        .expect("run git ls-files");
    assert!(output.status.success(), "git ls-files failed");
    let ignore = Ignore::read(repo);
    let mut files: Vec<PathBuf> = String::from_utf8(output.stdout)
        .unwrap()
        .split('\0')
        .filter(|f| !f.is_empty())
        .map(PathBuf::from)
        .filter(|f| repo.join(f).is_file() && !ignore.excludes(f))
        .collect();
    files.sort();
    files.dedup();
    files
}
