//! Ingest at a steady rate in the background: a simulated fleet's runner flips a fixed number
//! of Kustomizations every tick and writes them (the runner's own evaluation and store writes),
//! so a bench can time a page while the roll-ups it reads keep changing.

use super::simulated::SimulatedFleet;
use fleetglass::store::Store;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;

/// Rounds per second: each writes a tenth of the rate's changes.
const TICK: Duration = Duration::from_millis(100);

pub struct SteadyIngest {
    stop: Arc<AtomicBool>,
    task: JoinHandle<(usize, Duration)>,
}

impl SteadyIngest {
    /// Loads `clusters` simulated clusters named `{prefix}-{n}` and starts flipping
    /// `per_second` Kustomizations a second among them.
    pub async fn start(store: &Store, prefix: &str, clusters: usize, per_second: usize) -> Self {
        let fleet = SimulatedFleet::load(store.clone(), prefix, clusters).await;
        let per_tick = (per_second * TICK.as_millis() as usize / 1000).max(1);
        let stop = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn(run(fleet, per_tick, stop.clone()));
        SteadyIngest { stop, task }
    }

    /// Stops after the current round; returns the changes written and the time taken.
    pub async fn stop(self) -> (usize, Duration) {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.expect("steady ingest task")
    }
}

async fn run(
    mut fleet: SimulatedFleet,
    per_tick: usize,
    stop: Arc<AtomicBool>,
) -> (usize, Duration) {
    let mut tick = tokio::time::interval(TICK);
    // A round slower than the tick delays the next instead of bunching rounds up.
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let started = Instant::now();
    let mut changes = 0;
    while !stop.load(Ordering::Relaxed) {
        tick.tick().await;
        changes += fleet.round(per_tick).await;
    }
    fleet.flush().await;
    (changes, started.elapsed())
}
