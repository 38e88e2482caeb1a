//! Nesting depth, measured on the text before any parser sees it: parsers recurse once per
//! level, so a few thousand levels of `[[[…` or of indentation take serde_yaml minutes, while no
//! Kubernetes object nests anywhere near the limit (a CRD schema rarely passes 40 levels). The
//! YAML count is an upper bound (indentation levels + sequence dashes + flow brackets), never
//! below the real depth of the structure.

/// Deepest nesting accepted: below the parsers' own recursion limits (128), so deep input
/// always gets this error, naming the limit.
pub const MAX_DEPTH: usize = 100;

/// Where the input first nests deeper than [`MAX_DEPTH`] (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooDeep {
    pub line: usize,
    pub column: usize,
}

/// JSON: `[` and `{` outside strings, fed as the bytes arrive (input is streamed).
#[derive(Debug)]
pub struct JsonDepth {
    depth: usize,
    in_string: bool,
    escaped: bool,
    line: usize,
    column: usize,
}

impl Default for JsonDepth {
    fn default() -> Self {
        JsonDepth {
            depth: 0,
            in_string: false,
            escaped: false,
            line: 1,
            column: 0,
        }
    }
}

impl JsonDepth {
    pub fn feed(&mut self, bytes: &[u8]) -> Result<(), TooDeep> {
        for &byte in bytes {
            self.column += 1;
            if self.in_string {
                match byte {
                    _ if self.escaped => self.escaped = false,
                    b'\\' => self.escaped = true,
                    b'"' => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match byte {
                b'"' => self.in_string = true,
                b'[' | b'{' => {
                    self.depth += 1;
                    if self.depth > MAX_DEPTH {
                        return Err(TooDeep {
                            line: self.line,
                            column: self.column,
                        });
                    }
                }
                b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                b'\n' => {
                    self.line += 1;
                    self.column = 0;
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// Reads through to `inner`, refusing with [`TooDeep`] (as the io error's inner error) as soon
/// as the JSON passing through nests too deep: before the parser sees the deeper bytes.
pub struct JsonDepthGuard<R> {
    inner: R,
    depth: JsonDepth,
    /// Once too deep, every later read says so again.
    refused: Option<TooDeep>,
}

impl<R> JsonDepthGuard<R> {
    pub fn new(inner: R) -> Self {
        JsonDepthGuard {
            inner,
            depth: JsonDepth::default(),
            refused: None,
        }
    }
}

impl<R: std::io::Read> std::io::Read for JsonDepthGuard<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let refuse = |at| std::io::Error::new(std::io::ErrorKind::InvalidData, at);
        if let Some(at) = self.refused {
            return Err(refuse(at));
        }
        let read = self.inner.read(buf)?;
        if let Err(at) = self.depth.feed(&buf[..read]) {
            self.refused = Some(at);
            return Err(refuse(at));
        }
        Ok(read)
    }
}

impl std::fmt::Display for TooDeep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "nested more than {MAX_DEPTH} levels deep (the limit)")
    }
}

impl std::error::Error for TooDeep {}

/// YAML: block levels by indentation, `- ` entries, and flow collections, skipping comments,
/// quoted strings and block scalars (`|`, `>`), whose content is text.
pub fn check_yaml(text: &str) -> Result<(), TooDeep> {
    let mut scan = YamlScan::default();
    for (index, line) in lines(text).enumerate() {
        scan.line(line).map_err(|column| TooDeep {
            line: index + 1,
            column,
        })?;
    }
    Ok(())
}

/// One document of a multi-document text, checked on its own (from its `---` line when
/// `marked`): true only if [`check_yaml`] on the whole text passes over it. It does when the
/// document passes here and ends outside quotes and flow collections: the `---` line after it
/// then leaves the whole text's scan where a fresh one starts.
pub fn yaml_document_within_limit(text: &str, marked: bool) -> bool {
    let mut scan = YamlScan::default();
    let marker = if marked { Some("---") } else { None };
    marker
        .into_iter()
        .chain(lines(text))
        .all(|line| scan.line(line).is_ok())
        && scan.quote.is_none()
        && scan.flow == 0
}

/// The lines of `text` as [`str::lines`] cuts them (at `\n`, a `\r` before it left out, no
/// empty line after a final `\n`, a last line without `\n` kept whole), found with the vectorised `memchr`: `str::lines` looks for
/// line breaks a word at a time, a fifth of the scan's time.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let Some(at) = memchr::memchr(b'\n', rest.as_bytes()) else {
            return Some(std::mem::take(&mut rest));
        };
        let line = &rest[..at];
        rest = &rest[at + 1..];
        Some(line.strip_suffix('\r').unwrap_or(line))
    })
}

