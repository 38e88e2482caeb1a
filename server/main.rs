//! The `fleetglass` binary; everything lives in the library.
#![forbid(unsafe_code)]

/// mimalloc instead of the system allocator: reading 100,000 objects makes millions of small
/// allocations on every core at once (see docs/PERFORMANCE-HISTORY.md §8). Its purge delay is set
/// before anything else runs (fleetglass_allocator::configure says why).
#[global_allocator]
static ALLOCATOR: fleetglass_allocator::MiMalloc = fleetglass_allocator::MiMalloc;

fn main() -> std::process::ExitCode {
    fleetglass_allocator::configure();
    fleetglass::cli::main()
}
