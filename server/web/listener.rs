//! The HTTP/1.1 server loop, with the bounds axum's own `serve` lacks: a request head must
//! arrive within the header timeout (hyper starts that timer whenever a connection waits for
//! its next request, so an idle keep-alive connection is closed after the same time; hyper
//! `proto/h1/conn.rs`, `Conn::poll_read_head`), and at most `max_connections` are held. At the
//! cap, a new connection pushes out the oldest one that is not serving a request — a
//! slow-header flood is all such connections — so `/healthz` and real clients still get in;
//! only when every connection is serving a request is the newcomer closed at once. Shutdown
//! stops accepting, lets requests in progress finish (at most [`DRAIN`]) and closes the rest.

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, watch};
use tower::ServiceExt;

/// How long shutdown waits for requests in progress (a long-poll wait may be one).
const DRAIN: Duration = Duration::from_secs(10);
/// Pushed-out connections are reported at most this often.
const REPORT_EVERY: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub max_connections: usize,
    pub header_timeout: Duration,
}

/// Serves `router` on `listener` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) {
    let connections = Arc::new(Mutex::new(Connections::new(limits.max_connections)));
    let (stop, stopping) = watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of file descriptors and the like: pause rather than spin.
                tracing::warn!(%error, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Some(slot) = Connections::admit(&connections) else {
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(connection(
            stream,
            peer,
            router.clone(),
            limits,
            slot,
            stopping.clone(),
        ));
    }
    drop(listener);
    let _ = stop.send(true);
    drop(stopping);
    if tokio::time::timeout(DRAIN, stop.closed()).await.is_err() {
        tracing::warn!("requests still in progress after {DRAIN:?}; closing them");
    }
}

async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    router: Router,
    limits: ConnectionLimits,
    slot: Slot,
    mut stopping: watch::Receiver<bool>,
) {
    let Slot {
        busy,
        pushed_out,
        _registration,
    } = slot;
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        // The peer address lets proxy authentication trust only the configured proxies.
        request.extensions_mut().insert(ConnectInfo(peer));
        let serving = Busy::start(&busy);
        let router = router.clone();
        async move {
            let response = router.oneshot(request).await;
            drop(serving);
            response
        }
    });
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    let stop = async move {
        // The guard `wait_for` returns is not Send: drop it before anything else awaits.
        let _ = stopping.wait_for(|stop| *stop).await.map(drop);
    };
    let stopped = tokio::select! {
        served = connection.as_mut() => {
            if let Err(error) = served {
                tracing::debug!(%error, "connection ended with an error");
            }
            false
        }
        _ = pushed_out => false,
        () = stop => true,
    };
    if stopped {
        connection.as_mut().graceful_shutdown();
        let _ = connection.await;
    }
}

/// Requests in progress on one connection; a connection with none may be pushed out.
struct Busy(Arc<AtomicUsize>);

impl Busy {
    fn start(count: &Arc<AtomicUsize>) -> Busy {
        count.fetch_add(1, Ordering::SeqCst);
        Busy(count.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A connection's place among those held: removed when the connection ends.
struct Slot {
    busy: Arc<AtomicUsize>,
    pushed_out: oneshot::Receiver<()>,
    _registration: Registration,
}

struct Registration {
    id: u64,
    connections: Arc<Mutex<Connections>>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.connections
            .lock()
            .expect("not poisoned")
            .open
            .remove(&self.id);
    }
}

struct Held {
    busy: Arc<AtomicUsize>,
    push_out: oneshot::Sender<()>,
}

/// Every connection held, oldest first.
struct Connections {
    max: usize,
    next_id: u64,
    open: BTreeMap<u64, Held>,
    pushed_out: u64,
    refused: u64,
    reported: Option<Instant>,
}

impl Connections {
    fn new(max: usize) -> Connections {
        Connections {
            max,
            next_id: 0,
            open: BTreeMap::new(),
            pushed_out: 0,
            refused: 0,
            reported: None,
        }
    }

    /// A slot for a new connection, making room by pushing out the oldest idle one; `None`
    /// when every held connection is serving a request.
    fn admit(this: &Arc<Mutex<Connections>>) -> Option<Slot> {
        let mut connections = this.lock().expect("not poisoned");
        if connections.open.len() >= connections.max {
            let idle = connections
                .open
                .iter()
                .find(|(_, held)| held.busy.load(Ordering::SeqCst) == 0)
                .map(|(id, _)| *id);
            match idle.and_then(|id| connections.open.remove(&id)) {
                Some(held) => {
                    let _ = held.push_out.send(());
                    connections.pushed_out += 1;
                }
                None => connections.refused += 1,
            }
            connections.report();
            if connections.open.len() >= connections.max {
                return None;
            }
        }
        let id = connections.next_id;
        connections.next_id += 1;
        let busy = Arc::new(AtomicUsize::new(0));
        let (push_out, pushed_out) = oneshot::channel();
        connections.open.insert(
            id,
            Held {
                busy: busy.clone(),
                push_out,
            },
        );
        Some(Slot {
            busy,
            pushed_out,
            _registration: Registration {
                id,
                connections: this.clone(),
            },
        })
    }

    fn report(&mut self) {
        if self.reported.is_some_and(|at| at.elapsed() < REPORT_EVERY) {
            return;
        }
        tracing::warn!(
            max_connections = self.max,
            pushed_out = self.pushed_out,
            refused = self.refused,
            "connection cap reached: idle connections pushed out, or new ones refused while every connection serves a request"
        );
        self.reported = Some(Instant::now());
        self.pushed_out = 0;
        self.refused = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_the_cap_the_oldest_idle_connection_makes_room() {
        let connections = Arc::new(Mutex::new(Connections::new(2)));
        let mut first = Connections::admit(&connections).unwrap();
        let second = Connections::admit(&connections).unwrap();
        let serving = Busy::start(&second.busy);
        let third = Connections::admit(&connections).expect("room made");
        assert!(
            first.pushed_out.try_recv().is_ok(),
            "the oldest idle one went"
        );
        let _serving_too = Busy::start(&third.busy);
        assert!(
            Connections::admit(&connections).is_none(),
            "nobody idle: refused"
        );
        drop(serving);
        assert!(
            Connections::admit(&connections).is_some(),
            "second is idle again"
        );
        drop((first, second, third));
        assert!(connections.lock().unwrap().open.len() <= 1);
    }
}
