//! The `outbox:NAME` route component.
//!
//! - `to: {uri: "outbox:orders", parameters: {group_key: "${header.order_id}"}}` inserts the
//!   exchange (headers and body) into the outbox in its own transaction and sets
//!   `CamelOutboxId` on it.
//! - `from: outbox:orders` is the relay: every message becomes an exchange with
//!   `CamelOutboxId`, `CamelOutboxGroupKey` and `CamelOutboxAttempt`; `Ok` from the route
//!   confirms it, `Err` counts an attempt, `RetryAfter { ms }` retries after `ms`.
//!
//! The database: the endpoint's `datasource` parameter (a `postgres://…` or `sqlite:…`
//! URL), else the context resource named [`DATASOURCE_RESOURCE`] (a [`Datasource`] or a
//! `String` URL), else an embedded SQLite file `outbox.db` under the component's data
//! directory (`./camel-data/` by default).
//!
//! ```
//! use camel_outbox::OutboxComponent;
//! let component = OutboxComponent::new();
//! assert_eq!(camel_api::Component::scheme(&component), "outbox");
//! // context.register_component(Arc::new(component));
//! ```

mod consumer;
mod convert;
mod endpoint;
mod producer;
mod settings;
mod transaction;

use std::any::Any;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use camel_api::pools::Pools;
use camel_api::transaction::TransactionManager;
use camel_api::{CamelError, Component, ComponentContext, Endpoint, EndpointUri};

use crate::config::TableName;
use crate::outbox::Outbox;
use crate::store::Datasource;

pub use transaction::{RouteTransaction, TransactionGuard};

/// Name of the context resource the component reads when an endpoint names no datasource.
pub const DATASOURCE_RESOURCE: &str = "outbox.datasource";

/// The `outbox` component. Register one per context; it shares one [`Outbox`] handle per
/// (database, outbox name) between producer and consumer endpoints, so a local publish
/// wakes the local relay at once.
#[derive(Debug, Clone)]
pub struct OutboxComponent {
    data_dir: PathBuf,
    shared: Arc<Mutex<HashMap<String, Arc<SharedOutbox>>>>,
    /// The databases its outboxes and `transacted` steps are on.
    sources: Arc<Mutex<HashMap<String, Arc<SharedSource>>>>,
    /// Pools when the context offers none (a component used without a context).
    own_pools: Pools,
}

impl Default for OutboxComponent {
    fn default() -> Self {
        Self::new()
    }
}

impl OutboxComponent {
    /// The component, with embedded SQLite under `./camel-data/`.
    pub fn new() -> Self {
        Self::with_data_dir("camel-data")
    }

    /// The component, with embedded SQLite under `dir`.
    pub fn with_data_dir(dir: impl Into<PathBuf>) -> Self {
        OutboxComponent {
            data_dir: dir.into(),
            shared: Arc::default(),
            sources: Arc::default(),
            own_pools: Pools::new(),
        }
    }

    /// Admins of the outboxes this component's endpoints have opened so far (a relay
    /// opens its outbox when its route starts, a publisher on its first message), by
    /// name. Each wakes this process's workers at once after a change ([`Outbox::admin`]).
    pub fn admins(&self) -> Vec<crate::admin::OutboxAdmin> {
        let shared: Vec<Arc<SharedOutbox>> = self
            .shared
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        let mut admins: Vec<_> = shared
            .iter()
            .filter_map(|s| s.opened())
            .map(|o| o.admin())
            .collect();
        admins.sort_by(|a, b| a.name().cmp(b.name()));
        admins
    }

    /// The shared database named by `url`, the context resource, or the embedded default.
    fn shared_source(
        &self,
        uri: &str,
        url: Option<String>,
        ctx: &dyn ComponentContext,
    ) -> Result<Arc<SharedSource>, CamelError> {
        let source = self.source(uri, url, ctx)?;
        let key = source.key();
        let mut all = self.sources.lock().unwrap_or_else(|p| p.into_inner());
        Ok(all
            .entry(key.clone())
            .or_insert_with(|| {
                Arc::new(SharedSource {
                    key,
                    source,
                    pools: ctx.pools().unwrap_or_else(|| self.own_pools.clone()),
                    writer: Arc::new(tokio::sync::Semaphore::new(1)),
                })
            })
            .clone())
    }

