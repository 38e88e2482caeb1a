//! Scalars: plain ones resolved to null, booleans and numbers as serde_yaml resolves them
//! (YAML 1.2 core schema), quoted ones unescaped, block scalars folded and chomped.

use super::GaveUp;
use super::lines::{is_blank_line, line_end, plain_end, skip_spaces, starts_plain, trim_end};
use serde::de::{self, Visitor};
use std::borrow::Cow;

pub enum Scalar<'de> {
    /// As written: what it means depends on what it spells.
    Plain(&'de str),
    /// Quoted or a block scalar: always a string.
    Text(Cow<'de, str>),
}

impl<'de> Scalar<'de> {
    /// The value, as serde_yaml's `deserialize_any` visits it.
    pub fn visit_value<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, GaveUp> {
        match self {
            Scalar::Plain(plain) => visit_plain(plain, visitor),
            Scalar::Text(text) => visit_text(text, visitor),
        }
    }
}

fn visit_text<'de, V: Visitor<'de>>(text: Cow<'de, str>, visitor: V) -> Result<V::Value, GaveUp> {
    match text {
        Cow::Borrowed(text) => visitor.visit_borrowed_str(text),
        Cow::Owned(text) => visitor.visit_string(text),
    }
}

fn visit_plain<'de, V: Visitor<'de>>(plain: &'de str, visitor: V) -> Result<V::Value, GaveUp> {
    match plain {
        "~" | "null" | "Null" | "NULL" => return visitor.visit_unit(),
        "true" | "True" | "TRUE" => return visitor.visit_bool(true),
        "false" | "False" | "FALSE" => return visitor.visit_bool(false),
        _ => {}
    }
    if !may_be_number(plain) {
        return visitor.visit_borrowed_str(plain);
    }
    if let Some(count) = counting_number(plain) {
        return visitor.visit_u64(count);
    }
    // The rare rest (signs, radixes, floats, `.inf`, leading zeros, 20-digit numbers): resolved
    // by serde_yaml itself. Standing alone the word reads as it does in place, unless it would
    // mark a document.
    if plain.starts_with("---") || plain.starts_with("...") {
        return Err(GaveUp);
    }
    de::Deserializer::deserialize_any(serde_yaml::Deserializer::from_str(plain), visitor)
        .map_err(|_| GaveUp)
}

/// Whether serde_yaml could read `plain` as a number: integers in any radix and floats
/// (`.inf`, `.nan`, what `f64::from_str` takes) are spelled only with these bytes, and no
/// number has two dots. Anything else is a string.
fn may_be_number(plain: &str) -> bool {
    let numeric = |b: u8| {
        b.is_ascii_hexdigit()
            || matches!(
                b,
                b'+' | b'-'
                    | b'.'
                    | b'x'
                    | b'X'
                    | b'o'
                    | b'O'
                    | b'i'
                    | b'I'
                    | b'n'
                    | b'N'
                    | b't'
                    | b'T'
                    | b'y'
                    | b'Y'
            )
    };
    plain.bytes().all(numeric) && plain.bytes().filter(|&b| b == b'.').count() < 2
}

/// Decimal digits without a sign or a leading zero that fit 19 digits: an unsigned integer.
fn counting_number(plain: &str) -> Option<u64> {
    let digits = plain.len() <= 19
        && plain.bytes().all(|b| b.is_ascii_digit())
        && (plain == "0" || !plain.starts_with('0'));
    digits.then(|| plain.parse().ok()).flatten()
}

/// A quoted scalar from `start` (its opening quote), held by a collection indented `parent`:
/// its text and where its closing quote ends. Lines it runs on to are folded in as YAML folds
/// them (a line break is a space, each blank line a line break); escapes over several lines,
/// and lines no deeper than the holder, give up.
pub fn quoted(text: &str, start: usize, parent: isize) -> Result<(Scalar<'_>, usize), GaveUp> {
    let end = line_end(text.as_bytes(), start);
    let one_line = if text.as_bytes()[start] == b'\'' {
        single_quoted(text, start, end)
    } else {
        double_quoted(text, start, end)?
    };
    match one_line {
        Some(found) => Ok(found),
        None => folded_quoted(text, start, parent),
    }
}

/// None when the quote does not close on its line.
fn single_quoted(text: &str, start: usize, end: usize) -> Option<(Scalar<'_>, usize)> {
    let quote = closing_quote(text.as_bytes(), b'\'', start + 1, end).ok()??;
    let inner = &text[start + 1..quote];
    let value = if inner.contains("''") {
        Cow::Owned(inner.replace("''", "'"))
    } else {
        Cow::Borrowed(inner)
    };
    Some((Scalar::Text(value), quote + 1))
}

/// Ok(None) when the quote does not close on its line.
fn double_quoted(
    text: &str,
    start: usize,
    end: usize,
) -> Result<Option<(Scalar<'_>, usize)>, GaveUp> {
    let bytes = text.as_bytes();
    let mut at = start + 1;
    let mut unescaped: Option<String> = None;
    loop {
        let Some(found) = memchr::memchr2(b'"', b'\\', &bytes[at..end]) else {
            return Ok(None);
        };
        let found = at + found;
        if bytes[found] == b'"' {
            let value = match unescaped {
                Some(mut value) => {
                    value.push_str(&text[at..found]);
                    Cow::Owned(value)
                }
                None => Cow::Borrowed(&text[start + 1..found]),
            };
            return Ok(Some((Scalar::Text(value), found + 1)));
        }
        let value = unescaped.get_or_insert_with(String::new);
        value.push_str(&text[at..found]);
        at = escape(text, found + 1, end, value)?;
    }
}

/// Where `quote` closes in `bytes[from..end]` (`''` is a quote inside single quotes); a
/// backslash in double quotes gives up (only one-line escapes are read).
fn closing_quote(
    bytes: &[u8],
    quote: u8,
    mut from: usize,
    end: usize,
) -> Result<Option<usize>, GaveUp> {
    loop {
        let Some(found) = memchr::memchr2(quote, b'\\', &bytes[from..end]) else {
            return Ok(None);
        };
        let found = from + found;
        match bytes[found] {
            b'\\' if quote == b'"' => return Err(GaveUp),
            b'\\' => from = found + 1,
            _ if quote == b'\'' && found + 1 < end && bytes[found + 1] == b'\'' => from = found + 2,
            _ => return Ok(Some(found)),
        }
    }
}

/// A quoted scalar running over several lines.
fn folded_quoted(text: &str, start: usize, parent: isize) -> Result<(Scalar<'_>, usize), GaveUp> {
    let bytes = text.as_bytes();
    let quote = bytes[start];
    let mut value = String::new();
    let mut at = start + 1;
    let mut breaks = 0;
    loop {
        let end = line_end(bytes, at);
        let close = closing_quote(bytes, quote, at, end)?;
        let content_end = close.unwrap_or(end);
        let mut from = at;
        if breaks > 0 {
            from = skip_spaces(bytes, at, content_end);
            if close.is_none() && from == end {
                breaks += 1;
                at = next_line_start(bytes, end)?;
                continue;
            }
            if (from - at) as isize <= parent {
                return Err(GaveUp);
            }
        }
        let to = if close.is_none() {
            trim_end(bytes, from, content_end)
        } else {
            content_end
        };
        fold(&mut value, breaks);
        match quote {
            b'\'' => value.push_str(&text[from..to].replace("''", "'")),
            _ => value.push_str(&text[from..to]),
        }
        match close {
            Some(quote) => return Ok((Scalar::Text(Cow::Owned(value)), quote + 1)),
            None => {
                breaks = 1;
                at = next_line_start(bytes, end)?;
            }
        }
    }
}

/// The line after the one ending at `end`; none at the text's end.
fn next_line_start(bytes: &[u8], end: usize) -> Result<usize, GaveUp> {
    if end >= bytes.len() {
        return Err(GaveUp);
    }
    Ok(end + 1)
}

/// Joins folded lines: one line break reads as a space, more as one line break fewer.
pub fn fold(value: &mut String, breaks: usize) {
    match breaks {
        0 => {}
        1 => value.push(' '),
        _ => value.extend(std::iter::repeat_n('\n', breaks - 1)),
    }
}

/// A plain scalar `first` whose line ends at `end` (no comment after it), held by a collection
/// indented `parent`: the lines below deeper than the holder continue it (folded in). Returns
/// the folded text when any did, and where reading goes on.
pub fn plain_continued<'t>(
    text: &'t str,
    first: &'t str,
    end: usize,
    parent: isize,
) -> Result<(Option<String>, usize), GaveUp> {
    let bytes = text.as_bytes();
    let mut folded: Option<String> = None;
    let mut breaks = 1;
    let mut at = (end + 1).min(bytes.len());
    let mut next = at;
    while at < bytes.len() {
        let end = line_end(bytes, at);
        let content = skip_spaces(bytes, at, end);
        if content == end {
            breaks += 1;
            at = (end + 1).min(bytes.len());
            continue;
        }
        if (content - at) as isize <= parent || bytes[content] == b'#' {
            break;
        }
        if !starts_plain(bytes[content], bytes.get(content + 1).copied()) {
            return Err(GaveUp);
        }
        let (segment_end, is_key) = plain_end(bytes, content, end);
        if is_key {
            return Err(GaveUp);
        }
        let value = folded.get_or_insert_with(|| first.to_string());
        fold(value, breaks);
        value.push_str(&text[content..segment_end]);
        breaks = 1;
        at = (end + 1).min(bytes.len());
        next = at;
        if skip_spaces(bytes, segment_end, end) < end {
            // A comment ends the scalar.
            break;
        }
    }
    Ok((folded, next))
}

