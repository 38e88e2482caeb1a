//! Ingest end to end and how it grows with the fleet: simulated clusters feed source events
//! into a real `ingest::Runner` writing to Postgres (events → evaluation → batched write), at
//! 10, 100 and 1,000 clusters. Prints sustained status changes per second, where the runner's
//! round goes as the runner times its phases (evaluate, changes: diffing verdicts into rows and
//! publishing, write: the database transaction; apply: the events into the snapshot), so the
//! bottleneck is named, the evaluation's cost per object and the round's cost per change, the
//! engine's work per round when 1 % of the clusters changed (the collector re-evaluates only
//! those) against the whole fleet's, and an estimate of the largest fleet one instance holds with propagation p99 under 2 s.
//!
//!   DATABASE_URL=$(scripts/pg url) cargo bench --bench growth
//!   DATABASE_URL=$(scripts/pg url) cargo bench --bench growth -- --clusters 1000   # one size

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/simulated.rs"]
mod simulated;
mod support;

use fleetglass::health::{Parts, Thresholds};
use fleetglass::ingest::{Evaluations, Round};
use fleetglass::model::Object;
use simulated::SimulatedFleet;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

/// The runner's minimum gap between rounds: a change waits at most this long for its round.
const MIN_GAP_SECONDS: f64 = 0.1;

struct Measured {
    clusters: usize,
    objects: usize,
    engine_ns_per_object: f64,
    write_us_per_change: f64,
}

fn main() {
    support::run_async(bench());
}

async fn bench() {
    let asked = clusters_asked();
    let sizes: Vec<usize> = if !asked.is_empty() {
        asked
    } else if support::full() {
        vec![10, 100, 1_000]
    } else {
        vec![2]
    };
    // Changes per round: under a sustained flood the runner takes everything that arrived
    // during the previous round, so the larger batch shows the rate it keeps up with.
    let batches = if support::full() {
        vec![2_000, 10_000]
    } else {
        vec![10]
    };
    let rounds = support::size(5, 2);
    println!(
        "{:>8} {:>8} {:>6} {:>10} {:>10} {:>11} {:>10} {:>10} {:>8} {:>13} {:>13}  bottleneck",
        "clusters",
        "objects",
        "batch",
        "changes/s",
        "round ms",
        "evaluate ms",
        "changes ms",
        "write ms",
        "apply ms",
        "eval ns/obj",
        "round µs/chg"
    );
    let mut measured = Vec::new();
    for clusters in sizes {
        measured.push(fleet(clusters, &batches, rounds).await);
    }
    growth(&measured);
}

/// The sizes given as `--clusters N` (repeatable), if any.
fn clusters_asked() -> Vec<usize> {
    let args: Vec<String> = std::env::args().collect();
    args.windows(2)
        .filter(|pair| pair[0] == "--clusters")
        .map(|pair| pair[1].parse().expect("--clusters takes a number"))
        .collect()
}

