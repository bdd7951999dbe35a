//! The admin HTTP API of `camel run --admin-addr ADDR`: health, Prometheus metrics, and
//! the routes — list them, start, stop, suspend, resume, replace (hot swap) and remove —
//! the backlog tracer (start, stop, read), and the Pub/Sub ordering keys paused after a
//! failed publish (list, resume), the outboxes (counts, owners, retry-dead, discard) and
//! the batching sinks' queues, and the web console (`/`, `/console`, see [`console`]).
//! Plain HTTP, or HTTPS with `--admin-tls-cert/--admin-tls-key` ([`tls`]).
//!
//! A request passes the checks of [`guard`] (Host, Origin, bearer token, body type) before
//! a handler sees it; the accept loop in [`accept`] bounds connections and header time.
//! The flags and their defaults are in [`config`]. See docs/admin.md and ADRs 0102, 0103.

mod accept;
mod config;
mod console;
mod guard;
mod handlers;
mod outboxes;
mod route_yaml;
mod sinks;
mod tls;
mod token;
mod trace;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::Router;
use camel_core::CamelContext;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub(crate) use config::{parse_addr, AdminArgs, AdminConfig, TOKEN_ENV};
pub(crate) use outboxes::OUTBOX_COMPONENT;

use handlers::{
    act, health, health_live, health_ready, list, one, paused_keys, remove, render_metrics,
    replace, resume_key,
};

#[derive(Clone)]
struct Admin {
    ctx: CamelContext,
    metrics: crate::metrics::Exporter,
    /// Route changes in progress (they outlive their requests).
    changes: TaskTracker,
    /// Fires when `camel run` stops: the console's live streams end.
    stop: CancellationToken,
    /// The console's live streams: one permit each (`console::MAX_STREAMS`).
    streams: Arc<tokio::sync::Semaphore>,
}

/// Largest request body: a route in YAML is a few kilobytes.
const BODY_LIMIT: usize = 256 * 1024;

/// Binds `config.addr` and serves the API until `stop` fires; returns the bound address
/// (useful with port 0) and the server's task, which ends once open requests are
/// answered. Route changes still running are tracked by `changes`: wait for them before
/// stopping the context, or one could restart a route behind the stop.
pub(crate) async fn serve(
    config: &AdminConfig,
    ctx: CamelContext,
    metrics: crate::metrics::Exporter,
    stop: CancellationToken,
    changes: TaskTracker,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(config.addr).await?;
    let bound = listener.local_addr()?;
    let guard = guard::Guard::new(
        config.token.clone(),
        bound,
        &config.allowed_hosts,
        config.header_timeout,
        BODY_LIMIT,
    );
    let app = Router::new()
        .route("/health", get(health))
        .route("/health/live", get(health_live))
        .route("/health/ready", get(health_ready))
        .route("/metrics", get(render_metrics))
        .route("/routes", get(list))
        .route("/routes/{id}", get(one).put(replace).delete(remove))
        .route("/routes/{id}/{action}", post(act))
        .route("/routes/{id}/trace", get(trace::one))
        .route("/routes/{id}/trace/{action}", post(trace::act_one))
        .route("/trace", get(trace::all))
        .route("/outboxes", get(outboxes::list))
        .route("/outboxes/{name}/{action}", post(outboxes::act))
        .route("/sinks", get(sinks::list))
        .route("/", get(console::index))
        .route("/console", get(console::index))
        .route("/console/", get(console::index))
        .route("/console/app.js", get(console::script))
        .route("/console/app.css", get(console::style))
        .route("/console/ops.js", get(console::ops_script))
        .route(console::MERMAID_PATH, get(console::mermaid))
        .route("/console/api/routes", get(console::routes))
        .route("/console/api/events", get(console::events))
        .route("/console/api/routes/{id}/{file}", get(console::diagram))
        .route("/console/api/routes/{id}/yaml", get(console::yaml))
        .route("/console/api/routes/{id}/validate", post(console::validate))
        .route("/trace/{action}", post(trace::act_all))
        .route(
            "/sinks/pubsub/projects/{project}/topics/{topic}/paused",
            get(paused_keys),
        )
        .route(
            "/sinks/pubsub/projects/{project}/topics/{topic}/paused/{key}/resume",
            post(resume_key),
        )
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(Admin {
            ctx,
            metrics,
            changes,
            stop: stop.clone(),
            streams: Arc::new(tokio::sync::Semaphore::new(console::MAX_STREAMS)),
        })
        // Outside the routes, so an unknown path or method is checked like any other.
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(guard),
            guard::check,
        ))
        // Outermost: refusals carry the browser-safety headers too.
        .layer(axum::middleware::from_fn(console::headers));
    if bound.ip().is_unspecified() {
        tracing::warn!(
            addr = %bound,
            "the admin API listens on every interface: only the token protects it; prefer a loopback or one interface's address"
        );
    }
    let bounds = camel_http::ConnectionBounds {
        max_connections: config.max_connections,
        header_read_timeout: config.header_timeout,
    };
    let server = match &config.tls {
        Some(tls) => tokio::spawn(tls::run(listener, app, bounds, stop, tls.clone())),
        None => tokio::spawn(accept::run(listener, app, bounds, stop)),
    };
    Ok((bound, server))
}
