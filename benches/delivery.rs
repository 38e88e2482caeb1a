//! Issue 49's figures. First, a backtest of the rollout ETA on generated histories (no
//! database): every cluster has its own pace, each rollout's duration is that pace times
//! log-normal noise (σ 0.25) with one in twenty three times slower; each rollout is estimated
//! from the ones before it exactly as the server does (`delivery::estimate`), and the median
//! absolute error is printed as a share of the actual duration (goal ≤ 20 %), beside the
//! error of a naive fleet-wide median. Then, with a database, 90 days of generated history
//! at 1,000 clusters: p50/p99 of the delivery API, the rollout page and `/?at=`, and the
//! rollout table's size per cluster-day.
//!
//!     DATABASE_URL=$(scripts/pg url) cargo bench --bench delivery

#[path = "../tests/common/mod.rs"]
mod common;
mod support;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use chrono::{DateTime, TimeDelta, Utc};
use fleetglass::delivery::{InFlight, estimate};
use fleetglass::health::{State, StateCounts};
use fleetglass::store::{ClusterDurations, DomainRow, RolloutRow, SeededHistory, Store};
use fleetglass::web::{self, AppState, Site};
use http_body_util::BodyExt;
use std::time::{Duration, Instant};
use tower::ServiceExt;

const RINGS: [&str; 3] = ["dev", "staging", "prod"];
const DOMAINS: [&str; 5] = ["gateway", "payments", "search", "ledger", "identity"];
const DAYS: i64 = 90;
const EVERY_DAYS: i64 = 3;

/// A small deterministic generator (xorshift64*): the same histories on every run.
struct Dice(u64);

