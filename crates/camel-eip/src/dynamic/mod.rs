//! Endpoints named at run time: the URIs of a recipient list, a routing slip, a dynamic
//! router, `to_d`, a wire tap or an enricher come from an expression evaluated per
//! exchange, so they are resolved while the route runs, not when it is compiled.
//!
//! An [`EndpointResolver`] turns a URI into an endpoint (camel-core implements it over
//! the context's component registry); an [`EndpointCache`] keeps what was built from the
//! most recently used endpoints (a producer, a poller), at most
//! [`DEFAULT_CACHE_SIZE`] of them unless the step's `cache_size` says otherwise, so a
//! route that computes a new URI per message cannot grow without bound (ADR 0060).
//!
//! ```
//! use std::sync::Arc;
//! use camel_api::{BoxProcessor, CamelError, Endpoint, Exchange};
//! use camel_eip::dynamic::{CacheSize, EndpointCache, EndpointResolver};
//!
//! #[derive(Debug)]
//! struct Echo(String);
//! impl Endpoint for Echo {
//!     fn uri(&self) -> &str { &self.0 }
//!     fn producer(&self) -> Result<BoxProcessor, CamelError> { Ok(BoxProcessor::identity()) }
//! }
//! #[derive(Debug)]
//! struct Resolver;
//! impl EndpointResolver for Resolver {
//!     fn endpoint(&self, uri: &str) -> Result<Arc<dyn Endpoint>, CamelError> {
//!         match uri.split_once(':') {
//!             Some(("echo", _)) => Ok(Arc::new(Echo(uri.into()))),
//!             _ => Err(CamelError::invalid_uri(uri, "unknown scheme")),
//!         }
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let cache = EndpointCache::producers(Arc::new(Resolver), CacheSize::Bounded(2));
//! let producer = cache.get("echo:a").await.unwrap();
//! assert!(producer.process(Exchange::new("x")).await.is_ok());
//! assert_eq!(cache.len(), 1);
//! assert!(cache.get("nope:a").await.is_err());
//! # }
//! ```

mod cache;
mod uris;

use std::fmt;
use std::sync::Arc;

use camel_api::{CamelError, Endpoint};

pub use cache::{EndpointCache, Memo, Miss};
pub use uris::{uris, DEFAULT_DELIMITER};

/// How many resolved endpoints a step keeps when its `cache_size` is not given (Camel's
/// default for its producer and consumer caches).
pub const DEFAULT_CACHE_SIZE: usize = 1000;

/// Finds the endpoint a URI names, while a route runs.
pub trait EndpointResolver: Send + Sync + fmt::Debug + 'static {
    /// The endpoint for `uri`; an unknown scheme or a bad parameter is an error
    /// ([`CamelError::UnknownComponent`], [`CamelError::InvalidUri`]).
    fn endpoint(&self, uri: &str) -> Result<Arc<dyn Endpoint>, CamelError>;
}

/// The bound of an [`EndpointCache`], from Camel's `cacheSize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheSize {
    /// Keep at most this many (at least one).
    Bounded(usize),
    /// Keep none: resolve on every exchange (Camel's `cacheSize: -1`). Endpoints with
    /// background work are still kept, one at a time, so it can be drained.
    Off,
}

impl CacheSize {
    /// Camel's spelling: absent or `0` is the default (1000), a negative number turns the
    /// cache off, a positive one bounds it.
    pub fn from_option(size: Option<i64>) -> Self {
        match size {
            None | Some(0) => CacheSize::Bounded(DEFAULT_CACHE_SIZE),
            Some(n) if n < 0 => CacheSize::Off,
            Some(n) => CacheSize::Bounded(usize::try_from(n).unwrap_or(usize::MAX)),
        }
    }
}

impl Default for CacheSize {
    fn default() -> Self {
        CacheSize::Bounded(DEFAULT_CACHE_SIZE)
    }
}

/// Whether a resolution failure is skipped (`ignore_invalid_endpoints`) or fails the
/// exchange. Only resolution errors are skipped; a failure of the endpoint itself never is.
pub(crate) fn skippable(error: &CamelError) -> bool {
    matches!(
        error,
        CamelError::UnknownComponent { .. } | CamelError::InvalidUri { .. }
    )
}

/// The processor for `uri` from `cache`; `None` when the URI names no endpoint and
/// `ignore_invalid` says to skip it (logged at debug).
pub(crate) async fn producer_or_skip(
    cache: &EndpointCache<camel_api::BoxProcessor>,
    uri: &str,
    ignore_invalid: bool,
) -> Result<Option<camel_api::BoxProcessor>, CamelError> {
    match cache.get(uri).await {
        Ok(p) => Ok(Some(p)),
        Err(e) if ignore_invalid && skippable(&e) => {
            tracing::debug!(uri = %camel_api::redact_url(uri), error = %e, "invalid endpoint skipped");
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Property naming the endpoint a routing slip or dynamic router is at (Camel's
/// `CamelSlipEndpoint`): set before each hop, so it holds the last endpoint called.
pub const SLIP_ENDPOINT: &str = "CamelSlipEndpoint";
/// Property naming the recipient a recipient list's copy was sent to.
pub const RECIPIENT_LIST_ENDPOINT: &str = "CamelRecipientListEndpoint";
