//! The embedded HTTP server, one per `platform-http` component (so one per context),
//! shared by every `platform-http:` route.
//!
//! It binds when the first route starts, not before: a context without HTTP routes opens
//! no port. Routes add their paths to its [table](table::RouteTable) when they start and
//! remove them when they stop, so stopping or swapping one route never drops the server
//! for the others. Once the context is stopping every new request is answered 503 with
//! `Retry-After`; when its last route has stopped the listener closes and the server waits
//! for the connections still answering (bounded by the route's stop deadline).

pub(crate) mod accept;
pub(crate) mod budget;
pub(crate) mod path;
pub(crate) mod table;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use camel_api::ContextChange;
use std::sync::Mutex;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Where the server listens and the bounds that protect it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ServerConfig {
    /// The address to bind; port 0 picks a free port (see
    /// [`PlatformHttpComponent::local_addr`](crate::PlatformHttpComponent::local_addr)).
    pub addr: SocketAddr,
    /// Connections served at once; a connection beyond it is answered 503 and closed, so
    /// idle or slow clients cannot exhaust the process's sockets and memory.
    pub max_connections: usize,
    /// Time a client has to send a request's headers; a slower one (slowloris) is
    /// disconnected.
    pub header_read_timeout: Duration,
    /// Time a client has to send a request's whole body, from the end of its headers; a
    /// slower one is answered 408 and disconnected, so clients trickling bodies cannot
    /// hold every connection (and the memory of their bodies) indefinitely.
    pub body_read_timeout: Duration,
    /// Request body bytes held at once across every connection, from the first byte read
    /// until the exchange is answered. A request whose body would exceed it is answered
    /// 503 with `Retry-After`: without it the bound is `max_connections` × the routes'
    /// `max_body_size` (10 GiB with the defaults).
    pub max_buffered_body_bytes: usize,
    /// What a 503's `Retry-After` says.
    pub retry_after: Duration,
}

/// Default of [`ServerConfig::body_read_timeout`]: 30 s.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Default of [`ServerConfig::max_buffered_body_bytes`]: 256 MiB.
pub const DEFAULT_MAX_BUFFERED_BODY_BYTES: usize = 256 * 1024 * 1024;

impl ServerConfig {
    /// Defaults for `addr`: 1024 connections, 10 s to send the headers, 30 s to send the
    /// body, 256 MiB of bodies buffered at once, retry after 1 s.
    pub fn new(addr: SocketAddr) -> Self {
        ServerConfig {
            addr,
            max_connections: 1024,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            max_buffered_body_bytes: DEFAULT_MAX_BUFFERED_BODY_BYTES,
            retry_after: Duration::from_secs(1),
        }
    }

    /// Sets the connection limit (at least 1).
    pub fn with_max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// Sets the header read timeout.
    pub fn with_header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// Sets the body read timeout.
    pub fn with_body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// Sets the budget of request body bytes buffered at once across connections.
    pub fn with_max_buffered_body_bytes(mut self, bytes: usize) -> Self {
        self.max_buffered_body_bytes = bytes;
        self
    }
}

/// What the connections share with the server: the table, the stopping flag and the
/// body bounds.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) table: table::RouteTable,
    stopping: AtomicBool,
    pub(crate) retry_after_secs: u64,
    pub(crate) body_read_timeout: Duration,
    pub(crate) bodies: budget::BodyBudget,
}

impl Shared {
    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }
}

#[derive(Debug)]
struct Running {
    addr: SocketAddr,
    cancel: CancellationToken,
    tracker: TaskTracker,
}

/// The server of one component.
#[derive(Debug)]
pub(crate) struct SharedServer {
    config: ServerConfig,
    pub(crate) shared: Arc<Shared>,
    /// Never held across an `.await`.
    running: Mutex<Option<Running>>,
    bound: watch::Sender<Option<SocketAddr>>,
}

