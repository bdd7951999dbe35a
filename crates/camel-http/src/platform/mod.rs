//! `platform-http:/path` — a route source answering HTTP requests on the context's shared
//! server.
//!
//! Each request becomes an `InOut` exchange (see the crate docs for the header mapping);
//! the route's result is the response. The consumer registers its path when the route
//! starts and removes it when the route stops, after the requests it accepted are answered.

pub(crate) mod handler;
mod reply;

use std::net::SocketAddr;
use std::sync::Arc;

use async_trait::async_trait;
use axum::http::Method;
use camel_api::{
    BoxProcessor, CamelError, Component, ComponentContext, Consumer, ConsumerContext,
    ContextChange, Endpoint, EndpointUri,
};

use crate::server::path::PathTemplate;
use crate::server::table::Registration;
use crate::server::{ServerConfig, SharedServer};

const OPTIONS: &[&str] = &[
    "http_method_restrict",
    "max_body_size",
    "binding_mode",
    "consumes",
    "produces",
];

/// How a route's request body is read and its reply typed: the REST DSL's `binding_mode`,
/// `consumes` and `produces`, which the expansion of a `rest:` item passes as options of
/// the `platform-http:` URI it generates (ADR 0073).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Binding {
    /// `binding_mode=json`: a non-empty request body is parsed as JSON (a malformed one is
    /// answered 400 with its line and column) and reaches the route as a JSON body.
    pub json: bool,
    /// Media types the operation accepts (documentation; sent to OpenAPI).
    pub consumes: Option<String>,
    /// The reply's `Content-Type` when the route sets none (the first listed type).
    pub produces: Option<String>,
}

impl Binding {
    fn parse(p: &mut camel_api::Parameters, raw: &Arc<str>) -> Result<Self, CamelError> {
        let json = match p.take_str("binding_mode").as_deref() {
            None | Some("off") => false,
            Some("json") => true,
            Some(other) => {
                return Err(CamelError::invalid_uri(
                    raw.clone(),
                    format!(
                        "`binding_mode`: `{other}` is not supported (`off` or `json`; XML binding \
                         is not available in camel-rs)"
                    ),
                ))
            }
        };
        let produces = p.take_str("produces").and_then(|list| {
            list.split(',')
                .map(str::trim)
                .find(|t| !t.is_empty())
                .map(str::to_string)
        });
        Ok(Binding {
            json,
            consumes: p.take_str("consumes"),
            produces,
        })
    }
}

/// Largest request body read by default: 10 MiB.
pub const DEFAULT_MAX_BODY_SIZE: usize = 10 * 1024 * 1024;

/// The `platform-http` component: owns the context's embedded server.
#[derive(Clone, Debug)]
pub struct PlatformHttpComponent {
    server: Arc<SharedServer>,
}

impl PlatformHttpComponent {
    /// A component whose server binds `config.addr` when its first route starts.
    pub fn new(config: ServerConfig) -> Self {
        PlatformHttpComponent {
            server: Arc::new(SharedServer::new(config)),
        }
    }

    /// A component listening on every interface on `port` (Camel JBang's `--port`).
    pub fn on_port(port: u16) -> Self {
        Self::new(ServerConfig::new(SocketAddr::from(([0, 0, 0, 0], port))))
    }

    /// The address the server listens on, once a route has started it.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.server.bound()
    }

    /// Request body bytes the server holds now, across its connections (bounded by
    /// [`ServerConfig::max_buffered_body_bytes`]).
    pub fn buffered_body_bytes(&self) -> usize {
        self.server.shared.bodies.used()
    }

    /// The most request body bytes the server has held at once.
    pub fn peak_buffered_body_bytes(&self) -> usize {
        self.server.shared.bodies.peak()
    }

    /// Resolves with the server's address once a route serves `path` (the template as
    /// written in its URI): a route's consumer registers shortly after the route starts.
    pub async fn serving(&self, path: &str) -> Option<SocketAddr> {
        self.server.shared.table.wait_for(path).await;
        self.server.wait_bound().await
    }
}

impl Default for PlatformHttpComponent {
    /// Port 8080 on every interface, as Camel JBang.
    fn default() -> Self {
        Self::on_port(8080)
    }
}

impl Component for PlatformHttpComponent {
    fn scheme(&self) -> &str {
        "platform-http"
    }

