//! A file read in blocks and cut ([`Cutter`]) on one thread while its pieces are read from
//! their slices on every core; what they hold is handed over in input order, as the single
//! read would hand it. A List's items are handed over as they are read, before its `kind`
//! (which `kubectl` prints after them) says it is one: a value that turns out not to be a List
//! takes them back ([`Sink::roll_back`]). Memory stays bounded by a few blocks in flight (plus
//! the objects read), never the whole file: on this machine every fresh page costs the kernel
//! a zeroing, so a 184 MB text read whole cost more than parsing it. Any piece that does not
//! read, or an input the cut finds unusual, gives up ([`Unusual`]): the caller then reads the
//! input in one go, for its errors.

use super::stream::Parsed;
use crate::model::{Object, Skip};
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::sync::{Mutex, PoisonError};

/// Bytes read at a time: large enough that a block holds hundreds of objects.
pub const BLOCK: usize = 4 << 20;

/// The input is not one the cut reads exactly as the single read does; the caller reads it in
/// one go instead, which gives today's errors and positions.
#[derive(Debug, PartialEq, Eq)]
pub struct Unusual;

/// One format's cut: finds, without parsing, the pieces of the input that read on their own.
pub trait Cutter: Send {
    type Piece: Send + Sync;

    /// Scans `block` (its first `from` bytes were scanned with the block before), adding the
    /// pieces that end in it; at the input's `end`, the block's last bytes end a piece too.
    /// Returns where the block's unfinished tail starts: the next block begins with it.
    fn block(
        &mut self,
        block: &[u8],
        from: usize,
        end: bool,
        pieces: &mut Vec<Self::Piece>,
    ) -> Result<usize, Unusual>;

    /// What `piece` of `block` holds, its places named after the file `name`; None when it
    /// does not read, or not as the single read would read it.
    fn read(piece: &Self::Piece, block: &[u8], name: &str, cluster: &str) -> Option<Held>;
}

/// What one piece held.
pub enum Held {
    /// An element of a top-level value's `items`.
    Item(Parsed),
    /// A top-level value: nothing when it is a List whose items were cut out (they are its
    /// objects), else its objects.
    Document(Parsed),
}

/// Where the objects read go, in input order.
pub trait Sink {
    /// What was added so far, to roll back to.
    type Mark;
    fn mark(&self) -> Self::Mark;
    fn add(&mut self, at: String, object: Result<Object, Skip>);
    /// Forgets what was added since `mark`.
    fn roll_back(&mut self, mark: Self::Mark);
}

/// A block and the pieces that end in it, numbered in input order.
struct Batch<P> {
    number: usize,
    bytes: Vec<u8>,
    pieces: Vec<P>,
}

/// What one batch held, or None when one of its pieces did not read.
type BatchRead = (usize, Option<Vec<Held>>);

/// Reads `input` (named `name`) `block` bytes at a time ([`BLOCK`]), cut by `cutter`, handing
/// each object or defect with where it was read (`file#0.items[3]`) to `sink` in input order,
/// reading pieces on `threads` threads.
pub fn read_in_blocks<C: Cutter>(
    input: impl Read + Send,
    (name, cluster): (&str, &str),
    (threads, block): (usize, usize),
    cutter: C,
    sink: &mut impl Sink,
) -> Result<(), Unusual> {
    let stop = AtomicBool::new(false);
    let (batches, to_read) = sync_channel::<Batch<C::Piece>>(threads);
    let to_read = Mutex::new(to_read);
    let (reads, read) = channel::<BatchRead>();
    let (spares, spare) = channel::<Vec<u8>>();
    std::thread::scope(|scope| {
        let cut = scope.spawn(|| cut(input, cutter, block, batches, spare, &stop));
        for _ in 0..threads.max(1) {
            let (reads, spares) = (reads.clone(), spares.clone());
            let (to_read, stop) = (&to_read, &stop);
            scope.spawn(move || {
                read_batches::<C>(to_read, (reads, spares), stop, name, cluster);
            });
        }
        drop(spares);
        drop(reads);
        let assembled = assemble(read, sink);
        if assembled.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        let cut = cut
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        assembled.and(cut)
    })
}

