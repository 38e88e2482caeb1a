//! Cross-stack dependencies and CRD provider history: replaced per cluster when they change,
//! read by the impact query; the history survives restarts so a vanished CRD still has a name.

use super::Store;
use crate::health::{CoOwnership, CrdProvider, Dependency, FormerCrdProvider};
use crate::model::ObjectId;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::PgConnection;

/// Replaces the dependency edges and co-ownerships of `clusters`.
pub async fn replace_dependencies(
    conn: &mut PgConnection,
    clusters: &[String],
    dependencies: &[Dependency],
    co_ownerships: &[CoOwnership],
) -> Result<(), sqlx::Error> {
    sqlx::query!("DELETE FROM dependencies WHERE cluster = ANY($1)", clusters)
        .execute(&mut *conn)
        .await?;
    sqlx::query!(
        "DELETE FROM co_ownerships WHERE cluster = ANY($1)",
        clusters
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        "INSERT INTO dependencies (cluster, provider, consumer, object)
         SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[]) ON CONFLICT DO NOTHING",
        dependencies.iter().map(|d| d.cluster.as_str()).collect::<Vec<_>>() as Vec<&str>,
        dependencies.iter().map(|d| d.provider.as_str()).collect::<Vec<_>>() as Vec<&str>,
        dependencies.iter().map(|d| d.consumer.as_str()).collect::<Vec<_>>() as Vec<&str>,
        dependencies.iter().map(|d| d.object.as_str()).collect::<Vec<_>>() as Vec<&str>,
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        "INSERT INTO co_ownerships (cluster, object, providers)
         SELECT * FROM UNNEST($1::text[], $2::text[], $3::jsonb[]) ON CONFLICT DO NOTHING",
        co_ownerships
            .iter()
            .map(|c| c.cluster.as_str())
            .collect::<Vec<_>>() as Vec<&str>,
        co_ownerships
            .iter()
            .map(|c| c.object.as_str())
            .collect::<Vec<_>>() as Vec<&str>,
        &co_ownerships
            .iter()
            .map(|c| json!(c.providers))
            .collect::<Vec<Value>>(),
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Records who provides each CRD present now; older entries for CRDs that vanished are kept.
pub async fn record_crd_providers(
    conn: &mut PgConnection,
    providers: &[CrdProvider],
    seen: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    if providers.is_empty() {
        return Ok(());
    }
    sqlx::query!(
        "INSERT INTO crd_providers (cluster, crd_group, crd_kind, crd, provider, last_seen)
         SELECT c, g, k, n, p, $6 FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS t(c, g, k, n, p)
         ON CONFLICT (cluster, crd_group, crd_kind) DO UPDATE SET
             crd = excluded.crd, provider = excluded.provider, last_seen = excluded.last_seen",
        providers.iter().map(|p| p.cluster.as_str()).collect::<Vec<_>>() as Vec<&str>,
        providers.iter().map(|p| p.group.as_str()).collect::<Vec<_>>() as Vec<&str>,
        providers.iter().map(|p| p.kind.as_str()).collect::<Vec<_>>() as Vec<&str>,
        providers.iter().map(|p| p.crd.as_str()).collect::<Vec<_>>() as Vec<&str>,
        providers.iter().map(|p| p.provider.as_str()).collect::<Vec<_>>() as Vec<&str>,
        seen,
    )
    .execute(conn)
    .await?;
    Ok(())
}

#[derive(Debug, Clone, PartialEq)]
pub struct DependencyRow {
    pub cluster: String,
    pub provider: String,
    pub consumer: String,
    pub object: String,
}

impl Store {
    /// The CRD provider history of every cluster, as the engine takes it.
    pub async fn crd_provider_history(
        &self,
    ) -> Result<Vec<(String, FormerCrdProvider)>, sqlx::Error> {
        let rows = sqlx::query!(
            "SELECT cluster, crd_group, crd_kind, crd, provider, last_seen FROM crd_providers ORDER BY cluster, crd",
        )
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| {
                let former = FormerCrdProvider {
                    group: row.crd_group,
                    kind: row.crd_kind,
                    crd: row.crd,
                    provider: ObjectId(row.provider),
                    last_seen: row.last_seen,
                };
                (row.cluster, former)
            })
            .collect())
    }

    /// Every edge whose provider is `provider` (one Flux object, by id).
    pub async fn dependencies_of(&self, provider: &str) -> Result<Vec<DependencyRow>, sqlx::Error> {
        sqlx::query_as!(
            DependencyRow,
            "SELECT cluster, provider, consumer, object FROM dependencies WHERE provider = $1 ORDER BY object, consumer",
            provider,
        )
        .fetch_all(self.pool())
        .await
    }

    /// The objects `provider` holds together with other Flux objects, with all their holders.
    pub async fn co_ownerships_with(
        &self,
        provider: &str,
    ) -> Result<Vec<(String, Value)>, sqlx::Error> {
        let rows = sqlx::query!(
            "SELECT object, providers FROM co_ownerships WHERE providers ? $1 ORDER BY object",
            provider,
        )
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| (row.object, row.providers))
            .collect())
    }
}