    fn endpoint(
        &self,
        mut uri: EndpointUri,
        _ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let raw = uri.raw();
        let template =
            PathTemplate::parse(uri.path()).map_err(|e| CamelError::invalid_uri(raw.clone(), e))?;
        let p = &mut uri.parameters;
        let methods = match p.take_str("http_method_restrict") {
            None => None,
            Some(list) => {
                Some(parse_methods(&list).map_err(|e| CamelError::invalid_uri(raw.clone(), e))?)
            }
        };
        let max_body_size = p
            .take::<usize>("max_body_size")?
            .unwrap_or(DEFAULT_MAX_BODY_SIZE);
        let binding = Binding::parse(p, &raw)?;
        uri.parameters.finish(OPTIONS)?;
        Ok(Arc::new(PlatformHttpEndpoint {
            uri: raw,
            template,
            methods,
            max_body_size,
            binding,
            server: self.server.clone(),
        }))
    }

    fn context_changed(&self, change: ContextChange) {
        self.server.context_changed(change);
    }
}

fn parse_methods(list: &str) -> Result<Vec<Method>, String> {
    const KNOWN: &[&str] = &[
        "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE",
    ];
    let mut methods = Vec::new();
    for name in list.split(',').map(str::trim).filter(|m| !m.is_empty()) {
        let upper = name.to_ascii_uppercase();
        if !KNOWN.contains(&upper.as_str()) {
            return Err(format!(
                "`http_method_restrict`: `{name}` is not an HTTP method (one of {})",
                KNOWN.join(", ")
            ));
        }
        methods.push(Method::from_bytes(upper.as_bytes()).map_err(|e| e.to_string())?);
    }
    if methods.is_empty() {
        return Err("`http_method_restrict` names no method".into());
    }
    Ok(methods)
}

#[derive(Debug)]
struct PlatformHttpEndpoint {
    uri: Arc<str>,
    template: PathTemplate,
    methods: Option<Vec<Method>>,
    max_body_size: usize,
    binding: Binding,
    server: Arc<SharedServer>,
}

impl Endpoint for PlatformHttpEndpoint {
    fn uri(&self) -> &str {
        &self.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        Err(CamelError::invalid_uri(
            self.uri.clone(),
            "platform-http can only start a route (`from`); to call a server use `http:` or `https:`",
        ))
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        // Bound here rather than in `run`: this is called by the route's start, so a port
        // in use fails the start (and `camel run`) instead of a consumer task later.
        self.server.ensure_running().map_err(|e| {
            CamelError::external(format!("cannot listen on {}", self.server.config().addr), e)
        })?;
        Ok(Box::new(PlatformHttpConsumer {
            uri: self.uri.clone(),
            template: self.template.clone(),
            methods: self.methods.clone(),
            max_body_size: self.max_body_size,
            binding: self.binding.clone(),
            server: self.server.clone(),
        }))
    }
}

#[derive(Debug)]
struct PlatformHttpConsumer {
    uri: Arc<str>,
    template: PathTemplate,
    methods: Option<Vec<Method>>,
    max_body_size: usize,
    binding: Binding,
    server: Arc<SharedServer>,
}

#[async_trait]
impl Consumer for PlatformHttpConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        // Bound by `consumer()` already, unless a context stop closed the server since.
        let addr = self.server.ensure_running().map_err(|e| {
            CamelError::external(format!("cannot listen on {}", self.server.config().addr), e)
        })?;
        let reg = Registration::new(
            self.template.clone(),
            self.methods.clone(),
            self.max_body_size,
            self.binding.clone(),
            ctx.clone(),
        );
        self.server
            .shared
            .table
            .add(reg.clone())
            .map_err(|e| CamelError::invalid_uri(self.uri.clone(), e))?;
        // Removes the path however this task ends, also when the route's stop aborts it at
        // the deadline: a path left behind would refuse the route's next start.
        let registered = Registered {
            shared: self.server.shared.clone(),
            reg: reg.clone(),
        };
        tracing::info!(route_id = %ctx.route_id(), path = %self.template, %addr, "serving http://{addr}{}", self.template);
        ctx.cancelled().await;
        // New requests get 503 from here on; those accepted are answered (the route's stop
        // has drained its exchanges) before the path goes away.
        reg.refuse();
        reg.idle().await;
        drop(registered);
        self.server.release().await;
        Ok(())
    }
}

/// A registration in the server's table, removed when dropped.
#[derive(Debug)]
struct Registered {
    shared: Arc<crate::server::Shared>,
    reg: Arc<Registration>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.shared.table.remove(&self.reg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_are_checked() {
        assert_eq!(
            parse_methods("get, Post").unwrap(),
            vec![Method::GET, Method::POST]
        );
        assert!(parse_methods("FETCH").is_err());
        assert!(parse_methods(",").is_err());
    }
}