/// Appends the character escaped at `at` (after a backslash); returns where the text goes on.
fn escape(text: &str, at: usize, end: usize, value: &mut String) -> Result<usize, GaveUp> {
    let Some(&code) = text.as_bytes()[..end].get(at) else {
        // A backslash ending the line continues the scalar on the next.
        return Err(GaveUp);
    };
    let simple = match code {
        b'0' => '\0',
        b'a' => '\x07',
        b'b' => '\x08',
        b't' => '\t',
        b'n' => '\n',
        b'v' => '\x0b',
        b'f' => '\x0c',
        b'r' => '\r',
        b'e' => '\x1b',
        b' ' => ' ',
        b'"' => '"',
        b'/' => '/',
        b'\\' => '\\',
        b'N' => '\u{85}',
        b'_' => '\u{a0}',
        b'L' => '\u{2028}',
        b'P' => '\u{2029}',
        b'x' | b'u' | b'U' => {
            let digits = match code {
                b'x' => 2,
                b'u' => 4,
                _ => 8,
            };
            let hex = text.get(at + 1..at + 1 + digits).ok_or(GaveUp)?;
            if at + 1 + digits > end || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(GaveUp);
            }
            let code = u32::from_str_radix(hex, 16).map_err(|_| GaveUp)?;
            value.push(char::from_u32(code).ok_or(GaveUp)?);
            return Ok(at + 1 + digits);
        }
        _ => return Err(GaveUp),
    };
    value.push(simple);
    Ok(at + 1)
}

