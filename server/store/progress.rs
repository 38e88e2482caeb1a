//! First sightings in progress (`seen_in_progress`): read when a collector takes a cluster on,
//! written with each batch, only what changed.

use super::Store;
use super::decode::Stored;
use crate::model::ObjectId;
use chrono::{DateTime, Utc};
use sqlx::PgConnection;

/// What changed in the first sightings since the last write.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SightingChanges {
    pub upserts: Vec<(ObjectId, DateTime<Utc>)>,
    pub deletes: Vec<ObjectId>,
}

impl SightingChanges {
    pub fn is_empty(&self) -> bool {
        self.upserts.is_empty() && self.deletes.is_empty()
    }
}

impl Store {
    /// The stored first sightings, of one cluster or of all.
    pub async fn seen_in_progress(
        &self,
        cluster: Option<&str>,
    ) -> Result<Vec<(ObjectId, DateTime<Utc>)>, sqlx::Error> {
        let rows = sqlx::query!(
            "SELECT id, since FROM seen_in_progress WHERE $1::text IS NULL OR cluster = $1",
            cluster,
        )
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|row| {
                let id = Stored::new("seen_in_progress", &row.id).parsed("id", &row.id)?;
                Ok((id, row.since))
            })
            .collect()
    }
}

pub async fn write_seen_in_progress(
    conn: &mut PgConnection,
    changes: &SightingChanges,
) -> Result<(), sqlx::Error> {
    if !changes.deletes.is_empty() {
        let ids: Vec<&str> = changes.deletes.iter().map(ObjectId::as_str).collect();
        sqlx::query!(
            "DELETE FROM seen_in_progress WHERE id = ANY($1::text[])",
            ids as Vec<&str>
        )
        .execute(&mut *conn)
        .await?;
    }
    if !changes.upserts.is_empty() {
        let ids: Vec<&str> = changes.upserts.iter().map(|(id, _)| id.as_str()).collect();
        let clusters: Vec<&str> = changes
            .upserts
            .iter()
            .map(|(id, _)| id.parts().map_or("", |(cluster, ..)| cluster))
            .collect();
        let since: Vec<DateTime<Utc>> = changes.upserts.iter().map(|&(_, s)| s).collect();
        sqlx::query!(
            "INSERT INTO seen_in_progress (id, cluster, since)
             SELECT * FROM UNNEST($1::text[], $2::text[], $3::timestamptz[])
             ON CONFLICT (id) DO UPDATE SET since = excluded.since",
            ids as Vec<&str>,
            clusters as Vec<&str>,
            &since,
        )
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}