    fn source(
        &self,
        uri: &str,
        url: Option<String>,
        ctx: &dyn ComponentContext,
    ) -> Result<Source, CamelError> {
        let from_url = |url: String| {
            Datasource::check_url(&url)
                .map(|()| Source::Url(url))
                .map_err(|e| CamelError::invalid_uri(uri, e))
        };
        if let Some(url) = url {
            return from_url(url);
        }
        if let Some(resource) = ctx.resource(DATASOURCE_RESOURCE) {
            let resource: &dyn Any = &*resource;
            if let Some(ds) = resource.downcast_ref::<Datasource>() {
                return Ok(Source::Ready(ds.clone()));
            }
            if let Some(url) = resource.downcast_ref::<String>() {
                return from_url(url.clone());
            }
            return Err(CamelError::invalid_uri(
                uri,
                format!("resource `{DATASOURCE_RESOURCE}` must be a camel_outbox::Datasource or a String URL"),
            ));
        }
        Ok(Source::EmbeddedFile(self.data_dir.clone()))
    }
}

/// The key a `transacted` step on the database `url` carries ([`RouteTransaction::key`]),
/// so another component's producer (`sql:`) can tell whether a route transaction is on
/// its own database and join it. The password never appears in it.
///
/// ```
/// let key = camel_outbox::component::database_key("postgres://app:secret@h/shop");
/// assert!(key.starts_with("postgres://***@h/shop#"));
/// ```
pub fn database_key(url: &str) -> String {
    Source::Url(url.to_string()).key()
}

/// The key of a SQLite file URL: `sqlite:` + absolute path (+ `?options`); `None` for
/// other URLs and for in-memory databases.
fn sqlite_key(url: &str) -> Option<String> {
    let (path, query) = sqlite_file(url)?;
    Some(file_key(std::path::Path::new(path), query))
}

/// The file path and options of a SQLite file URL; `None` for other URLs and in-memory
/// databases.
fn sqlite_file(url: &str) -> Option<(&str, &str)> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let (path, query) = match rest.split_once('?') {
        Some((p, q)) => (p, q),
        None => (rest, ""),
    };
    if path.is_empty() || path.contains(":memory:") || query.contains("mode=memory") {
        return None;
    }
    Some((path, query))
}

fn file_key(path: &std::path::Path, query: &str) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let query = if query.is_empty() {
        String::new()
    } else {
        format!("?{query}")
    };
    format!("sqlite:{}{query}", absolute.display())
}

/// Where an outbox's database comes from. Pools are made on first use, inside the
/// runtime, because endpoints may be built outside one.
enum Source {
    Url(String),
    Ready(Datasource),
    EmbeddedFile(PathBuf),
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Url(u) => f
                .debug_tuple("Url")
                .field(&camel_api::redact_url(u))
                .finish(),
            Source::Ready(ds) => f.debug_tuple("Ready").field(ds).finish(),
            Source::EmbeddedFile(dir) => f.debug_tuple("EmbeddedFile").field(dir).finish(),
        }
    }
}

impl Source {
    /// Identifies the database without its password: the redacted URL and a hash of the
    /// whole URL (two URLs differing only in their password stay two databases). A SQLite
    /// file is named by its absolute path (and options), so `sqlite:a.db`,
    /// `sqlite://a.db` and the embedded default on the same file are one database.
    fn key(&self) -> String {
        match self {
            Source::Url(u) => sqlite_key(u).unwrap_or_else(|| {
                format!(
                    "{}#{:016x}",
                    camel_api::redact_url(u),
                    crate::message::stable_hash(u)
                )
            }),
            Source::Ready(_) => format!("resource:{DATASOURCE_RESOURCE}"),
            Source::EmbeddedFile(dir) => file_key(&dir.join("outbox.db"), ""),
        }
    }

    /// The pool: the context's for this database (made now when it has none), or the
    /// registered one.
    async fn open(&self, key: &str, pools: &Pools) -> Result<Datasource, CamelError> {
        Ok(match self {
            Source::Url(u) => pools.get_or_try_insert_with(key, || Datasource::connect(u))?,
            Source::Ready(ds) => ds.clone(),
            #[cfg(feature = "sqlite")]
            // The directory is made with the pool (`sqlite::pool_with`).
            Source::EmbeddedFile(dir) => pools
                .get_or_try_insert_with(key, || Datasource::sqlite_file(dir.join("outbox.db")))?,
            #[cfg(not(feature = "sqlite"))]
            Source::EmbeddedFile(_) => {
                return Err(CamelError::processor(
                    "the embedded outbox database needs camel-outbox's `sqlite` feature; \
                     name a database with `datasource`",
                ))
            }
        })
    }
}

