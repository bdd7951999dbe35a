//! The `sql:` component: endpoint URIs and options, and where each endpoint's database
//! comes from.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use camel_api::{CamelError, Component, ComponentContext, Endpoint, EndpointUri};

use crate::datasource::{is_url, Database, Databases, SharedDatabase, Source};
use crate::endpoint::{ConsumerOptions, OutputType, ProducerOptions, SqlEndpoint};
use crate::query::Statement;

/// The context resource an endpoint without `datasource` uses (a [`Database`], a
/// `camel_outbox::Datasource` or a `String` URL); when absent, the outbox's
/// `outbox.datasource` resource is tried.
pub const DATASOURCE_RESOURCE: &str = "sql.datasource";

const PRODUCER_KEYS: &[&str] = &[
    "datasource",
    "data_source",
    "use_message_body_for_sql",
    "query",
    "output_type",
    "output_header",
    "batch",
    "noop",
    "separator",
    "fence",
    "fence_table",
];
const CONSUMER_KEYS: &[&str] = &[
    "delay",
    "initial_delay",
    "max_messages_per_poll",
    "on_consume",
    "on_consume_failed",
    "on_consume_batch_complete",
    "use_iterator",
    "route_empty_result_set",
    "break_batch_on_consume_fail",
    "expected_update_count",
    "partition_key",
    "partition",
    "partitions",
];

/// The `sql` component. One per context; endpoints on the same database share the
/// context's pool for it, with the outbox and the state stores (ADR 0085).
///
/// ```
/// use camel_sql::SqlComponent;
/// let component = SqlComponent::new();
/// assert_eq!(camel_api::Component::scheme(&component), "sql");
/// // context.add_component(std::sync::Arc::new(component));
/// ```
#[derive(Clone, Debug, Default)]
pub struct SqlComponent {
    databases: Databases,
    /// Pools when the context offers none (a component used without a context).
    own_pools: camel_api::pools::Pools,
}

impl SqlComponent {
    /// A component with no database opened yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn database(
        &self,
        uri: &str,
        named: Option<String>,
        ctx: &dyn ComponentContext,
    ) -> Result<Arc<SharedDatabase>, CamelError> {
        let (key, shown, source) = match named {
            Some(url) if is_url(&url) => from_url(url),
            Some(url) if crate::jdbc::is_jdbc(&url) => {
                let url = crate::jdbc::to_url(&url, None, None)
                    .map_err(|why| CamelError::invalid_uri(uri, why))?;
                from_url(url)
            }
            Some(name) => {
                // Camel's references: `myDs`, `#myDs`, `#bean:myDs`.
                let name = name.trim();
                let name = name
                    .strip_prefix("#bean:")
                    .or_else(|| name.strip_prefix('#'))
                    .unwrap_or(name)
                    .to_string();
                let resource = ctx.resource(&name).ok_or_else(|| {
                    CamelError::invalid_uri(
                        uri,
                        format!("`datasource` = `{name}` is neither a database URL nor a context resource"),
                    )
                })?;
                from_resource(uri, &name, &*resource)?
            }
            None => {
                let outbox = camel_outbox::component::DATASOURCE_RESOURCE;
                match (ctx.resource(DATASOURCE_RESOURCE), ctx.resource(outbox)) {
                    (Some(r), _) => from_resource(uri, DATASOURCE_RESOURCE, &*r)?,
                    (None, Some(r)) => from_resource(uri, outbox, &*r)?,
                    (None, None) => {
                        return Err(CamelError::invalid_uri(
                            uri,
                            format!(
                                "no database: give `datasource` (a postgres://, sqlite: or mysql:// URL, \
                                 or a resource name), or register the resource `{DATASOURCE_RESOURCE}`"
                            ),
                        ))
                    }
                }
            }
        };
        let mut all = self.databases.lock().unwrap_or_else(|p| p.into_inner());
        Ok(all
            .entry(key.clone())
            .or_insert_with(|| {
                let pools = ctx.pools().unwrap_or_else(|| self.own_pools.clone());
                Arc::new(SharedDatabase::new(key, shown, source, pools))
            })
            .clone())
    }
}

