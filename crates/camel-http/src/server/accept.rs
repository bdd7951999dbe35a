//! The accept loop and one task per connection.
//!
//! Built on hyper's HTTP/1 connection builder rather than `axum::serve`, for the two
//! bounds a public port needs and `axum::serve` does not offer: a connection limit and a
//! header read timeout (see ADR 0049).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::{ServerConfig, Shared};
use crate::one_line::OneLine;

/// What a connection over the limit reads before it is closed.
const REFUSED: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/// Pause after a failed accept (out of file descriptors): retrying at once would spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

pub(super) async fn run(
    listener: TcpListener,
    shared: Arc<Shared>,
    config: ServerConfig,
    cancel: CancellationToken,
    tracker: TaskTracker,
) {
    let permits = Arc::new(Semaphore::new(config.max_connections));
    loop {
        let accepted = tokio::select! {
            _ = cancel.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _peer)) => stream,
            Err(e) => {
                tracing::warn!(error = %e, "HTTP server: accepting a connection failed");
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
                    shared.clone(),
                    config.header_read_timeout,
                    cancel.clone(),
                ));
            }
            Err(_) => {
                tracing::debug!(
                    limit = config.max_connections,
                    "HTTP server: connection limit reached, refusing a connection"
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

async fn connection(
    stream: TcpStream,
    _permit: OwnedSemaphorePermit,
    shared: Arc<Shared>,
    header_read_timeout: Duration,
    cancel: CancellationToken,
) {
    let _ = stream.set_nodelay(true);
    let service = hyper::service::service_fn(move |req| {
        let shared = shared.clone();
        async move { Ok::<_, Infallible>(crate::platform::handler::handle(&shared, req).await) }
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
        tracing::debug!(error = %OneLine(e), "HTTP connection ended with an error");
    }
}
