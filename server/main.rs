//! The `fleetglass` binary; everything lives in the library.
#![forbid(unsafe_code)]

/// mimalloc instead of the system allocator: reading 100,000 objects makes millions of small
/// allocations on every core at once (see docs/PERFORMANCE.md §8).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    fleetglass::cli::main()
}
