//! The allocator fleetglass ships, mimalloc, and the one option it changes. Calling into
//! mimalloc's C API is `unsafe`; this small crate holds those calls so that the server and
//! the engine keep `#![forbid(unsafe_code)]`.
//!
//! The option: mimalloc gives freed memory back to the OS after `purge_delay` milliseconds
//! (1,000 by default in mimalloc 3). Its arenas purge everything freed once that delay has
//! run from the first free of a cycle, so memory freed a moment ago goes too. A collector
//! round frees the previous round's evaluations (hundreds of MiB at 1,000 clusters) and
//! allocates as much again for the next, a few hundred milliseconds later. With the default
//! those pages went back to the OS between rounds and the kernel zeroed them again on the next
//! touch: a quarter of the growth bench's CPU in `perf`, about 140,000 page faults per run
//! (docs/PERFORMANCE-HISTORY.md §9.20). Ten seconds keeps them between rounds; memory freed after
//! a burst still goes back to the OS about ten seconds later.
#![deny(unsafe_code)]

pub use mimalloc::MiMalloc;
use std::os::raw::c_long;

/// How long freed memory stays with the allocator before it goes back to the OS.
pub const PURGE_DELAY_MS: c_long = 10_000;

/// Set in the environment, it wins over [`PURGE_DELAY_MS`] (mimalloc reads it itself).
pub const PURGE_DELAY_VARIABLE: &str = "MIMALLOC_PURGE_DELAY";

/// `mi_option_purge_delay` in mimalloc's `mi_option_e` (v3 `include/mimalloc.h`), which
/// libmimalloc-sys does not name; the test below checks it against mimalloc's default.
const OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Sets the purge delay, unless the environment sets it. Call it first thing in `main`, before
/// the work starts: mimalloc's option setters are not synchronised with its allocations.
pub fn configure() {
    if std::env::var_os(PURGE_DELAY_VARIABLE).is_none() {
        set_purge_delay(PURGE_DELAY_MS);
    }
}

fn set_purge_delay(milliseconds: c_long) {
    #[allow(unsafe_code)]
    // SAFETY: sets one of mimalloc's options by its index; no pointer is passed. `configure`'s
    // callers run it before starting any other thread, as mimalloc asks.
    unsafe {
        libmimalloc_sys::mi_option_set(OPTION_PURGE_DELAY, milliseconds)
    }
}

/// Gives back to the OS what mimalloc holds freed but not yet purged, whatever the delay: the
/// benchmarks call it before reading the process's resident memory, so a reading counts what
/// is held, not the last loop's temporaries.
pub fn settle() {
    #[allow(unsafe_code)]
    // SAFETY: `mi_collect` only frees what mimalloc itself holds unused; no pointer is passed.
    unsafe {
        libmimalloc_sys::mi_collect(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// mimalloc 3's own default (`options.c`): if the index named another option, this would
    /// read that option's value instead.
    const MIMALLOC_DEFAULT_PURGE_DELAY_MS: c_long = 1_000;

    /// The purge delay mimalloc uses now, in milliseconds.
    fn purge_delay_ms() -> c_long {
        #[allow(unsafe_code)]
        // SAFETY: reads one of mimalloc's options by its index; no pointer is passed.
        unsafe {
            libmimalloc_sys::mi_option_get(OPTION_PURGE_DELAY)
        }
    }

    #[test]
    fn configure_sets_the_purge_delay_mimalloc_reads() {
        assert!(
            std::env::var_os(PURGE_DELAY_VARIABLE).is_none(),
            "run without {PURGE_DELAY_VARIABLE} set"
        );
        assert_eq!(purge_delay_ms(), MIMALLOC_DEFAULT_PURGE_DELAY_MS);
        configure();
        assert_eq!(purge_delay_ms(), PURGE_DELAY_MS);
    }
}
