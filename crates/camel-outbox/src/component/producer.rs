//! The producer: publishes the exchange in its own transaction and commits, waking the
//! local relay; inside a `transacted` step on the same database, publishes in the step's
//! transaction instead.

use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;

use camel_api::{BoxExpression, BoxProcessor, CamelError, Exchange};

use super::convert::to_message;
use super::{RouteTransaction, SharedOutbox};
use crate::headers;
use crate::store::Datasource;

/// How long a producer waits for its turn on a `transacted` step's connection.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The `to: outbox:NAME` processor.
pub(crate) fn processor(
    shared: Arc<SharedOutbox>,
    group_key: Option<BoxExpression>,
    route_id: Option<String>,
    fence: Option<String>,
) -> BoxProcessor {
    let fence: Option<Arc<str>> = fence.map(Into::into);
    let ungrouped = Arc::new(Ungrouped {
        counter: crate::metrics::ungrouped(shared.name()),
        warned: AtomicBool::new(false),
        route_id: route_id.unwrap_or_default(),
    });
    BoxProcessor::from_fn(move |mut exchange: Exchange| {
        let shared = shared.clone();
        let group_key = group_key.clone();
        let ungrouped = ungrouped.clone();
        let fence = fence.clone();
        async move {
            let fencing = match &fence {
                Some(table) => Some((table.clone(), fencing_of(&exchange)?)),
                None => None,
            };
            let key = match &group_key {
                Some(expr) => {
                    let v = expr.evaluate(&exchange)?;
                    let key = Some(v.to_string()).filter(|s| !v.is_null() && !s.is_empty());
                    if key.is_none() {
                        ungrouped.record(shared.name());
                    }
                    key
                }
                None => None,
            };
            let outbox = shared.outbox().await?;
            let message = to_message(&exchange, key);
            if let Some(tx) = camel_api::transaction::current() {
                // Inside `transacted`: publish in its transaction, never beside it.
                let joined = tx
                    .as_any()
                    .downcast_ref::<RouteTransaction>()
                    .filter(|t| t.key() == shared.source.key);
                let Some(route_tx) = joined else {
                    return Err(CamelError::processor(format!(
                        "`outbox:{}` cannot join the enclosing `transacted` step: they are on \
                         different databases (give the step the outbox's `datasource`)",
                        shared.name()
                    )));
                };
                // Bounded: a step that holds the transaction's guard while this producer
                // runs (the lock is not re-entrant) gets an error, not a hang.
                let Ok(mut guard) = tokio::time::timeout(LOCK_WAIT, route_tx.lock()).await else {
                    return Err(CamelError::processor(format!(
                        "`outbox:{}` waited {}s for the transaction of the enclosing \
                         `transacted` step: is a step holding `RouteTransaction::lock()` while \
                         publishing?",
                        shared.name(),
                        LOCK_WAIT.as_secs()
                    )));
                };
                if let Some((table, (namespace, epoch))) = &fencing {
                    check_in_step(&mut guard, table, namespace, *epoch).await?;
                }
                let id = guard.publish(&outbox, message).await?;
                exchange.message.headers.insert(headers::ID, id);
                return Ok(exchange);
            }
            let id = match outbox.datasource() {
                #[cfg(feature = "postgres")]
                Datasource::Postgres(pool) => {
                    let mut tx = pool.begin().await.map_err(db)?;
                    if let Some((table, (namespace, epoch))) = &fencing {
                        camel_cluster::check_fence(&mut tx, table, namespace, *epoch)
                            .await
                            .map_err(fenced)?;
                    }
                    let id = outbox.publish(&mut tx, message).await?;
                    outbox.commit(tx).await?;
                    id
                }
                #[cfg(feature = "sqlite")]
                Datasource::Sqlite(pool) => {
                    if fencing.is_some() {
                        return Err(not_postgres());
                    }
                    let mut conn = pool.acquire().await.map_err(db)?;
                    let mut tx = sqlx::Connection::begin_with(&mut *conn, "BEGIN IMMEDIATE")
                        .await
                        .map_err(db)?;
                    let id = outbox.publish(&mut tx, message).await?;
                    outbox.commit(tx).await?;
                    id
                }
            };
            exchange.message.headers.insert(headers::ID, id);
            Ok(exchange)
        }
    })
    .named("outbox-producer")
}

/// A `group_key` that evaluated to nothing makes the message unordered: that must not
/// pass silently, yet a log line per message would flood. So: a metric per message, one
/// warning per producer (one `to:` step of one route).
struct Ungrouped {
    counter: metrics::Counter,
    warned: AtomicBool,
    route_id: String,
}

impl Ungrouped {
    fn record(&self, outbox: &str) {
        self.counter.increment(1);
        if !self.warned.swap(true, AtomicOrdering::Relaxed) {
            tracing::warn!(
                route_id = %self.route_id,
                outbox,
                "`group_key` evaluated to null or empty: the message is published without a \
                 group and relayed unordered (counted in camel_outbox_ungrouped_total; this \
                 warning is shown once per route step)"
            );
        }
    }
}

fn db(e: sqlx::Error) -> CamelError {
    CamelError::external("outbox", e)
}

/// The namespace and epoch a leader-only route stamped on the exchange.
fn fencing_of(ex: &Exchange) -> Result<(String, u64), CamelError> {
    camel_cluster::fencing_token(ex).ok_or_else(|| CamelError::processor(camel_cluster::UNFENCED))
}

/// The fencing check in the enclosing `transacted` step's transaction.
#[cfg(feature = "postgres")]
async fn check_in_step(
    guard: &mut super::transaction::TransactionGuard<'_>,
    table: &str,
    namespace: &str,
    epoch: u64,
) -> Result<(), CamelError> {
    let Some(conn) = guard.postgres() else {
        return Err(not_postgres());
    };
    camel_cluster::check_fence(conn, table, namespace, epoch)
        .await
        .map_err(fenced)
}

#[cfg(not(feature = "postgres"))]
async fn check_in_step(
    _guard: &mut super::transaction::TransactionGuard<'_>,
    _table: &str,
    _namespace: &str,
    _epoch: u64,
) -> Result<(), CamelError> {
    Err(not_postgres())
}

#[cfg(feature = "postgres")]
fn fenced(e: camel_cluster::FenceError) -> CamelError {
    CamelError::external("outbox", e)
}

fn not_postgres() -> CamelError {
    CamelError::processor("fenced: fence=true needs the outbox on PostgreSQL")
}
