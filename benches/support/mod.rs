//! Shared by the benchmarks: `cargo bench` passes `--bench` and gets the full sizes; `cargo test`
//! (CI) runs each benchmark once at a small size, so the harness cannot rot without slowing CI.

/// True under `cargo bench`, false under `cargo test`.
pub fn full() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// The full size under `cargo bench`, the quick one under `cargo test`.
#[allow(dead_code)] // not every benchmark scales by a single number
pub fn size(full_size: usize, quick: usize) -> usize {
    if full() { full_size } else { quick }
}

/// p50, p99 and max in milliseconds.
#[allow(dead_code)] // for the benchmarks that sample latencies
pub fn percentiles(times: &mut [std::time::Duration]) -> [f64; 3] {
    times.sort();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    let n = times.len();
    [
        ms(times[n / 2]),
        ms(times[(n * 99 / 100).min(n - 1)]),
        ms(times[n - 1]),
    ]
}

/// The allocator the shipped binary uses (`server/main.rs`): the benchmarks run the product's
/// code in their own process, and with the system allocator they measured a different program
/// (glibc's malloc and the page faults of its trimming were a third of the growth bench's CPU).
#[global_allocator]
static ALLOCATOR: fleetglass_allocator::MiMalloc = fleetglass_allocator::MiMalloc;

/// Tunes the allocator as the shipped binary's `main` does; each benchmark's `main` calls it
/// first.
pub fn configure_allocator() {
    fleetglass_allocator::configure();
}

/// Returns the memory the allocator holds freed but not yet given back: mimalloc gives it
/// back some time after it was freed, on a later call, as a running collector's next round
/// does; a reading taken right after a tight loop would count the loop's temporaries.
#[allow(dead_code)] // for the benchmarks that read memory
pub fn settle_allocator() {
    fleetglass_allocator::settle();
}
