//! Postgres: current state of every object, the history of state transitions, clusters and
//! their freshness, and the roll-ups the pages read. Helpers take `&mut PgConnection` so they
//! compose inside one transaction.

mod clusters;
mod crossstack;
pub mod leases;
mod objects;
mod reads;
pub mod retention;
mod rollups;
mod suggestions;

pub use clusters::{ClusterRow, upsert_clusters};
pub use crossstack::{DependencyRow, record_crd_providers, replace_dependencies};
pub use objects::{ChangeSet, ObjectKey, ObjectRow, TransitionRow, write_changes};
pub use reads::{ObjectFilter, ObjectPage, ObjectRecord, TransitionRecord, key_of_id};
pub use rollups::{DomainRow, RootCauseRow, replace_rollups};
pub use suggestions::SuggestedDomain;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions, Connection, PgConnection, PgPool};
use std::str::FromStr;
use std::time::Duration;
use thiserror::Error;

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
}

impl Store {
    /// Connects, naming host and database (never the password) when it cannot.
    pub async fn connect(url: &str) -> Result<Store, StoreError> {
        let options = PgConnectOptions::from_str(url)
            .map_err(|e| StoreError::BadUrl(redact_url_error(&e.to_string(), url)))?
            .log_statements(tracing::log::LevelFilter::Trace);
        let target = format!(
            "{}:{}/{}",
            options.get_host(),
            options.get_port(),
            options.get_database().unwrap_or("postgres")
        );
        let pool = PgPoolOptions::new()
            .max_connections(8)
            .acquire_timeout(Duration::from_secs(5))
            .connect_with(options)
            .await
            .map_err(|e| StoreError::Unreachable {
                target,
                reason: short_reason(&e),
            })?;
        Ok(Store { pool })
    }

    pub fn from_pool(pool: PgPool) -> Store {
        Store { pool }
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    pub async fn migrate(&self) -> Result<(), StoreError> {
        sqlx::migrate!("./migrations")
            .run(&self.pool)
            .await
            .map_err(|e| StoreError::Migrate(e.to_string()))
    }

    /// Whether the database answers a trivial query within `within` (twice that at worst);
    /// when not, why in a few words. A pool timeout alone hides the reason ("remaining
    /// connection slots are reserved…", "Connection refused"), so a direct connection asks.
    pub async fn check(&self, within: Duration) -> Result<(), String> {
        let query = sqlx::query("SELECT 1").execute(&self.pool);
        match tokio::time::timeout(within, query).await {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(sqlx::Error::PoolTimedOut)) | Err(_) => {}
            Ok(Err(error)) => return Err(short_reason(&error)),
        }
        let options = self.pool.connect_options();
        match tokio::time::timeout(within, PgConnection::connect_with(&options)).await {
            Ok(Ok(_)) => Err("no pooled connection free in time".to_string()),
            Ok(Err(error)) => Err(short_reason(&error)),
            Err(_) => Err(format!("no answer within {} ms", within.as_millis())),
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