fn from_url(url: String) -> (String, String, Source) {
    (
        camel_outbox::component::database_key(&url),
        camel_api::redact_url(&url),
        Source::Url(url),
    )
}

fn from_resource(
    uri: &str,
    name: &str,
    resource: &(dyn Any + Send + Sync),
) -> Result<(String, String, Source), CamelError> {
    // The outbox's own resource keeps the outbox's key, so `transacted` steps on it are
    // joined; any other resource is a database of its own.
    let key = if name == camel_outbox::component::DATASOURCE_RESOURCE {
        format!("resource:{name}")
    } else {
        format!("sql-resource:{name}")
    };
    let shown = format!("resource `{name}`");
    if let Some(db) = resource.downcast_ref::<Database>() {
        return Ok((key, shown, Source::Ready(db.clone())));
    }
    if let Some(db) = resource
        .downcast_ref::<camel_outbox::Datasource>()
        .and_then(|ds| Database::from_outbox(ds.clone()))
    {
        return Ok((key, shown, Source::Ready(db)));
    }
    if let Some(url) = resource.downcast_ref::<String>() {
        if crate::jdbc::is_jdbc(url) {
            let url = crate::jdbc::to_url(url, None, None)
                .map_err(|why| CamelError::invalid_uri(uri, why))?;
            return Ok(from_url(url));
        }
        return Ok(from_url(url.clone()));
    }
    Err(CamelError::invalid_uri(
        uri,
        format!("resource `{name}` must be a camel_sql::Database, a camel_outbox::Datasource or a String URL"),
    ))
}

impl Component for SqlComponent {
    fn scheme(&self) -> &str {
        "sql"
    }

    /// Transactions on MySQL/MariaDB only (ADR 0074): on PostgreSQL and SQLite the
    /// outbox component's transaction is the one `sql:` joins.
    fn transaction_manager(
        &self,
        datasource: Option<&str>,
        ctx: &dyn ComponentContext,
    ) -> Result<Option<Arc<dyn camel_api::transaction::TransactionManager>>, CamelError> {
        let Some(url) = datasource.filter(|d| crate::transaction::is_mysql_url(d)) else {
            return Ok(None);
        };
        let db = self.database("transacted", Some(url.to_string()), ctx)?;
        Ok(Some(Arc::new(crate::transaction::MySqlManager { db })))
    }

