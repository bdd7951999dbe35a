//! A `sql:` endpoint and its producer: bind the exchange's values, run, put the rows or
//! the update count on the exchange.

use std::sync::Arc;
use std::time::Duration;

use camel_api::{Body, BoxProcessor, CamelError, Consumer, Endpoint, Exchange};
use serde_json::Value as Json;

use crate::datasource::SharedDatabase;
use crate::error::SqlError;
use crate::headers;
use crate::query::{body_json, Statement};

/// Camel's `outputType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OutputType {
    SelectList,
    SelectOne,
    StreamList,
}

#[derive(Debug)]
pub(crate) struct ProducerOptions {
    pub(crate) output_type: OutputType,
    pub(crate) output_header: Option<String>,
    pub(crate) batch: bool,
    pub(crate) noop: bool,
    pub(crate) separator: char,
    /// Camel's `useMessageBodyForSql`: the body is the statement (its `:#name`
    /// parameters from the headers).
    pub(crate) body_is_sql: bool,
    /// `fence=true`: the lease table the write is checked against, in the same
    /// transaction, for the epoch the exchange carries (ADR 0141).
    pub(crate) fence: Option<String>,
}

#[derive(Debug)]
pub(crate) struct ConsumerOptions {
    pub(crate) delay: Duration,
    pub(crate) initial_delay: Duration,
    pub(crate) max_messages_per_poll: Option<usize>,
    pub(crate) on_consume: Option<Statement>,
    pub(crate) on_consume_failed: Option<Statement>,
    pub(crate) on_consume_batch_complete: Option<Statement>,
    pub(crate) use_iterator: bool,
    pub(crate) route_empty_result_set: bool,
    pub(crate) break_batch_on_consume_fail: bool,
    pub(crate) expected_update_count: Option<u64>,
    /// A partitioned route's share of the rows.
    pub(crate) partition: Option<Partition>,
}

/// Which rows a partition of a partitioned poll takes: those whose `key` column hashes
/// to `index` of `count`.
#[derive(Clone, Debug)]
pub(crate) struct Partition {
    pub(crate) key: String,
    pub(crate) index: u32,
    pub(crate) count: u32,
}

#[derive(Debug)]
pub(crate) struct SqlEndpoint {
    uri: Arc<str>,
    pub(crate) database: Arc<SharedDatabase>,
    pub(crate) statement: Arc<Statement>,
    producer: Arc<ProducerOptions>,
    pub(crate) consumer: Arc<ConsumerOptions>,
}

impl SqlEndpoint {
    pub(crate) fn new(
        uri: Arc<str>,
        database: Arc<SharedDatabase>,
        statement: Statement,
        producer: ProducerOptions,
        consumer: ConsumerOptions,
    ) -> Self {
        SqlEndpoint {
            uri,
            database,
            statement: Arc::new(statement),
            producer: Arc::new(producer),
            consumer: Arc::new(consumer),
        }
    }
}

impl Endpoint for SqlEndpoint {
    fn uri(&self) -> &str {
        &self.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        self.database.register();
        let database = self.database.clone();
        let statement = self.statement.clone();
        let options = self.producer.clone();
        Ok(BoxProcessor::from_fn(move |ex: Exchange| {
            let database = database.clone();
            let statement = statement.clone();
            let options = options.clone();
            async move {
                produce(&database, &statement, &options, ex)
                    .await
                    .map_err(CamelError::from)
            }
        }))
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        Ok(Box::new(crate::consumer::SqlConsumer::new(
            self.database.clone(),
            self.statement.clone(),
            self.consumer.clone(),
        )))
    }
}

async fn produce(
    database: &SharedDatabase,
    statement: &Arc<Statement>,
    options: &ProducerOptions,
    mut ex: Exchange,
) -> Result<Exchange, SqlError> {
    // Camel's `CamelSqlQuery` header replaces the endpoint's statement.
    let statement = match ex.header(headers::QUERY).and_then(|v| v.as_str()) {
        Some(text) => Arc::new(Statement::parse(text)),
        None if options.body_is_sql => match ex.message.body.as_text() {
            Some(text) if !text.trim().is_empty() => Arc::new(Statement::parse(&text)),
            _ => {
                return Err(SqlError::Body(
                    "useMessageBodyForSql=true needs the statement as the body".into(),
                ))
            }
        },
        None => statement.clone(),
    };
    let sets = if options.batch {
        let Some(Json::Array(items)) = body_json(&ex.message.body) else {
            return Err(SqlError::Body(
                "batch=true needs a JSON list as the body".into(),
            ));
        };
        items
            .iter()
            .map(|item| statement.args_from(&ex, Some(item), options.separator))
            .collect::<Result<Vec<_>, _>>()?
    } else {
        vec![statement.args(&ex, options.separator)?]
    };
    if sets.is_empty() {
        ex.message.headers.insert(headers::UPDATE_COUNT, 0i64);
        return Ok(ex);
    }
    let out = match &options.fence {
        Some(table) => {
            let (namespace, epoch) = fencing_of(&ex)?;
            database
                .run_fenced(&statement, &sets, table, &namespace, epoch)
                .await?
        }
        None => database.run(&statement, &sets).await?,
    };
    let rows_back = statement.is_query || !out.rows.is_empty();
    if !rows_back {
        ex.message.headers.insert(
            headers::UPDATE_COUNT,
            i64::try_from(out.affected).unwrap_or(i64::MAX),
        );
        return Ok(ex);
    }
    let count = out.rows.len();
    ex.message
        .headers
        .insert(headers::ROW_COUNT, i64::try_from(count).unwrap_or(i64::MAX));
    if options.noop {
        return Ok(ex);
    }
    let result = match options.output_type {
        OutputType::SelectList | OutputType::StreamList => {
            Json::Array(out.rows.into_iter().map(Json::Object).collect())
        }
        OutputType::SelectOne => match out.rows.len() {
            0 => Json::Null,
            1 => {
                let row = out.rows.into_iter().next().unwrap_or_default();
                // One column: its value, as Camel gives it.
                if row.len() == 1 {
                    row.into_iter().next().map(|(_, v)| v).unwrap_or(Json::Null)
                } else {
                    Json::Object(row)
                }
            }
            rows => return Err(SqlError::NotOne { rows }),
        },
    };
    match &options.output_header {
        Some(name) => ex
            .message
            .headers
            .insert(name.as_str(), camel_api::Value::from_json(result)),
        None => {
            ex.message.body = if result.is_null() {
                Body::Empty
            } else {
                Body::Json(Arc::new(result))
            }
        }
    }
    Ok(ex)
}

/// The namespace and epoch a leader-only route stamped on the exchange.
fn fencing_of(ex: &Exchange) -> Result<(String, u64), SqlError> {
    camel_cluster::fencing_token(ex).ok_or_else(|| SqlError::Fenced(camel_cluster::UNFENCED.into()))
}
