//! The admin API's accept loop: hyper's HTTP/1 connection builder instead of
//! `axum::serve`, for the two bounds `axum::serve` lacks. At most `max_connections` are
//! served at once (one beyond is answered 503 and closed at once, so idle sockets cannot
//! take the process's file descriptors), and a client has `header_timeout` to send its
//! headers, the first time and between requests on a kept-alive connection (a socket
//! that sends nothing is closed then). The same shape as `camel-http`'s server (ADR 0049).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

use super::guard::LocalAddr;

/// What a connection over the limit reads before it is closed.
const REFUSED: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/// Pause after a failed accept (out of file descriptors): retrying at once would spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// The bounds of the accept loop.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bounds {
    pub(crate) max_connections: usize,
    pub(crate) header_timeout: Duration,
}

/// Serves `app` on `listener` until `stop` fires, then lets each connection finish the
/// request it is answering and returns once all are closed.
pub(crate) async fn run(
    listener: TcpListener,
    app: Router,
    bounds: Bounds,
    stop: CancellationToken,
) {
    let permits = Arc::new(Semaphore::new(bounds.max_connections));
    let connections = TaskTracker::new();
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _peer)) => stream,
            Err(e) => {
                tracing::warn!(error = %e, "admin API: accepting a connection failed");
                tokio::select! {
                    _ = stop.cancelled() => break,
                    _ = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                }
            }
        };
        match permits.clone().try_acquire_owned() {
            Ok(permit) => {
                connections.spawn(connection(
                    stream,
                    permit,
                    app.clone(),
                    bounds,
                    stop.clone(),
                ));
            }
            Err(_) => {
                tracing::debug!(
                    limit = bounds.max_connections,
                    "admin API: connection limit reached, refusing a connection"
                );
                // Written to the socket's empty send buffer without waiting, then closed.
                let _ = stream.try_write(REFUSED);
            }
        }
    }
    drop(listener);
    connections.close();
    connections.wait().await;
}

async fn connection(
    stream: TcpStream,
    _permit: OwnedSemaphorePermit,
    app: Router,
    bounds: Bounds,
    stop: CancellationToken,
) {
    let Ok(local) = stream.local_addr() else {
        return;
    };
    let service = hyper::service::service_fn(move |mut req: hyper::Request<_>| {
        req.extensions_mut().insert(LocalAddr(local));
        let app = app.clone();
        async move {
            let answer = app.oneshot(req.map(Body::new)).await;
            Ok::<_, Infallible>(answer.unwrap_or_else(|never| match never {}))
        }
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(bounds.header_timeout);
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    let result = tokio::select! {
        result = conn.as_mut() => result,
        _ = stop.cancelled() => {
            // Finishes the request in flight, then closes; an idle connection closes now.
            conn.as_mut().graceful_shutdown();
            conn.as_mut().await
        }
    };
    if let Err(e) = result {
        tracing::debug!(error = %e, "admin API connection ended with an error");
    }
}