    fn endpoint(
        &self,
        mut uri: EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let raw = uri.raw();
        let path = uri.path().to_string();
        let p = &mut uri.parameters;
        let query = match p.take_str("query") {
            Some(q) if path.trim().is_empty() => q,
            Some(_) => {
                return Err(CamelError::invalid_uri(
                    raw,
                    "the query is given twice: in the URI and in `query`",
                ))
            }
            None => path,
        };
        let body_is_sql = p.take_bool("use_message_body_for_sql")?.unwrap_or(false);
        // With the body as the statement, the URI's own (Camel requires one) is unused.
        let mut stmt = if body_is_sql && query.trim().is_empty() {
            Statement::parse("")
        } else {
            statement(&raw, &query)?
        };
        stmt.compile(|text| ctx.expression("simple", text))?;
        // Camel spells it `dataSource`; both read the same.
        let named = match (p.take_str("datasource"), p.take_str("data_source")) {
            (Some(_), Some(_)) => {
                return Err(CamelError::invalid_uri(
                    raw,
                    "the database is given twice: `datasource` and `dataSource`",
                ))
            }
            (a, b) => a.or(b),
        };
        let output_type =
            match p.take_choice("output_type", &["select_list", "select_one", "stream_list"])? {
                Some("select_one") => OutputType::SelectOne,
                Some("stream_list") => OutputType::StreamList,
                _ => OutputType::SelectList,
            };
        let separator = match p.take_str("separator") {
            None => ',',
            Some(s) => {
                let mut chars = s.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => c,
                    _ => {
                        return Err(CamelError::invalid_uri(
                            raw,
                            "`separator` takes one character",
                        ))
                    }
                }
            }
        };
        let producer = ProducerOptions {
            output_type,
            output_header: p.take_str("output_header").filter(|h| !h.trim().is_empty()),
            batch: p.take_bool("batch")?.unwrap_or(false),
            noop: p.take_bool("noop")?.unwrap_or(false),
            separator,
            body_is_sql,
            fence: match (
                p.take_bool("fence")?.unwrap_or(false),
                p.take_str("fence_table"),
            ) {
                (true, table) => Some(table.unwrap_or_else(|| camel_cluster::DEFAULT_TABLE.into())),
                (false, Some(_)) => {
                    return Err(CamelError::invalid_uri(
                        raw,
                        "`fence_table` needs `fence=true`",
                    ))
                }
                (false, None) => None,
            },
        };
        let optional =
            |p: &mut camel_api::Parameters, name: &str| -> Result<Option<Statement>, CamelError> {
                p.take_str(name)
                    .filter(|s| !s.trim().is_empty())
                    .map(|s| statement(&raw, &s))
                    .transpose()
            };
        let consumer = ConsumerOptions {
            delay: p
                .take_duration("delay")?
                .unwrap_or(Duration::from_millis(500)),
            initial_delay: p
                .take_duration("initial_delay")?
                .unwrap_or(Duration::from_secs(1)),
            max_messages_per_poll: p.take::<usize>("max_messages_per_poll")?.filter(|n| *n > 0),
            on_consume: optional(p, "on_consume")?,
            on_consume_failed: optional(p, "on_consume_failed")?,
            on_consume_batch_complete: optional(p, "on_consume_batch_complete")?,
            use_iterator: p.take_bool("use_iterator")?.unwrap_or(true),
            route_empty_result_set: p.take_bool("route_empty_result_set")?.unwrap_or(false),
            break_batch_on_consume_fail: p
                .take_bool("break_batch_on_consume_fail")?
                .unwrap_or(false),
            expected_update_count: p.take::<u64>("expected_update_count")?,
            partition: partition(p, &raw)?,
        };
        let mut known = PRODUCER_KEYS.to_vec();
        known.extend_from_slice(CONSUMER_KEYS);
        uri.parameters.finish(&known)?;
        let database = self.database(&raw, named, ctx)?;
        Ok(Arc::new(SqlEndpoint::new(
            raw, database, stmt, producer, consumer,
        )))
    }
}

/// `partition_key` with the `partition`/`partitions` a partitioned route adds (ADR 0148).
fn partition(
    p: &mut camel_api::Parameters,
    raw: &str,
) -> Result<Option<crate::endpoint::Partition>, CamelError> {
    let key = p.take_str("partition_key").filter(|k| !k.trim().is_empty());
    let share = camel_cluster::partition_options(
        p.take_str("partition").as_deref(),
        p.take_str("partitions").as_deref(),
    )
    .map_err(|why| CamelError::invalid_uri(raw, why))?;
    match (key, share) {
        (None, None) => Ok(None),
        (Some(key), Some((index, count))) => Ok(Some(crate::endpoint::Partition {
            key,
            index,
            count,
        })),
        (None, Some(_)) => Err(CamelError::invalid_uri(
            raw,
            "a partitioned sql: poll needs `partition_key`, the column whose value picks the partition",
        )),
        (Some(_), None) => Err(CamelError::invalid_uri(
            raw,
            "`partition_key` is for a partitioned route (`partitions: N` on the route)",
        )),
    }
}

fn statement(uri: &str, text: &str) -> Result<Statement, CamelError> {
    if text.trim().is_empty() {
        return Err(CamelError::invalid_uri(
            uri,
            "no SQL statement: write it after `sql:`",
        ));
    }
    let stmt = Statement::parse(text);
    if stmt.names().any(str::is_empty) {
        return Err(CamelError::invalid_uri(
            uri,
            "`:#` must be followed by a parameter name",
        ));
    }
    Ok(stmt)
}
