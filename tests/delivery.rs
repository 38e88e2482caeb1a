//! Issue 49: the delivery history in a real Postgres. Rounds of domain verdicts written as the
//! collector writes them move each version's rollout row (offered, applied, fully healthy,
//! where it stopped), open and close outages and keep the fleet's history; the API answers
//! the rollouts, the DORA figures of a seeded history (every figure checked by hand), the
//! fleet at a past time, and the wait's ETA.

use crate::common;

use chrono::{DateTime, SubsecRound, TimeDelta, Utc};
use common::web::{app, cause_row, cluster_row, fresh_store, get, get_json};
use fleetglass::config::Config;
use fleetglass::health::{State, StateCounts};
use fleetglass::store::{
    ClusterRow, DomainRow, OutageRow, RolloutRow, RollupWrite, RootCauseRow, RowChanges,
    SeededHistory, Store, upsert_clusters, write_rollups,
};
use serde_json::Value;

fn config() -> Config {
    fleetglass::config::from_yaml_str(
        "clusters: [{name: dev-1, labels: {ring: dev}}, {name: prod-1, labels: {ring: prod}}, {name: prod-2, labels: {ring: prod}}]
group_order: [prod, dev]
domains:
  - name: payments
    select: {labels: {domain: payments}}
    version: {from: chart_version, namespace: pay, name: pay}",
    )
    .unwrap()
}

fn verdict(cluster: &str, version: &str, offered: Option<&str>, state: State) -> DomainRow {
    DomainRow {
        domain: "payments".into(),
        cluster: cluster.into(),
        version: Some(version.into()),
        offered: offered.map(str::to_string),
        state,
        fully_healthy: state == State::Healthy && offered.is_none(),
        objects: 4,
        healthy: if state == State::Healthy { 4 } else { 3 },
        blockers: Vec::new(),
    }
}

/// One collector round at `at`: these verdicts changed (the cluster already written before,
/// unless `first`), with these root causes.
async fn round(
    store: &Store,
    at: DateTime<Utc>,
    first: bool,
    causes: &[RootCauseRow],
    rows: &[DomainRow],
) {
    let mut tx = store.pool().begin().await.unwrap();
    let write = RollupWrite {
        replaced: match first {
            true => rows.iter().map(|r| r.cluster.clone()).collect(),
            false => Vec::new(),
        },
        causes: RowChanges::all(causes),
        domains: RowChanges::all(rows),
        ..RollupWrite::default()
    };
    write_rollups(&mut tx, &write, at).await.unwrap();
    tx.commit().await.unwrap();
}

async fn rows_of(store: &Store, version: &str) -> Vec<RolloutRow> {
    store
        .rollouts_of("payments", Some(version), 1)
        .await
        .unwrap()
}