#[derive(Default, Debug, Clone, PartialEq, Eq)]
struct YamlScan {
    /// Indentation of the open block collections.
    indents: Vec<usize>,
    /// Open flow collections (`[`, `{`), which may span lines.
    flow: usize,
    /// Inside a quoted string that spans lines: its closing quote.
    quote: Option<u8>,
    /// Inside a block scalar: lines indented deeper than this are its text.
    block_scalar: Option<usize>,
}

impl YamlScan {
    /// Scans one line; `Err(column)` where it nests too deep.
    fn line(&mut self, line: &str) -> Result<(), usize> {
        let Some(indent) = self.structure(line) else {
            return Ok(());
        };
        if self.quote.is_none() && self.flow == 0 {
            let plain = plain_line(line.as_bytes(), indent);
            if let Some(plain) = plain.filter(|p| self.indents.len() + p.dashes <= MAX_DEPTH) {
                if opens_block_scalar(line, plain.last) {
                    self.block_scalar = Some(indent);
                }
                return Ok(());
            }
        }
        self.bytewise(line, indent)
    }

    /// The line's indentation, closing and opening block levels by it; None when the line is
    /// text (a block scalar's, a comment, blank).
    fn structure(&mut self, line: &str) -> Option<usize> {
        let content = line.trim_start_matches([' ', '\t']);
        let indent = line.len() - content.len();
        if let Some(parent) = self.block_scalar {
            if content.is_empty() || indent > parent {
                return None;
            }
            self.block_scalar = None;
        }
        if self.quote.is_none() && self.flow == 0 {
            if content.is_empty() || content.starts_with('#') {
                return None;
            }
            if indent == 0 && (content.starts_with("---") || content.starts_with("...")) {
                self.indents.clear();
            }
            while self.indents.last().is_some_and(|&open| open > indent) {
                self.indents.pop();
            }
            if self.indents.last() != Some(&indent) {
                self.indents.push(indent);
            }
        }
        Some(indent)
    }

    /// The rest of the line after its indentation, byte by byte.
    fn bytewise(&mut self, line: &str, indent: usize) -> Result<(), usize> {
        let bytes = line.as_bytes();
        let mut depth = self.indents.len() + self.flow;
        let mut value_start = true;
        let mut last = 0u8;
        for at in indent..bytes.len() {
            let byte = bytes[at];
            if let Some(quote) = self.quote {
                if byte == quote {
                    self.quote = None;
                    value_start = false;
                }
                continue;
            }
            match byte {
                b'#' if at == 0 || matches!(bytes[at - 1], b' ' | b'\t') => break,
                b'"' | b'\'' if value_start => self.quote = Some(byte),
                b'[' | b'{' if value_start || self.flow > 0 => {
                    self.flow += 1;
                    depth += 1;
                    value_start = true;
                }
                b']' | b'}' if self.flow > 0 => {
                    self.flow -= 1;
                    depth = depth.saturating_sub(1);
                    value_start = false;
                }
                // A block sequence entry (`- - x` nests twice on one line).
                b'-' if self.flow == 0 && value_start && next_is_space(bytes, at) => depth += 1,
                b' ' | b'\t' => {}
                b':' | b',' | b'?' if next_is_space(bytes, at) || self.flow > 0 => {
                    value_start = true;
                }
                _ => value_start = false,
            }
            if depth > MAX_DEPTH {
                return Err(at + 1);
            }
            if byte != b' ' && byte != b'\t' {
                last = byte;
            }
        }
        if self.quote.is_none() && self.flow == 0 && opens_block_scalar(line, last) {
            self.block_scalar = Some(indent);
        }
        Ok(())
    }
}

/// What [`YamlScan::line`] learns from a line of plain block structure (`key: value`,
/// `- key: value`, `- - x`): the sequence dashes it opens and its last byte that is not a blank.
struct PlainLine {
    dashes: usize,
    last: u8,
}

