//! Prometheus metrics of the collector, kept in one process-wide registry and served as text
//! at `/metrics`. Labels are only cluster and kind (both bounded by the configuration), never
//! object names.

mod render;

pub use render::serve;

use crate::model::Kind;
use std::collections::BTreeMap;
use std::sync::{LazyLock, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Upper bounds (seconds) of the write-latency histogram buckets.
const WRITE_BUCKETS: [f64; 10] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

#[derive(Debug, Default, Clone)]
struct KindStats {
    watch_restarts: u64,
    events: u64,
    last_success: Option<Instant>,
    objects: u64,
}

#[derive(Debug, Default, Clone)]
struct WriteStats {
    batches: u64,
    failures: u64,
    rows: u64,
    /// Cumulative counts per bucket of `WRITE_BUCKETS`, as Prometheus histograms want.
    buckets: [u64; WRITE_BUCKETS.len()],
    seconds: f64,
}

#[derive(Debug, Default)]
struct Registry {
    kinds: BTreeMap<(String, Kind), KindStats>,
    clusters_held: BTreeMap<String, bool>,
    writes: WriteStats,
}

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(Mutex::default);

fn registry() -> MutexGuard<'static, Registry> {
    // A panic while holding the lock leaves plain counters behind; they are still usable.
    REGISTRY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn kind_stats<'r>(r: &'r mut Registry, cluster: &str, kind: Kind) -> &'r mut KindStats {
    r.kinds.entry((cluster.to_string(), kind)).or_default()
}

/// A watch of (cluster, kind) failed and will be restarted.
pub fn watch_restarted(cluster: &str, kind: Kind) {
    kind_stats(&mut registry(), cluster, kind).watch_restarts += 1;
}

/// A watch of (cluster, kind) delivered an event (or completed a list).
pub fn event_received(cluster: &str, kind: Kind) {
    let mut r = registry();
    let stats = kind_stats(&mut r, cluster, kind);
    stats.events += 1;
    stats.last_success = Some(Instant::now());
}

/// How many objects of each (cluster, kind) the fleet holds now.
pub fn set_objects_tracked(counts: &BTreeMap<(String, Kind), u64>) {
    let mut r = registry();
    for stats in r.kinds.values_mut() {
        stats.objects = 0;
    }
    for ((cluster, kind), count) in counts {
        kind_stats(&mut r, cluster, *kind).objects = *count;
    }
}

/// Whether this process holds the collector lease of a cluster.
pub fn set_cluster_held(cluster: &str, held: bool) {
    registry().clusters_held.insert(cluster.to_string(), held);
}

/// One database write of `rows` rows that took `elapsed`.
pub fn write_batch(rows: usize, elapsed: Duration, ok: bool) {
    let mut r = registry();
    let w = &mut r.writes;
    w.batches += 1;
    if !ok {
        w.failures += 1;
    }
    w.rows += rows as u64;
    let seconds = elapsed.as_secs_f64();
    w.seconds += seconds;
    for (bound, count) in WRITE_BUCKETS.iter().zip(w.buckets.iter_mut()) {
        if seconds <= *bound {
            *count += 1;
        }
    }
}
