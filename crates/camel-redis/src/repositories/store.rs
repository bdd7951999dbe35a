//! One Redis server of the repositories: a reconnecting connection opened at first use.

use camel_api::CamelError;
use redis::aio::ConnectionManager;
use tokio::sync::OnceCell;

/// A Redis URL (`redis://[user:password@]host:port/db`, `rediss://…` for TLS) and its
/// connection, shared by every repository on it.
pub struct RedisStore {
    url: String,
    connection: OnceCell<ConnectionManager>,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("url", &camel_api::redact_url(&self.url))
            .finish()
    }
}

impl RedisStore {
    /// A store at `url`; nothing connects until the first command.
    pub fn new(url: &str) -> Result<Self, CamelError> {
        redis::Client::open(url).map_err(|e| {
            CamelError::invalid_uri(camel_api::redact_url(url).to_string(), e.to_string())
        })?;
        Ok(RedisStore {
            url: url.to_string(),
            connection: OnceCell::new(),
        })
    }

    /// The connection (it reconnects by itself after a failure); a failed first connect
    /// is tried again by the next call.
    pub(crate) async fn connection(&self) -> Result<ConnectionManager, CamelError> {
        let failed = |e: redis::RedisError| {
            CamelError::external(
                format!(
                    "connecting to Redis at {}",
                    camel_api::redact_url(&self.url)
                ),
                e,
            )
        };
        self.connection
            .get_or_try_init(|| async {
                let client = redis::Client::open(self.url.as_str()).map_err(failed)?;
                ConnectionManager::new(client).await.map_err(failed)
            })
            .await
            .cloned()
    }
}

/// `true` for the URLs these repositories take: `redis://…`, `rediss://…`.
pub(crate) fn is_redis_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    lower.starts_with("redis://") || lower.starts_with("rediss://")
}
