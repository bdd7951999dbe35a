//! The bounded HTTP/1 accept loop, shared by the embedded `platform-http` server and the
//! `camel` binary's admin API.
//!
//! Built on hyper's HTTP/1 connection builder rather than `axum::serve`, for the two
//! bounds a listening port needs and `axum::serve` does not offer: a connection limit
//! (one connection beyond it is answered 503 and closed at once, so idle sockets cannot
//! take the process's file descriptors) and a header read timeout, the first time and
//! between requests on a kept-alive connection (see ADR 0049 and ADR 0103).

use std::convert::Infallible;
use std::error::Error as StdError;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::one_line::OneLine;

/// What a connection over the limit reads before it is closed.
const REFUSED: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/// Pause after a failed accept (out of file descriptors): retrying at once would spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// The bounds of [`serve_bounded`].
#[derive(Clone, Copy, Debug)]
pub struct ConnectionBounds {
    /// Connections served at once.
    pub max_connections: usize,
    /// Time a client has to send a request's headers.
    pub header_read_timeout: Duration,
}

/// Serves HTTP/1 connections from `listener` until `cancel` fires, each connection a
/// task on `tracker`, each request answered by `handle` (given the connection's local
/// address). On cancel, every connection finishes the request it is answering and closes;
/// wait on `tracker` for them. `server` names the listener in log lines.
pub async fn serve_bounded<H, F, B>(
    listener: TcpListener,
    bounds: ConnectionBounds,
    cancel: CancellationToken,
    tracker: TaskTracker,
    server: &'static str,
    handle: H,
) where
    H: Fn(SocketAddr, Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<B>> + Send + 'static,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let permits = Arc::new(Semaphore::new(bounds.max_connections));
    loop {
        let accepted = tokio::select! {
            _ = cancel.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _peer)) => stream,
            Err(e) => {
                tracing::warn!(server, error = %e, "accepting a connection failed");
                tokio::select! {
                    _ = cancel.cancelled() => break,
                    _ = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                }
            }
        };
        match permits.clone().try_acquire_owned() {
            Ok(permit) => {
                tracker.spawn(connection(
                    stream,
                    permit,
                    handle.clone(),
                    bounds.header_read_timeout,
                    cancel.clone(),
                    server,
                ));
            }
            Err(_) => {
                tracing::debug!(
                    server,
                    limit = bounds.max_connections,
                    "connection limit reached, refusing a connection"
                );
                refuse(stream);
            }
        }
    }
}

/// Answers 503 without waiting: the write goes to the socket's empty send buffer, and a
/// client that does not read it gets the close anyway.
fn refuse(stream: TcpStream) {
    let _ = stream.try_write(REFUSED);
    // Dropped here, closing at once: a graceful close in a spawned task would let refused
    // connections pile up.
}

async fn connection<H, F, B>(
    stream: TcpStream,
    _permit: OwnedSemaphorePermit,
    handle: H,
    header_read_timeout: Duration,
    cancel: CancellationToken,
    server: &'static str,
) where
    H: Fn(SocketAddr, Request<Incoming>) -> F + Send + Sync + 'static,
    F: Future<Output = Response<B>> + Send + 'static,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let _ = stream.set_nodelay(true);
    let Ok(local) = stream.local_addr() else {
        return;
    };
    let service = hyper::service::service_fn(move |req| {
        let answer = handle(local, req);
        async move { Ok::<_, Infallible>(answer.await) }
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout);
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    let result = tokio::select! {
        result = conn.as_mut() => result,
        _ = cancel.cancelled() => {
            // Finishes the request in flight, then closes; an idle connection closes now.
            conn.as_mut().graceful_shutdown();
            conn.as_mut().await
        }
    };
    if let Err(e) = result {
        tracing::debug!(server, error = %OneLine(e), "HTTP connection ended with an error");
    }
}
