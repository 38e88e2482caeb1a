//! Object state and transition history, written in batches: one statement per table per batch.

use crate::health::{ObjectEdge, State};
use crate::model::{Kind, ObjectId};
use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgConnection;

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    pub cluster: String,
    pub kind: Kind,
    pub namespace: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ObjectRow {
    pub key: ObjectKey,
    pub state: State,
    pub since: Option<DateTime<Utc>>,
    pub reason: String,
    pub message: String,
    pub root_causes: Vec<String>,
    /// Names of the domains the object belongs to.
    pub domains: Vec<String>,
    /// The slim object as last seen.
    pub body: JsonText,
    /// What it waits on, as the engine walked it.
    pub edges: Vec<ObjectEdge>,
}

/// A value serialised to JSON once and sent as that text (Postgres parses it into jsonb): no
/// `serde_json::Value` tree is built, cloned and encoded per written row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonText(String);

impl JsonText {
    pub fn of<T: Serialize + ?Sized>(value: &T) -> JsonText {
        // Slim objects, strings and edges always serialise; `null` rather than a lost row.
        JsonText(serde_json::to_string(value).unwrap_or_else(|_| "null".to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct TransitionRow {
    pub key: ObjectKey,
    pub from: Option<State>,
    pub to: State,
    pub reason: String,
    pub message: String,
    pub at: DateTime<Utc>,
}

/// Everything that changed since the last write.
#[derive(Debug, Clone, Default)]
pub struct ChangeSet {
    pub upserts: Vec<ObjectRow>,
    pub deletes: Vec<ObjectKey>,
    pub transitions: Vec<TransitionRow>,
}

impl ChangeSet {
    pub fn is_empty(&self) -> bool {
        self.upserts.is_empty() && self.deletes.is_empty() && self.transitions.is_empty()
    }

    pub fn len(&self) -> usize {
        self.upserts.len() + self.deletes.len() + self.transitions.len()
    }

    /// Appends the changes of objects none of whose rows are here yet (another cluster's).
    pub fn append(&mut self, other: ChangeSet) {
        self.upserts.extend(other.upserts);
        self.deletes.extend(other.deletes);
        self.transitions.extend(other.transitions);
    }

    /// Appends a later change set (used when a write failed and must be retried with more).
    pub fn absorb(&mut self, later: ChangeSet) {
        let replaced: std::collections::HashSet<&ObjectKey> = later
            .upserts
            .iter()
            .map(|r| &r.key)
            .chain(&later.deletes)
            .collect();
        self.upserts.retain(|row| !replaced.contains(&row.key));
        self.deletes.retain(|key| !replaced.contains(key));
        self.upserts.extend(later.upserts);
        self.deletes.extend(later.deletes);
        self.transitions.extend(later.transitions);
    }
}

/// The key columns of a batch, borrowed from its rows (or ids), for one UNNEST statement.
#[derive(Default)]
pub(super) struct Columns<'a> {
    pub cluster: Vec<&'a str>,
    pub kind: Vec<&'a str>,
    pub namespace: Vec<&'a str>,
    pub name: Vec<&'a str>,
}

impl<'a> Columns<'a> {
    /// The ids' parts as written (an id without four parts is left out).
    pub fn of_ids(ids: impl IntoIterator<Item = &'a ObjectId>) -> Columns<'a> {
        let mut columns = Columns::default();
        for (cluster, kind, namespace, name) in ids.into_iter().filter_map(ObjectId::parts) {
            columns.cluster.push(cluster);
            columns.kind.push(kind);
            columns.namespace.push(namespace);
            columns.name.push(name);
        }
        columns
    }

    pub fn of(keys: impl ExactSizeIterator<Item = &'a ObjectKey>) -> Columns<'a> {
        let mut columns = Columns {
            cluster: Vec::with_capacity(keys.len()),
            kind: Vec::with_capacity(keys.len()),
            namespace: Vec::with_capacity(keys.len()),
            name: Vec::with_capacity(keys.len()),
        };
        for key in keys {
            columns.cluster.push(&key.cluster);
            columns.kind.push(key.kind.as_str());
            columns.namespace.push(&key.namespace);
            columns.name.push(&key.name);
        }
        columns
    }
}

/// Most rows per statement: each statement must finish within the statement timeout even
/// when a collector's first round writes a thousand clusters at once (201,000 rows in one
/// upsert exceeded 30 s on a loaded machine, and the retried batch never got smaller).
const ROWS_PER_STATEMENT: usize = 5_000;

/// Writes one change set; call inside a transaction so state and history stay consistent.
#[tracing::instrument(skip_all, fields(upserts = changes.upserts.len(), deletes = changes.deletes.len(), transitions = changes.transitions.len()))]
pub async fn write_changes(
    conn: &mut PgConnection,
    changes: &ChangeSet,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    for rows in changes.upserts.chunks(ROWS_PER_STATEMENT) {
        upsert_objects(conn, rows, now).await?;
    }
    for keys in changes.deletes.chunks(ROWS_PER_STATEMENT) {
        delete_objects(conn, keys).await?;
    }
    for rows in changes.transitions.chunks(ROWS_PER_STATEMENT) {
        insert_transitions(conn, rows).await?;
    }
    Ok(())
}

async fn upsert_objects(
    conn: &mut PgConnection,
    rows: &[ObjectRow],
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    let keys = Columns::of(rows.iter().map(|r| &r.key));
    // The JSON columns travel as text and are parsed by Postgres: the same jsonb as a bound
    // `serde_json::Value`, without building one per row. The body is stored as that text
    // (migration 0012). Domains travel as one array literal per row, because Postgres has no
    // ragged text[][] for UNNEST to split per row.
    let json = |column: fn(&ObjectRow) -> String| rows.iter().map(column).collect::<Vec<_>>();
    sqlx::query!(
        "INSERT INTO objects (cluster, kind, namespace, name, state, since, reason, message, root_causes, body, updated_at, domains, edges)
         SELECT c, k, ns, n, s, si, r, m, rc::jsonb, b, $11,
                d::text[], e::jsonb
         FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[],
                     $7::text[], $8::text[], $9::text[], $10::text[], $12::text[], $13::text[]) AS t(c, k, ns, n, s, si, r, m, rc, b, d, e)
         ON CONFLICT (cluster, kind, namespace, name) DO UPDATE SET
             state = excluded.state, since = excluded.since, reason = excluded.reason,
             message = excluded.message, root_causes = excluded.root_causes, body = excluded.body,
             updated_at = excluded.updated_at, domains = excluded.domains, edges = excluded.edges
         WHERE (objects.state, objects.since, objects.reason, objects.message, objects.root_causes, objects.body, objects.domains, objects.edges)
               IS DISTINCT FROM
               (excluded.state, excluded.since, excluded.reason, excluded.message, excluded.root_causes, excluded.body, excluded.domains, excluded.edges)",
        keys.cluster as Vec<&str>,
        keys.kind as Vec<&str>,
        keys.namespace as Vec<&str>,
        keys.name as Vec<&str>,
        rows.iter().map(|r| r.state.as_str()).collect::<Vec<_>>() as Vec<&str>,
        rows.iter().map(|r| r.since).collect::<Vec<_>>() as Vec<Option<DateTime<Utc>>>,
        rows.iter().map(|r| r.reason.as_str()).collect::<Vec<_>>() as Vec<&str>,
        rows.iter().map(|r| r.message.as_str()).collect::<Vec<_>>() as Vec<&str>,
        &json(|r| JsonText::of(&r.root_causes).0),
        rows.iter().map(|r| r.body.as_str()).collect::<Vec<_>>() as Vec<&str>,
        now,
        &json(|r| text_array_literal(&r.domains)),
        &json(|r| JsonText::of(&r.edges).0),
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// A list of text as a Postgres array literal (`{"a","b\"c"}`), every element quoted and
/// its quotes and backslashes escaped, so any text reads back as given. Postgres reads it
/// more cheaply than a jsonb array taken apart by a subquery per row (8 % of the objects
/// upsert, docs/PERFORMANCE-HISTORY.md 9.17).
fn text_array_literal(items: &[String]) -> String {
    let mut literal = String::from("{");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            literal.push(',');
        }
        literal.push('"');
        for c in item.chars() {
            if matches!(c, '"' | '\\') {
                literal.push('\\');
            }
            literal.push(c);
        }
        literal.push('"');
    }
    literal.push('}');
    literal
}

async fn delete_objects(conn: &mut PgConnection, keys: &[ObjectKey]) -> Result<(), sqlx::Error> {
    let columns = Columns::of(keys.iter());
    sqlx::query!(
        "DELETE FROM objects o USING UNNEST($1::text[], $2::text[], $3::text[], $4::text[]) AS t(c, k, ns, n)
         WHERE o.cluster = t.c AND o.kind = t.k AND o.namespace = t.ns AND o.name = t.n",
        columns.cluster as Vec<&str>,
        columns.kind as Vec<&str>,
        columns.namespace as Vec<&str>,
        columns.name as Vec<&str>,
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

async fn insert_transitions(
    conn: &mut PgConnection,
    rows: &[TransitionRow],
) -> Result<(), sqlx::Error> {
    let keys = Columns::of(rows.iter().map(|r| &r.key));
    sqlx::query!(
        "INSERT INTO transitions (cluster, kind, namespace, name, from_state, to_state, reason, message, at)
         SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                              $7::text[], $8::text[], $9::timestamptz[])",
        keys.cluster as Vec<&str>,
        keys.kind as Vec<&str>,
        keys.namespace as Vec<&str>,
        keys.name as Vec<&str>,
        rows.iter().map(|r| r.from.map(State::as_str)).collect::<Vec<_>>() as Vec<Option<&str>>,
        rows.iter().map(|r| r.to.as_str()).collect::<Vec<_>>() as Vec<&str>,
        rows.iter().map(|r| r.reason.as_str()).collect::<Vec<_>>() as Vec<&str>,
        rows.iter().map(|r| r.message.as_str()).collect::<Vec<_>>() as Vec<&str>,
        &rows.iter().map(|r| r.at).collect::<Vec<_>>(),
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}