/// Reads blocks, each beginning with the unfinished tail of the one before, and sends each
/// with its pieces. A block's buffer, once read, comes back (`spare`) to hold a later one:
/// a fresh buffer of megabytes is fresh pages, which the system must zero one by one.
fn cut<C: Cutter>(
    mut input: impl Read,
    mut cutter: C,
    block: usize,
    batches: SyncSender<Batch<C::Piece>>,
    spare: Receiver<Vec<u8>>,
    stop: &AtomicBool,
) -> Result<(), Unusual> {
    let mut bytes = Vec::new();
    let mut scanned = 0;
    for number in 0.. {
        if stop.load(Ordering::Relaxed) {
            return Err(Unusual);
        }
        let end = fill(&mut input, &mut bytes, block).map_err(|_| Unusual)? == 0;
        let mut pieces = Vec::new();
        let tail = cutter.block(&bytes, scanned, end, &mut pieces)?;
        if end && pieces.is_empty() {
            break;
        }
        let mut next = spare.try_recv().unwrap_or_default();
        next.clear();
        next.extend_from_slice(&bytes[tail..]);
        scanned = next.len();
        let batch = Batch {
            number,
            bytes: std::mem::replace(&mut bytes, next),
            pieces,
        };
        if batches.send(batch).is_err() {
            return Err(Unusual);
        }
        if end {
            break;
        }
    }
    Ok(())
}

/// Appends up to `wanted` bytes from `input`; fewer only at its end.
fn fill(input: &mut impl Read, bytes: &mut Vec<u8>, wanted: usize) -> std::io::Result<usize> {
    let before = bytes.len();
    bytes.reserve(wanted);
    input.by_ref().take(wanted as u64).read_to_end(bytes)?;
    Ok(bytes.len() - before)
}

/// Reads batches until there are none left; once stopped, drains them unread (so the cutter
/// never waits on a full channel).
fn read_batches<C: Cutter>(
    to_read: &Mutex<Receiver<Batch<C::Piece>>>,
    (reads, spares): (Sender<BatchRead>, Sender<Vec<u8>>),
    stop: &AtomicBool,
    name: &str,
    cluster: &str,
) {
    loop {
        let batch = to_read
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recv();
        let Ok(batch) = batch else { return };
        if stop.load(Ordering::Relaxed) {
            continue;
        }
        let held = batch
            .pieces
            .iter()
            .map(|piece| C::read(piece, &batch.bytes, name, cluster))
            .collect();
        if reads.send((batch.number, held)).is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        // Refused only once the cutter is done, when no buffer is needed any more.
        let _ = spares.send(batch.bytes);
    }
}

/// Hands what the batches held to `sink` in input order: a value's items as they come (taken
/// back if its frame says it is not a List), then the value's own object if it is not one (as
/// the single read decides after the value).
fn assemble<S: Sink>(read: Receiver<BatchRead>, sink: &mut S) -> Result<(), Unusual> {
    let mut early = BTreeMap::new();
    let mut next = 0;
    // Taken before the first item of a value: most values have none.
    let mut items_from = None;
    for (number, batch) in read {
        early.insert(number, batch.ok_or(Unusual)?);
        while let Some(batch) = early.remove(&next) {
            next += 1;
            for held in batch {
                match held {
                    Held::Item(parsed) => {
                        items_from.get_or_insert_with(|| sink.mark());
                        parsed
                            .into_iter()
                            .for_each(|(at, object)| sink.add(at, object));
                    }
                    Held::Document(parsed) => {
                        if let Some(mark) = items_from.take()
                            && !parsed.is_empty()
                        {
                            sink.roll_back(mark);
                        }
                        parsed
                            .into_iter()
                            .for_each(|(at, object)| sink.add(at, object));
                    }
                }
            }
        }
    }
    Ok(())
}
