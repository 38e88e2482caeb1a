//! The store against a real Postgres: migrations, round trips, change-only writes, history.

use crate::common;
use crate::common::web::flux_failure;

use chrono::{TimeZone, Utc};
use fleetglass::health::{Cause, CauseCode, EdgeKind, ObjectEdge, State, StateCounts};
use fleetglass::model::{Kind, ObjectId};
use fleetglass::store::{BadStoredValue, replace_rollups, upsert_clusters, write_changes};
use fleetglass::store::{
    ChangeSet, ClusterRow, DomainRow, JsonText, ObjectFilter, ObjectKey, ObjectRow, ObjectVerdict,
    RootCauseRow, TransitionRow,
};
use serde_json::json;

fn key(name: &str) -> ObjectKey {
    ObjectKey {
        cluster: "prod-eu-1".into(),
        kind: Kind::Kustomization,
        namespace: "flux-system".into(),
        name: name.into(),
    }
}

fn row(name: &str, state: State) -> ObjectRow {
    ObjectRow {
        key: key(name),
        state,
        since: Some(Utc.with_ymd_and_hms(2026, 11, 20, 10, 0, 0).unwrap()),
        reason: format!("{state} reason"),
        message: "message".into(),
        root_causes: vec![format!("prod-eu-1/Kustomization/flux-system/{name}")],
        domains: Vec::new(),
        body: JsonText::of(&json!({"name": name})),
        edges: Vec::new(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn objects_round_trip_and_history_is_kept() {
    let store = common::fresh_store().await;
    let now = Utc::now();
    let mut changes = ChangeSet {
        upserts: vec![row("apps", State::Failed), row("infra", State::Healthy)],
        ..ChangeSet::default()
    };
    changes.transitions.push(TransitionRow {
        key: key("apps"),
        from: None,
        to: State::Failed,
        reason: "BuildFailed".into(),
        message: "kustomize build failed".into(),
        at: now,
    });
    let mut conn = store.pool().acquire().await.unwrap();
    write_changes(&mut conn, &changes, now).await.unwrap();

    let apps = store.object(&key("apps")).await.unwrap().unwrap();
    assert_eq!(apps.verdict.state.as_str(), "failed");
    assert_eq!(
        apps.root_causes,
        json!(["prod-eu-1/Kustomization/flux-system/apps"])
    );
    assert_eq!(apps.body, json!({"name": "apps"}));
    let history = store.transitions(&key("apps"), 10).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(
        (history[0].from_state, history[0].to_state.as_str()),
        (None, "failed")
    );

    let failed = store
        .objects(&ObjectFilter {
            state: Some("failed".into()),
            limit: 10,
            ..ObjectFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(
        (failed.total, failed.items[0].verdict.name.as_str()),
        (1, "apps")
    );
    let by_name = store
        .objects(&ObjectFilter {
            query: Some("INF".into()),
            limit: 10,
            ..ObjectFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(by_name.items[0].verdict.name, "infra");

    let deletes = ChangeSet {
        deletes: vec![key("infra")],
        ..ChangeSet::default()
    };
    write_changes(&mut conn, &deletes, now).await.unwrap();
    assert!(store.object(&key("infra")).await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn unchanged_rows_are_not_rewritten() {
    let store = common::fresh_store().await;
    let first = Utc.with_ymd_and_hms(2026, 11, 29, 10, 0, 0).unwrap();
    let later = Utc.with_ymd_and_hms(2026, 11, 29, 11, 0, 0).unwrap();
    let mut conn = store.pool().acquire().await.unwrap();
    let changes = ChangeSet {
        upserts: vec![row("apps", State::Healthy)],
        ..ChangeSet::default()
    };
    write_changes(&mut conn, &changes, first).await.unwrap();
    write_changes(&mut conn, &changes, later).await.unwrap();
    let stored = store.object(&key("apps")).await.unwrap().unwrap();
    assert_eq!(
        stored.updated_at, first,
        "an identical row must not be rewritten"
    );

    let changed = ChangeSet {
        upserts: vec![row("apps", State::Stuck)],
        ..ChangeSet::default()
    };
    write_changes(&mut conn, &changed, later).await.unwrap();
    let stored = store.object(&key("apps")).await.unwrap().unwrap();
    assert_eq!(
        (stored.verdict.state.as_str(), stored.updated_at),
        ("stuck", later)
    );
}

/// A verdict change rewrites the object's row; with no index on `state` and room left on each
/// page (migration 0011), Postgres writes such an update beside the old row without touching an
/// index. Twelve rows of 1.6 kB, as a Kustomization's: at fillfactor 70 a page holds three and
/// has room for one more version (4 of 12 updates in place, one per page); full pages
/// (fillfactor 100: four rows each) would leave room for none, nor would an index on `state`.
#[tokio::test(flavor = "multi_thread")]
async fn a_state_change_is_written_in_place_without_index_entries() {
    let store = common::fresh_store().await;
    let names: Vec<String> = (0..12).map(|i| format!("app-{i}")).collect();
    let sized = |name: &str, state: State| ObjectRow {
        body: JsonText::of(&json!({"name": name, "status": "x".repeat(1_400)})),
        ..row(name, state)
    };
    let now = Utc.with_ymd_and_hms(2026, 11, 29, 10, 0, 0).unwrap();
    let mut conn = store.pool().acquire().await.unwrap();
    let all = |state: State| ChangeSet {
        upserts: names.iter().map(|n| sized(n, state)).collect(),
        ..ChangeSet::default()
    };
    write_changes(&mut conn, &all(State::Healthy), now)
        .await
        .unwrap();

    let mut tx = store.pool().begin().await.unwrap();
    write_changes(&mut tx, &all(State::Failed), now)
        .await
        .unwrap();
    let row = sqlx::query!(
        r#"SELECT pg_stat_get_xact_tuples_updated('objects'::regclass) AS "updated!",
                pg_stat_get_xact_tuples_hot_updated('objects'::regclass) AS "in_place!""#,
    )
    .fetch_one(&mut *tx)
    .await
    .unwrap();
    let (updated, in_place) = (row.updated, row.in_place);
    tx.commit().await.unwrap();
    assert_eq!(updated, 12, "every row's state changed");
    assert!(
        in_place >= 4,
        "{in_place} of 12 state changes were written in place (HOT)"
    );
}

/// Every view of an object asks "what waits on it" and "what applied it" (`edges @>`, the GIN
/// index of migration 0008). Right after a collector's first write the table has no statistics
/// until autovacuum analyses it, up to a minute later; Postgres then answered the ordered,
/// limited lookup by walking every row in `kind` order (100-250 ms at 201,000 objects, and a
/// CPU the collector needed: docs/PERFORMANCE-HISTORY.md 9.22). The lookups must go through the
/// edges index whatever the statistics. One connection, so this backend's counters are the ones
/// read.
#[tokio::test(flavor = "multi_thread")]
async fn edge_lookups_use_the_edges_index_before_the_table_is_analysed() {
    let url = common::fresh_database_url().await;
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect(&url)
        .await
        .unwrap();
    let store = fleetglass::store::Store::from_pool(pool);
    store.migrate().await.unwrap();
    let id =
        |kind: &str, namespace: &str, name: &str| format!("prod-eu-1/{kind}/{namespace}/{name}");
    let edge = |kind: EdgeKind, target: String| ObjectEdge {
        kind,
        target: target.parse::<ObjectId>().unwrap(),
    };
    let repository = id("GitRepository", "flux-system", "repo");
    let app = |i: usize| ObjectRow {
        edges: vec![
            edge(EdgeKind::Source, repository.clone()),
            edge(
                EdgeKind::Applied,
                id("Deployment", "apps", &format!("app-{i}")),
            ),
        ],
        ..row(&format!("app-{i}"), State::Healthy)
    };
    let changes = ChangeSet {
        upserts: (0..20_000).map(app).collect(),
        ..ChangeSet::default()
    };
    let mut conn = store.pool().acquire().await.unwrap();
    write_changes(&mut conn, &changes, Utc::now())
        .await
        .unwrap();
    drop(conn);

    let waiting = store
        .waited_on_by(&repository.parse::<ObjectId>().unwrap(), 500)
        .await
        .unwrap();
    assert_eq!(waiting.len(), 500, "the first 500 of the 20,000 waiting");
    let kustomization = id("Kustomization", "flux-system", "app-0")
        .parse::<ObjectId>()
        .unwrap();
    assert!(store.applier(&kustomization).await.unwrap().is_none());
    sqlx::query!("SELECT pg_stat_force_next_flush()")
        .fetch_all(store.pool())
        .await
        .unwrap();
    let scans: Vec<(String, i64)> = sqlx::query!(
        r#"SELECT indexrelname::text AS "index!", idx_scan AS "scans!" FROM pg_stat_user_indexes
         WHERE relname = 'objects' AND idx_scan > 0 ORDER BY 1"#,
    )
    .fetch_all(store.pool())
    .await
    .unwrap()
    .into_iter()
    .map(|row| (row.index, row.scans))
    .collect();
    assert!(
        scans
            .iter()
            .any(|(index, n)| index == "objects_edges" && *n >= 2)
            && scans.iter().all(|(index, _)| index != "objects_kind"),
        "index scans: {scans:?}"
    );
}

/// The runner sends each changed object as JSON text (no `serde_json::Value` per row), stored
/// as that text (migration 0012): it must read back as the object's value, escapes and nesting
/// included, and the other JSON columns (root causes, domains, edges) must read back as given.
#[tokio::test(flavor = "multi_thread")]
async fn json_columns_sent_as_text_are_stored_as_the_values_they_serialise() {
    let store = common::fresh_store().await;
    let object = fleetglass::model::parse_object(
        "prod-eu-1",
        &json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": "apps", "namespace": "flux-system", "generation": 4,
                         "labels": {"domain": "shop", "team": "payments \"eu\" ü"}},
            "spec": {"interval": "10m", "sourceRef": {"kind": "GitRepository", "name": "repo"},
                     "dependsOn": [{"name": "infra"}]},
            "status": {"observedGeneration": 3, "conditions": [{"type": "Ready", "status": "False",
                "reason": "BuildFailed", "message": "kustomize build failed:\n\tline \\ 3 ✗",
                "lastTransitionTime": "2026-11-20T10:00:00Z"}]}
        }),
    )
    .unwrap();
    let edge = ObjectEdge {
        kind: EdgeKind::DependsOn,
        target: "prod-eu-1/Kustomization/flux-system/infra"
            .parse::<ObjectId>()
            .unwrap(),
    };
    let written = ObjectRow {
        // Each travels inside an array literal: quotes, backslashes, its separators and
        // braces, the word NULL, blanks and the empty name must read back as given.
        domains: [
            "shop",
            "pay\"ments",
            "back\\slash\\",
            "a,b}{c",
            "NULL",
            " spaced ",
            "",
            "ü ✗",
        ]
        .map(String::from)
        .to_vec(),
        edges: vec![edge.clone()],
        body: JsonText::of(&object),
        ..row("apps", State::Failed)
    };
    let mut conn = store.pool().acquire().await.unwrap();
    let changes = ChangeSet {
        upserts: vec![written.clone()],
        ..ChangeSet::default()
    };
    write_changes(&mut conn, &changes, Utc::now())
        .await
        .unwrap();
    let stored = store.object(&key("apps")).await.unwrap().unwrap();
    assert_eq!(stored.body, serde_json::to_value(&object).unwrap());
    assert_eq!(
        (stored.root_causes, stored.domains, stored.edges.0),
        (json!(written.root_causes), written.domains, vec![edge])
    );
}

/// A collector's first round can write a whole fleet at once (201,000 rows at 1,000 clusters);
/// the store splits it so no single statement runs into the statement timeout, and every row
/// of every part is written.
#[tokio::test(flavor = "multi_thread")]
async fn a_fleet_sized_change_set_is_written_whole() {
    let store = common::fresh_store().await;
    let now = Utc::now();
    let names: Vec<String> = (0..12_001).map(|i| format!("app-{i}")).collect();
    let transition = |name: &str| TransitionRow {
        key: key(name),
        from: None,
        to: State::Healthy,
        reason: "ReconciliationSucceeded".into(),
        message: String::new(),
        at: now,
    };
    let changes = ChangeSet {
        upserts: names.iter().map(|n| row(n, State::Healthy)).collect(),
        transitions: names.iter().map(|n| transition(n)).collect(),
        ..ChangeSet::default()
    };
    let mut conn = store.pool().acquire().await.unwrap();
    write_changes(&mut conn, &changes, now).await.unwrap();
    let count = |query: &'static str| {
        let pool = store.pool().clone();
        async move {
            sqlx::query_scalar::<_, i64>(query)
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };
    assert_eq!(
        (
            count("SELECT count(*) FROM objects").await,
            count("SELECT count(*) FROM transitions").await
        ),
        (12_001, 12_001)
    );

    let deletes = ChangeSet {
        deletes: names.iter().map(|n| key(n)).collect(),
        ..ChangeSet::default()
    };
    write_changes(&mut conn, &deletes, now).await.unwrap();
    assert_eq!(count("SELECT count(*) FROM objects").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn rollups_are_replaced_per_cluster() {
    let store = common::fresh_store().await;
    let now = Utc::now();
    let cause = |cluster: &str| RootCauseRow {
        verdict: ObjectVerdict::new(
            format!("{cluster}/Deployment/flux-system/tofu-controller")
                .parse::<ObjectId>()
                .unwrap(),
            State::Failed,
            None,
            "controller down".into(),
            "ImagePullBackOff".into(),
        ),
        cause: Cause::new(CauseCode::ContainerWaiting)
            .with("container", "manager")
            .with("reason", "ImagePullBackOff"),
        affected: vec!["a".into(), "b".into()],
    };
    let domain = |cluster: &str| DomainRow {
        domain: "gateway".into(),
        cluster: cluster.into(),
        version: Some("v1.4.2".into()),
        offered: None,
        state: State::Healthy,
        fully_healthy: true,
        objects: 3,
        healthy: 3,
        blockers: Vec::new(),
    };
    let mut conn = store.pool().acquire().await.unwrap();
    let both = ["a".to_string(), "b".to_string()];
    replace_rollups(
        &mut conn,
        &both,
        &[cause("a"), cause("b")],
        &[domain("a"), domain("b")],
        now,
    )
    .await
    .unwrap();
    replace_rollups(&mut conn, &["a".to_string()], &[], &[], now)
        .await
        .unwrap();
    let causes = store.root_causes().await.unwrap();
    assert_eq!(
        causes
            .iter()
            .map(|c| c.verdict.cluster.as_str())
            .collect::<Vec<_>>(),
        vec!["b"]
    );
    assert_eq!(
        causes[0],
        cause("b"),
        "the cause's code and parameters read back"
    );
    let resolved = store
        .resolved_since(now - chrono::TimeDelta::hours(1))
        .await
        .unwrap();
    assert_eq!(
        resolved.iter().map(|r| &r.cause).collect::<Vec<_>>(),
        [&cause("a").cause],
        "a resolved cause keeps its cause"
    );
    assert_eq!(store.domain_verdicts().await.unwrap().len(), 1);

    upsert_clusters(
        &mut conn,
        &[ClusterRow {
            name: "a".into(),
            labels: json!({"ring": "prod"}),
            last_good: Some(now),
            error: None,
            kind_errors: json!({}),
            state_counts: StateCounts::of([State::Healthy; 3]),
            controllers: json!([]),
            updated_at: now,
        }],
    )
    .await
    .unwrap();
    let clusters = store.clusters().await.unwrap();
    assert_eq!(
        clusters[0].state_counts,
        StateCounts::of([State::Healthy; 3])
    );
}

/// Each row of a roll-up table with the transaction that last wrote it and its `updated_at`.
async fn stored_rollups(store: &fleetglass::store::Store) -> Vec<(String, String, String)> {
    sqlx::query!(
        r#"SELECT 'cause ' || id AS "row!", xmin::text AS "xmin!", updated_at::text AS "updated_at!" FROM root_causes
         UNION ALL SELECT 'domain ' || cluster || '/' || domain, xmin::text, updated_at::text FROM domain_verdicts
         ORDER BY 1"#,
    )
    .fetch_all(store.pool())
    .await
    .unwrap()
    .into_iter()
    .map(|row| (row.row, row.xmin, row.updated_at))
    .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn rollups_write_only_the_rows_that_changed_and_resolve_the_causes_that_went() {
    use fleetglass::store::{RollupWrite, RowChanges, write_rollups};
    let store = common::fresh_store().await;
    let first = Utc.with_ymd_and_hms(2026, 11, 29, 10, 0, 0).unwrap();
    let later = Utc.with_ymd_and_hms(2026, 11, 29, 11, 0, 0).unwrap();
    let cause = |name: &str, message: &str| RootCauseRow {
        verdict: ObjectVerdict::new(
            format!("a/Kustomization/flux-system/{name}")
                .parse::<ObjectId>()
                .unwrap(),
            State::Failed,
            None,
            "BuildFailed".into(),
            message.into(),
        ),
        cause: flux_failure("BuildFailed"),
        affected: vec![name.into()],
    };
    let domain = |name: &str| DomainRow {
        domain: name.into(),
        cluster: "a".into(),
        version: Some("v1".into()),
        offered: None,
        state: State::Healthy,
        fully_healthy: true,
        objects: 1,
        healthy: 1,
        blockers: Vec::new(),
    };
    let (one, two, three) = (cause("one", "m"), cause("two", "m"), cause("three", "m"));
    let (gateway, payments) = (domain("gateway"), domain("payments"));
    let mut conn = store.pool().acquire().await.unwrap();
    let whole = RollupWrite {
        replaced: vec!["a".into()],
        causes: RowChanges {
            write: vec![&one, &two, &three],
            gone: vec![],
        },
        domains: RowChanges {
            write: vec![&gateway, &payments],
            gone: vec![],
        },
        ..RollupWrite::default()
    };
    write_rollups(&mut conn, &whole, first).await.unwrap();
    let before = stored_rollups(&store).await;
    assert_eq!(before.len(), 5);

    // two's message changed, one went away, payments went away; three and gateway did not change.
    let two_now = cause("two", "changed");
    let changed = RollupWrite {
        causes: RowChanges {
            write: vec![&two_now],
            gone: vec![&one],
        },
        domains: RowChanges {
            write: vec![],
            gone: vec![&payments],
        },
        ..RollupWrite::default()
    };
    write_rollups(&mut conn, &changed, later).await.unwrap();
    let after = stored_rollups(&store).await;
    let unchanged =
        |rows: &[(String, String, String)], key: &str| rows.iter().find(|r| r.0 == key).cloned();
    for key in [
        "cause a/Kustomization/flux-system/three",
        "domain a/gateway",
    ] {
        assert_eq!(
            unchanged(&after, key),
            unchanged(&before, key),
            "{key} is not rewritten: same transaction, same updated_at"
        );
    }
    assert_eq!(after.len(), 3, "{after:?}");
    let causes = store.root_causes().await.unwrap();
    let two_stored = causes
        .iter()
        .find(|c| c.verdict.id == two_now.verdict.id)
        .unwrap();
    assert_eq!(two_stored.verdict.message, "changed");
    let resolved = store.resolved_since(first).await.unwrap();
    assert_eq!(
        resolved
            .iter()
            .map(|r| (r.root_cause.as_str(), r.resolved_at))
            .collect::<Vec<_>>(),
        vec![("a/Kustomization/flux-system/one", later)],
        "only the cause that went away is resolved"
    );

    // A cluster whose stored rows the writer does not know is replaced: what it does not
    // write again goes, and a cause among those is resolved.
    let again = RollupWrite {
        replaced: vec!["a".into()],
        causes: RowChanges::all(std::slice::from_ref(&three)),
        ..RollupWrite::default()
    };
    write_rollups(&mut conn, &again, later).await.unwrap();
    let rows = stored_rollups(&store).await;
    assert_eq!(
        rows.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        vec!["cause a/Kustomization/flux-system/three"]
    );
    assert_eq!(
        unchanged(&rows, "cause a/Kustomization/flux-system/three"),
        unchanged(&before, "cause a/Kustomization/flux-system/three"),
    );
    let resolved = store.resolved_since(first).await.unwrap();
    assert_eq!(resolved.len(), 2, "{resolved:?}");
    assert!(resolved.iter().any(|r| r.root_cause.ends_with("/two")));
}

#[tokio::test(flavor = "multi_thread")]
async fn cross_stack_edges_and_crd_history_round_trip() {
    use fleetglass::health::{CoOwnership, CrdProvider, Dependency};
    use fleetglass::store::{record_crd_providers, replace_dependencies};
    let store = common::fresh_store().await;
    let gateway = "dev-1/HelmRelease/gateway-system/gateway";
    let netop = "dev-1/HelmRelease/networking/netop";
    let crd = "CustomResourceDefinition.apiextensions.k8s.io/ratelimitconfigs.ratelimit.solo.io";
    let mut conn = store.pool().acquire().await.unwrap();
    let edge = Dependency {
        cluster: "dev-1".into(),
        provider: gateway.parse::<ObjectId>().unwrap(),
        consumer: netop.parse::<ObjectId>().unwrap(),
        object: crd.into(),
    };
    let shared = CoOwnership {
        cluster: "dev-1".into(),
        object: crd.into(),
        providers: vec![
            gateway.parse::<ObjectId>().unwrap(),
            netop.parse::<ObjectId>().unwrap(),
        ],
    };
    replace_dependencies(&mut conn, &["dev-1".to_string()], &[edge], &[shared])
        .await
        .unwrap();
    let edges = store.dependencies_of(gateway).await.unwrap();
    assert_eq!((edges.len(), edges[0].consumer.as_str()), (1, netop));
    let shared = store.co_ownerships_with(netop).await.unwrap();
    assert_eq!((shared.len(), shared[0].0.as_str()), (1, crd));
    replace_dependencies(&mut conn, &["dev-1".to_string()], &[], &[])
        .await
        .unwrap();
    assert!(
        store.dependencies_of(gateway).await.unwrap().is_empty(),
        "replaced per cluster"
    );

    let provider = CrdProvider {
        cluster: "dev-1".into(),
        group: "ratelimit.solo.io".into(),
        kind: "RateLimitConfig".into(),
        crd: "ratelimitconfigs.ratelimit.solo.io".into(),
        provider: gateway.parse::<ObjectId>().unwrap(),
    };
    let seen = Utc.with_ymd_and_hms(2026, 11, 28, 14, 0, 0).unwrap();
    record_crd_providers(&mut conn, &[provider], seen)
        .await
        .unwrap();
    // A later evaluation without the CRD records nothing: the history keeps the last provider.
    record_crd_providers(&mut conn, &[], Utc::now())
        .await
        .unwrap();
    let history = store.crd_provider_history().await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(
        (
            history[0].0.as_str(),
            history[0].1.provider.as_str(),
            history[0].1.last_seen
        ),
        ("dev-1", gateway, seen)
    );
}

/// The `BadStoredValue` a read failed with, if that is why it failed.
fn bad_value(error: &sqlx::Error) -> Option<&BadStoredValue> {
    match error {
        sqlx::Error::ColumnDecode { source, .. } => source.downcast_ref(),
        _ => None,
    }
}

/// Table, row, column and value of the bad stored value a read failed with.
fn bad_parts(error: &sqlx::Error) -> (&str, &str, &str, &str) {
    let bad = bad_value(error).unwrap_or_else(|| panic!("not a bad stored value: {error}"));
    (bad.table, &bad.row, bad.column, &bad.value)
}

/// A state or kind outside the vocabulary (another version wrote it, or a hand) is read as an
/// error naming the row and the value, never as `unverifiable`.
#[tokio::test(flavor = "multi_thread")]
async fn a_bad_stored_state_or_kind_is_an_error_naming_the_row_not_unverifiable() {
    let store = common::fresh_store().await;
    let now = Utc::now();
    let changes = ChangeSet {
        upserts: vec![row("apps", State::Failed)],
        ..ChangeSet::default()
    };
    let mut conn = store.pool().acquire().await.unwrap();
    write_changes(&mut conn, &changes, now).await.unwrap();
    sqlx::query!("UPDATE objects SET state = 'on fire' WHERE name = 'apps'")
        .execute(&mut *conn)
        .await
        .unwrap();
    let error = store.object(&key("apps")).await.unwrap_err();
    assert_eq!(
        bad_value(&error),
        Some(&BadStoredValue {
            table: "objects",
            row: "prod-eu-1/Kustomization/flux-system/apps".into(),
            column: "state",
            value: "on fire".into(),
        }),
        "{error}"
    );
    let listed = store
        .objects(&ObjectFilter {
            limit: 10,
            ..ObjectFilter::default()
        })
        .await;
    assert!(listed.is_err(), "a list with the row fails too: {listed:?}");

    // A kind loosely spelled is not taken either: it is not how fleetglass writes it.
    sqlx::query!("UPDATE objects SET state = 'failed', kind = 'kustomization' WHERE name = 'apps'")
        .execute(&mut *conn)
        .await
        .unwrap();
    let rows = store
        .objects(&ObjectFilter {
            limit: 10,
            ..ObjectFilter::default()
        })
        .await
        .unwrap_err();
    let bad = bad_value(&rows).expect("a bad stored value");
    assert_eq!((bad.column, bad.value.as_str()), ("kind", "kustomization"));
    assert_eq!(bad.row, "prod-eu-1/kustomization/flux-system/apps");

    let cause = RootCauseRow {
        verdict: ObjectVerdict::new(
            "prod-eu-1/Kustomization/flux-system/apps"
                .parse::<ObjectId>()
                .unwrap(),
            State::Failed,
            None,
            "BuildFailed".into(),
            String::new(),
        ),
        cause: flux_failure("BuildFailed"),
        affected: Vec::new(),
    };
    replace_rollups(&mut conn, &["prod-eu-1".to_string()], &[cause], &[], now)
        .await
        .unwrap();
    sqlx::query!("UPDATE root_causes SET state = 'Failed'")
        .execute(&mut *conn)
        .await
        .unwrap();
    let error = store.root_causes().await.unwrap_err();
    assert_eq!(
        bad_parts(&error),
        (
            "root_causes",
            "prod-eu-1/Kustomization/flux-system/apps",
            "state",
            "Failed"
        )
    );

    // A root cause's id is an object id (cluster/Kind/namespace/name) like the ones it names.
    sqlx::query!("UPDATE root_causes SET state = 'failed', id = 'prod-eu-1/apps'")
        .execute(&mut *conn)
        .await
        .unwrap();
    let error = store.root_causes().await.unwrap_err();
    let bad = bad_value(&error).expect("a bad stored value");
    assert_eq!(
        (bad.table, bad.column, bad.value.as_str()),
        ("root_causes", "id", "prod-eu-1/apps")
    );

    // Its affected ids are a list of strings; anything else names the row, not an empty list.
    sqlx::query!(
        "UPDATE root_causes SET id = 'prod-eu-1/Kustomization/flux-system/apps', affected = '[1, 2]'",
    )
    .execute(&mut *conn)
    .await
    .unwrap();
    let error = store.root_causes().await.unwrap_err();
    assert_eq!(
        bad_parts(&error),
        (
            "root_causes",
            "prod-eu-1/Kustomization/flux-system/apps",
            "affected",
            "[1, 2]"
        )
    );
    sqlx::query!(
        r#"INSERT INTO domain_verdicts (domain, cluster, version, state, fully_healthy, objects, healthy, blockers, updated_at)
         VALUES ('gateway', 'prod-eu-1', 'v1', 'failed', false, 1, 0, '"prod-eu-1/apps"', now())"#,
    )
    .execute(&mut *conn)
    .await
    .unwrap();
    let error = store.domain_verdicts().await.unwrap_err();
    assert_eq!(
        bad_parts(&error),
        (
            "domain_verdicts",
            "gateway/prod-eu-1",
            "blockers",
            "\"prod-eu-1/apps\""
        )
    );

    // What an object waits on is a list of edges, and its body is the JSON text the collector
    // wrote: anything else in either names the row too.
    let bad_object_columns = [
        ("edges = '{\"to\": 1}'", "edges", "{\"to\": 1}"),
        ("edges = '[]', body = '{\"kind\": '", "body", "{\"kind\": "),
    ];
    for (set, column, value) in bad_object_columns {
        let update =
            format!("UPDATE objects SET kind = 'Kustomization', {set} WHERE name = 'apps'");
        sqlx::query(sqlx::AssertSqlSafe(update))
            .execute(&mut *conn)
            .await
            .unwrap();
        let error = store.object(&key("apps")).await.unwrap_err();
        assert_eq!(
            bad_parts(&error),
            (
                "objects",
                "prod-eu-1/Kustomization/flux-system/apps",
                column,
                value
            )
        );
    }
}

/// An open alert row written before the members shared the object-and-verdict shape: its
/// `members` JSON (today's format, set here as literal text) still loads, and writes back the
/// same.
#[tokio::test(flavor = "multi_thread")]
async fn an_alert_row_in_the_stored_members_format_loads_and_writes_back_the_same() {
    let store = common::fresh_store().await;
    let members = json!([{
        "root_cause": "prod-eu-1/Deployment/flux-system/tofu-controller",
        "cluster": "prod-eu-1",
        "state": "failed",
        "since": "2026-11-20T10:00:00Z",
        "reason": "ImagePullBackOff",
        "message": "Back-off pulling image",
        "affected_count": 3,
        "affected_sample": ["prod-eu-1/Kustomization/flux-system/apps"],
        "domains": ["payments"]
    }]);
    sqlx::query!(
        "INSERT INTO alerts (incident_key, root_cause, cluster, clusters, members, rule, severity,
             status, state, reason, message, affected_count, affected_sample, domains,
             first_seen, updated_at)
         VALUES ('key', 'prod-eu-1/Deployment/flux-system/tofu-controller', 'prod-eu-1',
             '{prod-eu-1}', $1::text::jsonb, 'root-cause', 'warning', 'firing', 'failed',
             'ImagePullBackOff', 'm', 3, '[]', '[]', now(), now())",
        members.to_string(),
    )
    .execute(store.pool())
    .await
    .unwrap();
    let mut conn = store.pool().acquire().await.unwrap();
    let alerts =
        fleetglass::alerts::tables::alerts::lock_open(&mut conn, &["prod-eu-1".into()], &[])
            .await
            .unwrap();
    assert_eq!(alerts.len(), 1);
    assert_eq!(serde_json::to_value(&alerts[0].members).unwrap(), members);
    let member = &alerts[0].members[0].verdict;
    assert_eq!(
        (
            member.kind.as_str(),
            member.namespace.as_str(),
            member.name.as_str()
        ),
        ("Deployment", "flux-system", "tofu-controller"),
        "the parts the JSON lacks are read from the id"
    );
    let id = alerts[0].id.unwrap();
    fleetglass::alerts::tables::alerts::update(&mut conn, id, &alerts[0], Utc::now())
        .await
        .unwrap();
    let stored = sqlx::query_scalar!("SELECT members FROM alerts WHERE id = $1", id)
        .fetch_one(&mut *conn)
        .await
        .unwrap();
    assert_eq!(stored, members);
}

/// The flap read behind `/` and `/problems` (incident_history.rs `problem_entries`): only
/// entries into a problem state from a state that was not one, within the window, and per
/// object only the newest `ENTRIES_COUNTED`, so a flapping storm's history is never read whole.
#[tokio::test(flavor = "multi_thread")]
async fn problem_entries_count_each_objects_newest_entries_up_to_the_cap() {
    use chrono::TimeDelta;
    use fleetglass::incidents::ENTRIES_COUNTED;
    let store = common::fresh_store().await;
    let now = Utc::now();
    let insert = |name: &'static str, from: Option<&'static str>, to: &'static str, minutes| {
        let store = store.clone();
        async move {
            sqlx::query!(
                "INSERT INTO transitions (cluster, kind, namespace, name, from_state, to_state, reason, message, at)
                 VALUES ('prod-eu-1', 'Kustomization', 'flux-system', $1, $2, $3, 'r', '', $4)",
                name,
                from,
                to,
                now - TimeDelta::minutes(minutes),
            )
            .execute(store.pool())
            .await
            .unwrap();
        }
    };
    // Thirty failures a minute apart, each followed by a recovery (not an entry).
    for minute in 11..41 {
        insert("flapper", Some("healthy"), "failed", minute).await;
        insert("flapper", Some("failed"), "healthy", minute - 1).await;
    }
    // First seen failed, then failed → degraded (still a problem: no new entry), recovered,
    // failed again; and one entry before the window.
    insert("steady", None, "failed", 50).await;
    insert("steady", Some("failed"), "degraded", 40).await;
    insert("steady", Some("degraded"), "healthy", 30).await;
    insert("steady", Some("healthy"), "failed", 10).await;
    insert("steady", Some("healthy"), "failed", 90).await;
    let ids =
        ["flapper", "steady", "quiet"].map(|n| format!("prod-eu-1/Kustomization/flux-system/{n}"));
    let mut entries = store
        .problem_entries(&ids, now - TimeDelta::hours(1), ENTRIES_COUNTED)
        .await
        .unwrap();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let minutes_ago = |at: chrono::DateTime<Utc>| (now - at).num_minutes();
    let summary: Vec<(&str, usize, i64, i64)> = entries
        .iter()
        .map(|(id, e)| {
            (
                id.rsplit('/').next().unwrap(),
                e.times,
                minutes_ago(e.first),
                minutes_ago(e.last),
            )
        })
        .collect();
    let capped_first = 11 + ENTRIES_COUNTED as i64 - 1;
    assert_eq!(
        summary,
        [
            ("flapper", ENTRIES_COUNTED, capped_first, 11),
            ("steady", 2, 50, 10)
        ]
    );
}

/// Issue 47: Warning events are kept per object, newest first: a repeated event (same uid)
/// replaces its stored copy, an object keeps at most `KEPT_PER_OBJECT`, a workload's page
/// reads its pods' events too (through their Owner edges), and the retention pass deletes
/// those not seen for a day.
#[tokio::test(flavor = "multi_thread")]
async fn warning_events_are_kept_bounded_and_found_through_pods() {
    use fleetglass::model::Warning;
    use fleetglass::store::{KEPT_PER_OBJECT, delete_warnings_before, write_warnings};
    let store = common::fresh_store().await;
    let deployment = "prod-eu-1/Deployment/apps/api".parse::<ObjectId>().unwrap();
    let pod = "prod-eu-1/Pod/apps/api-7d9f8b6c5-x2k4q"
        .parse::<ObjectId>()
        .unwrap();
    let pod_row = ObjectRow {
        key: ObjectKey {
            cluster: "prod-eu-1".into(),
            kind: Kind::Pod,
            namespace: "apps".into(),
            name: "api-7d9f8b6c5-x2k4q".into(),
        },
        edges: vec![ObjectEdge {
            kind: EdgeKind::Owner,
            target: deployment.clone(),
        }],
        ..row("unused", State::Failed)
    };
    let mut conn = store.pool().acquire().await.unwrap();
    let changes = ChangeSet {
        upserts: vec![pod_row],
        ..ChangeSet::default()
    };
    write_changes(&mut conn, &changes, Utc::now())
        .await
        .unwrap();
    let at = |minute: u32| Utc.with_ymd_and_hms(2026, 12, 6, 10, minute, 0).unwrap();
    let warning = |on: &ObjectId, uid: &str, count: i32, minute: u32| Warning {
        regarding: on.clone(),
        uid: uid.into(),
        reason: "BackOff".into(),
        note: format!("seen {count} times"),
        count,
        last_seen: at(minute),
        reporter: "kubelet".into(),
    };
    // The same event twice in one batch and again later: one row, the newest copy.
    write_warnings(
        &mut conn,
        &[warning(&pod, "u-1", 3, 1), warning(&pod, "u-1", 4, 2)],
    )
    .await
    .unwrap();
    write_warnings(&mut conn, &[warning(&pod, "u-1", 9, 3)])
        .await
        .unwrap();
    let found = store
        .warnings_of(std::slice::from_ref(&deployment))
        .await
        .unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, deployment, "found for the workload asked for");
    assert_eq!(
        (found[0].1.count, found[0].1.regarding.clone()),
        (9, pod.clone())
    );

    // A noisy object keeps only its newest ones.
    let many: Vec<Warning> = (0..KEPT_PER_OBJECT as u32 + 5)
        .map(|i| warning(&deployment, &format!("d-{i}"), 1, 10 + i))
        .collect();
    write_warnings(&mut conn, &many).await.unwrap();
    let own: Vec<Warning> = store
        .warnings_of(std::slice::from_ref(&deployment))
        .await
        .unwrap()
        .into_iter()
        .map(|(_, w)| w)
        .filter(|w| w.regarding == deployment)
        .collect();
    assert_eq!(own.len() as i64, KEPT_PER_OBJECT);
    assert_eq!(
        own[0].uid,
        format!("d-{}", KEPT_PER_OBJECT + 4),
        "newest first"
    );

    // Retention: everything last seen before minute 20 goes.
    let deleted = delete_warnings_before(&mut conn, at(20)).await.unwrap();
    // Kept: the deployment's minutes 15-24; deleted: the pod's event and minutes 15-19.
    assert_eq!(deleted, 1 + 5);
    let left = store
        .warnings_of(std::slice::from_ref(&deployment))
        .await
        .unwrap();
    assert!(left.iter().all(|(_, w)| w.last_seen >= at(20)), "{left:?}");
}
