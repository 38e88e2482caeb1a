//! A reader for the block YAML that `kubectl get -o yaml` and serde_yaml write (block mappings
//! and sequences, plain and quoted scalars, lines they run on to folded in, `|`/`>` block
//! scalars, `{}` and `[]`), driving the same serde visitors serde_yaml drives, with the same
//! values: what it accepts reads exactly as serde_yaml reads it. Anything else (anchors, tags,
//! flow collections, escapes over several lines, odd indentation, tabs, control characters,
//! malformed text) makes it give up ([`GaveUp`]) and the caller hands the text to serde_yaml,
//! which gives today's values or errors. It skips what the visitors ignore without resolving
//! scalars, and allocates only for escapes, folded lines and block scalars.

/// Deserializer methods the visitors fleetglass uses never call (the listed ones, and those
/// for structs, tuples and enums): left to serde_yaml rather than guessed at. Shared by the
/// document reader and the key reader.
macro_rules! gave_up_on {
    ($($method:ident)*) => {
        $(fn $method<V: Visitor<'de>>(self, _: V) -> Result<V::Value, GaveUp> {
            Err(GaveUp)
        })*
        fn deserialize_unit_struct<V: Visitor<'de>>(self, _: &str, _: V) -> Result<V::Value, GaveUp> {
            Err(GaveUp)
        }
        fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &str, _: V) -> Result<V::Value, GaveUp> {
            Err(GaveUp)
        }
        fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, GaveUp> {
            Err(GaveUp)
        }
        fn deserialize_tuple_struct<V: Visitor<'de>>(self, _: &str, _: usize, _: V) -> Result<V::Value, GaveUp> {
            Err(GaveUp)
        }
        fn deserialize_struct<V: Visitor<'de>>(self, _: &str, _: &[&'static str], _: V) -> Result<V::Value, GaveUp> {
            Err(GaveUp)
        }
        fn deserialize_enum<V: Visitor<'de>>(self, _: &str, _: &[&'static str], _: V) -> Result<V::Value, GaveUp> {
            Err(GaveUp)
        }
    };
}

pub(super) mod lines;
mod scalar;
#[cfg(test)]
mod tests;

use lines::{blank_or_end, line_start, next_line, plain_end, skip_spaces};
use scalar::Scalar;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// The text is not one this reader reads as serde_yaml does; serde_yaml must read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GaveUp;

impl fmt::Display for GaveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not the block YAML the fast reader reads")
    }
}

impl std::error::Error for GaveUp {}

impl de::Error for GaveUp {
    fn custom<T: fmt::Display>(_: T) -> Self {
        GaveUp
    }
}

/// What holds the value about to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Holder {
    Document,
    /// A block mapping: the value follows `key:` on the same line or below.
    Mapping,
    /// A block sequence: the value follows `-` on the same line or below.
    Sequence,
}

/// One YAML document's text, read as a serde deserializer.
pub struct BlockYaml<'de> {
    text: &'de str,
    /// Where reading continues: within the line of the value about to be read, or at the
    /// start of a line.
    pos: usize,
    holder: Holder,
    /// Indentation of the holding collection (-1 for the document).
    parent: isize,
}

/// What a value is, with `pos` moved to where its reading continues.
enum Node<'de> {
    Null,
    /// A block mapping whose keys sit at `indent`; `pos` is at its first key.
    Mapping {
        indent: usize,
    },
    /// A block sequence whose dashes sit at `indent`; `pos` is at its first dash.
    Sequence {
        indent: usize,
    },
    EmptyMapping,
    EmptySequence,
    Scalar(Scalar<'de>),
}

impl<'de> BlockYaml<'de> {
    /// `text` is one document: what follows a `---` line, up to the next.
    pub fn document(text: &'de str) -> Result<Self, GaveUp> {
        if lines::has_unusual_characters(text.as_bytes()) {
            return Err(GaveUp);
        }
        Ok(BlockYaml {
            text,
            pos: 0,
            holder: Holder::Document,
            parent: -1,
        })
    }