/// A line outside quotes and flow collections read by looking only where a value may start
/// (after the indentation, a dash or a `: ` or `, `) and at the bytes that may start one; None
/// when it holds a `?`, or a quote, a bracket or brace, a comment or a `: `-like separator
/// where a value starts, which the byte-by-byte scan reads. Both give the same result on every line
/// read here: elsewhere in a line only a `: `, `, `, `? ` or ` #` changes what the scan does.
fn plain_line(bytes: &[u8], indent: usize) -> Option<PlainLine> {
    // `? ` is rare enough to leave every line holding a `?` to the byte-by-byte scan.
    if memchr::memchr(b'?', bytes).is_some() {
        return None;
    }
    let mut dashes = 0;
    let mut at = indent;
    let mut value_start = true;
    while at < bytes.len() {
        let byte = bytes[at];
        if value_start {
            match byte {
                b'-' if next_is_space(bytes, at) => dashes += 1,
                b' ' | b'\t' => {}
                b'"' | b'\'' | b'[' | b'{' | b']' | b'}' | b'#' | b':' | b',' | b'?' => {
                    return None;
                }
                _ => value_start = false,
            }
            at += 1;
            continue;
        }
        at = memchr::memchr3(b':', b',', b'#', &bytes[at..]).map_or(bytes.len(), |i| at + i);
        match bytes.get(at) {
            Some(b'#') if matches!(bytes[at - 1], b' ' | b'\t') => return None,
            Some(_) if bytes[at] != b'#' && next_is_space(bytes, at) => value_start = true,
            _ => {}
        }
        at += 1;
    }
    let last = bytes[indent..]
        .iter()
        .rev()
        .find(|b| !matches!(b, b' ' | b'\t'))
        .copied()
        .unwrap_or(0);
    Some(PlainLine { dashes, last })
}

fn next_is_space(bytes: &[u8], at: usize) -> bool {
    bytes.get(at + 1).is_none_or(|b| matches!(b, b' ' | b'\t'))
}

