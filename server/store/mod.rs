//! Postgres: current state of every object, the history of state transitions, clusters and
//! their freshness, the roll-ups the pages read, and the alerts, their outbox and silences. Helpers take `&mut PgConnection` so they
//! compose inside one transaction.
//!
//! Every query is a `sqlx::query!`-family macro, checked at compile time against `.sqlx/`
//! (`scripts/sqlx-prepare` rewrites it). The macros expect `&[String]` for a `text[]`
//! parameter: a column of borrowed text is passed as `column as Vec<&str>`, which skips that
//! one check (Postgres still checks the type).

pub mod audit;
mod clusters;
mod crossstack;
mod decode;
mod delivery;
mod graph;
mod incident_history;
pub mod leases;
mod objects;
mod progress;
mod reads;
pub mod retention;
mod rollups;
pub mod sign_ins;
mod suggestions;
mod verdict;
mod warnings;
pub mod web_sessions;

pub use audit::{AuditEvent, NewAuditEvent};
pub use clusters::{ClusterRow, upsert_clusters};
pub use crossstack::{DependencyRow, record_crd_providers, replace_dependencies};
pub use decode::BadStoredValue;
pub(crate) use decode::Stored;
pub use delivery::{
    ClusterDurations, DURATIONS_KEPT, OutageRow, RolloutRow, SeededHistory, VersionSummary,
    is_outage, version_in_flight,
};
pub use graph::Linked;
pub use incident_history::{ProblemEntries, ResolvedRow};
pub use objects::{ChangeSet, JsonText, ObjectKey, ObjectRow, TransitionRow, write_changes};
pub use progress::{SightingChanges, write_seen_in_progress};
pub(crate) use reads::typed;
pub use reads::{ObjectFilter, ObjectPage, ObjectRecord, TransitionRecord, key_of_id};
pub use rollups::{
    DomainRow, ROLLUPS_CHANNEL, RollupWrite, RootCauseRow, RowChanges, replace_rollups,
    write_rollups,
};
pub use suggestions::SuggestedDomain;
pub use verdict::ObjectVerdict;
pub use warnings::{KEPT_PER_OBJECT, delete_warnings_before, write_warnings};

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions, Connection, PgConnection, PgPool};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;
use tokio::sync::Semaphore;

/// Most connections the pool opens; `/readyz` never adds to them.
const MAX_CONNECTIONS: u32 = 8;
/// Longest any statement may run (set on every pooled connection): a runaway query ends with
/// an error instead of holding a connection. Migrations lift it for their own connection.
const STATEMENT_TIMEOUT: &str = "30s";

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("DATABASE_URL is not a valid Postgres URL: {0}")]
    BadUrl(String),
    #[error("cannot reach the database at {target}: {reason}")]
    Unreachable { target: String, reason: String },
    #[error("database migration failed: {0}")]
    Migrate(String),
    #[error("database error: {0}")]
    Query(#[from] sqlx::Error),
}

/// The shared pool; cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    pool: PgPool,
    /// One direct connection at a time may ask the server why the pool has none.
    diagnosis: Arc<Semaphore>,
    /// Why the collector's latest round write failed, while it has not succeeded since.
    failing_writes: Arc<std::sync::Mutex<Option<String>>>,
}

impl Store {
    /// Connects, naming host and database (never the password) when it cannot.
    pub async fn connect(url: &str) -> Result<Store, StoreError> {
        let options = PgConnectOptions::from_str(url)
            .map_err(|e| StoreError::BadUrl(redact_url_error(&e.to_string(), url)))?
            .log_statements(tracing::log::LevelFilter::Trace)
            .options([("statement_timeout", STATEMENT_TIMEOUT)]);
        let target = format!(
            "{}:{}/{}",
            options.get_host(),
            options.get_port(),
            options.get_database().unwrap_or("postgres")
        );
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .acquire_timeout(Duration::from_secs(5))
            .connect_with(options)
            .await
            .map_err(|e| StoreError::Unreachable {
                target,
                reason: short_reason(&e),
            })?;
        Ok(Store::from_pool(pool))
    }

