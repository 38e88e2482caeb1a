//! Nesting depth of JSON, measured on the text before serde_json sees it: it recurses once per
//! level, while no Kubernetes object nests anywhere near the limit (a CRD schema rarely passes
//! 40 levels). YAML's depth is serde-saphyr's to count ([`crate::yaml::options`]), as it
//! parses.

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
}