/// `key: |`, `- >-`, `key: |2+ # comment`: the lines below are text, not structure.
fn opens_block_scalar(line: &str, last: u8) -> bool {
    if !matches!(last, b'|' | b'>' | b'-' | b'+' | b'0'..=b'9') {
        return false;
    }
    // Most lines ending so are numbers (`replicas: 3`): no `|` or `>`, no indicator.
    if memchr::memchr2(b'|', b'>', line.as_bytes()).is_none() {
        return false;
    }
    let code = line.split(" #").next().unwrap_or(line).trim_end();
    let indicator = code.rsplit([' ', '\t']).next().unwrap_or(code);
    let mut chars = indicator.chars();
    matches!(chars.next(), Some('|' | '>'))
        && chars.all(|c| matches!(c, '-' | '+' | '1'..='9'))
        && code.len() > indicator.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_json(text: &str) -> Result<(), TooDeep> {
        let mut depth = JsonDepth::default();
        // In pieces, as a reader hands them over.
        text.as_bytes()
            .chunks(7)
            .try_for_each(|piece| depth.feed(piece))
    }

    #[test]
    fn json_depth_counts_brackets_outside_strings() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(check_json(&nested(MAX_DEPTH)), Ok(()));
        assert_eq!(
            check_json(&format!("\n {}", nested(MAX_DEPTH + 1))),
            Err(TooDeep {
                line: 2,
                column: MAX_DEPTH + 2
            })
        );
        let in_string = format!("{{\"a\": \"{}\\\"[\"}}", "[".repeat(1000));
        assert_eq!(check_json(&in_string), Ok(()));
    }

    #[test]
    fn the_guard_stops_the_reader_at_the_limit() {
        let deep = format!("{{\"a\": {}", "[".repeat(10_000));
        let mut guard = JsonDepthGuard::new(deep.as_bytes());
        let mut sink = Vec::new();
        let error = std::io::Read::read_to_end(&mut guard, &mut sink).unwrap_err();
        let at = error.get_ref().and_then(|e| e.downcast_ref::<TooDeep>());
        assert_eq!(
            at,
            Some(&TooDeep {
                line: 1,
                column: 6 + MAX_DEPTH
            })
        );
    }

    #[test]
    fn yaml_depth_counts_indentation_dashes_and_flow() {
        let mut block = String::new();
        for level in 0..=MAX_DEPTH {
            block.push_str(&format!("{}k{level}:\n", " ".repeat(level)));
        }
        let error = check_yaml(&block).unwrap_err();
        assert_eq!(error.line, MAX_DEPTH + 1);
        assert!(check_yaml(&block.lines().take(MAX_DEPTH).collect::<Vec<_>>().join("\n")).is_ok());

        let dashes = format!("{}x\n", "- ".repeat(MAX_DEPTH + 1));
        assert_eq!(check_yaml(&dashes).unwrap_err().line, 1);
        let flow = format!("a: {}\n", "[".repeat(MAX_DEPTH + 1));
        assert_eq!(check_yaml(&flow).unwrap_err().line, 1);
        let spanning = format!("a: {}\n{}\n", "{b: ".repeat(70), "[".repeat(70));
        assert_eq!(check_yaml(&spanning).unwrap_err().line, 2);
    }

    /// Every line scanned as [`YamlScan::line`] does (looking only where a value may start)
    /// and byte by byte: the same verdicts and the same state after each line.
    fn both_scans_agree(text: &str) {
        let (mut quick, mut bytewise) = (YamlScan::default(), YamlScan::default());
        for line in text.lines() {
            let expected = match bytewise.structure(line) {
                Some(indent) => bytewise.bytewise(line, indent),
                None => Ok(()),
            };
            assert_eq!(quick.line(line), expected, "{line:?} in {text:?}");
            assert_eq!(quick, bytewise, "{line:?} in {text:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn lines_are_cut_as_str_lines_cuts_them(text in "[a\r\n]{0,12}") {
            proptest::prop_assert_eq!(lines(&text).collect::<Vec<_>>(), text.lines().collect::<Vec<_>>());
        }

        #[test]
        fn looking_only_where_values_start_reads_as_byte_by_byte(
            rows in proptest::collection::vec(
                ("[ \t]{0,6}", "[-a: ,?#\"'\\[\\]{}|>+19\t]{0,12}"),
                1..12,
            ),
            dashes in 0usize..3,
        ) {
            let mut text = String::new();
            for (indent, content) in &rows {
                text.push_str(indent);
                text.push_str(content);
                text.push('\n');
            }
            both_scans_agree(&text);
            // Near the limit: dashes on deeply indented lines.
            let deep = (0..MAX_DEPTH)
                .map(|level| format!("{}{}k:\n", " ".repeat(level), "- ".repeat(dashes)))
                .collect::<String>();
            both_scans_agree(&deep);
        }
    }

    #[test]
    fn kubectl_lines_read_as_byte_by_byte() {
        both_scans_agree(
            "---\napiVersion: v1\nitems:\n- kind: Pod\n  metadata:\n    labels: {}\n    name: a-b\n    \
             resourceVersion: '1'\n  spec:\n    containers:\n    - args:\n      - --x=y\n      \
             - - nested\n      command: [\"a\"]\n    script: |\n      # [[[\n      x: [\n  \
             note: a#b # c\n  time: 2026-11-29T12:00:00Z\n  url: http://a:80/b?c=d,e\n",
        );
    }

    #[test]
    fn block_scalar_indicators_open_text_and_numbers_do_not() {
        let cases = [
            ("script: |", true),
            ("- >-", true),
            ("key: |2+ # comment", true),
            ("key: >1", true),
            ("replicas: 3", false),
            ("note: a|b 2", false),
            ("x: 1 # |2", false),
            ("|2", false),
        ];
        for (line, opens) in cases {
            let last = *line
                .split(" #")
                .next()
                .unwrap()
                .trim_end()
                .as_bytes()
                .last()
                .unwrap();
            assert_eq!(opens_block_scalar(line, last), opens, "{line}");
        }
    }

    #[test]
    fn yaml_text_is_not_structure() {
        let deep_text = format!(
            "data:\n  script: |\n{}\n  other: 'a [[[[ {}'\n  plain: b[[[[{}\nnote: \"# [[[\" # [[[[{}\n",
            (0..300)
                .map(|i| format!("{}x", " ".repeat(4 + i)))
                .collect::<Vec<_>>()
                .join("\n"),
            "[".repeat(300),
            "[".repeat(300),
            "[".repeat(300),
        );
        assert_eq!(check_yaml(&deep_text), Ok(()));
        let kubectl = "apiVersion: v1\nitems:\n- apiVersion: apps/v1\n  kind: Deployment\n  spec:\n    template:\n      spec:\n        containers:\n        - name: a\n          args: [\"--x\", \"[y]\"]\n";
        assert_eq!(check_yaml(kubectl), Ok(()));
    }
}
