//! A database outage during collection loses no transition: the database refuses every
//! connection for a while (a real outage of that database, the server itself untouched), the
//! collector keeps evaluating, and every state change it saw is in the history afterwards.

use crate::common;

use common::collector::{config, flux_pair, objects_in, ready_status};
use common::eventually;
use fleetglass::app::{Collector, Source};
use fleetglass::model::Kind;
use fleetglass::store::ObjectKey;
use sqlx::Connection;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transitions_made_while_the_database_is_down_are_written_later() {
    let bed = common::collector::bed();
    let one = bed.clusters[0].as_str();
    let ns = common::collector::unique_namespace("fgd");
    common::collector::apply(&bed, one, &flux_pair(&ns));
    common::collector::set_status(&bed, one, "kustomization/app", &ns, &ready_status(true));
    let store = common::fresh_store().await;
    let database: String = sqlx::query_scalar!(r#"SELECT current_database() AS "database!""#)
        .fetch_one(store.pool())
        .await
        .unwrap();
    let collector = Collector::start(
        &config(&bed.kubeconfig, &[one]),
        store.clone(),
        Source::Kube,
        "db-test".into(),
    );
    let key = ObjectKey {
        cluster: one.to_string(),
        kind: Kind::Kustomization,
        namespace: ns.clone(),
        name: "app".into(),
    };
    eventually("the Kustomization is stored", DEADLINE, || async {
        objects_in(&store, one, &ns)
            .await
            .iter()
            .any(|o| o.verdict.kind.as_str() == "Kustomization")
            .then_some(())
    })
    .await;
    let state_now = || {
        let latest = collector.latest.borrow().clone();
        latest
            .fleet
            .merged()
            .objects
            .iter()
            .find(|v| v.kind.as_str() == "Kustomization" && v.namespace == ns)
            .map(|v| v.state)
    };
    let mut seen = vec![state_now().unwrap()];

    common::set_database_outage(&database, true).await;
    for ready in [false, true, false] {
        common::collector::set_status(&bed, one, "kustomization/app", &ns, &ready_status(ready));
        let before = *seen.last().unwrap();
        let next = eventually("the collector evaluated the change", DEADLINE, || async {
            state_now().filter(|s| *s != before)
        })
        .await;
        seen.push(next);
    }
    assert!(
        sqlx::PgConnection::connect(&common::with_database(
            &std::env::var("DATABASE_URL").unwrap(),
            &database
        ))
        .await
        .is_err(),
        "the database must really be refusing connections during the changes"
    );
    common::set_database_outage(&database, false).await;

    let history = eventually(
        "every transition written after the outage",
        DEADLINE,
        || async {
            let rows = store.transitions(&key, 100).await.ok()?;
            (rows.len() >= seen.len()).then_some(rows)
        },
    )
    .await;
    let mut written: Vec<String> = history.iter().map(|t| t.to_state.to_string()).collect();
    written.reverse();
    let expected: Vec<String> = seen.iter().map(|s| s.as_str().to_string()).collect();
    assert_eq!(written, expected);
    collector.stop().await;
}
