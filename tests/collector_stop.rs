//! Stopping a collector loses nothing its sources said: what the runner took in but had not
//! written when `Collector::stop` was called is in Postgres once `stop` returns (the runner's
//! final round, after its sources' events end).

use crate::common;

use common::eventually;
use fleetglass::app::{Collector, Source};
use fleetglass::health::Parts;
use fleetglass::sources::demo::DEMO_CLUSTERS;
use std::collections::BTreeSet;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

/// The demo source on one cluster (the others' leases are held elsewhere, so rounds stay
/// small). The test holds the `objects` table, so the round that would write the cluster's
/// objects waits on it; once `stop` has ended the source, that write is cancelled (its
/// connection terminated) and the table released. Its rows are kept to retry and the
/// source's channel is closed, so the runner leaves its loop at once: without the final
/// round nothing writes them (the next regular round is 200 ms away).
#[tokio::test(flavor = "multi_thread")]
async fn stop_writes_what_the_last_round_could_not() {
    let store = common::fresh_store().await;
    let config = common::web::demo_config();
    let (kept, others) = DEMO_CLUSTERS.split_first().expect("demo clusters");
    for other in others {
        sqlx::query!(
            "INSERT INTO collector_leases (cluster, holder, expires_at)
             VALUES ($1, 'elsewhere', now() + interval '1 hour')",
            other.name,
        )
        .execute(store.pool())
        .await
        .unwrap();
    }
    let mut hold = store.pool().begin().await.unwrap();
    sqlx::query!("LOCK TABLE objects IN SHARE MODE")
        .execute(&mut *hold)
        .await
        .unwrap();

    let collector = Collector::start(&config, store.clone(), Source::Demo, "stopping".into());
    let latest = collector.latest.clone();
    let blocked: i32 = eventually("a round waiting to write objects", DEADLINE, || async {
        sqlx::query_scalar!(
            r#"SELECT pid AS "pid!" FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock'
               AND query LIKE 'INSERT INTO objects%'"#,
        )
        .fetch_optional(store.pool())
        .await
        .ok()
        .flatten()
    })
    .await;
    // `join!` polls `stop` first: the source is told to end before the write is cancelled.
    tokio::join!(collector.stop(), async {
        sqlx::query!("SELECT pg_terminate_backend($1)", blocked)
            .fetch_all(store.pool())
            .await
            .unwrap();
        hold.rollback().await.unwrap();
    });

    let stored: BTreeSet<String> =
        sqlx::query!("SELECT cluster, kind, namespace, name FROM objects")
            .fetch_all(store.pool())
            .await
            .unwrap()
            .into_iter()
            .map(|row| [row.cluster, row.kind, row.namespace, row.name].join("/"))
            .collect();
    let evaluated: BTreeSet<String> = latest
        .borrow()
        .fleet
        .parts()
        .flat_map(|part| &part.objects)
        .map(|verdict| verdict.id.to_string())
        .collect();
    assert!(
        evaluated
            .iter()
            .all(|id| id.starts_with(&format!("{}/", kept.name))),
        "only the kept cluster is collected"
    );
    assert!(!evaluated.is_empty(), "the demo cluster was evaluated");
    assert_eq!(
        stored, evaluated,
        "every evaluated object is written by stop"
    );
}
