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

/// JSON: `[` and `{` outside strings.
pub fn check_json(text: &str) -> Result<(), TooDeep> {
    let (mut depth, mut line, mut line_start) = (0usize, 1usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for (at, byte) in text.bytes().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(TooDeep {
                        line,
                        column: at - line_start + 1,
                    });
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'\n' => {
                line += 1;
                line_start = at + 1;
            }
            _ => {}
        }
    }
    Ok(())
}

/// YAML: block levels by indentation, `- ` entries, and flow collections, skipping comments,
/// quoted strings and block scalars (`|`, `>`), whose content is text.
pub fn check_yaml(text: &str) -> Result<(), TooDeep> {
    let mut scan = YamlScan::default();
    for (index, line) in text.lines().enumerate() {
        scan.line(line).map_err(|column| TooDeep {
            line: index + 1,
            column,
        })?;
    }
    Ok(())
}

#[derive(Default)]
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
        let content = line.trim_start_matches([' ', '\t']);
        let indent = line.len() - content.len();
        if let Some(parent) = self.block_scalar {
            if content.is_empty() || indent > parent {
                return Ok(());
            }
            self.block_scalar = None;
        }
        if self.quote.is_none() && self.flow == 0 {
            if content.is_empty() || content.starts_with('#') {
                return Ok(());
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

fn next_is_space(bytes: &[u8], at: usize) -> bool {
    bytes.get(at + 1).is_none_or(|b| matches!(b, b' ' | b'\t'))
}

/// `key: |`, `- >-`, `key: |2+ # comment`: the lines below are text, not structure.
fn opens_block_scalar(line: &str, last: u8) -> bool {
    if !matches!(last, b'|' | b'>' | b'-' | b'+' | b'0'..=b'9') {
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