impl Component for OutboxComponent {
    fn scheme(&self) -> &str {
        "outbox"
    }

    fn endpoint(
        &self,
        mut uri: EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let raw = uri.raw();
        let name = uri.path().to_string();
        TableName::new(&name).map_err(|e| CamelError::invalid_uri(raw.clone(), e))?;
        let url = uri.parameters.take_str("datasource");
        let group_key = match uri.parameters.take_str("group_key") {
            Some(text) if !text.trim().is_empty() => Some(ctx.expression("simple", &text)?),
            _ => None,
        };
        let fence = match (
            uri.parameters.take_bool("fence")?.unwrap_or(false),
            uri.parameters.take_str("fence_table"),
        ) {
            (true, table) => Some(table.unwrap_or_else(|| camel_cluster::DEFAULT_TABLE.into())),
            (false, Some(_)) => {
                return Err(CamelError::invalid_uri(
                    raw,
                    "`fence_table` needs `fence=true`",
                ))
            }
            (false, None) => None,
        };
        let explicit = settings::take(&mut uri.parameters);
        let mut known = vec!["datasource", "group_key", "fence", "fence_table"];
        known.extend_from_slice(settings::OUTBOX_KEYS);
        uri.parameters.finish(&known)?;
        let source = self.shared_source(&raw, url, ctx)?;
        let shared = {
            let mut all = self.shared.lock().unwrap_or_else(|p| p.into_inner());
            all.entry(format!("{}#{name}", source.key))
                .or_insert_with(|| {
                    Arc::new(SharedOutbox {
                        name: name.clone(),
                        source,
                        settings: Mutex::default(),
                        outbox: Mutex::default(),
                        opening: tokio::sync::Mutex::default(),
                    })
                })
                .clone()
        };
        shared.add_settings(&raw, explicit)?;
        let route_id = ctx.route_id().map(str::to_string);
        Ok(Arc::new(endpoint::OutboxEndpoint::new(
            raw, shared, group_key, route_id, fence,
        )))
    }

    fn transaction_manager(
        &self,
        datasource: Option<&str>,
        ctx: &dyn ComponentContext,
    ) -> Result<Option<Arc<dyn TransactionManager>>, CamelError> {
        // No outbox store on MySQL/MariaDB: another component (`sql:`) may manage
        // transactions there.
        let lower = datasource.map(str::to_ascii_lowercase).unwrap_or_default();
        if lower.starts_with("mysql:") || lower.starts_with("mariadb:") {
            return Ok(None);
        }
        let what = datasource.map_or_else(
            || "the outbox component's default database".to_string(),
            camel_api::redact_url,
        );
        let source = self.shared_source(&what, datasource.map(str::to_string), ctx)?;
        Ok(Some(Arc::new(transaction::Manager::new(
            source,
            self.shared.clone(),
        ))))
    }
}

/// One database as the endpoints and `transacted` steps of a context share it. Its pool
/// is the context's for that database ([`Pools`], ADR 0085), made on first use and
/// closed when the context stops; a use after that (the context started again) makes a
/// new one.
#[derive(Debug)]
pub(crate) struct SharedSource {
    /// Identifies the database (producers join a route transaction with the same key).
    pub(crate) key: String,
    source: Source,
    pools: Pools,
    /// SQLite has one writer: `transacted` steps on it take turns here, without holding
    /// a pooled connection while they wait.
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) writer: Arc<tokio::sync::Semaphore>,
}

impl SharedSource {
    /// The database file when this is a SQLite file (not in memory), for the relay lock.
    pub(crate) fn sqlite_file(&self) -> Option<PathBuf> {
        match &self.source {
            Source::Url(u) => sqlite_file(u).map(|(path, _)| PathBuf::from(path)),
            Source::EmbeddedFile(dir) => Some(dir.join("outbox.db")),
            #[cfg(feature = "sqlite")]
            Source::Ready(Datasource::Sqlite(pool)) => {
                let path = pool.connect_options().get_filename().to_path_buf();
                let name = path.to_string_lossy();
                let in_memory = name.starts_with("file:sqlx-in-memory") || name == ":memory:";
                (!in_memory).then_some(path)
            }
            #[allow(unreachable_patterns)]
            Source::Ready(_) => None,
        }
    }