    pub fn from_pool(pool: PgPool) -> Store {
        Store {
            pool,
            diagnosis: Arc::new(Semaphore::new(1)),
            failing_writes: Arc::default(),
        }
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Applies the migrations on one connection without the statement timeout (an index on
    /// a big table may take longer).
    pub async fn migrate(&self) -> Result<(), StoreError> {
        let failed = |e: sqlx::Error| StoreError::Migrate(e.to_string());
        let mut conn = self.pool.acquire().await.map_err(failed)?;
        sqlx::query!("SET statement_timeout = 0")
            .execute(&mut *conn)
            .await
            .map_err(failed)?;
        let migrated = sqlx::migrate!("./migrations")
            .run(&mut *conn)
            .await
            .map_err(|e| StoreError::Migrate(e.to_string()));
        let _ = sqlx::query!("RESET statement_timeout")
            .execute(&mut *conn)
            .await;
        migrated
    }

    /// Whether the database answers a trivial query within `within` (twice that at worst);
    /// when not, why in a few words. A pool timeout alone hides the reason ("remaining
    /// connection slots are reserved…", "Connection refused"), so when the pool is below its
    /// maximum, one direct connection at a time asks the server: the total never exceeds the
    /// pool's maximum, however many probes arrive (it used to open one per probe).
    pub async fn check(&self, within: Duration) -> Result<(), String> {
        // A database that answers but refuses writes (a standby, or read-only by setting)
        // is not one to serve from: nothing the collectors see would be kept.
        let query = sqlx::query_scalar!(
            r#"SELECT current_setting('transaction_read_only') = 'on' AS "read_only!""#
        )
        .fetch_one(&self.pool);
        match tokio::time::timeout(within, query).await {
            Ok(Ok(true)) => return Err("the database is read-only: writes fail".to_string()),
            Ok(Ok(false)) => return self.writes_succeeding(),
            Ok(Err(sqlx::Error::PoolTimedOut)) | Err(_) => {}
            Ok(Err(error)) => return Err(short_reason(&error)),
        }
        if self.pool.size() >= self.pool.options().get_max_connections() {
            return Err("no pooled connection free in time".to_string());
        }
        let Ok(_one_at_a_time) = self.diagnosis.try_acquire() else {
            return Err("cannot connect (another probe is asking why)".to_string());
        };
        let options = self.pool.connect_options();
        match tokio::time::timeout(within, PgConnection::connect_with(&options)).await {
            Ok(Ok(_)) => Err("no pooled connection free in time".to_string()),
            Ok(Err(error)) => Err(short_reason(&error)),
            Err(_) => Err(format!("no answer within {} ms", within.as_millis())),
        }
    }
}

impl Store {
    /// Records how the collector's latest round write went: while writes fail, the readiness
    /// probe says so (the database may answer reads and refuse every write).
    pub fn record_write(&self, outcome: Result<(), &sqlx::Error>) {
        *self.failing_writes.lock().expect("not poisoned") = outcome.err().map(short_reason);
    }

    fn writes_succeeding(&self) -> Result<(), String> {
        match &*self.failing_writes.lock().expect("not poisoned") {
            Some(reason) => Err(format!("the latest round's write failed: {reason}")),
            None => Ok(()),
        }
    }
}

fn short_reason(error: &sqlx::Error) -> String {
    match error {
        sqlx::Error::Io(io) => io.to_string(),
        sqlx::Error::PoolTimedOut => "timed out".to_string(),
        sqlx::Error::Database(db) => db.message().to_string(),
        other => other.to_string(),
    }
}

/// Parse errors may echo the URL; never let its password through.
fn redact_url_error(message: &str, url: &str) -> String {
    match url
        .split_once("://")
        .and_then(|(_, rest)| rest.split_once('@'))
    {
        Some((credentials, _)) if !credentials.is_empty() => {
            message.replace(credentials, "<redacted>")
        }
        _ => message.to_string(),
    }
}
