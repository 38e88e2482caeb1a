//! Per-object work of a large input spread over the cores: one cluster's evaluation (a few
//! hundred objects, in the collector) stays on its thread; `fleetglass evaluate` on 100,000
//! objects does not.

use std::num::NonZero;
use std::sync::OnceLock;

/// Below this many items, starting threads costs more than it saves.
const WORTH_SPLITTING: usize = 10_000;

/// The cores this process may use, read once: the standard library reads the cgroup's quota
/// from /proc and /sys on every call, which was a tenth of the collector's CPU when each of a
/// thousand clusters' evaluations asked.
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, NonZero::get))
}

/// `f(0)`, `f(1)`, … `f(len - 1)`, in that order, computed on every core when `len` is large.
pub(super) fn map_indices<T: Send>(len: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    map_on(cores(), len, f)
}

/// [`map_indices`] on `threads` threads.
fn map_on<T: Send>(threads: usize, len: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
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

/// `(a(), b())`, the two on two cores when `len` items make each worth a thread: steps of one
/// large evaluation that read the same tables and not each other's results.
pub(super) fn join<A: Send, B: Send>(
    len: usize,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if len < WORTH_SPLITTING || cores() == 1 {
        return (a(), b());
    }
    std::thread::scope(|scope| {
        let other = scope.spawn(b);
        let first = a();
        let second = other
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (first, second)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_steps_give_each_its_own_result_large_or_small() {
        let cores = cores();
        let caller = std::thread::current().id();
        let on_caller = || std::thread::current().id() == caller;
        for len in [3, WORTH_SPLITTING] {
            let ((a, a_on_caller), (b, b_on_caller)) = join(
                len,
                || (len * 2, on_caller()),
                || (len.to_string(), on_caller()),
            );
            assert_eq!((a, b), (len * 2, len.to_string()));
            assert!(a_on_caller, "the first step runs on the caller's thread");
            let apart = len >= WORTH_SPLITTING && cores > 1;
            assert_eq!(b_on_caller, !apart, "{len} items on {cores} cores");
        }
    }

    /// Three threads as a larger machine would have them: each takes its own share, none twice.
    #[test]
    fn large_inputs_are_shared_among_the_threads_in_order() {
        let caller = std::thread::current().id();
        for (threads, len, shared) in [
            (3, 25_001, true),
            (2, WORTH_SPLITTING, true),
            (2, 9_999, false),
        ] {
            let mapped = map_on(threads, len, |i| (i, std::thread::current().id()));
            let order: Vec<usize> = mapped.iter().map(|&(i, _)| i).collect();
            assert_eq!(
                order,
                (0..len).collect::<Vec<_>>(),
                "{threads} threads, {len} items"
            );
            let apart = mapped
                .iter()
                .filter(|(_, thread)| *thread != caller)
                .count();
            let expected = if shared {
                len - len.div_ceil(threads)
            } else {
                0
            };
            assert_eq!(apart, expected, "{threads} threads, {len} items");
        }
    }

    #[test]
    fn large_and_small_inputs_map_in_order() {
        for len in [0, 1, WORTH_SPLITTING - 1, WORTH_SPLITTING, 25_001] {
            let mapped = map_indices(len, |i| i * 3);
            assert_eq!(mapped, (0..len).map(|i| i * 3).collect::<Vec<_>>(), "{len}");
        }
    }

    /// The collector re-evaluates a cluster when its `due` passes: a deadline found while
    /// assessing the last objects (another thread's share) must not be lost.
    #[test]
    fn a_large_evaluation_keeps_the_deadline_found_on_another_thread() {
        use crate::health::testkit::*;
        use crate::health::{Input, evaluate_timed};
        use crate::model::Object;
        let due = |values: &[serde_json::Value]| {
            let objects: Vec<Object> = values.iter().map(parse).collect();
            evaluate_timed(&Input {
                objects: &objects,
                clusters: &[],
                domains: &[],
                thresholds: &Default::default(),
                now: now(),
                seen_in_progress: &Default::default(),
            })
            .due
        };
        // The first is the Kustomization's source, assessed on the first thread.
        let repos: Vec<_> = std::iter::once("flux-system".to_string())
            .chain((1..WORTH_SPLITTING + 500).map(|i| format!("repo-{i}")))
            .map(|name| git_repository(&name, "main@sha1:abc"))
            .collect();
        let late = with_conditions(
            kustomization("late", &[]),
            vec![not_ready("Progressing", "applying", 5)],
        );
        assert_eq!(due(&repos), None, "ready sources alone are never due");
        let alone = due(&[repos[0].clone(), late.clone()]);
        assert!(alone.is_some(), "a Kustomization progressing for 5m is due");
        let mut all = repos;
        all.push(late);
        assert_eq!(due(&all), alone);
    }

    #[test]
    fn a_large_input_is_mapped_on_more_than_one_thread_when_there_are_cores() {
        let threads = map_indices(4 * WORTH_SPLITTING, |_| std::thread::current().id());
        let distinct: std::collections::HashSet<_> = threads.into_iter().collect();
        let available = std::thread::available_parallelism().map_or(1, NonZero::get);
        assert_eq!(distinct.len(), available, "every core the process may use");
    }
}