    /// After the document's value: only blank lines and comments may follow.
    pub fn end(&self) -> Result<(), GaveUp> {
        match next_line(self.bytes(), self.pos) {
            None => Ok(()),
            Some(_) => Err(GaveUp),
        }
    }

    fn bytes(&self) -> &'de [u8] {
        self.text.as_bytes()
    }

    fn line_end(&self, from: usize) -> usize {
        lines::line_end(self.bytes(), from)
    }

    /// Reads what the value at `pos` is.
    fn node(&mut self) -> Result<Node<'de>, GaveUp> {
        if self.holder == Holder::Document {
            return Ok(self.node_below(self.pos));
        }
        let bytes = self.bytes();
        let end = self.line_end(self.pos);
        let start = skip_spaces(bytes, self.pos, end);
        // Nothing (or a comment) after `key:` or `-`: the value is on the lines below. The
        // holder only stops at `:` or `-` followed by a space or the line's end, so a `#`
        // here follows a space.
        if start == end || bytes[start] == b'#' {
            return Ok(self.node_below((end + 1).min(bytes.len())));
        }
        match bytes[start] {
            b'|' | b'>' => {
                let (scalar, next) = scalar::block(self.text, start, end, self.parent)?;
                self.pos = next;
                Ok(Node::Scalar(scalar))
            }
            b'"' | b'\'' => {
                let (scalar, after) = scalar::quoted(self.text, start, self.parent)?;
                let closing_end = self.line_end(after);
                let rest = skip_spaces(bytes, after, closing_end);
                if rest < closing_end && bytes[rest] == b':' && blank_or_end(bytes, rest + 1) {
                    // A key: on one line only.
                    if closing_end != end {
                        return Err(GaveUp);
                    }
                    return self.compact_mapping(start);
                }
                self.scalar_ends_line(after, closing_end)?;
                Ok(Node::Scalar(scalar))
            }
            b'[' | b'{' => {
                let empty = match &bytes[start..(start + 2).min(end)] {
                    b"[]" => Node::EmptySequence,
                    b"{}" => Node::EmptyMapping,
                    _ => return Err(GaveUp),
                };
                self.scalar_ends_line(start + 2, end)?;
                Ok(empty)
            }
            first if !lines::starts_plain(first, bytes.get(start + 1).copied()) => Err(GaveUp),
            _ => {
                let (value_end, is_key) = plain_end(bytes, start, end);
                if is_key {
                    return self.compact_mapping(start);
                }
                let plain = &self.text[start..value_end];
                if skip_spaces(bytes, value_end, end) < end {
                    // Ended by a comment: nothing below continues it.
                    self.pos = (end + 1).min(bytes.len());
                    return Ok(Node::Scalar(Scalar::Plain(plain)));
                }
                let (folded, next) = scalar::plain_continued(self.text, plain, end, self.parent)?;
                self.pos = next;
                Ok(Node::Scalar(match folded {
                    // Folded text holds a space or line break: always a string.
                    Some(folded) => Scalar::Text(std::borrow::Cow::Owned(folded)),
                    None => Scalar::Plain(plain),
                }))
            }
        }
    }

    /// `- key: value`: a mapping whose keys sit where this one starts.
    fn compact_mapping(&mut self, key: usize) -> Result<Node<'de>, GaveUp> {
        if self.holder != Holder::Sequence {
            // `key: other: value` is an error in YAML.
            return Err(GaveUp);
        }
        self.pos = key;
        Ok(Node::Mapping {
            indent: key - line_start(self.bytes(), key),
        })
    }

    /// After a one-line value only spaces and a comment may follow on its line (a comment
    /// needs a space before it).
    fn scalar_ends_line(&mut self, after: usize, end: usize) -> Result<(), GaveUp> {
        let bytes = self.bytes();
        let rest = skip_spaces(bytes, after, end);
        if rest < end && !(rest > after && bytes[rest] == b'#') {
            return Err(GaveUp);
        }
        self.pos = (end + 1).min(bytes.len());
        Ok(())
    }

    /// The value held on the lines from `from` (a line start): a block collection more
    /// indented than its holder, a sequence at the holding mapping's own indentation, or
    /// nothing.
    fn node_below(&mut self, from: usize) -> Node<'de> {
        let bytes = self.bytes();
        let Some((line, indent)) = next_line(bytes, from) else {
            self.pos = bytes.len();
            return Node::Null;
        };
        let dash = bytes[line + indent] == b'-' && blank_or_end(bytes, line + indent + 1);
        let deeper = indent as isize > self.parent;
        let same = indent as isize == self.parent;
        if dash && (deeper || same && self.holder == Holder::Mapping) {
            self.pos = line + indent;
            Node::Sequence { indent }
        } else if deeper {
            // Must be a key line: the mapping gives up on anything else.
            self.pos = line + indent;
            Node::Mapping { indent }
        } else {
            self.pos = line;
            Node::Null
        }
    }

    /// The key at `pos`, `pos` moved past its `:`.
    fn key(&mut self) -> Result<Scalar<'de>, GaveUp> {
        let bytes = self.bytes();
        let start = self.pos;
        let end = self.line_end(start);
        let key = match bytes[start] {
            b'"' | b'\'' => {
                let (key, after) = scalar::quoted(self.text, start, self.parent)?;
                if after > end {
                    return Err(GaveUp);
                }
                let colon = skip_spaces(bytes, after, end);
                if colon == end || bytes[colon] != b':' || !blank_or_end(bytes, colon + 1) {
                    return Err(GaveUp);
                }
                self.pos = colon + 1;
                key
            }
            first if lines::starts_plain(first, bytes.get(start + 1).copied()) => {
                let (key_end, is_key) = plain_end(bytes, start, end);
                if !is_key {
                    return Err(GaveUp);
                }
                self.pos = skip_spaces(bytes, key_end, end) + 1;
                Scalar::Plain(&self.text[start..key_end])
            }
            _ => return Err(GaveUp),
        };
        // libyaml refuses implicit keys over 1024 characters.
        if self.pos - start > 1000 {
            return Err(GaveUp);
        }
        Ok(key)
    }
}

