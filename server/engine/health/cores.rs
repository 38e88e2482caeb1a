//! Per-object work of a large input spread over the cores: one cluster's evaluation (a few
//! hundred objects, in the collector) stays on its thread; `fleetglass evaluate` on 100,000
//! objects does not.

use std::num::NonZero;

/// Below this many items, starting threads costs more than it saves.
const WORTH_SPLITTING: usize = 10_000;

/// `f(0)`, `f(1)`, … `f(len - 1)`, in that order, computed on every core when `len` is large.
pub(super) fn map_indices<T: Send>(len: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = std::thread::available_parallelism().map_or(1, NonZero::get);
    if len < WORTH_SPLITTING || threads == 1 {
        return (0..len).map(f).collect();
    }
    let chunk = len.div_ceil(threads);
    let f = &f;
    std::thread::scope(|scope| {
        let others: Vec<_> = (chunk..len)
            .step_by(chunk)
            .map(|start| scope.spawn(move || (start..len.min(start + chunk)).map(f).collect()))
            .collect();
        let mut all: Vec<T> = Vec::with_capacity(len);
        all.extend((0..chunk).map(f));
        for other in others {
            let part: Vec<T> = other
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            all.extend(part);
        }
        all
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_and_small_inputs_map_in_order() {
        for len in [0, 1, WORTH_SPLITTING - 1, WORTH_SPLITTING, 25_001] {
            let mapped = map_indices(len, |i| i * 3);
            assert_eq!(mapped, (0..len).map(|i| i * 3).collect::<Vec<_>>(), "{len}");
        }
    }

    #[test]
    fn a_large_input_is_mapped_on_more_than_one_thread_when_there_are_cores() {
        let threads = map_indices(4 * WORTH_SPLITTING, |_| std::thread::current().id());
        let distinct: std::collections::HashSet<_> = threads.into_iter().collect();
        let cores = std::thread::available_parallelism().map_or(1, NonZero::get);
        assert_eq!(distinct.len(), cores);
    }
}
