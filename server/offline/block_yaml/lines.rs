//! Line-level scanning shared by the reader: where lines, indentation, comments and plain
//! scalars begin and end.

/// The first byte at or after `from` (before `end`) that is not a space.
pub fn skip_spaces(bytes: &[u8], mut from: usize, end: usize) -> usize {
    while from < end && bytes[from] == b' ' {
        from += 1;
    }
    from
}

/// The end of the line holding `from`: its line break, or the text's end.
pub fn line_end(bytes: &[u8], from: usize) -> usize {
    memchr::memchr(b'\n', &bytes[from..]).map_or(bytes.len(), |at| from + at)
}

/// Whether `at` is a space, a line break or the end: what makes `:` and `-` indicators.
pub fn blank_or_end(bytes: &[u8], at: usize) -> bool {
    bytes.get(at).is_none_or(|&b| b == b' ' || b == b'\n')
}

/// The start of the line holding `at`.
pub fn line_start(bytes: &[u8], at: usize) -> usize {
    memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |newline| newline + 1)
}

/// From the line starting at `from`, the first line holding more than spaces and a comment:
/// its start and indentation.
pub fn next_line(bytes: &[u8], mut from: usize) -> Option<(usize, usize)> {
    while from < bytes.len() {
        let content = skip_spaces(bytes, from, bytes.len());
        match bytes.get(content) {
            None => return None,
            Some(b'\n') => from = content + 1,
            Some(b'#') => {
                from = memchr::memchr(b'\n', &bytes[content..])
                    .map_or(bytes.len(), |newline| content + newline + 1);
            }
            Some(_) => return Some((from, content - from)),
        }
    }
    None
}

/// Whether a plain scalar may start with `first` (then `next`): not with an indicator, except
/// `-` not followed by a space (`-1`, `--flag`). `?` and `:` starts are left to serde_yaml.
pub fn starts_plain(first: u8, next: Option<u8>) -> bool {
    match first {
        b'-' => !matches!(next, None | Some(b' ' | b'\n')),
        b'?' | b':' | b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|'
        | b'>' | b'\'' | b'"' | b'%' | b'@' | b'`' | b' ' | b'\n' => false,
        _ => true,
    }
}

/// A plain scalar from `start` on its line (ending at `end`): where it ends (trailing spaces
/// and a comment left out), and whether it ends at `: ` or a final `:` (a key).
pub fn plain_end(bytes: &[u8], start: usize, end: usize) -> (usize, bool) {
    let mut at = start;
    while let Some(found) = memchr::memchr2(b':', b'#', &bytes[at..end]) {
        let found = at + found;
        if bytes[found] == b':' {
            if blank_or_end(bytes, found + 1) {
                return (trim_end(bytes, start, found), true);
            }
        } else if bytes[found - 1] == b' ' {
            return (trim_end(bytes, start, found), false);
        }
        at = found + 1;
    }
    (trim_end(bytes, start, end), false)
}

/// `end` moved back over trailing spaces (not before `start`).
pub fn trim_end(bytes: &[u8], start: usize, mut end: usize) -> usize {
    while end > start && bytes[end - 1] == b' ' {
        end -= 1;
    }
    end
}

/// Whether the line `bytes[start..end]` holds only spaces.
pub fn is_blank_line(bytes: &[u8], start: usize, end: usize) -> bool {
    skip_spaces(bytes, start, end) == end
}

/// Tabs, carriage returns, control characters, a byte-order mark, and the line breaks and
/// non-characters libyaml knows besides `\n` (NEL, LS, PS, U+FFFE/U+FFFF): each changes how
/// libyaml splits or accepts the text, so the text is left to serde_yaml.
pub fn has_unusual_characters(bytes: &[u8]) -> bool {
    // Most chunks hold none of the bytes these start with: checked branch-free first.
    let suspect =
        |b: u8| (b < b' ' && b != b'\n') | (b == 0x7f) | (b == 0xc2) | (b == 0xe2) | (b == 0xef);
    bytes.chunks(64).enumerate().any(|(chunk, bytes_of)| {
        bytes_of.iter().fold(false, |any, &b| any | suspect(b))
            && unusual_in(bytes, chunk * 64, chunk * 64 + bytes_of.len())
    })
}

/// The precise check of `bytes[from..to]` (a character may run past `to`).
fn unusual_in(bytes: &[u8], from: usize, to: usize) -> bool {
    (from..to).any(|at| {
        let next = |n: usize| bytes.get(at + n).copied().unwrap_or(0);
        match bytes[at] {
            b'\n' => false,
            b if b < b' ' || b == 0x7f => true,
            // U+0080–U+009F: C1 controls and NEL.
            0xc2 => (0x80..=0x9f).contains(&next(1)),
            // U+2028, U+2029.
            0xe2 => next(1) == 0x80 && matches!(next(2), 0xa8 | 0xa9),
            // U+FEFF, U+FFFE, U+FFFF.
            0xef => matches!((next(1), next(2)), (0xbb, 0xbf) | (0xbf, 0xbe | 0xbf)),
            _ => false,
        }
    })
}
