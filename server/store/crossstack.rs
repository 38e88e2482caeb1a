//! Cross-stack dependencies and CRD provider history: the edges that changed are written,
//! read by the impact query; the history survives restarts so a vanished CRD still has a name.

use super::Store;
use super::decode::Stored;
use super::rollups::RowChanges;
use crate::health::{CoOwnership, CrdProvider, Dependency, FormerCrdProvider};
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
    write_dependencies(&mut *conn, clusters, &RowChanges::all(dependencies)).await?;
    write_co_ownerships(conn, clusters, &RowChanges::all(co_ownerships)).await
}

/// Adds the new edges and deletes those gone (and the `replaced` clusters' edges not among
/// the new ones).
pub(super) async fn write_dependencies(
    conn: &mut PgConnection,
    replaced: &[String],
    edges: &RowChanges<'_, Dependency>,
) -> Result<(), sqlx::Error> {
    if !replaced.is_empty() || !edges.gone.is_empty() {
        let (kept, gone) = (&edges.write, &edges.gone);
        sqlx::query!(
            "DELETE FROM dependencies d
             WHERE (d.cluster, d.provider, d.consumer, d.object) IN
                   (SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[]))
                OR (d.cluster = ANY($5) AND (d.cluster, d.provider, d.consumer, d.object) NOT IN
                   (SELECT * FROM UNNEST($6::text[], $7::text[], $8::text[], $9::text[])))",
            gone.iter().map(|d| d.cluster.as_str()).collect::<Vec<_>>() as Vec<&str>,
            gone.iter().map(|d| d.provider.as_str()).collect::<Vec<_>>() as Vec<&str>,
            gone.iter().map(|d| d.consumer.as_str()).collect::<Vec<_>>() as Vec<&str>,
            gone.iter().map(|d| d.object.as_str()).collect::<Vec<_>>() as Vec<&str>,
            replaced,
            kept.iter().map(|d| d.cluster.as_str()).collect::<Vec<_>>() as Vec<&str>,
            kept.iter().map(|d| d.provider.as_str()).collect::<Vec<_>>() as Vec<&str>,
            kept.iter().map(|d| d.consumer.as_str()).collect::<Vec<_>>() as Vec<&str>,
            kept.iter().map(|d| d.object.as_str()).collect::<Vec<_>>() as Vec<&str>,
        )
        .execute(&mut *conn)
        .await?;
    }
    let rows = &edges.write;
    if rows.is_empty() {
        return Ok(());
    }
    sqlx::query!(
        "INSERT INTO dependencies (cluster, provider, consumer, object)
         SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[]) ON CONFLICT DO NOTHING",
        rows.iter().map(|d| d.cluster.as_str()).collect::<Vec<_>>() as Vec<&str>,
        rows.iter().map(|d| d.provider.as_str()).collect::<Vec<_>>() as Vec<&str>,
        rows.iter().map(|d| d.consumer.as_str()).collect::<Vec<_>>() as Vec<&str>,
        rows.iter().map(|d| d.object.as_str()).collect::<Vec<_>>() as Vec<&str>,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Upserts the co-ownerships that changed and deletes those gone (and the `replaced`
/// clusters' ones not among the written).
pub(super) async fn write_co_ownerships(
    conn: &mut PgConnection,
    replaced: &[String],
    shared: &RowChanges<'_, CoOwnership>,
) -> Result<(), sqlx::Error> {
    if !replaced.is_empty() || !shared.gone.is_empty() {
        let (kept, gone) = (&shared.write, &shared.gone);
        sqlx::query!(
            "DELETE FROM co_ownerships s
             WHERE (s.cluster, s.object) IN (SELECT * FROM UNNEST($1::text[], $2::text[]))
                OR (s.cluster = ANY($3) AND (s.cluster, s.object) NOT IN (SELECT * FROM UNNEST($4::text[], $5::text[])))",
            gone.iter().map(|c| c.cluster.as_str()).collect::<Vec<_>>() as Vec<&str>,
            gone.iter().map(|c| c.object.as_str()).collect::<Vec<_>>() as Vec<&str>,
            replaced,
            kept.iter().map(|c| c.cluster.as_str()).collect::<Vec<_>>() as Vec<&str>,
            kept.iter().map(|c| c.object.as_str()).collect::<Vec<_>>() as Vec<&str>,
        )
        .execute(&mut *conn)
        .await?;
    }
    let rows = &shared.write;
    if rows.is_empty() {
        return Ok(());
    }
    sqlx::query!(
        "INSERT INTO co_ownerships (cluster, object, providers)
         SELECT * FROM UNNEST($1::text[], $2::text[], $3::jsonb[])
         ON CONFLICT (cluster, object) DO UPDATE SET providers = excluded.providers
         WHERE co_ownerships.providers IS DISTINCT FROM excluded.providers",
        rows.iter().map(|c| c.cluster.as_str()).collect::<Vec<_>>() as Vec<&str>,
        rows.iter().map(|c| c.object.as_str()).collect::<Vec<_>>() as Vec<&str>,
        &rows
            .iter()
            .map(|c| json!(c.providers))
            .collect::<Vec<Value>>(),
    )
    .execute(conn)
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
        rows.into_iter()
            .map(|row| {
                let provider =
                    Stored::new("crd_providers", &row.crd).parsed("provider", &row.provider)?;
                let former = FormerCrdProvider {
                    group: row.crd_group,
                    kind: row.crd_kind,
                    crd: row.crd,
                    provider,
                    last_seen: row.last_seen,
                };
                Ok((row.cluster, former))
            })
            .collect()
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
