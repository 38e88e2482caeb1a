//! Multi-document YAML cut, without parsing, at its `---` lines, block by block as it is read
//! or over a whole text in one go. Anything that could tie documents together or that the
//! single read might split otherwise (directives, `...`, a `---` line carrying more) stops the
//! cut ([`Unusual`]): the caller then reads the whole text in one go, for its errors.

use super::blocks::Unusual;
use std::ops::Range;

/// A document that holds something (not only blank lines and comments).
#[derive(Debug, PartialEq, Eq)]
pub struct Document {
    /// Counting only documents that hold something (`file#index`).
    pub index: usize,
    pub text: Range<usize>,
}

#[derive(Debug)]
pub struct YamlCut {
    /// Documents found so far that hold something.
    documents: usize,
    /// Where the next line to look at starts, from the front of the block's carried tail.
    line: usize,
    /// Documents from this size on stop the cut: they are left to a reader of the whole text.
    largest: usize,
}

impl YamlCut {
    /// A cut that stops at documents of `largest` bytes or more.
    pub fn new(largest: usize) -> Self {
        YamlCut {
            documents: 0,
            line: 0,
            largest,
        }
    }

    /// Adds the documents that end in `block` (whose front is the tail the block before left,
    /// the start of a document); at the input's `end`, its last bytes end one too. Returns
    /// where the unfinished document starts: the next block begins with it. Only whole lines
    /// are looked at, so a line cut by the block's end is looked at with the next block.
    pub fn cut(
        &mut self,
        block: &[u8],
        end: bool,
        pieces: &mut Vec<Document>,
    ) -> Result<usize, Unusual> {
        let mut start = 0;
        let mut line = self.line;
        let first = line;
        let line_ends = memchr::memchr_iter(b'\n', &block[first..]).map(move |at| first + at);
        let last_line = (end && line < block.len()).then_some(block.len());
        for line_end in line_ends.chain(last_line) {
            if is_marker(&block[line..])? {
                self.document(block, start..line, pieces)?;
                start = (line + 4).min(block.len());
            }
            line = line_end + 1;
        }
        if end {
            self.document(block, start..block.len(), pieces)?;
            start = block.len();
        }
        if block.len() - start >= self.largest {
            return Err(Unusual);
        }
        self.line = line.min(block.len()) - start;
        Ok(start)
    }

    fn document(
        &mut self,
        block: &[u8],
        text: Range<usize>,
        pieces: &mut Vec<Document>,
    ) -> Result<(), Unusual> {
        let bytes = &block[text.clone()];
        if !holds_something(bytes) {
            // Read by no one: its text must still be UTF-8, as the whole text's is.
            return std::str::from_utf8(bytes).map(|_| ()).map_err(|_| Unusual);
        }
        if text.len() >= self.largest {
            return Err(Unusual);
        }
        pieces.push(Document {
            index: self.documents,
            text,
        });
        self.documents += 1;
        Ok(())
    }
}

/// Whether a document holds more than blank lines and comments. Only spaces count as blank:
/// a document of tabs is numbered, then read as nothing, and the whole text is read instead.
fn holds_something(bytes: &[u8]) -> bool {
    bytes.split(|&b| b == b'\n').any(|line| {
        let content = line.iter().position(|&b| b != b' ');
        content.is_some_and(|at| line[at] != b'#')
    })
}

/// Whether the line at the front of `rest` is a plain `---` (a document starts after it);
/// Unusual for a line that would make the single read cut otherwise.
fn is_marker(rest: &[u8]) -> Result<bool, Unusual> {
    let marked = |mark: &[u8]| rest.starts_with(mark).then(|| rest.get(3).copied());
    if let Some(next) = marked(b"---") {
        return match next {
            None | Some(b'\n') => Ok(true),
            Some(b' ' | b'\t' | b'\r') => Err(Unusual),
            Some(_) => Ok(false),
        };
    }
    if let Some(None | Some(b'\n' | b' ' | b'\t' | b'\r')) = marked(b"...") {
        return Err(Unusual);
    }
    if rest.first() == Some(&b'%') {
        return Err(Unusual);
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documents of `text` fed in blocks of `size` bytes, each block starting with the
    /// tail the one before left: their index and text.
    fn cut(text: &str, size: usize, largest: usize) -> Result<Vec<(usize, String)>, Unusual> {
        let mut yaml = YamlCut::new(largest);
        let (mut block, mut documents) = (Vec::new(), Vec::new());
        let mut chunks = text.as_bytes().chunks(size);
        loop {
            let chunk = chunks.next();
            block.extend_from_slice(chunk.unwrap_or_default());
            let mut found = Vec::new();
            let tail = yaml.cut(&block, chunk.is_none(), &mut found)?;
            documents.extend(found.into_iter().map(|d| {
                let text = String::from_utf8(block[d.text].to_vec()).unwrap();
                (d.index, text)
            }));
            block.drain(..tail);
            if chunk.is_none() {
                return Ok(documents);
            }
        }
    }

    #[test]
    fn cuts_at_plain_marker_lines_in_blocks_of_any_size() {
        let text = "a: 1\n---\n---\n\n# only a comment\n---\nb: 2\n----: 3\nc: '---'\n--- \n";
        let text = &text[..text.len() - 5];
        let expected = vec![
            (0, "a: 1\n".to_string()),
            (1, "b: 2\n----: 3\nc: '---'\n".to_string()),
        ];
        for size in [1, 2, 3, 4, 5, 7, 16, text.len()] {
            assert_eq!(
                cut(text, size, usize::MAX),
                Ok(expected.clone()),
                "blocks of {size}"
            );
        }
        let marked_first = "\n---\nkind: Pod\n---";
        for size in [1, 3, 64] {
            assert_eq!(
                cut(marked_first, size, usize::MAX),
                Ok(vec![(0, "kind: Pod\n".to_string())])
            );
        }
    }

    #[test]
    fn what_may_tie_documents_together_stops_the_cut() {
        for text in [
            "%YAML 1.1\n---\na: 1\n",
            "a: 1\n...\n---\nb: 1\n",
            "a: 1\n...",
            "a: 1\n--- # comment\nb: 1\n",
            "a: 1\n---\r\nb: 1\n",
            "a: 1\n--- !tag\nb: 1\n",
        ] {
            for size in [1, 4, 64] {
                assert_eq!(cut(text, size, usize::MAX), Err(Unusual), "{text:?}");
            }
        }
    }

    #[test]
    fn a_large_document_or_text_that_is_not_utf8_stops_the_cut() {
        let text = "a: 1\n---\nb: 22\n---\nc: 3\n";
        // Unfinished, a document holds the marker line's bytes read so far (`b: 22\n---`).
        assert!(cut(text, 3, 10).is_ok(), "every document under 10 bytes");
        assert_eq!(cut(text, 3, 6), Err(Unusual), "b: 22 is 6 bytes");
        // Still unfinished at the end of a block (no marker yet) is too large as well.
        assert_eq!(cut("a: 1\nb: 2\nc: 3\n", 4, 8), Err(Unusual));
        let not_utf8 = b"a: 1\n---\n# \xff\n---\nb: 2\n";
        let mut yaml = YamlCut::new(usize::MAX);
        assert_eq!(yaml.cut(not_utf8, true, &mut Vec::new()), Err(Unusual));
    }
}