#[tokio::test]
async fn rounds_of_verdicts_move_the_rollout_rows_and_outages() {
    let store = fresh_store().await;
    // Microseconds, as Postgres keeps them.
    let t0 = (Utc::now() - TimeDelta::hours(2)).trunc_subsecs(6);
    let at = |m: i64| t0 + TimeDelta::minutes(m);
    let cause = cause_row(
        "prod-1/Kustomization/flux-system/payments",
        "HealthCheckFailed",
        &[],
    );
    // First sight: 1.0 already applied and healthy on both: baselines.
    round(
        &store,
        at(0),
        true,
        &[],
        &[
            verdict("dev-1", "1.0", None, State::Healthy),
            verdict("prod-1", "1.0", None, State::Healthy),
        ],
    )
    .await;
    // 1.1 offered, then applied, then healthy on dev-1; on prod-1 applied and failed.
    round(
        &store,
        at(10),
        false,
        &[],
        &[
            verdict("dev-1", "1.0", Some("1.1"), State::Progressing),
            verdict("prod-1", "1.0", Some("1.1"), State::Progressing),
        ],
    )
    .await;
    round(
        &store,
        at(12),
        false,
        &[],
        &[verdict("dev-1", "1.1", None, State::Progressing)],
    )
    .await;
    let mut failed = verdict("prod-1", "1.1", None, State::Failed);
    failed.blockers = vec![cause.verdict.id.to_string()];
    round(
        &store,
        at(15),
        false,
        std::slice::from_ref(&cause),
        &[failed],
    )
    .await;
    round(
        &store,
        at(20),
        false,
        &[],
        &[verdict("dev-1", "1.1", None, State::Healthy)],
    )
    .await;
    // The same verdict written again (a collector restart) changes nothing.
    round(
        &store,
        at(25),
        true,
        &[],
        &[verdict("dev-1", "1.1", None, State::Healthy)],
    )
    .await;
    // prod-1 recovers at 40.
    round(
        &store,
        at(40),
        false,
        &[],
        &[verdict("prod-1", "1.1", None, State::Healthy)],
    )
    .await;

    let base = rows_of(&store, "1.0").await;
    assert!(base.iter().all(|r| r.baseline), "found applied: {base:?}");
    let v11 = rows_of(&store, "1.1").await;
    let dev = v11.iter().find(|r| r.cluster == "dev-1").unwrap();
    assert_eq!(
        (dev.offered_at, dev.applied_at, dev.healthy_at),
        (at(10), Some(at(12)), Some(at(20)))
    );
    assert_eq!(
        (dev.problem_at, dev.baseline, dev.state),
        (None, false, State::Healthy)
    );
    let prod = v11.iter().find(|r| r.cluster == "prod-1").unwrap();
    assert_eq!(
        (prod.applied_at, prod.problem_at, prod.healthy_at),
        (Some(at(15)), Some(at(15)), Some(at(40)))
    );

    let outages = store.outages_since("payments", t0).await.unwrap();
    assert_eq!(outages.len(), 1, "{outages:?}");
    let outage = &outages[0];
    assert_eq!(
        (
            outage.cluster.as_str(),
            outage.opened_at,
            outage.resolved_at
        ),
        ("prod-1", at(15), Some(at(40)))
    );
    assert_eq!(outage.reason, "HealthCheckFailed", "the blocker's reason");

    // The fleet at a past time: as the verdicts stood then.
    let then = store.domain_verdicts_at(at(16)).await.unwrap();
    let states: Vec<(&str, Option<&str>, Option<&str>, State)> = then
        .iter()
        .map(|r| {
            (
                r.cluster.as_str(),
                r.version.as_deref(),
                r.offered.as_deref(),
                r.state,
            )
        })
        .collect();
    assert_eq!(
        states,
        vec![
            ("dev-1", Some("1.1"), None, State::Progressing),
            ("prod-1", Some("1.1"), None, State::Failed)
        ]
    );
    let before = store.domain_verdicts_at(at(5)).await.unwrap();
    assert!(
        before
            .iter()
            .all(|r| r.version.as_deref() == Some("1.0") && r.state == State::Healthy)
    );
    assert!(
        store
            .domain_verdicts_at(t0 - TimeDelta::minutes(1))
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn cluster_counts_are_kept_as_they_change() {
    let store = fresh_store().await;
    let t0 = (Utc::now() - TimeDelta::hours(1)).trunc_subsecs(6);
    let write = |counts: StateCounts, at: DateTime<Utc>| {
        let store = store.clone();
        async move {
            let mut row: ClusterRow = cluster_row("prod-1", "prod", at);
            row.state_counts = counts;
            let mut tx = store.pool().begin().await.unwrap();
            upsert_clusters(&mut tx, &[row]).await.unwrap();
            tx.commit().await.unwrap();
        }
    };
    write(StateCounts::of([State::Healthy; 3]), t0).await;
    write(
        StateCounts::of([State::Healthy; 3]),
        t0 + TimeDelta::minutes(1),
    )
    .await;
    write(
        StateCounts::of([State::Healthy, State::Healthy, State::Failed]),
        t0 + TimeDelta::minutes(2),
    )
    .await;
    let then = store
        .clusters_at(t0 + TimeDelta::seconds(90))
        .await
        .unwrap();
    assert_eq!(then[0].state_counts, StateCounts::of([State::Healthy; 3]));
    // The history row is the first write's: the unchanged count a minute later was not kept.
    assert_eq!(then[0].updated_at, t0);
    let later = store.clusters_at(t0 + TimeDelta::minutes(3)).await.unwrap();
    assert_eq!(later[0].state_counts.get(State::Failed), 1);
}

/// version, cluster, offered, fully healthy and problem: minutes from t0.
type Seeded<'a> = (&'a str, &'a str, i64, Option<i64>, Option<i64>);

fn seeded(rows: &[Seeded], t0: DateTime<Utc>) -> Vec<RolloutRow> {
    let at = |m: i64| t0 + TimeDelta::minutes(m);
    rows.iter()
        .map(
            |&(version, cluster, offered, healthy, problem)| RolloutRow {
                domain: "payments".into(),
                version: version.into(),
                cluster: cluster.into(),
                offered_at: at(offered),
                applied_at: Some(at(offered + 1)),
                healthy_at: healthy.map(at),
                problem_at: problem.map(at),
                state: if healthy.is_some() {
                    State::Healthy
                } else {
                    State::Failed
                },
                cause: None,
                reason: if healthy.is_some() {
                    String::new()
                } else {
                    "HealthCheckFailed".into()
                },
                baseline: false,
                updated_at: at(healthy.or(problem).unwrap_or(offered)),
            },
        )
        .collect()
}

/// A known history, every figure worked out by hand (minutes from t0, ten days ago):
/// 2.0 dev 0→10, prod-1 60→80, prod-2 60→100: deployed in prod at 100, lead 100m
/// 2.1 dev 200→230, prod-1 260→270, prod-2 260 failed at 265: not deployed, a failure in prod
/// 2.2 dev 400→405, prod-1 460→500, prod-2 460→520: deployed at 520, lead 120m
/// outages on prod: 265→300 (35m), 1000→1010 (10m); dev: 3000 still open.
#[tokio::test]
async fn the_delivery_figures_of_a_seeded_history() {
    let store = fresh_store().await;
    let t0 = Utc::now() - TimeDelta::days(10);
    let at = |m: i64| t0 + TimeDelta::minutes(m);
    let outage = |cluster: &str, opened: i64, resolved: Option<i64>| OutageRow {
        domain: "payments".into(),
        cluster: cluster.into(),
        version: None,
        state: State::Failed,
        reason: "HealthCheckFailed".into(),
        opened_at: at(opened),
        resolved_at: resolved.map(at),
    };
    let history = SeededHistory {
        rollouts: seeded(
            &[
                ("2.0", "dev-1", 0, Some(10), None),
                ("2.0", "prod-1", 60, Some(80), None),
                ("2.0", "prod-2", 60, Some(100), None),
                ("2.1", "dev-1", 200, Some(230), None),
                ("2.1", "prod-1", 260, Some(270), None),
                ("2.1", "prod-2", 260, None, Some(265)),
                ("2.2", "dev-1", 400, Some(405), None),
                ("2.2", "prod-1", 460, Some(500), None),
                ("2.2", "prod-2", 460, Some(520), None),
            ],
            t0,
        ),
        outages: vec![
            outage("prod-2", 265, Some(300)),
            outage("prod-1", 1000, Some(1010)),
            outage("dev-1", 3000, None),
        ],
        ..SeededHistory::default()
    };
    assert!(store.seed_history(&history).await.unwrap());
    assert!(
        !store.seed_history(&history).await.unwrap(),
        "seeded once only"
    );
    let app = app(store.clone(), &config());

    let (status, prod) = get_json(
        &app,
        "/api/v1/domains/payments/delivery?ring=prod&window=30d",
    )
    .await;
    assert_eq!(status, 200, "{prod}");
    let versions: Vec<&str> = prod["deployments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, vec!["2.0", "2.2"]);
    assert_eq!(prod["deployments"][0]["lead_time_seconds"], 100 * 60);
    assert_eq!(prod["deployments"][1]["lead_time_seconds"], 120 * 60);
    assert_eq!(prod["lead_time_seconds"], 110.0 * 60.0);
    assert!((prod["deployments_per_day"].as_f64().unwrap() - 2.0 / 30.0).abs() < 1e-9);
    assert_eq!(
        (prod["rolled_out"].as_i64(), prod["failed_versions"].clone()),
        (Some(3), serde_json::json!(["2.1"]))
    );
    assert!((prod["change_failure_rate"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-9);
    assert_eq!(
        (
            prod["restored"].as_i64(),
            prod["time_to_restore_seconds"].as_f64()
        ),
        (Some(2), Some(22.5 * 60.0))
    );
    assert_eq!(prod["open_outages"], 0);

    let (_, dev) = get_json(&app, "/api/v1/domains/payments/delivery?ring=dev").await;
    assert_eq!(dev["deployments"].as_array().unwrap().len(), 3);
    assert_eq!(
        dev["lead_time_seconds"],
        10.0 * 60.0,
        "median of 10, 30, 5 minutes"
    );
    assert_eq!(
        (
            dev["change_failure_rate"].as_f64(),
            dev["open_outages"].as_i64()
        ),
        (Some(0.0), Some(1))
    );
    // A window that ends before anything happened still answers, with nothing in it.
    let (_, short) = get_json(&app, "/api/v1/domains/payments/delivery?window=1d").await;
    assert_eq!(
        (
            short["deployments"].as_array().unwrap().len(),
            short["change_failure_rate"].clone()
        ),
        (0, Value::Null)
    );

    for (uri, status, says) in [
        (
            "/api/v1/domains/payments/delivery?ring=staging",
            400,
            "no cluster is in ring",
        ),
        ("/api/v1/domains/payments/delivery?window=0d", 400, "window"),
        (
            "/api/v1/domains/payments/delivery?window=400d",
            400,
            "window is from 1h to 366d",
        ),
        (
            "/api/v1/domains/payments/delivery?rings=prod",
            400,
            "unknown query parameter",
        ),
        ("/api/v1/domains/ghost/delivery", 404, "no domain named"),
        (
            "/api/v1/domains/payments/rollouts/9.9",
            404,
            "no rollout of payments 9.9",
        ),
        ("/api/v1/domains/payments/rollouts?limit=0", 400, "limit"),
    ] {
        let (got, body) = get(&app, uri).await;
        assert_eq!(got.as_u16(), status, "{uri}: {body}");
        assert!(body.contains(says), "{uri}: {body}");
    }

    // Rollouts: newest first, rings in rollout order (dev before prod), what stopped first.
    let (_, rollouts) = get_json(&app, "/api/v1/domains/payments/rollouts?limit=2").await;
    let listed: Vec<&str> = rollouts["rollouts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["version"].as_str().unwrap())
        .collect();
    assert_eq!(listed, vec!["2.2", "2.1"]);
    let (_, v21) = get_json(&app, "/api/v1/domains/payments/rollouts/2.1").await;
    assert_eq!(
        (v21["clusters"].as_i64(), v21["fully_healthy"].as_i64()),
        (Some(3), Some(2))
    );
    assert_eq!(v21["rings"][0]["ring"], "dev");
    let stopped = &v21["rings"][1]["clusters"][0];
    assert_eq!(
        (
            stopped["cluster"].as_str(),
            stopped["state"].as_str(),
            stopped["reason"].as_str()
        ),
        (Some("prod-2"), Some("failed"), Some("HealthCheckFailed"))
    );
    assert_eq!(v21["estimate"], Value::Null, "not the newest version");

    // The gauges of /metrics carry the same figures (the default 30 days).
    fleetglass::web::refresh_dora_gauges(&store, &fleetglass::web::Site::from_config(&config()))
        .await;
    let (_, metrics) = get(&app, "/metrics").await;
    for line in [
        "fleetglass_dora_change_failure_ratio{domain=\"payments\",ring=\"prod\"} 0.333",
        "fleetglass_dora_lead_time_seconds{domain=\"payments\",ring=\"prod\"} 6600.0",
        "fleetglass_dora_time_to_restore_seconds{domain=\"payments\",ring=\"prod\"} 1350.0",
        "fleetglass_dora_change_failure_ratio{domain=\"payments\",ring=\"dev\"} 0.0",
    ] {
        assert!(metrics.contains(line), "{line} in:\n{metrics}");
    }
    assert!(
        !metrics
            .contains("fleetglass_dora_time_to_restore_seconds{domain=\"payments\",ring=\"dev\"}"),
        "nothing restored on dev: no series, not a zero"
    );

    // The pages draw it.
    let (status, page) = get(&app, "/domains/payments/rollouts/2.1").await;
    assert_eq!(status, 200);
    assert!(
        page.contains("<svg") && page.contains("prod-2 · failed: HealthCheckFailed"),
        "{page}"
    );
    let (status, page) = get(&app, "/domains/payments/delivery?window=30d").await;
    assert_eq!(status, 200);
    assert!(
        page.contains("33%") && page.contains("1 of 3 rolled out"),
        "{page}"
    );
}

/// The rollout in flight gets an ETA from each cluster's past rollouts, in the API, the wait
/// verdict and the domain page; a cluster past its 90th percentile is slower than usual.
#[tokio::test(flavor = "multi_thread")]
async fn the_rollout_in_flight_has_an_eta_and_a_slow_cluster_is_named() {
    let store = fresh_store().await;
    let now = Utc::now();
    let t0 = now - TimeDelta::days(5);
    // Five past rollouts: prod-1 takes 10 minutes each time, prod-2 20.
    let mut past = Vec::new();
    for n in 0..5 {
        let start = n * 600;
        let version = format!("1.{n}");
        past.push((version.clone(), "prod-1", start, Some(start + 10)));
        past.push((version, "prod-2", start, Some(start + 20)));
    }
    let mut rows: Vec<RolloutRow> = past
        .iter()
        .flat_map(|(v, c, o, h)| seeded(&[(v.as_str(), c, *o, *h, None)], t0))
        .collect();
    // 2.0 offered 15 minutes ago: prod-1 is past its 10 minutes; prod-2 is within its usual 20.
    for cluster in ["prod-1", "prod-2"] {
        let mut row = seeded(
            &[("2.0", cluster, 0, None, None)],
            now - TimeDelta::minutes(15),
        )
        .remove(0);
        row.state = State::Progressing;
        rows.push(row);
    }
    assert!(
        store
            .seed_history(&SeededHistory {
                rollouts: rows,
                ..SeededHistory::default()
            })
            .await
            .unwrap()
    );
    // The domain's verdicts now: 2.0 applied, progressing on both.
    round(
        &store,
        now,
        false,
        &[],
        &[
            verdict("prod-1", "2.0", None, State::Progressing),
            verdict("prod-2", "2.0", None, State::Progressing),
        ],
    )
    .await;
    let mut tx = store.pool().begin().await.unwrap();
    upsert_clusters(
        &mut tx,
        &[
            cluster_row("prod-1", "prod", now),
            cluster_row("prod-2", "prod", now),
        ],
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    let app = app(store.clone(), &config());

    let (_, rollout) = get_json(&app, "/api/v1/domains/payments/rollouts/2.0").await;
    let estimate = &rollout["estimate"];
    assert_eq!(
        estimate["slower_than_usual"],
        serde_json::json!(["prod-1"]),
        "{estimate}"
    );
    let eta: DateTime<Utc> = estimate["eta"].as_str().unwrap().parse().unwrap();
    let offered: DateTime<Utc> = rollout["first_offered"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        eta - offered,
        TimeDelta::minutes(20),
        "prod-2's usual 20 minutes"
    );

    let (_, verdict) = get_json(&app, "/api/v1/domains/payments/wait?version=2.0&timeout=0s").await;
    assert_eq!(verdict["healthy"], false);
    assert_eq!(verdict["eta"], estimate["eta"]);
    assert_eq!(verdict["slower_than_usual"], serde_json::json!(["prod-1"]));
    let (_, page) = get(&app, "/domains/payments").await;
    assert!(
        page.contains("expected fully healthy by") && page.contains("slower than usual"),
        "{page}"
    );
}

#[tokio::test]
async fn the_fleet_at_a_past_time() {
    let store = fresh_store().await;
    let now = Utc::now();
    let t0 = now - TimeDelta::hours(3);
    let mut tx = store.pool().begin().await.unwrap();
    let mut counts = cluster_row("prod-1", "prod", now);
    counts.updated_at = t0;
    counts.state_counts = StateCounts::of([State::Healthy; 4]);
    upsert_clusters(&mut tx, &[counts]).await.unwrap();
    tx.commit().await.unwrap();
    round(
        &store,
        t0,
        true,
        &[],
        &[verdict("prod-1", "1.0", None, State::Healthy)],
    )
    .await;
    let cause = cause_row(
        "prod-1/Kustomization/flux-system/payments",
        "HealthCheckFailed",
        &[],
    );
    let mut failed = verdict("prod-1", "1.1", None, State::Failed);
    failed.blockers = vec![cause.verdict.id.to_string()];
    round(
        &store,
        now - TimeDelta::hours(1),
        false,
        std::slice::from_ref(&cause),
        &[failed],
    )
    .await;
    let app = app(store.clone(), &config());

    let two_hours_ago =
        (now - TimeDelta::hours(2)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let (status, then) = get_json(&app, &format!("/api/v1/fleet?at={two_hours_ago}")).await;
    assert_eq!(status, 200, "{then}");
    assert!(then["at"].is_string());
    let prod_1 = |view: &Value| {
        let cells = view["domains"][0]["clusters"].as_array().unwrap();
        cells
            .iter()
            .find(|c| c["cluster"] == "prod-1")
            .unwrap()
            .clone()
    };
    let cell = prod_1(&then);
    assert_eq!(
        (cell["version"].as_str(), cell["state"].as_str()),
        (Some("1.0"), Some("healthy")),
        "{then}"
    );
    assert_eq!(then["counts"]["healthy"], 4);
    let (_, now_view) = get_json(&app, "/api/v1/fleet").await;
    assert_eq!(prod_1(&now_view)["state"], "failed", "{now_view}");
    assert_eq!(now_view["at"], Value::Null);

    let (status, page) = get(&app, &format!("/?at={two_hours_ago}")).await;
    assert_eq!(status, 200);
    assert!(
        page.contains("as it was at") && !page.contains("hx-get=\"/fragments/fleet\""),
        "a past view does not refresh to now"
    );
    let future = (now + TimeDelta::hours(1)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let too_old = (now - TimeDelta::days(31)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    for (at, says) in [
        (future.as_str(), "in the future"),
        (too_old.as_str(), "before the history kept"),
        ("noon", "RFC 3339"),
    ] {
        let (status, body) = get(&app, &format!("/api/v1/fleet?at={at}")).await;
        assert_eq!(status, 400, "{at}: {body}");
        assert!(body.contains(says), "{at}: {body}");
    }
}

/// The collector stopped two hours ago (its last good data is that old): the fleet an hour ago
/// is stale there, never the green it last wrote; while it still ran, the same cell was healthy.
#[tokio::test]
async fn a_past_time_after_the_collector_stopped_is_unverifiable() {
    let store = fresh_store().await;
    let now = Utc::now();
    let stopped = now - TimeDelta::hours(2);
    let mut tx = store.pool().begin().await.unwrap();
    let mut row = cluster_row("prod-1", "prod", stopped);
    row.state_counts = StateCounts::of([State::Healthy; 4]);
    upsert_clusters(&mut tx, &[row]).await.unwrap();
    tx.commit().await.unwrap();
    round(
        &store,
        stopped - TimeDelta::minutes(30),
        true,
        &[],
        &[verdict("prod-1", "1.0", None, State::Healthy)],
    )
    .await;
    let app = app(store.clone(), &config());
    let state_at = |at: DateTime<Utc>| {
        let app = app.clone();
        async move {
            let at = at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
            let (status, view) = get_json(&app, &format!("/api/v1/fleet?at={at}")).await;
            assert_eq!(status, 200, "{view}");
            let cells = view["domains"][0]["clusters"].as_array().unwrap().clone();
            let cell = cells
                .into_iter()
                .find(|c| c["cluster"] == "prod-1")
                .unwrap();
            cell["state"].as_str().unwrap().to_string()
        }
    };
    assert_eq!(state_at(stopped + TimeDelta::seconds(30)).await, "healthy");
    assert_eq!(state_at(now - TimeDelta::hours(1)).await, "unverifiable");
}
