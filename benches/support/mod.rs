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

/// Runs an async benchmark as the binary runs: the allocator tuned first, before the runtime
/// starts its threads (mimalloc's option setters are not synchronised with allocations).
#[allow(dead_code)] // for the async benchmarks
pub fn run_async<F: std::future::Future>(bench: F) -> F::Output {
    fleetglass_allocator::configure();
    tokio::runtime::Runtime::new()
        .expect("tokio runtime")
        .block_on(bench)
}
