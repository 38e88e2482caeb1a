//! What long-poll waits share, so that thousands of them cost little: a cap on how many run at
//! once, and on how many one client runs (beyond either, 503 with Retry-After; one client
//! cannot take every place), an end to all of them when the server shuts down (503 with
//! Retry-After at once, rather than a reset ten seconds later), and one wake-up for all of them when roll-ups change,
//! after which each waited-on domain is read once, not once per waiter.
//!
//! Wake-ups come from the runner's in-process evaluations when this process collects
//! (`role=all`), else from one shared Postgres `LISTEN` connection (taken from the pool) on the
//! channel the store notifies whenever it replaces roll-ups (`role=web`, and tests). A
//! notification lost in a reconnect is made up for by a wake-up on every reconnect and by a
//! re-read every [`RECHECK`], shared the same way.

use crate::ingest::Latest;
use crate::store::{ClusterRow, DomainRow, ROLLUPS_CHANNEL, Store};
use crate::web::error::ApiError;
use sqlx::postgres::PgListener;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OnceCell, OwnedSemaphorePermit, Semaphore, watch};

/// Every wait re-reads at least this often, whatever the notifications say.
const RECHECK: Duration = Duration::from_secs(30);
/// What a refused wait is told to wait before trying again, in seconds.
const RETRY_AFTER: u32 = 5;
/// Longest pause between attempts to (re)open the LISTEN connection.
const MAX_RECONNECT: Duration = Duration::from_secs(30);

/// Where wake-ups come from.
pub enum WakeSource {
    /// The runner in this process: every evaluation it publishes (after its write committed).
    Evaluations(Latest),
    /// Postgres notifications on the roll-ups channel, through one pooled connection.
    Notifications(Store),
}

type SharedRead<T> = Arc<OnceCell<Arc<T>>>;
/// A read shared by everyone asking at one generation.
type Generational<T> = (u64, SharedRead<T>);

pub struct Waits {
    max: usize,
    max_per_client: usize,
    permits: Arc<Semaphore>,
    /// Waits in flight per client (an address, or a user a trusted proxy names).
    per_client: Arc<Mutex<HashMap<String, usize>>>,
    /// Set when the server shuts down: every wait answers at once.
    closing: watch::Sender<bool>,
    generation: Arc<watch::Sender<u64>>,
    /// Taken and started by the first wait (a router built for a test may never see one).
    source: Mutex<Option<WakeSource>>,
    /// Per domain, the read for the newest generation: whoever asks first reads, the rest
    /// share the answer.
    reads: Mutex<HashMap<String, Generational<Vec<DomainRow>>>>,
    /// The cluster rows (their freshness) for the newest generation, shared the same way.
    clusters: Mutex<Generational<Vec<ClusterRow>>>,
}

impl Waits {
    pub fn new(max: usize, max_per_client: usize, source: WakeSource) -> Waits {
        Waits {
            max,
            max_per_client,
            permits: Arc::new(Semaphore::new(max)),
            per_client: Arc::default(),
            closing: watch::channel(false).0,
            generation: Arc::new(watch::channel(0).0),
            source: Mutex::new(Some(source)),
            reads: Mutex::new(HashMap::new()),
            clusters: Mutex::default(),
        }
    }

    /// A place for one more wait of `client`, or 503 with Retry-After when all are taken,
    /// when the client has its share, or when the server is shutting down.
    pub fn admit(&self, client: &str) -> Result<Place, ApiError> {
        if *self.closing.borrow() {
            return Err(shutting_down());
        }
        let mut per_client = self.per_client.lock().expect("not poisoned");
        let own = per_client.get(client).copied().unwrap_or(0);
        if own >= self.max_per_client {
            return Err(ApiError::Busy {
                message: format!(
                    "this client has {own} waits in progress already (web.limits.max_waits_per_client); try again shortly"
                ),
                retry_after: RETRY_AFTER,
            });
        }
        let permit = self
            .permits
            .clone()
            .try_acquire_owned()
            .map_err(|_| ApiError::Busy {
                message: format!(
                    "{} waits are already in progress (web.limits.max_waits); try again shortly",
                    self.max
                ),
                retry_after: RETRY_AFTER,
            })?;
        *per_client.entry(client.to_string()).or_default() += 1;
        Ok(Place {
            _permit: permit,
            client: client.to_string(),
            per_client: self.per_client.clone(),
        })
    }