    pub(crate) async fn datasource(&self) -> Result<Datasource, CamelError> {
        self.source.open(&self.key, &self.pools).await
    }
}

/// One outbox as the endpoints of a context share it; opened on first use, after every
/// route is compiled, so the merged settings of all its endpoints are known.
#[derive(Debug)]
pub(crate) struct SharedOutbox {
    name: String,
    pub(crate) source: Arc<SharedSource>,
    settings: Mutex<BTreeMap<String, String>>,
    /// Opened on first use; opened again when its pool was closed (the context stopped and
    /// started again).
    outbox: Mutex<Option<Outbox>>,
    /// One opening at a time.
    opening: tokio::sync::Mutex<()>,
}

impl SharedOutbox {
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    fn add_settings(&self, uri: &str, new: BTreeMap<String, String>) -> Result<(), CamelError> {
        let mut merged = self.settings.lock().unwrap_or_else(|p| p.into_inner());
        let mut candidate = merged.clone();
        settings::merge(uri, &mut candidate, new)?;
        settings::config(uri, &self.name, &candidate)?;
        *merged = candidate;
        Ok(())
    }

    /// The outbox's configuration from the merged settings of its endpoints.
    pub(crate) fn config(&self) -> Result<crate::OutboxConfig, CamelError> {
        let merged = self
            .settings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        settings::config(&format!("outbox:{}", self.name), &self.name, &merged)
    }

    /// SQLite file: the relay lock of this outbox (see [`crate::store::RelayLock`]);
    /// `None` on PostgreSQL and in memory, where nothing needs it.
    pub(crate) fn relay_lock(&self) -> Result<Option<crate::store::RelayLock>, CamelError> {
        let Some(file) = self.source.sqlite_file() else {
            return Ok(None);
        };
        let table = self.config()?.validate()?;
        Ok(Some(crate::store::RelayLock::acquire(&file, &table)?))
    }

    /// The opened outbox (tables created, partition count checked).
    pub(crate) async fn outbox(&self) -> Result<Outbox, CamelError> {
        if let Some(open) = self.opened() {
            return Ok(open);
        }
        let _one = self.opening.lock().await;
        if let Some(open) = self.opened() {
            return Ok(open);
        }
        let stated = self
            .settings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key("partitions");
        let config = self.config()?;
        let datasource = self.source.datasource().await?;
        // No endpoint of this outbox states a count: follow the stored one rather than
        // contradict the relays (ADR 0033).
        let outbox = if stated {
            Outbox::open(datasource, config).await?
        } else {
            Outbox::open_with_stored_partitions(datasource, config).await?
        };
        *self.outbox.lock().unwrap_or_else(|p| p.into_inner()) = Some(outbox.clone());
        Ok(outbox)
    }

    /// The outbox opened earlier, unless its pool has been closed since.
    fn opened(&self) -> Option<Outbox> {
        use camel_api::pools::SharedPool;
        self.outbox
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .filter(|o| !o.datasource().is_closed())
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_files_have_one_key_however_they_are_spelled() {
        let a = sqlite_key("sqlite:data/app.db");
        assert_eq!(a, sqlite_key("sqlite://data/app.db"));
        let absolute = std::path::absolute("data/app.db").unwrap();
        assert_eq!(a, Some(format!("sqlite:{}", absolute.display())));
        assert_ne!(a, sqlite_key("sqlite:data/app.db?mode=ro"));
        assert_eq!(sqlite_key("sqlite::memory:"), None);
        assert_eq!(sqlite_key("postgres://u:p@h/db"), None);
        assert_eq!(
            Source::EmbeddedFile("camel-data".into()).key(),
            Source::Url("sqlite:camel-data/outbox.db".into()).key()
        );
        let pg = Source::Url("postgres://u:secret@h/db".into()).key();
        assert!(pg.starts_with("postgres://***@h/db#"), "{pg}");
    }
}
