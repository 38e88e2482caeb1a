//! Shared test support: every test gets its own freshly migrated database on the real Postgres
//! that the test command started (`DATABASE_URL`).
#![allow(dead_code)] // each test binary uses a different part of this module

pub mod collector;
pub mod testbed;

use fleetglass::store::Store;
use sqlx::Connection;
use std::sync::atomic::{AtomicUsize, Ordering};

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A new empty database, migrated. Panics with instructions when no Postgres is configured,
/// because these tests must not pass without a real database.
pub async fn fresh_store() -> Store {
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
    let store = Store::connect(&with_database(&url, &name))
        .await
        .expect("connect to test database");
    store.migrate().await.expect("migrate");
    store
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
