//! The endpoint options, read from the URI: Camel's `spring-redis` names (`command`,
//! `channels`) in snake_case, plus ours for the connection and for Redis Streams.

use std::fmt;
use std::time::Duration;

use camel_api::{CamelError, EndpointUri};

/// Parameters `spring-redis:` takes (snake_case; camelCase is accepted).
pub const REDIS_PARAMETERS: &[&str] = &[
    "command",
    "channels",
    "username",
    "password",
    "database",
    "connect_timeout",
    "response_timeout",
    "stream",
    "group",
    "consumer_name",
    "group_start_id",
    "count",
    "block",
    "max_inflight",
    "claim_min_idle",
    "claim_interval",
    "max_len",
    "serializer",
];

/// The one serializer of Camel's `spring-redis` that matches what this component writes
/// (strings and bytes as they are); the catalog's `redis-sink` Kamelet names it.
const STRING_SERIALIZER: &str = "org.springframework.data.redis.serializer.StringRedisSerializer";

/// The commands the producer runs.
pub const PRODUCER_COMMANDS: &[&str] = &[
    "SET", "GET", "DEL", "INCR", "HSET", "HGET", "LPUSH", "RPUSH", "PUBLISH", "XADD",
];

/// A password, never shown.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(pub(crate) String);

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// What a consumer on this endpoint does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConsumerMode {
    /// `SUBSCRIBE` to `channels` (at most once: Redis pub/sub keeps nothing).
    Subscribe,
    /// `PSUBSCRIBE` to the patterns in `channels`.
    PSubscribe,
    /// `XREADGROUP` on `stream` as `consumer_name` of `group`, `XACK` after the route.
    Stream,
}

/// A `spring-redis:` endpoint's options.
#[derive(Clone)]
pub struct RedisOptions {
    /// The URI as written.
    pub uri: String,
    /// Host of the server.
    pub host: String,
    /// Port of the server.
    pub port: u16,
    /// ACL user name.
    pub username: Option<String>,
    /// Password.
    pub password: Option<Password>,
    /// Database number.
    pub database: i64,
    /// Producer: the command when the `CamelRedis.Command` header does not name one
    /// (Camel's default: SET). Consumer: SUBSCRIBE, PSUBSCRIBE or XREADGROUP.
    pub command: Option<String>,
    /// Channels (or patterns) a pub/sub consumer subscribes to; the channel a PUBLISH
    /// goes to when the `CamelRedis.Channel` header is absent.
    pub channels: Vec<String>,
    /// Longest wait for a connection.
    pub connect_timeout: Duration,
    /// Longest wait for a command's reply.
    pub response_timeout: Duration,
    /// Stream key: what a stream consumer reads and where XADD writes by default.
    pub stream: Option<String>,
    /// Consumer group.
    pub group: Option<String>,
    /// This consumer's name in the group (default: generated per process).
    pub consumer_name: Option<String>,
    /// Where a group created by the consumer starts (`$`: new entries only).
    pub group_start_id: String,
    /// Most entries one XREADGROUP or XAUTOCLAIM returns.
    pub count: usize,
    /// How long one XREADGROUP waits for entries.
    pub block: Duration,
    /// Most entries in the route at once.
    pub max_inflight: usize,
    /// An entry pending this long (its consumer died, or its route failed) is claimed.
    pub claim_min_idle: Duration,
    /// How often the consumer looks for such entries (XAUTOCLAIM).
    pub claim_interval: Duration,
    /// XADD: trim the stream to about this many entries (`MAXLEN ~`).
    pub max_len: Option<u64>,
}

impl fmt::Debug for RedisOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The URI as written may carry the password as a parameter.
        f.debug_struct("RedisOptions")
            .field("uri", &camel_api::redact_url(&self.uri))
            .field("server", &self.server())
            .field("command", &self.command)
            .field("channels", &self.channels)
            .field("stream", &self.stream)
            .field("group", &self.group)
            .finish_non_exhaustive()
    }
}

