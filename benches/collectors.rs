//! A thousand simulated clusters through real collectors (`app::Collector`: the lease keeper,
//! the runner, Postgres), run as `fleetglass serve` runs them but fed by a simulated source
//! instead of API servers:
//!
//! 1. One instance holding every cluster, under a steady background churn of status flips:
//!    how long one more flip takes from its event to `/api/v1` (p50/p99/max).
//! 2. Three replicas sharing the clusters through the Postgres leases: how long until they
//!    split them evenly, whether any cluster is ever held by two at once (sampled), and, after
//!    one crashes, how long until the others hold its clusters and collect them.
//!
//!     DATABASE_URL=$(scripts/pg url) cargo bench --bench collectors -- [--clusters N] [--churn R] [--part 1|2]
//!
//! Part 1 also prints what the runner's rounds did under churn: how many, their sizes, and
//! each phase's mean and p99 (`ingest::RoundLog`).
//!
//! Full: 1,000 clusters of 201 objects, 2,000 flips/s, 200 samples, the configured default
//! lease. Quick (`cargo test`): 6 clusters, 50 flips/s, 4 samples, a 3 s lease.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/simulated.rs"]
mod simulated;
mod support;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::eventually;
use fleetglass::app::{Collector, Feed, Source};
use fleetglass::config::{ClusterConfig, Config};
use fleetglass::ingest::{ClusterSet, RoundLog, RoundRecord};
use fleetglass::sources::{Collect, EventSender, SourceEvent};
use fleetglass::store::Store;
use fleetglass::web::{self, AppState, Site};
use http_body_util::BodyExt;
use simulated::{APPS_PER_CLUSTER, app_kustomization, cluster_objects};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{broadcast, watch};
use tower::ServiceExt;

/// How often a feed sends its share of the churn, and how often each cluster says it is alive.
const CHURN_TICK: Duration = Duration::from_millis(20);
const ALIVE_EVERY: Duration = Duration::from_secs(5);
/// The churn never touches app 0 of a cluster: the samples flip it and wait for it alone.
const PROBED_APP: usize = 0;
const DEADLINE: Duration = Duration::from_secs(900);
/// A flip not visible this long after its event is reported as the ingest falling behind.
const LATE: Duration = Duration::from_secs(60);

fn main() {
    support::run_async(bench());
}

async fn bench() {
    let clusters = flag("--clusters").unwrap_or(support::size(1_000, 6));
    let churn = flag("--churn").unwrap_or(support::size(2_000, 50));
    let samples = support::size(200, 4);
    let config = config(clusters);
    println!(
        "{clusters} simulated clusters × {} objects, background churn {churn} flips/s, lease {} s",
        APPS_PER_CLUSTER * 2 + 1,
        config.collector.lease.num_seconds()
    );
    let part = flag("--part");
    if part.is_none_or(|p| p == 1) {
        one_instance(&config, churn, samples).await;
    }
    if part.is_none_or(|p| p == 2) {
        three_replicas(&config, churn).await;
    }
}

/// `--name N` from the command line.
fn flag(name: &str) -> Option<usize> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == name)?;
    let value = args.get(at + 1)?;
    Some(
        value
            .parse()
            .unwrap_or_else(|_| panic!("{name} takes a number, not {value:?}")),
    )
}

fn config(clusters: usize) -> Config {
    let settings = if support::full() {
        ""
    } else {
        "collector: {lease: 3s}\n"
    };
    let mut config = fleetglass::config::from_yaml_str(settings).expect("bench config");
    config.clusters = (0..clusters)
        .map(|n| ClusterConfig {
            name: format!("sim-{n}"),
            kubeconfig: None,
            context: None,
            in_cluster: false,
            labels: Default::default(),
        })
        .collect();
    config
}

/// The simulated clusters' truth, shared by every replica's feed as the API servers would
/// be: which Kustomizations fail now, and the flips the samples ask for.
struct World {
    clusters: Vec<String>,
    failing: Vec<AtomicBool>,
    /// Churn flips per second over the whole fleet; each feed sends its share.
    churn: usize,
    probes: broadcast::Sender<usize>,
    /// When the feed holding a probed cluster sent the flip.
    flipped: watch::Sender<Instant>,
}

impl World {
    fn new(config: &Config, churn: usize) -> Arc<World> {
        let clusters: Vec<String> = config.clusters.iter().map(|c| c.name.clone()).collect();
        Arc::new(World {
            failing: (0..clusters.len() * APPS_PER_CLUSTER)
                .map(|_| AtomicBool::new(false))
                .collect(),
            clusters,
            churn,
            probes: broadcast::channel(64).0,
            flipped: watch::channel(Instant::now()).0,
        })
    }

