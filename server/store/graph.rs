//! The graph reads: the edges the engine walked, stored with each verdict, followed either way.
//! "What waits on X" is a containment query on the edges' GIN index; nothing here re-derives
//! an edge from an object's spec.

use super::Store;
use super::decode::Stored;
use super::reads::{ObjectRecord, StoredObject, typed};
use crate::health::{EdgeKind, ObjectEdge};
use crate::model::ObjectId;
use serde_json::json;
use std::collections::BTreeMap;

/// One end of an edge: the object at it, or None when it is not in the store (a reference to
/// nothing, an absent controller).
#[derive(Debug, Clone)]
pub struct Linked {
    pub kind: EdgeKind,
    pub id: ObjectId,
    pub record: Option<ObjectRecord>,
}

impl Store {
    /// Each edge of `object` with the row at its far end, in the edges' order; what it applied
    /// aside (thousands, for a big Kustomization: [`Store::applied`] reads those).
    pub async fn waits_on(&self, object: &ObjectRecord) -> Result<Vec<Linked>, sqlx::Error> {
        let edges: Vec<&ObjectEdge> = object
            .edges
            .iter()
            .filter(|e| e.kind != EdgeKind::Applied)
            .collect();
        let ids: Vec<String> = edges.iter().map(|e| e.target.to_string()).collect();
        let records = self.objects_by_ids(&ids).await?;
        Ok(edges
            .into_iter()
            .map(|edge| Linked {
                kind: edge.kind,
                id: edge.target.clone(),
                record: records
                    .iter()
                    .find(|r| r.verdict.id == edge.target)
                    .cloned(),
            })
            .collect())
    }

    /// The objects with an edge to `id`, one entry per edge, ordered by kind, namespace, name;
    /// at most `limit` objects.
    pub async fn waited_on_by(
        &self,
        id: &ObjectId,
        limit: i64,
    ) -> Result<Vec<Linked>, sqlx::Error> {
        let records = self.with_edge_to(json!([{ "target": id }]), limit).await?;
        Ok(records
            .into_iter()
            .flat_map(|record| {
                let kinds: Vec<EdgeKind> = record
                    .edges
                    .iter()
                    .filter(|e| &e.target == id)
                    .map(|e| e.kind)
                    .collect();
                kinds.into_iter().map(move |kind| Linked {
                    kind,
                    id: record.verdict.id.clone(),
                    record: Some(record.clone()),
                })
            })
            .collect())
    }

    /// The Flux object that applied `id` (whose health waits on it), when it is stored.
    pub async fn applier(&self, id: &ObjectId) -> Result<Option<ObjectRecord>, sqlx::Error> {
        let edge = ObjectEdge {
            kind: EdgeKind::Applied,
            target: id.clone(),
        };
        Ok(self.with_edge_to(json!([edge]), 1).await?.pop())
    }

    /// What `object` applied, ordered by id; at most `limit`.
    pub async fn applied(
        &self,
        object: &ObjectRecord,
        limit: usize,
    ) -> Result<Vec<ObjectRecord>, sqlx::Error> {
        let mut ids: Vec<String> = object
            .edges
            .iter()
            .filter(|e| e.kind == EdgeKind::Applied)
            .map(|e| e.target.to_string())
            .collect();
        ids.sort_unstable();
        ids.truncate(limit);
        self.objects_by_ids(&ids).await
    }

    /// The Flux controller Deployments the engine matched on a cluster (or found absent), with
    /// their rows; empty for a cluster not stored.
    pub async fn controllers(&self, cluster: &str) -> Result<Vec<Linked>, sqlx::Error> {
        let ids: Vec<String> = sqlx::query_scalar!(
            r#"SELECT jsonb_array_elements_text(controllers) AS "id!" FROM clusters WHERE name = $1"#,
            cluster,
        )
        .fetch_all(self.pool())
        .await?;
        let records = self.objects_by_ids(&ids).await?;
        ids.into_iter()
            .map(|id| {
                let id: ObjectId = Stored::new("clusters", cluster).parsed("controllers", &id)?;
                Ok(Linked {
                    kind: EdgeKind::Controller,
                    record: records.iter().find(|r| r.verdict.id == id).cloned(),
                    id,
                })
            })
            .collect()
    }

    /// The Flux controller Deployments the engine matched on every cluster, with their rows
    /// (None: matched but absent), by cluster: for the clusters index, in two queries.
    pub async fn controllers_everywhere(
        &self,
    ) -> Result<BTreeMap<String, Vec<Linked>>, sqlx::Error> {
        let ids: Vec<String> = sqlx::query_scalar!(
            r#"SELECT jsonb_array_elements_text(controllers) AS "id!" FROM clusters"#,
        )
        .fetch_all(self.pool())
        .await?;
        let mut records: BTreeMap<ObjectId, ObjectRecord> = self
            .objects_by_ids(&ids)
            .await?
            .into_iter()
            .map(|record| (record.verdict.id.clone(), record))
            .collect();
        let mut by_cluster: BTreeMap<String, Vec<Linked>> = BTreeMap::new();
        for id in ids {
            let id: ObjectId = Stored::new("clusters", &id).parsed("controllers", &id)?;
            let Some(cluster) = id.parts().map(|(cluster, ..)| cluster.to_string()) else {
                continue;
            };
            by_cluster.entry(cluster).or_default().push(Linked {
                kind: EdgeKind::Controller,
                record: records.remove(&id),
                id,
            });
        }
        Ok(by_cluster)
    }

    async fn with_edge_to(
        &self,
        edges: serde_json::Value,
        limit: i64,
    ) -> Result<Vec<ObjectRecord>, sqlx::Error> {
        // The matches are found through the edges index first and ordered after. Asked in one
        // query, a table without statistics yet (a collector's first minutes) was answered by
        // walking every row in `kind` order to honour ORDER BY … LIMIT: 100-250 ms at 201,000
        // objects instead of under one (docs/PERFORMANCE-HISTORY.md 9.22).
        let rows = sqlx::query_as!(
            StoredObject,
            r#"WITH linked AS MATERIALIZED (SELECT * FROM objects WHERE edges @> $1)
             SELECT cluster, kind, namespace, name, state, since, reason, message, root_causes, domains, body, updated_at, edges::text AS "edges!"
             FROM linked ORDER BY kind, namespace, name LIMIT $2"#,
            edges,
            limit,
        )
        .fetch_all(self.pool())
        .await?;
        typed(rows)
    }
}