impl Dice {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A standard normal draw (Box-Muller).
    fn normal(&mut self) -> f64 {
        let (a, b) = (self.unit().max(1e-12), self.unit());
        (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()
    }
}

fn ring_of(cluster: &str) -> String {
    let n: usize = cluster.trim_start_matches("c").parse().unwrap_or(0);
    RINGS[match n % 10 {
        0 => 0,
        1 | 2 => 1,
        _ => 2,
    }]
    .to_string()
}

/// Each cluster's rollout durations in seconds, oldest first.
fn generated_durations(dice: &mut Dice, clusters: usize, rollouts: usize) -> Vec<Vec<f64>> {
    (0..clusters)
        .map(|_| {
            let pace = 240.0 + dice.unit() * 1_560.0;
            (0..rollouts)
                .map(|_| {
                    let slow = if dice.unit() < 0.05 { 3.0 } else { 1.0 };
                    pace * (0.25 * dice.normal()).exp() * slow
                })
                .collect()
        })
        .collect()
}

fn backtest() {
    let (clusters, rollouts) = (support::size(1_000, 50), 30);
    let mut dice = Dice(0x5eed_f1ee_7a55);
    let durations = generated_durations(&mut dice, clusters, rollouts);
    let names: Vec<String> = (0..clusters).map(|n| format!("c{n}")).collect();
    let t0 = DateTime::<Utc>::UNIX_EPOCH;
    let (mut errors, mut naive_errors) = (Vec::new(), Vec::new());
    let started = Instant::now();
    // From the fourth rollout on: the server keeps the latest 20 of each cluster.
    for n in 3..rollouts {
        let history: Vec<ClusterDurations> = names
            .iter()
            .zip(&durations)
            .map(|(name, all)| ClusterDurations {
                cluster: name.clone(),
                seconds: all[n.saturating_sub(20)..n].iter().rev().copied().collect(),
            })
            .collect();
        let in_flight: Vec<InFlight> = names
            .iter()
            .map(|name| InFlight {
                cluster: name,
                offered_at: t0,
            })
            .collect();
        let found = estimate(&in_flight, &history, &ring_of, t0);
        let mut pooled: Vec<f64> = history.iter().flat_map(|h| h.seconds.clone()).collect();
        let naive = fleetglass::delivery::median(&mut pooled).unwrap_or(0.0);
        for (cluster, all) in found.clusters.iter().zip(&durations) {
            let actual = all[n];
            let expected = (cluster.expected_at.expect("enough history") - t0).num_milliseconds()
                as f64
                / 1000.0;
            errors.push((expected - actual).abs() / actual);
            naive_errors.push((naive - actual).abs() / actual);
        }
    }
    let elapsed = started.elapsed();
    let share = fleetglass::delivery::median(&mut errors).unwrap_or(f64::NAN) * 100.0;
    let naive = fleetglass::delivery::median(&mut naive_errors).unwrap_or(f64::NAN) * 100.0;
    println!(
        "ETA backtest: {} estimates ({clusters} clusters × {} rollouts): median absolute error {share:.1}% of the actual duration (goal ≤ 20%); a fleet-wide median would miss by {naive:.1}%; {:.1} µs per cluster estimate",
        errors.len(),
        rollouts - 3,
        elapsed.as_secs_f64() * 1e6 / errors.len() as f64
    );
}

/// 90 days of releases every three days per domain: dev first, staging a day later, prod a
/// day after; one in eight fails in staging.
fn generated_history(clusters: &[String], now: DateTime<Utc>) -> SeededHistory {
    let mut dice = Dice(0xde11_7e27);
    let start = now - TimeDelta::days(DAYS);
    let mut history = SeededHistory::default();
    for domain in DOMAINS {
        for n in 0..DAYS / EVERY_DAYS {
            let version = format!("1.{n}.0");
            let offered = start + TimeDelta::days(n * EVERY_DAYS);
            let fails = dice.unit() < 0.125;
            for cluster in clusters {
                let ring = RINGS
                    .iter()
                    .position(|r| *r == ring_of(cluster))
                    .unwrap_or(0) as i64;
                if fails && ring > 1 {
                    continue;
                }
                let offered_at = offered + TimeDelta::days(ring);
                let applied_at = offered_at + TimeDelta::seconds(60);
                let took = TimeDelta::seconds((300.0 + dice.unit() * 1200.0) as i64);
                let failed_here = fails && ring == 1;
                let row = RolloutRow {
                    domain: domain.into(),
                    version: version.clone(),
                    cluster: cluster.clone(),
                    offered_at,
                    applied_at: Some(applied_at),
                    healthy_at: (!failed_here).then_some(applied_at + took),
                    problem_at: failed_here.then_some(applied_at + took),
                    state: if failed_here {
                        State::Failed
                    } else {
                        State::Healthy
                    },
                    cause: None,
                    reason: String::new(),
                    baseline: false,
                    updated_at: applied_at + took,
                };
                let verdict = |version: &str, state: State| DomainRow {
                    domain: domain.into(),
                    cluster: cluster.clone(),
                    version: Some(version.to_string()),
                    offered: None,
                    state,
                    fully_healthy: state == State::Healthy,
                    objects: 10,
                    healthy: 10,
                    blockers: Vec::new(),
                };
                history
                    .domains
                    .push((applied_at, verdict(&version, State::Progressing)));
                history
                    .domains
                    .push((row.updated_at, verdict(&version, row.state)));
                history.rollouts.push(row);
            }
        }
    }
    history.clusters = clusters
        .iter()
        .map(|c| (start, c.clone(), StateCounts::of([State::Healthy; 50])))
        .collect();
    history
}

fn site(clusters: &[String]) -> Site {
    let mut yaml = String::from("group_order: [prod, staging, dev]\nclusters:\n");
    for cluster in clusters {
        yaml.push_str(&format!(
            "  - {{name: {cluster}, labels: {{ring: {}}}}}\n",
            ring_of(cluster)
        ));
    }
    yaml.push_str("domains:\n");
    for domain in DOMAINS {
        yaml.push_str(&format!(
            "  - {{name: {domain}, select: {{labels: {{d: {domain}}}}}, version: {{from: chart_version, namespace: {domain}, name: {domain}}}}}\n"
        ));
    }
    let mut config = fleetglass::config::from_yaml_str(&yaml).expect("bench config");
    config.retention.transitions = TimeDelta::days(DAYS);
    Site::from_config(&config)
}

async fn time(app: &axum::Router, uri: &str, requests: usize) -> [f64; 3] {
    let mut times: Vec<Duration> = Vec::with_capacity(requests);
    for _ in 0..requests {
        let started = Instant::now();
        let response = app
            .clone()
            .oneshot(Request::get(uri).body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        times.push(started.elapsed());
        assert_eq!(
            status,
            StatusCode::OK,
            "{uri}: {}",
            String::from_utf8_lossy(&body)
        );
    }
    support::percentiles(&mut times)
}

async fn with_database() {
    let clusters: Vec<String> = (0..support::size(1_000, 20))
        .map(|n| format!("c{n}"))
        .collect();
    let store: Store = common::fresh_store().await;
    let now = Utc::now();
    let history = generated_history(&clusters, now);
    let started = Instant::now();
    assert!(store.seed_history(&history).await.expect("seed"));
    println!(
        "seeded {} rollouts and {} domain verdicts ({} clusters, {DAYS} days, {} domains) in {:.1}s",
        history.rollouts.len(),
        history.domains.len(),
        clusters.len(),
        DOMAINS.len(),
        started.elapsed().as_secs_f64()
    );
    sqlx::query!("ANALYZE")
        .execute(store.pool())
        .await
        .expect("analyze");
    let bytes: i64 =
        sqlx::query_scalar!(r#"SELECT pg_total_relation_size('rollouts') AS "bytes!""#)
            .fetch_one(store.pool())
            .await
            .expect("size");
    let cluster_days = clusters.len() as f64 * DAYS as f64;
    println!(
        "rollout table: {:.1} MiB with its indexes, {:.0} bytes per cluster-day ({} domains)",
        bytes as f64 / (1 << 20) as f64,
        bytes as f64 / cluster_days,
        DOMAINS.len()
    );
    let app = web::router(AppState::new(store.clone(), site(&clusters)));
    let requests = support::size(100, 3);
    let at = (now - TimeDelta::days(10)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    println!(
        "{:<48} {:>8} {:>8} {:>8}  goal",
        "endpoint", "p50 ms", "p99 ms", "max ms"
    );
    for (uri, goal) in [
        (
            "/api/v1/domains/payments/delivery?ring=prod&window=90d".to_string(),
            "p99 ≤ 200",
        ),
        (
            "/api/v1/domains/payments/delivery?window=30d".to_string(),
            "p99 ≤ 200",
        ),
        ("/domains/payments/rollouts".to_string(), "p99 ≤ 100"),
        (format!("/?at={at}"), "p99 ≤ 500"),
    ] {
        let [p50, p99, max] = time(&app, &uri, requests).await;
        let shown: String = uri.chars().take(48).collect();
        println!("{shown:<48} {p50:>8.2} {p99:>8.2} {max:>8.2}  {goal}");
    }
}

fn main() {
    backtest();
    if std::env::var_os("DATABASE_URL").is_some() {
        support::run_async(with_database());
    } else {
        println!(
            "DATABASE_URL is not set: the database half (delivery API, rollout page, /?at=) did not run"
        );
    }
}