async fn transitions(store: &fleetglass::store::Store) -> i64 {
    sqlx::query_scalar!(r#"SELECT count(*) AS "count!" FROM transitions"#)
        .fetch_one(store.pool())
        .await
        .expect("count transitions")
}

/// One fleet: loads it, then for each batch size (a row each) runs `rounds` rounds flipping
/// that many Kustomizations' Ready condition. Returns the largest batch's costs.
async fn fleet(clusters: usize, batches: &[usize], rounds: usize) -> Measured {
    let store = common::fresh_store().await;
    let loaded = Instant::now();
    let mut fleet = SimulatedFleet::load(store.clone(), "cluster", clusters).await;
    let load_seconds = loaded.elapsed().as_secs_f64();
    let mut measured = None;
    let mut done = Vec::new();
    for &batch in batches {
        let changes = batch.min(fleet.apps());
        if !done.contains(&changes) {
            done.push(changes);
            let row = batches_of(&store, &mut fleet, clusters, changes, rounds, load_seconds);
            measured = Some(row.await);
        }
    }
    incremental(&fleet.objects, clusters);
    store.pool().close().await;
    measured.expect("at least one batch size")
}

/// The engine's work in a collector round when 1 % of the clusters changed (at least one):
/// re-evaluating those and publishing the fleet (every cluster's evaluation shared, the
/// fleet's root causes ordered for the alerts), against evaluating every cluster (as the
/// first round does). Best of 5 each. The "merging" figure is that publication alone.
fn incremental(objects: &[Object], clusters: usize) {
    let mut groups: BTreeMap<&str, Vec<Object>> = BTreeMap::new();
    for object in objects {
        groups
            .entry(object.cluster.as_str())
            .or_default()
            .push(object.clone());
    }
    let thresholds = Thresholds::default();
    let seen = Default::default();
    let round = Round {
        objects: groups.iter().map(|(c, o)| (*c, o.as_slice())).collect(),
        infos: &[],
        only: None,
        domains: &[],
        thresholds: &thresholds,
        seen_in_progress: &seen,
        now: chrono::Utc::now(),
    };
    let all: BTreeSet<String> = groups.keys().map(|c| c.to_string()).collect();
    let changing = (clusters / 100).max(1);
    let some: BTreeSet<String> = all
        .iter()
        .step_by(clusters / changing)
        .take(changing)
        .cloned()
        .collect();
    let mut evaluations = Evaluations::default();
    let (mut whole, mut partial) = (f64::MAX, f64::MAX);
    for _ in 0..support::size(5, 1) {
        let started = Instant::now();
        evaluations.update(&round, &all);
        publish(&evaluations);
        whole = whole.min(started.elapsed().as_secs_f64());
        let started = Instant::now();
        let redone = evaluations.update(&round, &some);
        publish(&evaluations);
        partial = partial.min(started.elapsed().as_secs_f64());
        assert_eq!(
            redone.evaluated, some,
            "only the changed clusters are evaluated again"
        );
    }
    let merge = {
        let started = Instant::now();
        publish(&evaluations);
        started.elapsed().as_secs_f64()
    };
    println!(
        "incremental engine at {clusters} clusters, {changing} changed (1 %): {:.1} ms per round (of which merging every cluster's verdicts {:.1} ms) against {:.1} ms for every cluster: {:.1} %",
        partial * 1e3,
        merge * 1e3,
        whole * 1e3,
        partial / whole * 100.0,
    );
}

/// What the runner does with the kept evaluations after a round that changed a verdict: shares
/// them as the published fleet, whose root causes the alerts read in the fleet's order.
fn publish(evaluations: &Evaluations) {
    let fleet = evaluations.fleet();
    std::hint::black_box(fleet.root_causes());
    std::hint::black_box(fleet);
}

/// `rounds` rounds of `changes` flips, timing them (each round's write runs beside the next
/// round, as in the collector; the last write is waited for) and each round's phases as the
/// runner logged them; prints the row, and a line on how much of the write the rounds waited.
async fn batches_of(
    store: &fleetglass::store::Store,
    fleet: &mut SimulatedFleet,
    clusters: usize,
    changes: usize,
    rounds: usize,
    load_seconds: f64,
) -> Measured {
    let before = transitions(store).await;
    let log = fleet.rounds();
    let mark = log.borrow().total();
    let started = Instant::now();
    for _ in 0..rounds {
        fleet.round(changes).await;
    }
    let flushing = Instant::now();
    fleet.flush().await;
    let flushed = flushing.elapsed().as_secs_f64();
    let round_s = started.elapsed().as_secs_f64();
    let mut phases = [0.0; 4];
    for record in log.borrow().since(mark) {
        let times = record.times;
        for (sum, phase) in
            phases
                .iter_mut()
                .zip([times.evaluate, times.changes, times.write, times.waited])
        {
            *sum += phase.as_secs_f64();
        }
    }
    let objects = fleet.objects.len();
    let written = transitions(store).await - before;
    // Each flip changes the Kustomization's state; its Deployment follows its owner or not,
    // so at least one transition per change must have reached Postgres.
    assert!(
        written >= (changes * rounds) as i64,
        "only {written} transitions written for {} changes (states: {:?})",
        changes * rounds,
        sqlx::query!("SELECT kind, state, count(*) FROM objects GROUP BY 1, 2")
            .fetch_all(store.pool())
            .await
            .map(|rows| rows
                .into_iter()
                .map(|row| (row.kind, row.state, row.count))
                .collect::<Vec<_>>())
    );
    let ms = |seconds: f64| seconds * 1e3 / rounds as f64;
    let round_ms = ms(round_s);
    let [evaluate_ms, changes_ms, write_ms, waited_ms] = phases.map(ms);
    // What the rounds waited for writes: for the previous round's, and at the end the last.
    let blocked_ms = waited_ms + ms(flushed);
    // The rest of the round: applying the flips and the cluster probes to the snapshot.
    let apply_ms = (round_ms - evaluate_ms - changes_ms - blocked_ms).max(0.0);
    let bottleneck = [
        (evaluate_ms, "evaluate (re-evaluating the changed clusters)"),
        (
            changes_ms,
            "changes (diffing verdicts into rows, roll-ups, publishing)",
        ),
        (
            write_ms,
            "write (Postgres upserts + transitions + roll-ups)",
        ),
        (apply_ms, "apply (events into the snapshot)"),
    ]
    .into_iter()
    .max_by(|a, b| a.0.total_cmp(&b.0))
    .map_or("", |(_, name)| name);
    println!(
        "{clusters:>8} {:>8} {changes:>6} {:>10.0} {round_ms:>10.1} {evaluate_ms:>11.1} {changes_ms:>10.1} {write_ms:>10.1} {apply_ms:>8.1} {:>13.0} {:>13.1}  {bottleneck}; initial load {load_seconds:.1}s, {written} transitions",
        objects,
        changes as f64 / (round_ms / 1e3),
        evaluate_ms * 1e6 / objects as f64,
        round_ms * 1e3 / changes as f64,
    );
    println!(
        "    write beside the next round: {write_ms:.1} ms per round, of which the rounds waited {blocked_ms:.1} ms ({:.0} % hidden behind apply, evaluate and changes)",
        (1.0 - blocked_ms / write_ms.max(f64::MIN_POSITIVE)).max(0.0) * 100.0,
    );
    Measured {
        clusters,
        objects,
        engine_ns_per_object: evaluate_ms * 1e6 / objects as f64,
        write_us_per_change: write_ms * 1e3 / changes as f64,
    }
}

/// Says whether costs grew linearly, and estimates the largest fleet under a 2 s p99.
fn growth(measured: &[Measured]) {
    let (Some(small), Some(large)) = (measured.first(), measured.last()) else {
        return;
    };
    let growth = large.engine_ns_per_object / small.engine_ns_per_object;
    let write_growth = large.write_us_per_change / small.write_us_per_change;
    println!(
        "growth {}→{} clusters: engine per object ×{growth:.2}, write per change ×{write_growth:.2} ({})",
        small.clusters,
        large.clusters,
        if growth < 1.5 && write_growth < 1.5 {
            "linear: per-item costs stay flat"
        } else {
            "worse than linear"
        }
    );
    // ESTIMATE. A change waits for the round gap (≤ 100 ms), then a whole round: the engine
    // over every object plus the write of that round's changes. Assume a steady 1% of objects
    // change per round and 2× headroom for p99 over the mean on 2 shared cores.
    let per_object_s = large.engine_ns_per_object * 1e-9 + 0.01 * large.write_us_per_change * 1e-6;
    let budget_s = (2.0 - MIN_GAP_SECONDS) / 2.0;
    let max_objects = budget_s / per_object_s;
    let per_cluster = large.objects / large.clusters;
    println!(
        "ESTIMATE largest fleet with propagation p99 < 2 s: (2 s − {MIN_GAP_SECONDS} s gap) / 2 headroom = {budget_s:.2} s per round; per object {:.0} ns engine + 1% × {:.1} µs write = {:.0} ns; {budget_s:.2} s / {:.0} ns ≈ {max_objects:.0} objects ≈ {:.0} clusters of {per_cluster} objects",
        large.engine_ns_per_object,
        large.write_us_per_change,
        per_object_s * 1e9,
        per_object_s * 1e9,
        max_objects / per_cluster as f64,
    );
}