    /// Flips one app and returns its Kustomization as it is now.
    fn flip(&self, cluster: usize, app: usize) -> SourceEvent {
        let was_failing =
            self.failing[cluster * APPS_PER_CLUSTER + app].fetch_xor(true, Ordering::Relaxed);
        let object = app_kustomization(&self.clusters[cluster], app, was_failing);
        SourceEvent::Apply(Box::new(object))
    }

    /// A cluster as a watcher's first list would see it now.
    fn listed(&self, cluster: usize) -> Vec<SourceEvent> {
        let name = &self.clusters[cluster];
        let mut objects = cluster_objects(name);
        for app in 0..APPS_PER_CLUSTER {
            if self.failing[cluster * APPS_PER_CLUSTER + app].load(Ordering::Relaxed) {
                objects[2 * app] = app_kustomization(name, app, false);
            }
        }
        let alive = SourceEvent::ClusterAlive {
            cluster: name.clone(),
            at: chrono::Utc::now(),
        };
        std::iter::once(alive)
            .chain(objects.into_iter().map(|o| SourceEvent::Apply(Box::new(o))))
            .collect()
    }

    fn feed(self: &Arc<World>) -> Source {
        let world = self.clone();
        Source::Feed(Feed::new(move |collect, events| {
            Box::pin(world.clone().run_feed(collect, events))
        }))
    }

    /// One replica's source: lists each cluster as it is adopted, then sends its share of the
    /// churn, the flips asked for on its clusters, and that its clusters are alive.
    async fn run_feed(self: Arc<World>, mut collect: Collect, events: EventSender) {
        let mut probes = self.probes.subscribe();
        let mut held: Vec<usize> = Vec::new();
        let mut churn = tokio::time::interval(CHURN_TICK);
        let mut alive = tokio::time::interval(ALIVE_EVERY);
        let mut owed = 0.0;
        loop {
            let mut batch = Vec::new();
            tokio::select! {
                changed = collect.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    let now = collect.borrow_and_update().clone();
                    let before: ClusterSet = held.iter().map(|&c| self.clusters[c].clone()).collect();
                    held = self.indexes(&now);
                    for &cluster in &held {
                        if !before.contains(&self.clusters[cluster]) {
                            batch.extend(self.listed(cluster));
                        }
                    }
                }
                _ = churn.tick() => {
                    owed += self.churn as f64 * CHURN_TICK.as_secs_f64() * held.len() as f64
                        / self.clusters.len() as f64;
                    while owed >= 1.0 && !held.is_empty() {
                        owed -= 1.0;
                        let cluster = held[rand::random_range(0..held.len())];
                        batch.push(self.flip(cluster, rand::random_range(1..APPS_PER_CLUSTER)));
                    }
                }
                _ = alive.tick() => {
                    let at = chrono::Utc::now();
                    batch.extend(held.iter().map(|&c| SourceEvent::ClusterAlive { cluster: self.clusters[c].clone(), at }));
                }
                Ok(cluster) = probes.recv() => {
                    if held.contains(&cluster) {
                        batch.push(self.flip(cluster, PROBED_APP));
                        self.flipped.send_replace(Instant::now());
                    }
                }
            }
            for event in batch {
                if events.send(event).await.is_err() {
                    return;
                }
            }
        }
    }

    fn indexes(&self, names: &ClusterSet) -> Vec<usize> {
        (0..self.clusters.len())
            .filter(|&c| names.contains(&self.clusters[c]))
            .collect()
    }
}