impl<'de> BlockYaml<'de> {
    /// Hands a node just read to `visitor`, as serde_yaml's `deserialize_any` would.
    fn visit<V: Visitor<'de>>(&mut self, node: Node<'de>, visitor: V) -> Result<V::Value, GaveUp> {
        match node {
            Node::Null => visitor.visit_unit(),
            Node::Mapping { indent } => visitor.visit_map(BlockMapping {
                de: self,
                indent,
                first: true,
            }),
            Node::Sequence { indent } => visitor.visit_seq(BlockSequence {
                de: self,
                indent,
                first: true,
            }),
            Node::EmptyMapping => visitor.visit_map(Empty),
            Node::EmptySequence => visitor.visit_seq(Empty),
            Node::Scalar(scalar) => scalar.visit_value(visitor),
        }
    }

    /// Moves to the next entry of a block collection whose entries sit at `indent`, past the
    /// first: false where the collection ends (the text ends, a line sits left of it, or a
    /// line at its indentation that `is_entry` rejects); a line right of it gives up.
    fn next_entry(
        &mut self,
        indent: usize,
        is_entry: impl Fn(&[u8], usize) -> bool,
    ) -> Result<bool, GaveUp> {
        let Some((line, at)) = next_line(self.bytes(), self.pos) else {
            self.pos = self.text.len();
            return Ok(false);
        };
        if at < indent || at == indent && !is_entry(self.bytes(), line + at) {
            self.pos = line;
            return Ok(false);
        }
        if at > indent {
            return Err(GaveUp);
        }
        self.pos = line + at;
        Ok(true)
    }
}