/// A block scalar whose header (`|`, `>-`, `|+ # note`) starts at `start` on a line ending at
/// `end`, held by a collection indented `parent`: its text and the start of the line after it.
/// Explicit indentation, leading blank lines in folded text, more-indented folded lines,
/// whitespace-only lines deeper than the text, and kept trailing blank lines give up.
pub fn block(
    text: &str,
    start: usize,
    end: usize,
    parent: isize,
) -> Result<(Scalar<'_>, usize), GaveUp> {
    let bytes = text.as_bytes();
    let literal = bytes[start] == b'|';
    let mut header = start + 1;
    let chomp = match bytes.get(header) {
        Some(&c @ (b'-' | b'+')) => {
            header += 1;
            c
        }
        _ => b' ',
    };
    let after = skip_spaces(bytes, header, end);
    if after < end && !(after > header && bytes[after] == b'#') {
        return Err(GaveUp);
    }
    let lines = BlockLines::read(text, end + 1, parent, literal)?;
    let mut value = String::with_capacity(lines.text_len);
    let mut blank_run = 0;
    let mut started = false;
    for line in &lines.lines {
        match line {
            None => blank_run += 1,
            Some(line) => {
                if !started {
                    value.extend(std::iter::repeat_n('\n', blank_run));
                } else {
                    if literal {
                        value.extend(std::iter::repeat_n('\n', blank_run + 1));
                    } else if blank_run == 0 {
                        value.push(' ');
                    } else {
                        value.extend(std::iter::repeat_n('\n', blank_run));
                    }
                }
                blank_run = 0;
                started = true;
                value.push_str(line);
            }
        }
    }
    match chomp {
        b'-' => {}
        // Kept trailing blank lines gave up in `read`: keeping is clipping here.
        _ => value.push('\n'),
    }
    if chomp == b'+' && lines.trailing_blank > 0 {
        return Err(GaveUp);
    }
    Ok((Scalar::Text(Cow::Owned(value)), lines.next))
}

