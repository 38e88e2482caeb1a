//! Shared test support: every test gets its own freshly migrated database on the real Postgres
//! that the test command started (`DATABASE_URL`).
#![allow(dead_code)] // each test binary uses a different part of this module

pub mod alerts;
pub mod collector;
pub mod dockerfile;
pub mod fault_proxy;
pub mod kubeconfig;
pub mod oidc_provider;
pub mod own_postgres;
pub mod player;
pub mod pod;
pub mod testbed;
pub mod web;

use fleetglass::store::Store;
use sqlx::Connection;
use std::sync::atomic::{AtomicUsize, Ordering};

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A new empty database, migrated. Panics with instructions when no Postgres is configured,
/// because these tests must not pass without a real database.
pub async fn fresh_store() -> Store {
    let store = Store::connect(&fresh_database_url().await)
        .await
        .expect("connect to test database");
    store.migrate().await.expect("migrate");
    store
}

/// The URL of a new, empty database on the test Postgres (for a `fleetglass` process).
pub async fn fresh_database_url() -> String {
    let url = std::env::var("DATABASE_URL")
        .expect("DATABASE_URL must point at a Postgres server (scripts/test starts one)");
    let name = format!(
        "fg_test_{}_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        chrono::Utc::now().timestamp_micros()
    );
    let mut admin = sqlx::PgConnection::connect(&url)
        .await
        .expect("connect to Postgres");
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut admin)
        .await
        .expect("create test database");
    with_database(&url, &name)
}

/// The same server URL with another database name.
pub fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let without_db = match base.rsplit_once('/') {
        Some((head, _)) if head.contains("://") && head.len() > head.find("://").unwrap() + 2 => {
            head
        }
        _ => base,
    };
    match query {
        Some(q) => format!("{without_db}/{database}?{q}"),
        None => format!("{without_db}/{database}"),
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port on loopback")
        .port()
}

/// `fleetglass serve --demo` as a process of its own, on a free port, its stderr in `log`;
/// killed when dropped.
pub struct DemoServer {
    pub child: std::process::Child,
    pub base: String,
}

impl DemoServer {
    pub fn start(database_url: &str, log: &std::path::Path) -> DemoServer {
        DemoServer::start_with(database_url, log, &[])
    }

    /// With more arguments for `serve` (`--config FILE`).
    pub fn start_with(database_url: &str, log: &std::path::Path, args: &[&str]) -> DemoServer {
        let args: Vec<&str> = ["--demo"].into_iter().chain(args.iter().copied()).collect();
        DemoServer::serve(database_url, log, &args, &[])
    }

    /// `serve` with exactly these arguments and environment variables (no demo unless asked).
    pub fn serve(
        database_url: &str,
        log: &std::path::Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> DemoServer {
        let port = free_port();
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_fleetglass"))
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .args(args)
            .envs(env.iter().copied())
            .env("DATABASE_URL", database_url)
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(log).expect("create the server log"))
            .spawn()
            .expect("start fleetglass serve");
        DemoServer {
            child,
            base: format!("http://127.0.0.1:{port}"),
        }
    }
}

impl DemoServer {
    /// `serve --demo` on a new database with `config` (YAML) as its config file, both it and
    /// the log in a temporary folder named after `name`; the database URL with it.
    pub async fn with_config(name: &str, config: &str) -> (DemoServer, String) {
        let database = fresh_database_url().await;
        let dir = std::env::temp_dir().join(format!("fg-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        let path = dir.join("config.yaml");
        std::fs::write(&path, config).expect("write the config");
        let server = DemoServer::start_with(
            &database,
            &dir.join("server.log"),
            &["--config", path.to_str().expect("a UTF-8 path")],
        );
        (server, database)
    }

    /// `host:port`, for raw connections.
    pub fn address(&self) -> String {
        self.base.trim_start_matches("http://").to_string()
    }
}

/// One `GET` on a fresh connection, `Connection: close`: the whole answer, head and body.
pub async fn raw_get(address: &str, path: &str) -> std::io::Result<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(address).await?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await?;
    Ok(answer)
}

/// A process's resident memory, in KiB.
pub fn resident_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

impl Drop for DemoServer {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

/// A config naming one cluster (no kubeconfig: for tests that feed the runner themselves).
pub fn one_cluster_config(name: &str) -> fleetglass::config::Config {
    fleetglass::config::Config {
        clusters: vec![fleetglass::config::ClusterConfig {
            name: name.into(),
            kubeconfig: None,
            context: None,
            in_cluster: false,
            labels: Default::default(),
        }],
        ..Default::default()
    }
}

/// Makes one database of the test Postgres refuse connections (cutting the open ones), as in
/// an outage of that database, or lets them in again. The server itself is untouched.
pub async fn set_database_outage(database: &str, down: bool) {
    let url = std::env::var("DATABASE_URL").expect("DATABASE_URL");
    let mut admin = sqlx::PgConnection::connect(&url)
        .await
        .expect("admin connection");
    let allow = if down { "false" } else { "true" };
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "ALTER DATABASE {database} ALLOW_CONNECTIONS {allow}"
    )))
    .execute(&mut admin)
    .await
    .unwrap();
    if down {
        sqlx::query!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1",
            database as &str,
        )
        .fetch_all(&mut admin)
        .await
        .unwrap();
    }
}

/// Polls `check` until it returns `Some` (its value is returned), or panics naming `what` once
/// `deadline` has passed. The one way tests wait for something to happen.
pub async fn eventually<T>(
    what: &str,
    deadline: std::time::Duration,
    mut check: impl AsyncFnMut() -> Option<T>,
) -> T {
    let start = std::time::Instant::now();
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            start.elapsed() < deadline,
            "timed out after {deadline:?} waiting for: {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