impl RedisOptions {
    /// Reads the options from a `spring-redis:host:port?…` URI.
    pub fn from_uri(mut uri: EndpointUri) -> Result<Self, CamelError> {
        let raw = uri.as_str().to_string();
        let invalid = |why: String| CamelError::invalid_uri(raw.clone(), why);
        let path = uri.path().trim().trim_end_matches('/');
        let (host, port) = match path.rsplit_once(':') {
            Some((h, p)) => (
                h.to_string(),
                p.parse::<u16>()
                    .map_err(|_| invalid(format!("`{p}` is not a port number")))?,
            ),
            None if path.is_empty() => ("localhost".to_string(), 6379),
            None => (path.to_string(), 6379),
        };
        if host.contains('@') {
            return Err(invalid(
                "credentials go in the username and password options, not in host:port".into(),
            ));
        }
        let p = &mut uri.parameters;
        let command = p
            .take_str("command")
            .map(|c| c.trim().to_ascii_uppercase())
            .filter(|c| !c.is_empty());
        let channels: Vec<String> = p
            .take_str("channels")
            .map(|c| {
                c.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let username = p.take_str("username");
        let password = p.take_str("password").map(Password);
        let database = p.take::<i64>("database")?.unwrap_or(0);
        let connect_timeout = p
            .take_duration("connect_timeout")?
            .unwrap_or(Duration::from_secs(5));
        let response_timeout = p
            .take_duration("response_timeout")?
            .unwrap_or(Duration::from_secs(5));
        let stream = p.take_str("stream").filter(|s| !s.is_empty());
        let group = p.take_str("group").filter(|s| !s.is_empty());
        let consumer_name = p.take_str("consumer_name").filter(|s| !s.is_empty());
        let group_start_id = p
            .take_str("group_start_id")
            .unwrap_or_else(|| "$".to_string());
        let count = p.take::<usize>("count")?.unwrap_or(50);
        let block = p.take_duration("block")?.unwrap_or(Duration::from_secs(1));
        let max_inflight = p.take::<usize>("max_inflight")?.unwrap_or(100);
        let claim_min_idle = p
            .take_duration("claim_min_idle")?
            .unwrap_or(Duration::from_secs(30));
        let claim_interval = p
            .take_duration("claim_interval")?
            .unwrap_or(Duration::from_secs(5));
        let max_len = p.take::<u64>("max_len")?;
        // `serializer=#class:…StringRedisSerializer` (the Kamelet's default) asks for what
        // is done anyway; any other Java serializer cannot be honoured.
        if let Some(serializer) = p.take_str("serializer") {
            let class = serializer
                .trim()
                .trim_start_matches("#class:")
                .trim_start_matches('#');
            if class != STRING_SERIALIZER && class != "StringRedisSerializer" {
                return Err(invalid(format!(
                    "serializer `{serializer}` is a Java class; keys and values are written as strings and bytes as they are (Camel's {STRING_SERIALIZER})"
                )));
            }
        }
        if count == 0 || max_inflight == 0 {
            return Err(invalid("count and max_inflight must be at least 1".into()));
        }
        if let Some(c) = &command {
            let known = PRODUCER_COMMANDS
                .iter()
                .chain(&["SUBSCRIBE", "PSUBSCRIBE", "XREADGROUP"])
                .any(|k| k == c);
            if !known {
                return Err(invalid(format!(
                    "command `{c}` is not supported; supported: {}, and SUBSCRIBE, PSUBSCRIBE, XREADGROUP for consumers",
                    PRODUCER_COMMANDS.join(", ")
                )));
            }
        }
        uri.parameters.finish(REDIS_PARAMETERS)?;
        Ok(RedisOptions {
            uri: raw,
            host,
            port,
            username,
            password,
            database,
            command,
            channels,
            connect_timeout,
            response_timeout,
            stream,
            group,
            consumer_name,
            group_start_id,
            count,
            block,
            max_inflight,
            claim_min_idle,
            claim_interval,
            max_len,
        })
    }

    /// What a consumer on this endpoint does, or why it cannot be one.
    pub fn consumer_mode(&self) -> Result<ConsumerMode, CamelError> {
        let invalid = |why: &str| CamelError::invalid_uri(self.uri.clone(), why);
        let mode = match self.command.as_deref() {
            Some("SUBSCRIBE") => ConsumerMode::Subscribe,
            Some("PSUBSCRIBE") => ConsumerMode::PSubscribe,
            Some("XREADGROUP") => ConsumerMode::Stream,
            None if self.stream.is_some() => ConsumerMode::Stream,
            None => ConsumerMode::Subscribe,
            Some(other) => {
                return Err(invalid(&format!(
                    "a consumer runs SUBSCRIBE, PSUBSCRIBE or XREADGROUP, not {other}"
                )))
            }
        };
        match mode {
            ConsumerMode::Stream if self.stream.is_none() || self.group.is_none() => Err(
                invalid("a stream consumer needs stream and group (XREADGROUP GROUP group … STREAMS stream)"),
            ),
            ConsumerMode::Subscribe | ConsumerMode::PSubscribe if self.channels.is_empty() => {
                Err(invalid("a pub/sub consumer needs channels (comma-separated)"))
            }
            mode => Ok(mode),
        }
    }

    /// The connection settings for the redis client (the password never in a string).
    pub(crate) fn connection_info(&self) -> Result<redis::ConnectionInfo, CamelError> {
        use redis::IntoConnectionInfo;
        let mut redis = redis::RedisConnectionInfo::default().set_db(self.database);
        if let Some(user) = &self.username {
            redis = redis.set_username(user);
        }
        if let Some(password) = &self.password {
            redis = redis.set_password(&password.0);
        }
        let info = redis::ConnectionAddr::Tcp(self.host.clone(), self.port)
            .into_connection_info()
            .map_err(|e| CamelError::external(format!("Redis at {}", self.server()), e))?;
        Ok(info.set_redis_settings(redis))
    }

    /// Where the server is, for messages.
    pub(crate) fn server(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(uri: &str) -> Result<RedisOptions, CamelError> {
        RedisOptions::from_uri(EndpointUri::parse(uri)?)
    }

    #[test]
    fn camel_names_and_ours() {
        let o = options("spring-redis://127.0.0.1:6380?command=hset").unwrap();
        assert_eq!((o.host.as_str(), o.port), ("127.0.0.1", 6380));
        assert_eq!(o.command.as_deref(), Some("HSET"));
        let o = options("spring-redis:localhost:6379?channels=a, b&command=PSUBSCRIBE").unwrap();
        assert_eq!(o.channels, vec!["a", "b"]);
        assert_eq!(o.consumer_mode().unwrap(), ConsumerMode::PSubscribe);
        let o =
            options("redis:h:1?stream=orders&group=billing&maxInflight=5&claimMinIdle=2s").unwrap();
        assert_eq!(o.consumer_mode().unwrap(), ConsumerMode::Stream);
        assert_eq!(o.max_inflight, 5);
        assert_eq!(o.claim_min_idle, Duration::from_secs(2));
        let o = options("spring-redis:h:1?password=hunter2").unwrap();
        assert!(!format!("{o:?}").contains("hunter2"));
    }

    /// The catalog's `redis-sink` Kamelet passes Spring's string serializer as a class.
    #[test]
    fn the_string_serializer_is_accepted_and_no_other() {
        let kamelet = "spring-redis:127.0.0.1:6379?command=SET&channels=&serializer=%23class:org.springframework.data.redis.serializer.StringRedisSerializer";
        assert!(options(kamelet).is_ok(), "{:?}", options(kamelet));
        let e = options("spring-redis:h:1?serializer=#class:org.springframework.data.redis.serializer.JdkSerializationRedisSerializer")
            .unwrap_err();
        assert!(e.to_string().contains("is a Java class"), "{e}");
    }

    #[test]
    fn mistakes_are_refused_with_the_reason() {
        let e = options("spring-redis:h:x").unwrap_err();
        assert!(e.to_string().contains("not a port"), "{e}");
        let e = options("spring-redis:h:1?command=FLUSHALL").unwrap_err();
        assert!(e.to_string().contains("not supported"), "{e}");
        let e = options("spring-redis:h:1?stream=s")
            .unwrap()
            .consumer_mode()
            .unwrap_err();
        assert!(e.to_string().contains("needs stream and group"), "{e}");
        let e = options("spring-redis:h:1")
            .unwrap()
            .consumer_mode()
            .unwrap_err();
        assert!(e.to_string().contains("needs channels"), "{e}");
        let e = options("spring-redis:h:1?command=GET")
            .unwrap()
            .consumer_mode()
            .unwrap_err();
        assert!(e.to_string().contains("not GET"), "{e}");
        let e = options("spring-redis:u:p@h:1").unwrap_err();
        assert!(e.to_string().contains("credentials"), "{e}");
    }
}
