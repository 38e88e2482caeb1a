//! Domains a user who configured none might start from: one per top-level Kustomization (not
//! applied by another; a bootstrap Kustomization that applies itself stands for its children),
//! with the source its version would be read from.

use super::Store;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuggestedDomain {
    pub namespace: String,
    pub name: String,
    /// On how many clusters a Kustomization of this namespace and name is top-level.
    pub clusters: i64,
    pub source_kind: Option<String>,
    pub source_namespace: Option<String>,
    pub source_name: Option<String>,
}

/// Most suggestions shown; a fleet with more roots is served by the first ones as examples.
const LIMIT: i64 = 12;

impl Store {
    #[tracing::instrument(skip_all)]
    pub async fn suggested_domains(&self) -> Result<Vec<SuggestedDomain>, sqlx::Error> {
        sqlx::query_as!(
            SuggestedDomain,
            r#"WITH k AS (
                SELECT cluster, namespace, name, b->'spec'->'source_ref' AS source,
                       b->'labels'->>'kustomize.toolkit.fluxcd.io/namespace' AS by_namespace,
                       b->'labels'->>'kustomize.toolkit.fluxcd.io/name' AS by_name
                FROM (SELECT cluster, namespace, name, body::jsonb AS b
                      FROM objects WHERE kind = 'Kustomization') stored),
             bootstrap AS (
                SELECT cluster, namespace, name FROM k
                WHERE by_namespace = namespace AND by_name = name)
             SELECT namespace AS "namespace!", name AS "name!", count(DISTINCT cluster) AS "clusters!",
                    min(source->>'kind') AS source_kind,
                    min(source->>'namespace') AS source_namespace,
                    min(source->>'name') AS source_name
             FROM k
             WHERE NOT EXISTS (SELECT 1 FROM bootstrap b
                               WHERE (b.cluster, b.namespace, b.name) = (k.cluster, k.namespace, k.name))
               AND (by_name IS NULL
                    OR EXISTS (SELECT 1 FROM bootstrap b
                               WHERE (b.cluster, b.namespace, b.name) = (k.cluster, k.by_namespace, k.by_name)))
             GROUP BY namespace, name
             ORDER BY count(DISTINCT cluster) DESC, namespace, name
             LIMIT $1"#,
            LIMIT,
        )
        .fetch_all(self.pool())
        .await
    }
}
