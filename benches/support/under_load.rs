//! Serving under load: the real `fleetglass serve --role web` (the binary built with the
//! benches) over an already seeded database, `wrk` against each endpoint while a simulated
//! fleet's runner writes its changes into the same database.

use super::simulated::SimulatedFleet;
use fleetglass::store::Store;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// Clusters of the simulated fleet whose ingest runs during the load (201 objects each);
/// every round flips all its apps.
fn ingest_clusters() -> usize {
    crate::support::size(10, 1)
}

/// What `wrk --latency` reported for one endpoint.
struct Load {
    p50_ms: f64,
    p99_ms: f64,
    requests_per_second: f64,
}

/// Runs the load: `seconds` of wrk per endpoint and connection count, ingest throughout.
pub async fn measure(
    store: &Store,
    database_url: &str,
    config_yaml: &str,
    uris: &[&str],
    seconds: u64,
) {
    let (_server, address) = serve(database_url, config_yaml).await;
    let wrk = Command::new("wrk").arg("--version").output().await.is_ok();
    let fleet = SimulatedFleet::load(store.clone(), "ingest", ingest_clusters()).await;
    let stop = Arc::new(AtomicBool::new(false));
    let ingest = tokio::spawn(ingest(fleet, stop.clone()));
    println!(
        "under load: fleetglass serve --role web at {address}; ingest of {} simulated clusters writing into the same database",
        ingest_clusters()
    );
    println!(
        "{:<44} {:>5} {:>9} {:>9} {:>10}",
        "endpoint (wrk)", "conns", "p50 ms", "p99 ms", "requests/s"
    );
    for uri in uris {
        let url = format!("http://{address}{uri}");
        if !wrk {
            // CI has no wrk: one request proves the server answers; no figures.
            let status = reqwest::get(&url).await.expect("GET").status();
            assert!(status.is_success(), "{url}: {status}");
            println!("{uri:<44} skipped: wrk not installed (scripts/bench installs it)");
            continue;
        }
        for connections in [1, 8] {
            let load = run_wrk(&url, connections, seconds).await;
            println!(
                "{uri:<44} {connections:>5} {:>9.2} {:>9.2} {:>10.0}",
                load.p50_ms, load.p99_ms, load.requests_per_second
            );
        }
    }
    stop.store(true, Ordering::Relaxed);
    let (changes, elapsed) = ingest.await.expect("ingest task");
    println!(
        "ingest during the load: {changes} changes in {:.1}s = {:.0} changes/s",
        elapsed.as_secs_f64(),
        changes as f64 / elapsed.as_secs_f64()
    );
}

/// Starts the server on a free port; returns it with the address it printed.
async fn serve(database_url: &str, config_yaml: &str) -> (Child, String) {
    let config =
        std::env::temp_dir().join(format!("fleetglass-web-bench-{}.yaml", std::process::id()));
    std::fs::write(&config, config_yaml).expect("write config");
    let mut server = Command::new(env!("CARGO_BIN_EXE_fleetglass"))
        .args([
            "serve",
            "--role",
            "web",
            "--listen",
            "127.0.0.1:0",
            "--config",
        ])
        .arg(&config)
        .env("DATABASE_URL", database_url)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start fleetglass serve");
    let mut lines = BufReader::new(server.stdout.take().expect("stdout")).lines();
    while let Some(line) = lines.next_line().await.expect("read server output") {
        if let Some(url) = line.strip_prefix("fleetglass is serving on http://") {
            let _ = std::fs::remove_file(&config);
            return (server, url.trim_end_matches('/').to_string());
        }
    }
    panic!("fleetglass serve exited before serving");
}

/// Ingest rounds until told to stop; returns the changes written and the time taken.
async fn ingest(mut fleet: SimulatedFleet, stop: Arc<AtomicBool>) -> (usize, Duration) {
    let all = fleet.apps();
    let started = Instant::now();
    let mut changes = 0;
    while !stop.load(Ordering::Relaxed) {
        changes += fleet.round(all).await;
    }
    fleet.flush().await;
    (changes, started.elapsed())
}

async fn run_wrk(url: &str, connections: usize, seconds: u64) -> Load {
    let output = Command::new("wrk")
        .args(["--latency", "-t1"])
        .arg(format!("-c{connections}"))
        .arg(format!("-d{seconds}s"))
        .arg(url)
        .output()
        .await
        .expect("run wrk");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && !text.contains("Non-2xx"),
        "wrk {url}: {text}"
    );
    let field = |label: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(label))
            .map(str::trim)
            .unwrap_or_else(|| panic!("no {label} in wrk output: {text}"))
    };
    Load {
        p50_ms: milliseconds(field("50%")),
        p99_ms: milliseconds(field("99%")),
        requests_per_second: field("Requests/sec:").parse().expect("requests/s"),
    }
}

/// wrk prints latencies as `812.00us`, `3.41ms` or `1.02s`.
fn milliseconds(text: &str) -> f64 {
    let (number, scale) = if let Some(n) = text.strip_suffix("us") {
        (n, 1e-3)
    } else if let Some(n) = text.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1e3)
    } else {
        (text, 1.0)
    };
    number.parse::<f64>().expect("wrk latency") * scale
}
