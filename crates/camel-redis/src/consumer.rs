//! The consumer: pub/sub or a stream consumer group, reconnecting with backoff.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use camel_api::{CamelError, Consumer, ConsumerContext};

use crate::options::{ConsumerMode, RedisOptions};
use crate::{pubsub, streams};

/// Longest wait between two connection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// A consumer on channels or on a stream.
#[derive(Debug)]
pub struct RedisConsumer {
    options: Arc<RedisOptions>,
    mode: ConsumerMode,
    /// The stream consumer's name in its group.
    consumer_name: String,
    /// Pub/sub messages dropped for want of a slot, over the consumer's life.
    dropped: AtomicU64,
}

impl RedisConsumer {
    /// A consumer with these options; fails when they do not make one.
    pub fn new(options: RedisOptions) -> Result<Self, CamelError> {
        let mode = options.consumer_mode()?;
        let consumer_name = options.consumer_name.clone().unwrap_or_else(|| {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            format!("camel-{}-{nanos}", std::process::id())
        });
        Ok(RedisConsumer {
            options: Arc::new(options),
            mode,
            consumer_name,
            dropped: AtomicU64::new(0),
        })
    }
}

#[async_trait]
impl Consumer for RedisConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let o = &self.options;
        let mut backoff = Duration::from_millis(200);
        loop {
            let ended = match self.mode {
                ConsumerMode::Stream => streams::session(&ctx, o, &self.consumer_name).await,
                _ => pubsub::session(&ctx, o, &self.mode, &self.dropped).await,
            };
            match ended {
                Ok(true) => return Ok(()),
                Ok(false) => backoff = Duration::from_millis(200),
                Err(e) => {
                    tracing::warn!(server = %o.server(), error = %e, retry_in = ?backoff,
                        "Redis consumer failed; reconnecting");
                    ctx.health().set_failing(&e);
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
            tokio::select! {
                _ = ctx.cancelled() => return Ok(()),
                _ = tokio::time::sleep(backoff) => {}
            }
        }
    }
}