/// The lines of a block scalar's text, its indentation taken off (None: a blank line).
struct BlockLines<'t> {
    lines: Vec<Option<&'t str>>,
    text_len: usize,
    /// Blank lines after the last line of text.
    trailing_blank: usize,
    /// The start of the first line after the scalar.
    next: usize,
}

impl<'t> BlockLines<'t> {
    fn read(text: &'t str, from: usize, parent: isize, literal: bool) -> Result<Self, GaveUp> {
        let bytes = text.as_bytes();
        let mut lines = Vec::new();
        let mut text_len = 0;
        let mut indent = None;
        let mut at = from;
        let mut blank_widths = Vec::new();
        while at < bytes.len() {
            let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |n| at + n);
            if end == bytes.len() {
                // A last line without a line break: left to serde_yaml.
                return Err(GaveUp);
            }
            let spaces = skip_spaces(bytes, at, end) - at;
            if is_blank_line(bytes, at, end) {
                blank_widths.push(spaces);
                lines.push(None);
                at = end + 1;
                continue;
            }
            let width = *indent.get_or_insert(spaces);
            if spaces < width {
                break;
            }
            if !literal && spaces > width {
                return Err(GaveUp);
            }
            let line = &text[at + width..end];
            text_len += line.len() + 1;
            lines.push(Some(line));
            at = end + 1;
        }
        let Some(width) = indent else {
            return Err(GaveUp);
        };
        // Text no deeper than its holder is empty; blank lines wider than the text hold
        // spaces (or are an error before the first line); folded text starting blank: rare.
        let leading_blank = lines.iter().take_while(|line| line.is_none()).count();
        if width as isize <= parent
            || blank_widths.iter().any(|&w| w > width)
            || !literal && leading_blank > 0
        {
            return Err(GaveUp);
        }
        let trailing_blank = lines.iter().rev().take_while(|line| line.is_none()).count();
        lines.truncate(lines.len() - trailing_blank);
        Ok(BlockLines {
            lines,
            text_len,
            trailing_blank,
            next: at,
        })
    }
}

/// A mapping key: serde_yaml hands a key's text to `deserialize_str` whatever it spells, and
/// resolves it only for `deserialize_any`.
pub struct Key<'de>(pub Scalar<'de>);

impl<'de> Key<'de> {
    fn visit_text<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, GaveUp> {
        match self.0 {
            Scalar::Plain(plain) => visitor.visit_borrowed_str(plain),
            Scalar::Text(text) => visit_text(text, visitor),
        }
    }
}

impl<'de> de::Deserializer<'de> for Key<'de> {
    type Error = GaveUp;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, GaveUp> {
        self.0.visit_value(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, GaveUp> {
        self.visit_text(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, GaveUp> {
        self.visit_text(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, GaveUp> {
        self.visit_text(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, GaveUp> {
        visitor.visit_unit()
    }

    gave_up_on! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_f32
        deserialize_f64 deserialize_char deserialize_bytes deserialize_byte_buf
        deserialize_option deserialize_unit deserialize_seq deserialize_map
    }
}