impl<'de> de::Deserializer<'de> for &mut BlockYaml<'de> {
    type Error = GaveUp;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, GaveUp> {
        let node = self.node()?;
        self.visit(node, visitor)
    }

    /// Skipped: read (so malformed text still gives up) but scalars are not resolved.
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, GaveUp> {
        match self.node()? {
            Node::Scalar(_) => visitor.visit_unit(),
            node => self.visit(node, visitor),
        }
    }

    gave_up_on! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_f32
        deserialize_f64 deserialize_char deserialize_str deserialize_string deserialize_bytes
        deserialize_byte_buf deserialize_option deserialize_unit deserialize_seq deserialize_map
        deserialize_identifier
    }
}

struct BlockMapping<'a, 'de> {
    de: &'a mut BlockYaml<'de>,
    indent: usize,
    first: bool,
}

impl<'de> MapAccess<'de> for BlockMapping<'_, 'de> {
    type Error = GaveUp;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, GaveUp> {
        let de = &mut *self.de;
        if !self.first && !de.next_entry(self.indent, |_, _| true)? {
            return Ok(None);
        }
        self.first = false;
        let key = de.key()?;
        seed.deserialize(scalar::Key(key)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, GaveUp> {
        self.de.holder = Holder::Mapping;
        self.de.parent = self.indent as isize;
        seed.deserialize(&mut *self.de)
    }
}

struct BlockSequence<'a, 'de> {
    de: &'a mut BlockYaml<'de>,
    indent: usize,
    first: bool,
}

impl<'de> SeqAccess<'de> for BlockSequence<'_, 'de> {
    type Error = GaveUp;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, GaveUp> {
        let de = &mut *self.de;
        // A key at the same indentation ends a sequence held by a mapping there; any other
        // holder sees the line as misplaced and gives up.
        let dash = |bytes: &[u8], at: usize| bytes[at] == b'-' && blank_or_end(bytes, at + 1);
        if !self.first && !de.next_entry(self.indent, dash)? {
            return Ok(None);
        }
        self.first = false;
        // Past the dash.
        de.pos += 1;
        de.holder = Holder::Sequence;
        de.parent = self.indent as isize;
        seed.deserialize(&mut *de).map(Some)
    }
}

/// `{}` and `[]`.
struct Empty;

impl<'de> MapAccess<'de> for Empty {
    type Error = GaveUp;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, _: K) -> Result<Option<K::Value>, GaveUp> {
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, _: V) -> Result<V::Value, GaveUp> {
        Err(GaveUp)
    }
}

impl<'de> SeqAccess<'de> for Empty {
    type Error = GaveUp;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        _: T,
    ) -> Result<Option<T::Value>, GaveUp> {
        Ok(None)
    }
}

/// Reads one document with `seed` (the document must hold nothing after its value).
pub fn read_document<'de, S: DeserializeSeed<'de>>(
    text: &'de str,
    seed: S,
) -> Result<S::Value, GaveUp> {
    let mut reader = BlockYaml::document(text)?;
    let value = seed.deserialize(&mut reader)?;
    reader.end()?;
    Ok(value)
}

/// Reads one element of a block sequence held at the left edge, its text starting at its
/// `-` (and holding nothing after its value), with `seed`.
pub fn read_entry<'de, S: DeserializeSeed<'de>>(
    text: &'de str,
    seed: S,
) -> Result<S::Value, GaveUp> {
    let mut reader = BlockYaml::document(text)?;
    if !text.starts_with('-') {
        return Err(GaveUp);
    }
    reader.pos = 1;
    reader.holder = Holder::Sequence;
    reader.parent = 0;
    let value = seed.deserialize(&mut reader)?;
    reader.end()?;
    Ok(value)
}
