//! The producer: one command per exchange, chosen by the `CamelRedis.Command` header or
//! the endpoint's `command` (SET by default, as Camel), on one multiplexed connection.
//!
//! | command | key | value | reply in the body |
//! | --- | --- | --- | --- |
//! | SET | `CamelRedis.Key` | `CamelRedis.Value` or the body | (body kept) |
//! | GET | `CamelRedis.Key` | | the value (empty when none) |
//! | DEL, INCR | `CamelRedis.Key` | | the count / the new value |
//! | HSET | `CamelRedis.Key` + `CamelRedis.Field` | `CamelRedis.Value` or the body | fields added |
//! | HGET | `CamelRedis.Key` + `CamelRedis.Field` | | the value |
//! | LPUSH, RPUSH | `CamelRedis.Key` | `CamelRedis.Value` or the body | the list's length |
//! | PUBLISH | `CamelRedis.Channel` (or the first of `channels`) | `CamelRedis.Message` or the body | receivers |
//! | XADD | `CamelRedis.Key` (or `stream`) | the body as field `body`, headers as fields | the entry id |

use std::sync::Arc;

use camel_api::{Body, BoxProcessor, CamelError, Exchange};
use redis::aio::MultiplexedConnection;
use redis::Value;
use tokio::sync::Mutex;

use crate::connection::{connect, failed};
use crate::message::{
    body_of, entry_fields, text_of, CHANNEL_HEADER, COMMAND_HEADER, FIELD_HEADER, KEY_HEADER,
    MESSAGE_HEADER, VALUE_HEADER,
};
use crate::options::{RedisOptions, PRODUCER_COMMANDS};

/// Runs each exchange's command.
#[derive(Debug)]
pub struct RedisProducer {
    options: Arc<RedisOptions>,
    /// Opened on first use, and again after a command failed on a broken connection.
    connection: Mutex<Option<MultiplexedConnection>>,
}

impl RedisProducer {
    /// A producer with these options.
    pub fn new(options: RedisOptions) -> Self {
        RedisProducer {
            options: Arc::new(options),
            connection: Mutex::new(None),
        }
    }

    /// The route step.
    pub fn processor(self: Arc<Self>) -> BoxProcessor {
        BoxProcessor::from_fn(move |exchange| {
            let this = self.clone();
            async move { this.run(exchange).await }
        })
        .named("redis")
    }

    async fn connection(&self) -> Result<MultiplexedConnection, CamelError> {
        let mut slot = self.connection.lock().await;
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        let c = connect(&self.options, Some(self.options.response_timeout)).await?;
        *slot = Some(c.clone());
        Ok(c)
    }

    async fn run(&self, mut exchange: Exchange) -> Result<Exchange, CamelError> {
        let o = &self.options;
        let command = match exchange.header(COMMAND_HEADER) {
            Some(c) => c.to_string().trim().to_ascii_uppercase(),
            None => o.command.clone().unwrap_or_else(|| "SET".to_string()),
        };
        if !PRODUCER_COMMANDS.contains(&command.as_str()) {
            return Err(CamelError::processor(format!(
                "Redis command `{command}` is not supported by the producer; supported: {}",
                PRODUCER_COMMANDS.join(", ")
            )));
        }
        let cmd = build(&command, &exchange, o)?;
        let mut connection = self.connection().await?;
        let reply: Value = match cmd.query_async(&mut connection).await {
            Ok(v) => v,
            Err(e) => {
                if e.is_io_error() || e.is_connection_dropped() || e.is_timeout() {
                    *self.connection.lock().await = None;
                }
                return Err(failed(&command, e));
            }
        };
        match (command.as_str(), reply) {
            ("SET", _) => {}
            (_, Value::Nil) => exchange.message.body = Body::Empty,
            (_, Value::BulkString(b)) => exchange.message.body = body_of(&b),
            (_, other) => {
                if let Some(text) = text_of(&other) {
                    exchange.message.body = Body::from(text);
                }
            }
        }
        Ok(exchange)
    }
}

fn header(exchange: &Exchange, name: &str) -> Option<String> {
    exchange.header(name).map(|v| v.to_string())
}

fn required(exchange: &Exchange, name: &str, command: &str) -> Result<String, CamelError> {
    header(exchange, name)
        .ok_or_else(|| CamelError::processor(format!("Redis {command} needs the `{name}` header")))
}

/// The value written: the header when set, otherwise the body.
fn value(exchange: &Exchange, name: &str) -> Vec<u8> {
    match exchange.header(name) {
        Some(v) => v.to_string().into_bytes(),
        None => exchange.message.body.to_bytes().to_vec(),
    }
}

fn build(command: &str, exchange: &Exchange, o: &RedisOptions) -> Result<redis::Cmd, CamelError> {
    let key = || required(exchange, KEY_HEADER, command);
    let mut cmd = redis::cmd(command);
    match command {
        "SET" | "LPUSH" | "RPUSH" => {
            cmd.arg(key()?).arg(value(exchange, VALUE_HEADER));
        }
        "GET" | "DEL" | "INCR" => {
            cmd.arg(key()?);
        }
        "HSET" => {
            cmd.arg(key()?)
                .arg(required(exchange, FIELD_HEADER, command)?)
                .arg(value(exchange, VALUE_HEADER));
        }
        "HGET" => {
            cmd.arg(key()?)
                .arg(required(exchange, FIELD_HEADER, command)?);
        }
        "PUBLISH" => {
            let channel = header(exchange, CHANNEL_HEADER)
                .or_else(|| o.channels.first().cloned())
                .ok_or_else(|| {
                    CamelError::processor(format!(
                        "Redis PUBLISH needs the `{CHANNEL_HEADER}` header or the channels option"
                    ))
                })?;
            cmd.arg(channel).arg(value(exchange, MESSAGE_HEADER));
        }
        "XADD" => {
            let stream = header(exchange, KEY_HEADER)
                .or_else(|| o.stream.clone())
                .ok_or_else(|| {
                    CamelError::processor(format!(
                        "Redis XADD needs the `{KEY_HEADER}` header or the stream option"
                    ))
                })?;
            cmd.arg(stream);
            if let Some(max) = o.max_len {
                cmd.arg("MAXLEN").arg("~").arg(max);
            }
            cmd.arg("*");
            for (field, value) in entry_fields(exchange) {
                cmd.arg(field).arg(value);
            }
        }
        other => {
            return Err(CamelError::processor(format!(
                "Redis command `{other}` is not supported by the producer"
            )))
        }
    }
    Ok(cmd)
}