    /// Ends every wait in flight, and refuses new ones: the server is shutting down.
    pub fn close(&self) {
        self.closing.send_replace(true);
    }

    /// Completes once the server is shutting down.
    pub fn closed(&self) -> impl Future<Output = ApiError> + use<> {
        let mut closing = self.closing.subscribe();
        async move {
            let _ = closing.wait_for(|closing| *closing).await.map(drop);
            shutting_down()
        }
    }

    /// Changes whenever what waits read may have changed.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        if let Some(source) = self.source.lock().expect("not poisoned").take() {
            self.start(source);
        }
        self.generation.subscribe()
    }

    /// The domain's verdict rows as of `generation`, read once however many ask.
    pub async fn domain_rows(
        &self,
        store: &Store,
        domain: &str,
        generation: u64,
    ) -> Result<Arc<Vec<DomainRow>>, sqlx::Error> {
        let read = {
            let mut reads = self.reads.lock().expect("not poisoned");
            reads.retain(|_, (seen, _)| *seen >= generation);
            let entry = reads
                .entry(domain.to_string())
                .or_insert_with(|| (generation, SharedRead::default()));
            if entry.0 < generation {
                *entry = (generation, SharedRead::default());
            }
            entry.1.clone()
        };
        read.get_or_try_init(|| async { store.domain_verdicts_of(domain).await.map(Arc::new) })
            .await
            .cloned()
    }

    /// The cluster rows as of `generation`, read once however many ask.
    pub async fn cluster_rows(
        &self,
        store: &Store,
        generation: u64,
    ) -> Result<Arc<Vec<ClusterRow>>, sqlx::Error> {
        let read = {
            let mut slot = self.clusters.lock().expect("not poisoned");
            if slot.0 < generation {
                *slot = (generation, SharedRead::default());
            }
            slot.1.clone()
        };
        read.get_or_try_init(|| async { store.clusters().await.map(Arc::new) })
            .await
            .cloned()
    }

    fn start(&self, source: WakeSource) {
        let generation = self.generation.clone();
        match source {
            WakeSource::Evaluations(latest) => {
                tokio::spawn(follow_evaluations(latest, generation.clone()))
            }
            WakeSource::Notifications(store) => {
                tokio::spawn(follow_notifications(store, generation.clone()))
            }
        };
        tokio::spawn(async move {
            let mut every = tokio::time::interval(RECHECK);
            every.tick().await;
            loop {
                every.tick().await;
                bump(&generation);
            }
        });
    }
}

fn shutting_down() -> ApiError {
    ApiError::Busy {
        message: "fleetglass is shutting down; wait again (another replica, or this one once restarted, will answer)".into(),
        retry_after: 1,
    }
}

/// One wait's place: given back when the wait ends.
pub struct Place {
    _permit: OwnedSemaphorePermit,
    client: String,
    per_client: Arc<Mutex<HashMap<String, usize>>>,
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut per_client = self.per_client.lock().expect("not poisoned");
        if let Some(count) = per_client.get_mut(&self.client) {
            *count -= 1;
            if *count == 0 {
                per_client.remove(&self.client);
            }
        }
    }
}

fn bump(generation: &watch::Sender<u64>) {
    generation.send_modify(|g| *g += 1);
}

async fn follow_evaluations(mut latest: Latest, generation: Arc<watch::Sender<u64>>) {
    while latest.changed().await.is_ok() {
        bump(&generation);
    }
}

async fn follow_notifications(store: Store, generation: Arc<watch::Sender<u64>>) {
    let mut pause = Duration::from_millis(100);
    loop {
        match listen(&store).await {
            Ok(mut listener) => {
                pause = Duration::from_millis(100);
                // Whatever happened while no one listened.
                bump(&generation);
                loop {
                    match listener.try_recv().await {
                        Ok(Some(_)) => {
                            while listener.next_buffered().is_some() {}
                            bump(&generation);
                        }
                        // The connection dropped; the listener reconnects on the next call.
                        Ok(None) => bump(&generation),
                        Err(error) => {
                            tracing::warn!(%error, "wait notifications: listening failed; reconnecting");
                            break;
                        }
                    }
                }
            }
            Err(error) => {
                tracing::warn!(%error, "wait notifications: cannot listen; retrying");
            }
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(MAX_RECONNECT);
    }
}

async fn listen(store: &Store) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(store.pool()).await?;
    listener.listen(ROLLUPS_CHANNEL).await?;
    Ok(listener)
}
