//! The admin API's accept loop: `camel-http`'s bounded HTTP/1 loop
//! ([`camel_http::serve_bounded`]: a connection limit and a header read timeout, which
//! `axum::serve` lacks), with each request told the local address its connection came in
//! on (the Host allow-list admits it).

use axum::body::Body;
use axum::Router;
use camel_http::ConnectionBounds;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

use super::guard::LocalAddr;

/// Serves `app` on `listener` until `stop` fires, then lets each connection finish the
/// request it is answering and returns once all are closed.
pub(crate) async fn run(
    listener: TcpListener,
    app: Router,
    bounds: ConnectionBounds,
    stop: CancellationToken,
) {
    let connections = TaskTracker::new();
    camel_http::serve_bounded(
        listener,
        bounds,
        stop,
        connections.clone(),
        "admin API",
        move |local, mut req| {
            req.extensions_mut().insert(LocalAddr(local));
            let app = app.clone();
            async move {
                let answer = app.oneshot(req.map(Body::new)).await;
                answer.unwrap_or_else(|never| match never {})
            }
        },
    )
    .await;
    connections.close();
    connections.wait().await;
}
