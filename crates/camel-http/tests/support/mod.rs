//! A context with the HTTP components on 127.0.0.1 and a free port.
#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use camel_core::{CamelContext, RouteDefinition};
use camel_http::{HttpComponent, PlatformHttpComponent, ServerConfig};

pub fn local() -> ServerConfig {
    ServerConfig::new(([127, 0, 0, 1], 0).into())
}

pub struct Running {
    pub ctx: CamelContext,
    pub server: PlatformHttpComponent,
    pub addr: SocketAddr,
}

impl Running {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

/// Starts `routes`, then waits until the route serving `path` is registered.
pub async fn start(config: ServerConfig, routes: Vec<RouteDefinition>, path: &str) -> Running {
    let server = PlatformHttpComponent::new(config);
    let ctx = CamelContext::new();
    ctx.add_component(Arc::new(server.clone()));
    ctx.add_component(Arc::new(HttpComponent::http()));
    ctx.set_shutdown_timeout(Duration::from_secs(10));
    ctx.add_routes(routes).await.expect("routes compile");
    ctx.start().await.expect("routes start");
    let addr = tokio::time::timeout(Duration::from_secs(10), server.serving(path))
        .await
        .expect("the route registers")
        .expect("the server is bound");
    Running { ctx, server, addr }
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .expect("a client")
}
