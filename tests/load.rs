//! Load: a real `fleetglass serve --demo` (its demo collector ingesting all the while) under
//! concurrent requests to the pages and the API for a bounded time. No request may fail, the
//! collector must keep writing, and resident memory must not keep growing. Prints p50/p99 and
//! memory; `FLEETGLASS_LOAD_SECS` makes it a soak (`scripts/soak`).

use crate::common;

use common::eventually;
use std::time::{Duration, Instant};

const PATHS: [&str; 6] = [
    "/",
    "/problems",
    "/api/v1/fleet",
    "/api/v1/domains/gateway",
    "/api/v1/objects?state=failed&limit=50",
    "/clusters/prod-eu-1",
];
const WORKERS: usize = 8;

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the server runs");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.split_whitespace().next()?.parse().ok())
        .expect("VmRSS in /proc/<pid>/status")
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[derive(Default)]
struct Tally {
    latencies: Vec<Duration>,
    errors: Vec<String>,
}

async fn worker(client: reqwest::Client, base: String, until: Instant, offset: usize) -> Tally {
    let mut tally = Tally::default();
    let mut i = offset;
    while Instant::now() < until {
        let path = PATHS[i % PATHS.len()];
        i += 1;
        let started = Instant::now();
        match client.get(format!("{base}{path}")).send().await {
            Ok(response) if response.status() == 200 => match response.bytes().await {
                Ok(_) => tally.latencies.push(started.elapsed()),
                Err(error) => tally.errors.push(format!("{path}: body: {error}")),
            },
            Ok(response) => tally.errors.push(format!("{path}: {}", response.status())),
            Err(error) => tally.errors.push(format!("{path}: {error}")),
        }
    }
    tally
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_under_load_while_ingesting_has_no_errors_and_no_memory_growth() {
    let seconds: u64 = std::env::var("FLEETGLASS_LOAD_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12);
    let database = common::fresh_database_url().await;
    let log = std::env::temp_dir().join(format!("fg-load-{}.log", std::process::id()));
    let server = common::DemoServer::start(&database, &log);
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let store = fleetglass::store::Store::connect(&database).await.unwrap();
    eventually(
        "the demo fleet collected",
        Duration::from_secs(120),
        || async {
            let clusters = store.clusters().await.ok()?;
            (clusters.len() == 5 && clusters.iter().all(|c| c.last_good.is_some())).then_some(())
        },
    )
    .await;
    let pid = server.child.id();

    // A warm-up pass fills caches and pools, so growth is measured from a settled process.
    let warm = Instant::now() + Duration::from_secs(seconds.div_ceil(4));
    let warmed: Vec<Tally> = futures::future::join_all(
        (0..WORKERS).map(|w| worker(client.clone(), server.base.clone(), warm, w)),
    )
    .await;
    let warmed_errors: Vec<&String> = warmed.iter().flat_map(|t| &t.errors).collect();
    assert!(
        warmed_errors.is_empty(),
        "errors while warming up: {warmed_errors:?}"
    );
    let rss_start = rss_kib(pid);
    let ingest_start = chrono::Utc::now();

    let until = Instant::now() + Duration::from_secs(seconds);
    let sampler = tokio::spawn(async move {
        let mut samples = Vec::new();
        while Instant::now() < until {
            samples.push(rss_kib(pid));
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        samples
    });
    let started = Instant::now();
    let tallies: Vec<Tally> = futures::future::join_all(
        (0..WORKERS).map(|w| worker(client.clone(), server.base.clone(), until, w)),
    )
    .await;
    let elapsed = started.elapsed();
    let samples = sampler.await.unwrap();
    let rss_end = rss_kib(pid);

    let errors: Vec<String> = tallies.iter().flat_map(|t| t.errors.clone()).collect();
    let mut latencies: Vec<Duration> = tallies.into_iter().flat_map(|t| t.latencies).collect();
    latencies.sort_unstable();
    assert!(
        errors.is_empty(),
        "{} failed requests: {:?}",
        errors.len(),
        &errors[..errors.len().min(10)]
    );
    assert!(!latencies.is_empty(), "requests were made");
    // The collector kept writing during the load: every cluster was confirmed after it began.
    let clusters = store.clusters().await.unwrap();
    for cluster in &clusters {
        assert!(
            cluster.last_good.is_some_and(|at| at > ingest_start),
            "{} was not written during the load",
            cluster.name
        );
    }
    let rss_max = samples.iter().copied().max().unwrap_or(rss_end);
    println!(
        "load: {} requests in {:.1?} ({:.0}/s, {WORKERS} concurrent), 0 errors, p50 {:.1?}, p99 {:.1?}, max {:.1?}; RSS {} KiB after warm-up, {} KiB at the end, max {} KiB",
        latencies.len(),
        elapsed,
        latencies.len() as f64 / elapsed.as_secs_f64(),
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        latencies.last().unwrap(),
        rss_start,
        rss_end,
        rss_max
    );
    // Allocator noise stays well inside a quarter of the settled size; a leak per request
    // crosses it in a long enough run (`scripts/soak` runs this for ten minutes).
    assert!(
        rss_end <= rss_start + rss_start / 4,
        "resident memory grew from {rss_start} KiB to {rss_end} KiB under load"
    );
}
