//! The HTTP/1.1 server loop, with the bounds axum's own `serve` lacks:
//! - a request head must arrive within the header timeout (hyper starts that timer whenever a
//!   connection waits for its next request, so an idle keep-alive connection is closed after
//!   the same time; hyper `proto/h1/conn.rs`, `Conn::poll_read_head`), and may take at most
//!   [`READ_BUFFER`] bytes of memory (hyper answers 431 past it);
//! - a request body must arrive within the body timeout, whole, before the request counts as
//!   being served: until then the connection may be pushed out like one sending a slow head;
//! - at most `max_connections` are held, and at most `max_connections_per_client` from one
//!   address (see [`super::connections`]).
//!
//! Shutdown stops accepting, lets requests in progress finish (at most [`DRAIN`]; long-poll
//! waits answer at once, see [`super::waits`]) and closes the rest.

use super::connections::{Connections, Serving, Slot};
use super::error::ApiError;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::ConnectInfo;
use axum::http::{HeaderValue, Request, header};
use axum::response::Response;
use futures::StreamExt;
use hyper::body::{Body as _, Incoming};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tower::ServiceExt;

/// How long shutdown waits for requests in progress.
const DRAIN: Duration = Duration::from_secs(10);
/// Most memory hyper may take for one connection's reads: a request head must fit (cookies
/// and all; hyper's own default is ~400 KiB, which a flood of half-sent heads multiplies).
pub const READ_BUFFER: usize = 32 * 1024;

#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub max_connections: usize,
    pub max_connections_per_client: usize,
    pub header_timeout: Duration,
    pub body_timeout: Duration,
}

/// Serves `router` on `listener` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) {
    let connections = Connections::new(limits.max_connections, limits.max_connections_per_client);
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
        let Some(slot) = Connections::admit(&connections, peer.ip()) else {
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
    // Every connection holds a receiver until it has ended.
    if tokio::time::timeout(DRAIN, stop.closed()).await.is_err() {
        tracing::warn!("requests still in progress after {DRAIN:?}; closing them");
    }
}

async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    router: Router,
    limits: ConnectionLimits,
    mut slot: Slot,
    stopping: watch::Receiver<bool>,
) {
    let serving = slot.serving.clone();
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let router = router.clone();
        let serving = serving.clone();
        async move {
            let (mut parts, body) = request.into_parts();
            // The peer address lets proxy authentication trust only the configured proxies.
            parts.extensions.insert(ConnectInfo(peer));
            let body = match receive(body, limits.body_timeout).await {
                Ok(body) => body,
                Err(refusal) => return Ok::<_, Infallible>(closing(refusal, parts.uri.path())),
            };
            let _serving = Serving::start(&serving);
            router
                .oneshot(Request::from_parts(parts, Body::from(body)))
                .await
        }
    });
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(READ_BUFFER)
        .serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    let mut stop_signal = stopping.clone();
    let stop = async move {
        // The guard `wait_for` returns is not Send: drop it before anything else awaits.
        let _ = stop_signal.wait_for(|stop| *stop).await.map(drop);
    };
    let stopped = tokio::select! {
        served = connection.as_mut() => {
            if let Err(error) = served {
                tracing::debug!(%error, "connection ended with an error");
            }
            false
        }
        _ = &mut slot.pushed_out => false,
        () = stop => true,
    };
    if stopped {
        connection.as_mut().graceful_shutdown();
        let _ = connection.await;
    }
    // Held to here, so shutdown waits for this connection's last answer; the slot too, so
    // the connection counts until it has ended.
    drop((stopping, slot));
}

/// The whole request body, if it arrives within `within` and fits [`super::BODY_LIMIT`].
async fn receive(body: Incoming, within: Duration) -> Result<Bytes, ApiError> {
    if body.is_end_stream() {
        return Ok(Bytes::new());
    }
    let too_large = || {
        ApiError::PayloadTooLarge(format!(
            "the request body is larger than {} bytes",
            super::BODY_LIMIT
        ))
    };
    let announced = body.size_hint().lower();
    if announced > super::BODY_LIMIT as u64 {
        return Err(too_large());
    }
    let collect = async {
        let mut chunks = Body::new(body).into_data_stream();
        // Sized once from Content-Length: growing by doubling would leave freed buffers
        // behind on every slow connection.
        let mut received = Vec::with_capacity(announced as usize);
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(|error| {
                ApiError::BadRequest(format!("the request body could not be read: {error}"))
            })?;
            if received.len() + chunk.len() > super::BODY_LIMIT {
                return Err(too_large());
            }
            received.extend_from_slice(&chunk);
        }
        Ok(Bytes::from(received))
    };
    tokio::time::timeout(within, collect)
        .await
        .unwrap_or_else(|_| {
            Err(ApiError::SlowBody(format!(
                "the request body did not arrive within {} s",
                within.as_secs()
            )))
        })
}

/// A refusal before routing, after which the connection closes: the rest of the body, if
/// any, is never read.
fn closing(refusal: ApiError, path: &str) -> Response {
    let mut response = refusal.respond_for(path);
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}
