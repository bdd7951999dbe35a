//! Connecting: a multiplexed connection for commands, a dedicated one for pub/sub.

use std::time::Duration;

use camel_api::CamelError;
use redis::aio::{MultiplexedConnection, PubSub};
use redis::AsyncConnectionConfig;

use crate::options::RedisOptions;

fn client(o: &RedisOptions) -> Result<redis::Client, CamelError> {
    redis::Client::open(o.connection_info()?)
        .map_err(|e| CamelError::external(format!("Redis at {}", o.server()), e))
}

/// A multiplexed connection whose commands wait at most `response_timeout` for their
/// reply (`None`: no limit, for blocking reads that have their own).
pub(crate) async fn connect(
    o: &RedisOptions,
    response_timeout: Option<Duration>,
) -> Result<MultiplexedConnection, CamelError> {
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(o.connect_timeout))
        .set_response_timeout(response_timeout);
    client(o)?
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .map_err(|e| CamelError::external(format!("connecting to Redis at {}", o.server()), e))
}

/// A connection in subscriber mode.
pub(crate) async fn pubsub(o: &RedisOptions) -> Result<PubSub, CamelError> {
    let client = client(o)?;
    let connecting = client.get_async_pubsub();
    tokio::time::timeout(o.connect_timeout, connecting)
        .await
        .map_err(|_| {
            CamelError::processor(format!(
                "connecting to Redis at {} took longer than {:?}",
                o.server(),
                o.connect_timeout
            ))
        })?
        .map_err(|e| CamelError::external(format!("connecting to Redis at {}", o.server()), e))
}

/// A Redis error in a command, as a `CamelError`.
pub(crate) fn failed(command: &str, e: redis::RedisError) -> CamelError {
    CamelError::external(format!("Redis {command}"), e)
}
