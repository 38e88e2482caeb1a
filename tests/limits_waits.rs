//! Thousands of long-poll waits against a real `fleetglass serve --demo` (the demo collector
//! evaluating in the same process): waits beyond `max_waits` answer 503 with Retry-After; the
//! waits do not poll Postgres (its transaction rate stays that of the collector), the database
//! never sees more connections than the pool's maximum (`/readyz` hammered meanwhile), pages
//! keep answering, and the server's memory is measured.

use crate::common;

use common::{DemoServer, raw_get as get, resident_kib};
use sqlx::Connection;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const WAITS: usize = 3_000;
const EXTRA: usize = 50;
/// The pool's maximum (server/store/mod.rs).
const POOL_MAX: i64 = 8;

/// Transactions committed in `database` so far, and its connections now.
async fn activity(admin: &mut sqlx::PgConnection, database: &str) -> (i64, i64) {
    let row = sqlx::query!(
        r#"SELECT xact_commit + xact_rollback AS "transactions!",
                (SELECT count(*) FROM pg_stat_activity WHERE datname = $1) AS "connections!"
         FROM pg_stat_database WHERE datname = $1"#,
        database as &str,
    )
    .fetch_one(admin)
    .await
    .unwrap();
    (row.transactions, row.connections)
}

async fn transactions_per_second(admin: &mut sqlx::PgConnection, database: &str) -> f64 {
    let (before, _) = activity(admin, database).await;
    let started = Instant::now();
    let until = started + Duration::from_secs(4);
    let mut most_connections = 0;
    while Instant::now() < until {
        let (_, connections) = activity(admin, database).await;
        most_connections = most_connections.max(connections);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (after, _) = activity(admin, database).await;
    assert!(
        most_connections <= POOL_MAX,
        "{most_connections} connections"
    );
    (after - before) as f64 / started.elapsed().as_secs_f64()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_waits_are_capped_woken_in_process_and_cheap() {
    let (server, url) = DemoServer::with_config(
        "waits",
        &format!(
            "web: {{limits: {{max_waits: {WAITS}, max_waits_per_client: {WAITS}, max_connections: 8000, max_connections_per_client: 8000}}}}
"
        ),
    )
    .await;
    let database = url.rsplit('/').next().unwrap().to_string();
    let address = server.address();
    let pid = server.child.id();
    let deadline = Instant::now() + Duration::from_secs(90);
    while !get(&address, "/api/v1/domains/gateway")
        .await
        .is_ok_and(|a| a.starts_with("HTTP/1.1 200") && a.contains("\"clusters\""))
    {
        assert!(Instant::now() < deadline, "the demo fleet was never served");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let admin_url = std::env::var("DATABASE_URL").unwrap();
    let mut admin = sqlx::PgConnection::connect(&admin_url).await.unwrap();
    let idle_rate = transactions_per_second(&mut admin, &database).await;
    let rss_before = resident_kib(pid);

    let wait = format!(
        "GET /api/v1/domains/gateway/wait?version=never-released&timeout=10m HTTP/1.1\r\nHost: {address}\r\n\r\n"
    );
    let mut waits = Vec::with_capacity(WAITS + EXTRA);
    for _ in 0..WAITS + EXTRA {
        let mut stream = TcpStream::connect(&address).await.unwrap();
        stream.write_all(wait.as_bytes()).await.unwrap();
        waits.push(stream);
    }
    // Every connection that answers within the window was turned away; the rest wait.
    let first_answers = futures::future::join_all(waits.iter_mut().map(|stream| async {
        let mut answer = vec![0u8; 2048];
        match tokio::time::timeout(Duration::from_secs(15), stream.read(&mut answer)).await {
            Ok(Ok(read)) => Some(String::from_utf8_lossy(&answer[..read]).into_owned()),
            _ => None,
        }
    }))
    .await;
    let refusals: Vec<&String> = first_answers.iter().flatten().collect();
    assert_eq!(
        refusals.len(),
        EXTRA,
        "only the waits beyond the cap answer at once"
    );
    for refusal in &refusals {
        assert!(refusal.starts_with("HTTP/1.1 503"), "{refusal}");
        assert!(
            refusal.to_lowercase().contains("retry-after: 5"),
            "{refusal}"
        );
        assert!(refusal.contains("max_waits"), "{refusal}");
    }
    let held = first_answers.iter().filter(|a| a.is_none()).count();
    assert_eq!(held, WAITS);

    let rss_waiting = resident_kib(pid);
    let readyz = (0..50).map(|_| get(&address, "/readyz"));
    let ready = futures::future::join_all(readyz).await;
    assert!(
        ready
            .iter()
            .all(|a| a.as_ref().is_ok_and(|a| a.starts_with("HTTP/1.1 200")))
    );
    let waiting_rate = transactions_per_second(&mut admin, &database).await;
    let mut page_times = Vec::new();
    for path in ["/", "/api/v1/fleet", "/problems", "/api/v1/domains/gateway"].repeat(5) {
        let asked = Instant::now();
        let answer = get(&address, path).await.unwrap();
        page_times.push(asked.elapsed());
        assert!(answer.starts_with("HTTP/1.1 200"), "{path}: {answer:.200}");
    }
    page_times.sort();
    // The collector writes every second or so; thousands of polling waits would add
    // thousands of transactions a second.
    assert!(
        waiting_rate < idle_rate * 3.0 + 50.0,
        "{waiting_rate:.0} transactions/s with {WAITS} waits, {idle_rate:.0}/s without"
    );
    drop(waits);
    println!(
        "{held} waits held, {EXTRA} more refused with 503 + Retry-After; Postgres {idle_rate:.0} transactions/s without waits, {waiting_rate:.0}/s with; connections never above {POOL_MAX}; RSS {} MiB before, {} MiB with the waits; pages p50 {:.1?}, max {:.1?}",
        rss_before / 1024,
        rss_waiting / 1024,
        page_times[page_times.len() / 2],
        page_times[page_times.len() - 1],
    );
}
