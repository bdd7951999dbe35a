//! `from: sql:SELECT …`: polls the query every `delay`, hands each row (or the whole
//! list, with `use_iterator=false`) to the route, and marks rows with `on_consume` only
//! after the route succeeded, so a failed row is read again on the next poll.

use std::sync::Arc;

use async_trait::async_trait;
use camel_api::{CamelError, Consumer, ConsumerContext, Exchange};
use serde_json::Value as Json;

use crate::datasource::SharedDatabase;
use crate::endpoint::ConsumerOptions;
use crate::error::SqlError;
use crate::exec::Row;
use crate::headers;
use crate::query::Statement;

#[derive(Debug)]
pub(crate) struct SqlConsumer {
    database: Arc<SharedDatabase>,
    statement: Arc<Statement>,
    options: Arc<ConsumerOptions>,
}

impl SqlConsumer {
    pub(crate) fn new(
        database: Arc<SharedDatabase>,
        statement: Arc<Statement>,
        options: Arc<ConsumerOptions>,
    ) -> Self {
        SqlConsumer {
            database,
            statement,
            options,
        }
    }

    /// One poll: read, route, mark. A database failure is logged and the next poll
    /// tries again (the database may come back).
    async fn poll(&self, ctx: &ConsumerContext) -> Result<(), SqlError> {
        let args = self
            .statement
            .args(&Exchange::new(camel_api::Body::Empty), ',')?;
        let mut rows = self.database.run(&self.statement, &[args]).await?.rows;
        if let Some(p) = &self.options.partition {
            rows.retain(|row| {
                // A string hashes as its text, anything else as its JSON (`42`).
                let key = match row.get(&p.key) {
                    Some(Json::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                camel_cluster::partition_of(&key, p.count) == p.index
            });
        }
        if let Some(max) = self.options.max_messages_per_poll {
            rows.truncate(max);
        }
        if rows.is_empty() && !self.options.route_empty_result_set {
            return Ok(());
        }
        let total = i64::try_from(rows.len()).unwrap_or(i64::MAX);
        // `on_consume_batch_complete` runs only when every row was routed (as Camel since
        // CAMEL-27169): a batch cut short must not mark or delete rows nobody saw.
        let mut complete = true;
        if self.options.use_iterator && !rows.is_empty() {
            for (index, row) in rows.into_iter().enumerate() {
                if ctx.is_cancelled() {
                    return Ok(());
                }
                let ex = Exchange::new(Json::Object(row.clone()))
                    .with_header(headers::ROW_COUNT, total)
                    .with_header("CamelBatchIndex", i64::try_from(index).unwrap_or(i64::MAX))
                    .with_header("CamelBatchSize", total);
                let routed = ctx.send(ex).await;
                // A stopping route did not fail the row: leave it for the next start.
                if matches!(routed, Err(CamelError::Stopping(_))) {
                    return Ok(());
                }
                let marked = self.after_route(routed.is_ok(), &row).await;
                if let Err(e) = marked {
                    tracing::warn!(route_id = %ctx.route_id(), error = %e, "sql consumer: on_consume failed");
                    if self.options.break_batch_on_consume_fail {
                        complete = false;
                        break;
                    }
                }
            }
        } else {
            let list = Json::Array(rows.iter().cloned().map(Json::Object).collect());
            let ex = Exchange::new(list).with_header(headers::ROW_COUNT, total);
            let routed = ctx.send(ex).await;
            if matches!(routed, Err(CamelError::Stopping(_))) {
                return Ok(());
            }
            let ok = routed.is_ok();
            for row in &rows {
                if let Err(e) = self.after_route(ok, row).await {
                    tracing::warn!(route_id = %ctx.route_id(), error = %e, "sql consumer: on_consume failed");
                    if self.options.break_batch_on_consume_fail {
                        break;
                    }
                }
            }
        }
        if let (true, Some(stmt)) = (complete, &self.options.on_consume_batch_complete) {
            let args = stmt.args(&Exchange::new(camel_api::Body::Empty), ',')?;
            self.database.run(stmt, &[args]).await?;
        }
        Ok(())
    }

    /// `on_consume` after a success, `on_consume_failed` after a failure, with the
    /// row's columns as the named parameters.
    async fn after_route(&self, ok: bool, row: &Row) -> Result<(), SqlError> {
        let stmt = if ok {
            &self.options.on_consume
        } else {
            &self.options.on_consume_failed
        };
        let Some(stmt) = stmt else {
            return Ok(());
        };
        let row_ex = Exchange::new(Json::Object(row.clone()));
        let args = stmt.args(&row_ex, ',')?;
        let out = self.database.run(stmt, &[args]).await?;
        if let (true, Some(expected)) = (ok, self.options.expected_update_count) {
            if out.affected != expected {
                return Err(SqlError::UpdateCount {
                    expected,
                    actual: out.affected,
                });
            }
        }
        Ok(())
    }
}

#[async_trait]
impl Consumer for SqlConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let mut wait = self.options.initial_delay;
        loop {
            tokio::select! {
                _ = ctx.cancelled() => return Ok(()),
                _ = tokio::time::sleep(wait) => {}
            }
            wait = self.options.delay;
            match self.poll(&ctx).await {
                Ok(()) => ctx.health().set_healthy(),
                Err(e) => {
                    tracing::warn!(route_id = %ctx.route_id(), datasource = %self.database.shown, error = %e, "sql consumer: poll failed");
                    ctx.health().set_failing(&e);
                }
            }
        }
    }
}