async fn objects_written(store: &Store) -> usize {
    sqlx::query_scalar!(r#"SELECT count(*) AS "count!" FROM objects"#)
        .fetch_one(store.pool())
        .await
        .unwrap_or(0) as usize
}

async fn transitions_written(store: &Store) -> i64 {
    sqlx::query_scalar!(r#"SELECT count(*) AS "count!" FROM transitions"#)
        .fetch_one(store.pool())
        .await
        .unwrap_or(0)
}

/// Waits until every simulated object is in Postgres; returns the seconds it took.
async fn loaded(store: &Store, world: &World, started: Instant) -> f64 {
    let expected = world.clusters.len() * (APPS_PER_CLUSTER * 2 + 1);
    eventually("every simulated object written", DEADLINE, || async {
        (objects_written(store).await >= expected).then_some(())
    })
    .await;
    started.elapsed().as_secs_f64()
}

async fn get_state(app: &axum::Router, uri: &str) -> String {
    let request = Request::get(uri).body(Body::empty()).expect("request");
    let response = app.clone().oneshot(request).await.expect("response");
    assert_eq!(response.status(), StatusCode::OK, "{uri}");
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    let value: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
    value["state"].as_str().unwrap_or_default().to_string()
}

/// Flips app 0 of `cluster` through whichever feed holds it and polls `/api/v1` every 5 ms
/// until its new state shows; returns the time from the flip's event, or None if it did not
/// show within [`LATE`] (the ingest falls behind the churn). Asks again while no feed holds the
/// cluster (just after a crash, before a survivor adopted it).
async fn sample(world: &World, app: &axum::Router, cluster: usize) -> Option<Duration> {
    let uri = format!(
        "/api/v1/objects/{}/Kustomization/flux-system/app-{PROBED_APP}",
        world.clusters[cluster]
    );
    let before = get_state(app, &uri).await;
    let asked = Instant::now();
    let mut flips = world.flipped.subscribe();
    flips.borrow_and_update();
    let flipped = loop {
        world.probes.send(cluster).expect("a feed is listening");
        if let Ok(Ok(())) = tokio::time::timeout(Duration::from_millis(500), flips.changed()).await
        {
            break *flips.borrow();
        }
        assert!(
            asked.elapsed() < Duration::from_secs(120),
            "no feed took cluster {cluster}"
        );
    };
    while get_state(app, &uri).await == before {
        if flipped.elapsed() > LATE {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Some(flipped.elapsed())
}

/// Part 1: one instance holds every cluster; propagation under churn.
async fn one_instance(config: &Config, churn: usize, samples: usize) {
    let world = World::new(config, churn);
    let store = common::fresh_store().await;
    let started = Instant::now();
    let collector = Collector::start(config, store.clone(), world.feed(), "one".into());
    let load_s = loaded(&store, &world, started).await;
    let app = web::router(AppState::new(store.clone(), Site::from_config(config)));
    // Let the churn reach its steady state before sampling.
    tokio::time::sleep(Duration::from_secs(if support::full() { 10 } else { 1 })).await;
    let (transitions_before, churn_started) = (transitions_written(&store).await, Instant::now());
    let rounds_before = collector.rounds.borrow().total();
    let mut times = Vec::with_capacity(samples);
    for n in 0..samples {
        match sample(&world, &app, n * 7919 % world.clusters.len()).await {
            Some(time) => times.push(time),
            None => break,
        }
    }
    let written = transitions_written(&store).await - transitions_before;
    let rate = written as f64 / churn_started.elapsed().as_secs_f64();
    let objects = world.clusters.len() * (APPS_PER_CLUSTER * 2 + 1);
    if times.len() < samples {
        println!(
            "one instance: {objects} objects written in {load_s:.1} s; under churn ({rate:.0} transitions/s written) sample {} did not reach /api/v1 within {} s: the ingest falls behind {churn} flips/s",
            times.len() + 1,
            LATE.as_secs()
        );
    } else {
        let [p50, p99, max] = support::percentiles(&mut times);
        println!(
            "one instance: {objects} objects written in {load_s:.1} s; under churn ({rate:.0} transitions/s written) a flip reaches /api/v1 in p50 {p50:.0} ms, p99 {p99:.0} ms, max {max:.0} ms ({samples} samples)"
        );
    }
    print_rounds(
        &collector.rounds.borrow(),
        rounds_before,
        churn_started.elapsed(),
    );
    collector.stop().await;
}

/// One phase's time in a round.
type Phase = fn(&RoundRecord) -> Duration;

/// What the runner's rounds did since `before` rounds had run, `elapsed` ago.
fn print_rounds(log: &RoundLog, before: u64, elapsed: Duration) {
    let rounds: Vec<&RoundRecord> = log.since(before).collect();
    let ran = log.total() - before;
    if rounds.is_empty() {
        println!("rounds under churn: none");
        return;
    }
    let n = rounds.len() as f64;
    let mean = |f: fn(&RoundRecord) -> usize| rounds.iter().map(|r| f(r)).sum::<usize>() as f64 / n;
    println!(
        "rounds under churn: {ran} in {:.1} s ({:.1}/s; the last {} kept), {:.1} objects changed and {:.1} clusters re-evaluated per round",
        elapsed.as_secs_f64(),
        ran as f64 / elapsed.as_secs_f64(),
        rounds.len(),
        mean(|r| r.objects),
        mean(|r| r.clusters),
    );
    let phases: [(&str, Phase); 5] = [
        ("apply", |r| r.apply),
        ("evaluate", |r| r.times.evaluate),
        ("changes", |r| r.times.changes),
        ("write", |r| r.times.write),
        ("round", |r| {
            r.times.evaluate + r.times.changes + r.times.write
        }),
    ];
    let summary: Vec<String> = phases
        .iter()
        .map(|(name, phase)| {
            let mut times: Vec<Duration> = rounds.iter().map(|r| phase(r)).collect();
            let mean_ms = times.iter().sum::<Duration>().as_secs_f64() * 1000.0 / n;
            let [_, p99, _] = support::percentiles(&mut times);
            format!("{name} {mean_ms:.1}/{p99:.1}")
        })
        .collect();
    println!("  per round, mean/p99 ms: {}", summary.join(", "));
}

/// What the three replicas hold at one instant.
fn holdings(replicas: &[Collector]) -> Vec<ClusterSet> {
    replicas.iter().map(|r| r.held.borrow().clone()).collect()
}

/// Clusters held by more than one of `sets`.
fn doubly_held(sets: &[ClusterSet]) -> usize {
    let mut seen = ClusterSet::new();
    let mut twice = ClusterSet::new();
    for set in sets {
        for cluster in set {
            if !seen.insert(cluster.clone()) {
                twice.insert(cluster.clone());
            }
        }
    }
    twice.len()
}

/// Samples the holdings every 20 ms until `done` says they are as wanted; returns the samples
/// taken and how many of them had a cluster held twice.
async fn watch_holdings(
    replicas: &[Collector],
    done: impl Fn(&[ClusterSet]) -> bool,
) -> (usize, usize) {
    let (mut taken, mut overlapping) = (0, 0);
    let begun = Instant::now();
    loop {
        let sets = holdings(replicas);
        taken += 1;
        if doubly_held(&sets) > 0 {
            overlapping += 1;
        }
        if done(&sets) {
            return (taken, overlapping);
        }
        assert!(
            begun.elapsed() < DEADLINE,
            "holdings never settled: {:?}",
            sets.iter().map(ClusterSet::len).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn covers_all(sets: &[ClusterSet], clusters: usize) -> bool {
    sets.iter().map(ClusterSet::len).sum::<usize>() == clusters && doubly_held(sets) == 0
}

/// Part 2: three replicas split the clusters; one crashes and the others take its share.
async fn three_replicas(config: &Config, churn: usize) {
    let world = World::new(config, churn);
    let clusters = world.clusters.len();
    let store = common::fresh_store().await;
    let started = Instant::now();
    let mut replicas: Vec<Collector> = (0..3)
        .map(|n| Collector::start(config, store.clone(), world.feed(), format!("replica-{n}")))
        .collect();
    // Each lease keeper takes at most its share, the clusters divided by the live replicas
    // rounded up (ingest::leases), so 1,000 split as 334, 334, 332.
    let share = clusters.div_ceil(replicas.len());
    let (samples, overlapping) = watch_holdings(&replicas, |sets| {
        covers_all(sets, clusters) && sets.iter().all(|set| set.len() <= share)
    })
    .await;
    let split_s = started.elapsed().as_secs_f64();
    let sizes: Vec<usize> = holdings(&replicas).iter().map(ClusterSet::len).collect();
    let load_s = loaded(&store, &world, started).await;
    println!(
        "three replicas: split {sizes:?} after {split_s:.1} s ({samples} samples, {overlapping} with a cluster held by two); every object written after {load_s:.1} s"
    );

    let crashed = replicas.remove(0);
    let orphans = crashed.held.borrow().clone();
    let crashed_at = Instant::now();
    crashed.crash();
    let (samples, overlapping) = watch_holdings(&replicas, |sets| covers_all(sets, clusters)).await;
    let takeover_s = crashed_at.elapsed().as_secs_f64();
    let app = web::router(AppState::new(store.clone(), Site::from_config(config)));
    let orphan = orphans.first().expect("the crashed replica held clusters");
    let index = world
        .clusters
        .iter()
        .position(|c| c == orphan)
        .expect("a simulated cluster");
    let collected = match sample(&world, &app, index).await {
        Some(_) => format!("{:.1} s", crashed_at.elapsed().as_secs_f64()),
        None => format!("more than {} s (not seen)", LATE.as_secs()),
    };
    let sizes: Vec<usize> = holdings(&replicas).iter().map(ClusterSet::len).collect();
    println!(
        "crash of a replica holding {} clusters: held again by the other two {sizes:?} after {takeover_s:.1} s (lease {} s; {samples} samples, {overlapping} with a cluster held by two); a flip on {orphan} asked for then is in /api/v1 {collected} after the crash",
        orphans.len(),
        config.collector.lease.num_seconds()
    );
    for replica in replicas {
        replica.stop().await;
    }
}