impl SharedServer {
    pub(crate) fn new(config: ServerConfig) -> Self {
        let shared = Arc::new(Shared {
            table: table::RouteTable::default(),
            stopping: AtomicBool::new(false),
            retry_after_secs: config.retry_after.as_secs().max(1),
            body_read_timeout: config.body_read_timeout,
            bodies: budget::BodyBudget::new(config.max_buffered_body_bytes),
        });
        SharedServer {
            config,
            shared,
            running: Mutex::new(None),
            bound: watch::Sender::new(None),
        }
    }

    pub(crate) fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The bound address, binding first if no route has yet. Synchronous, so a route's
    /// start (which asks for its consumer) fails at once when the port is taken; needs a
    /// Tokio runtime, as every route start has.
    pub(crate) fn ensure_running(&self) -> std::io::Result<SocketAddr> {
        let mut running = self.lock_running();
        if let Some(r) = &*running {
            return Ok(r.addr);
        }
        let std_listener = std::net::TcpListener::bind(self.config.addr)?;
        std_listener.set_nonblocking(true)?;
        let listener = tokio::net::TcpListener::from_std(std_listener)?;
        let addr = listener.local_addr()?;
        let cancel = CancellationToken::new();
        let tracker = TaskTracker::new();
        let bounds = accept::ConnectionBounds {
            max_connections: self.config.max_connections,
            header_read_timeout: self.config.header_read_timeout,
        };
        let shared = self.shared.clone();
        tracker.spawn(accept::serve_bounded(
            listener,
            bounds,
            cancel.clone(),
            tracker.clone(),
            "platform-http",
            move |_local, req| {
                let shared = shared.clone();
                async move { crate::platform::handler::handle(&shared, req).await }
            },
        ));
        tracing::info!(%addr, "HTTP server listening on {addr}");
        *running = Some(Running {
            addr,
            cancel,
            tracker,
        });
        self.bound.send_replace(Some(addr));
        Ok(addr)
    }

    fn lock_running(&self) -> std::sync::MutexGuard<'_, Option<Running>> {
        // Only ever replaced whole, so a poisoned value is still consistent.
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Called by a route that removed itself: when the context is stopping and no route is
    /// left, closes the listener and waits for the connections to finish their responses.
    pub(crate) async fn release(&self) {
        if !self.shared.is_stopping() || !self.shared.table.is_empty() {
            return;
        }
        let Some(running) = self.lock_running().take() else {
            return;
        };
        running.cancel.cancel();
        running.tracker.close();
        running.tracker.wait().await;
        self.bound.send_replace(None);
        tracing::info!(addr = %running.addr, "HTTP server stopped");
    }

    pub(crate) fn context_changed(&self, change: ContextChange) {
        match change {
            ContextChange::Starting => self.shared.stopping.store(false, Ordering::SeqCst),
            ContextChange::Stopping => {
                self.shared.stopping.store(true, Ordering::SeqCst);
                // No route will release the server: close it now. Without awaiting, as
                // this is synchronous; no route means no response to wait for.
                if self.shared.table.is_empty() {
                    if let Some(r) = self.lock_running().take() {
                        r.cancel.cancel();
                        r.tracker.close();
                        self.bound.send_replace(None);
                    }
                }
            }
            _ => {}
        }
    }

    /// The bound address, once bound.
    pub(crate) fn bound(&self) -> Option<SocketAddr> {
        *self.bound.borrow()
    }

    /// Resolves with the address once bound.
    pub(crate) async fn wait_bound(&self) -> Option<SocketAddr> {
        let mut rx = self.bound.subscribe();
        let addr = rx.wait_for(|a| a.is_some()).await.ok()?;
        *addr
    }
}

impl Drop for SharedServer {
    fn drop(&mut self) {
        // A context dropped without a stop must not leave the listener open.
        let running = self.running.get_mut().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = running.take() {
            r.cancel.cancel();
        }
    }
}
