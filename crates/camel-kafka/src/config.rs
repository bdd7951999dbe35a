//! The endpoint's parameters, read once from the URI into typed settings.
//!
//! Names are Camel's (`groupId` is an alias of `group_id`); librdkafka gets them as its
//! own properties in [`ConsumerSettings::client_config`] and
//! [`ProducerSettings::client_config`].

use std::time::Duration;

use camel_api::{BoxExpression, CamelError, ComponentContext, EndpointUri, Parameters};
use rdkafka::ClientConfig;

/// Parameters every `kafka:` endpoint takes.
pub const COMMON_PARAMETERS: &[&str] = &[
    "brokers",
    "client_id",
    "metadata_max_age_ms",
    "additional_properties.*",
    "key_serializer",
    "value_serializer",
    "key_deserializer",
    "value_deserializer",
];

/// The Java Kafka client's (de)serializers that read or write what camel-rs sends and
/// gives: text and bytes. Naming one changes nothing; another class is refused.
const PLAIN_SERDES: &[&str] = &[
    "StringSerializer",
    "StringDeserializer",
    "ByteArraySerializer",
    "ByteArrayDeserializer",
    "ByteBufferSerializer",
    "ByteBufferDeserializer",
    "BytesSerializer",
    "BytesDeserializer",
];

/// Parameters of `from: kafka:TOPIC`.
pub const CONSUMER_PARAMETERS: &[&str] = &[
    "group_id",
    "auto_offset_reset",
    "max_poll_records",
    "consumers_count",
    "break_on_first_error",
    "break_on_first_error_delay",
    "dead_letter_topic",
    "auto_commit_interval_ms",
    "session_timeout_ms",
    "heartbeat_interval_ms",
    "max_poll_interval_ms",
    "partition_assignor",
    "fetch_wait_max_ms",
];

/// Parameters of `to: kafka:TOPIC`.
pub const PRODUCER_PARAMETERS: &[&str] = &[
    "key",
    "partition_key",
    "headers",
    "enable_idempotence",
    "request_required_acks",
    "acks",
    "linger_ms",
    "delivery_timeout_ms",
];

/// Where the broker is when `brokers` is not given (Camel's default).
pub const DEFAULT_BROKERS: &str = "localhost:9092";

/// Settings shared by both sides.
#[derive(Debug, Clone)]
pub(crate) struct CommonSettings {
    pub(crate) topic: String,
    pub(crate) brokers: String,
    pub(crate) client_id: Option<String>,
    /// How often the topic's metadata is read again (Camel's `metadataMaxAgeMs`,
    /// librdkafka's `topic.metadata.refresh.interval.ms`, 5 minutes by default): also how
    /// soon a consumer notices that a topic it subscribed to before it existed was made.
    pub(crate) metadata_max_age_ms: Option<u64>,
    /// Camel's `additionalProperties.NAME`: client properties passed to librdkafka as
    /// they are (most of the Java client's names are librdkafka's too).
    pub(crate) additional: Vec<(String, String)>,
}

impl CommonSettings {
    pub(crate) fn take(uri: &EndpointUri, params: &mut Parameters) -> Result<Self, CamelError> {
        let topic = uri.path().trim().to_string();
        if topic.is_empty() {
            return Err(CamelError::invalid_uri(
                uri.raw(),
                "a topic is required, as in `kafka:orders`",
            ));
        }
        if !topic
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        {
            return Err(CamelError::invalid_uri(
                uri.raw(),
                format!("`{topic}` is not a Kafka topic name (letters, digits, `.`, `_`, `-`)"),
            ));
        }
        for name in [
            "key_serializer",
            "value_serializer",
            "key_deserializer",
            "value_deserializer",
        ] {
            if let Some(class) = params.take_str(name) {
                let simple = class.trim().rsplit('.').next().unwrap_or_default();
                if !PLAIN_SERDES.contains(&simple) {
                    return Err(CamelError::invalid_uri(
                        uri.raw(),
                        format!(
                            "`{}` names the Java class `{}`, which cannot run here: \
                             records are read and written as bytes; unmarshal or marshal \
                             them in the route (`json`, `avro` is not supported yet)",
                            params.written(name),
                            class.trim()
                        ),
                    ));
                }
            }
        }
        let additional = params.take_prefixed("additional_properties.");
        if let Some((name, _)) = additional.iter().find(|(n, _)| {
            n.trim().is_empty()
                || !n
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        }) {
            return Err(CamelError::invalid_uri(
                uri.raw(),
                format!("`additionalProperties.{name}` is not a Kafka client property name"),
            ));
        }
        Ok(CommonSettings {
            additional,
            topic,
            brokers: params
                .take_str("brokers")
                .unwrap_or_else(|| DEFAULT_BROKERS.to_string()),
            client_id: params.take_str("client_id"),
            metadata_max_age_ms: params.take("metadata_max_age_ms")?,
        })
    }

    fn base(&self) -> ClientConfig {
        let mut config = ClientConfig::new();
        config.set("bootstrap.servers", &self.brokers);
        if let Some(id) = &self.client_id {
            config.set("client.id", id);
        }
        if let Some(ms) = self.metadata_max_age_ms {
            config.set("topic.metadata.refresh.interval.ms", ms.to_string());
        }
        for (name, value) in &self.additional {
            config.set(name, value);
        }
        config
    }
}

/// Where a new group starts reading a partition it has no committed offset for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OffsetReset {
    Earliest,
    Latest,
    /// No committed offset is an error.
    None,
}

/// What happens to a record whose exchange failed (after the route's error handler).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OnFailure {
    /// Stop the partition at the failed record and read it again after `delay`: nothing
    /// after it is committed until it succeeds.
    BreakOnFirstError { delay: Duration },
    /// Publish the record to this topic and go on once the broker has it.
    DeadLetterTopic(String),
    /// Log it and go on (Camel's `breakOnFirstError=false`): the record is committed.
    Skip,
}

/// `from: kafka:TOPIC`.
#[derive(Debug, Clone)]
pub(crate) struct ConsumerSettings {
    pub(crate) common: CommonSettings,
    pub(crate) group_id: String,
    pub(crate) auto_offset_reset: OffsetReset,
    /// Records taken from the broker and not yet finished, per consumer: the bound on
    /// what a slow route makes this process buffer.
    pub(crate) max_poll_records: usize,
    pub(crate) consumers_count: usize,
    pub(crate) on_failure: OnFailure,
    pub(crate) auto_commit_interval_ms: u64,
    pub(crate) session_timeout_ms: u64,
    pub(crate) heartbeat_interval_ms: Option<u64>,
    pub(crate) max_poll_interval_ms: u64,
    pub(crate) partition_assignor: &'static str,
    /// How long the broker may hold a fetch that finds no new record (librdkafka's
    /// `fetch.wait.max.ms`). librdkafka has one fetch in flight per broker, so a failed
    /// record's re-read waits for the one in flight: this bounds that wait.
    pub(crate) fetch_wait_max_ms: u64,
}

/// A consumer group name no other consumer has: Camel gives a consumer without
/// `groupId` a random UUID; this is as unlikely to repeat (the clock, the process and a
/// counter, mixed by a randomly seeded hasher).
fn random_group_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let mut parts = [0u64; 2];
    for (i, part) in parts.iter_mut().enumerate() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(nanos);
        h.write_u32(std::process::id());
        h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        h.write_usize(i);
        *part = h.finish();
    }
    format!("camel-rs-{:016x}{:016x}", parts[0], parts[1])
}

/// librdkafka's and Camel's default `fetch.wait.max.ms`.
const FETCH_WAIT_MAX_MS: u64 = 500;
/// The shortest fetch wait the consumer picks by itself (an idle consumer then asks
/// each broker at most this often).
const MIN_DEFAULT_FETCH_WAIT_MS: u64 = 10;

impl ConsumerSettings {
    /// Reads the consumer's settings from a `kafka:` URI.
    pub(crate) fn from_uri(uri: &EndpointUri) -> Result<Self, CamelError> {
        let mut params = uri.parameters.clone();
        let common = CommonSettings::take(uri, &mut params)?;
        // Without a group, Camel's consumer joins a group of its own with a random name
        // (ADR 0118): it reads from `auto_offset_reset` each start, and shares nothing.
        let group_id = match params.take_str("group_id") {
            Some(group) => group,
            None => {
                let group = random_group_id();
                tracing::warn!(
                    endpoint = %uri.raw(),
                    group = %group,
                    "`from: kafka:` has no `groupId`: it joins a consumer group of its own \
                     with a random name, as Camel does; give `groupId` to share the topic's \
                     partitions and keep committed offsets across restarts"
                );
                group
            }
        };
        let auto_offset_reset = match params
            .take_choice("auto_offset_reset", &["earliest", "latest", "none"])?
            .unwrap_or("latest")
        {
            "earliest" => OffsetReset::Earliest,
            "none" => OffsetReset::None,
            _ => OffsetReset::Latest,
        };
        let max_poll_records = positive(uri, &mut params, "max_poll_records", 500)?;
        let consumers_count = positive(uri, &mut params, "consumers_count", 1)?;
        let break_on_first_error = params.take_bool("break_on_first_error")?;
        let delay = params
            .take_duration("break_on_first_error_delay")?
            .unwrap_or(Duration::from_secs(1));
        let dead_letter = params.take_str("dead_letter_topic");
        let on_failure = match (break_on_first_error, dead_letter) {
            (Some(true), Some(_)) => {
                return Err(CamelError::invalid_uri(
                    uri.raw(),
                    "`break_on_first_error: true` and `dead_letter_topic` contradict each \
                     other: a failed record either stops its partition or goes to the topic",
                ))
            }
            (_, Some(topic)) if topic.trim().is_empty() => {
                return Err(CamelError::invalid_uri(
                    uri.raw(),
                    "`dead_letter_topic` is empty",
                ))
            }
            (_, Some(topic)) => OnFailure::DeadLetterTopic(topic.trim().to_string()),
            (Some(false), None) => OnFailure::Skip,
            (Some(true) | None, None) => OnFailure::BreakOnFirstError { delay },
        };
        let partition_assignor = params
            .take_choice(
                "partition_assignor",
                &["cooperative-sticky", "range", "roundrobin"],
            )?
            .unwrap_or("cooperative-sticky");
        // A failed record is fetched again after the delay, behind the fetch in flight:
        // unless told otherwise, a fetch waits no longer than the delay.
        let fetch_wait_max_ms = match params.take::<u64>("fetch_wait_max_ms")? {
            Some(ms) => ms,
            None => match on_failure {
                OnFailure::BreakOnFirstError { delay } => u64::try_from(delay.as_millis())
                    .unwrap_or(u64::MAX)
                    .clamp(MIN_DEFAULT_FETCH_WAIT_MS, FETCH_WAIT_MAX_MS),
                _ => FETCH_WAIT_MAX_MS,
            },
        };
        let settings = ConsumerSettings {
            common,
            group_id,
            auto_offset_reset,
            max_poll_records,
            consumers_count,
            on_failure,
            auto_commit_interval_ms: params.take("auto_commit_interval_ms")?.unwrap_or(5000),
            session_timeout_ms: params.take("session_timeout_ms")?.unwrap_or(45_000),
            heartbeat_interval_ms: params.take("heartbeat_interval_ms")?,
            max_poll_interval_ms: params.take("max_poll_interval_ms")?.unwrap_or(300_000),
            partition_assignor,
            fetch_wait_max_ms,
        };
        params.finish(&known(CONSUMER_PARAMETERS))?;
        Ok(settings)
    }

    /// librdkafka's configuration: offsets are stored by us, after success, and committed
    /// by librdkafka's timer, on revoke and on close (ADR 0071).
    pub(crate) fn client_config(&self) -> ClientConfig {
        let mut config = self.common.base();
        config
            .set("group.id", &self.group_id)
            .set(
                "auto.offset.reset",
                match self.auto_offset_reset {
                    OffsetReset::Earliest => "earliest",
                    OffsetReset::Latest => "latest",
                    OffsetReset::None => "error",
                },
            )
            .set("enable.auto.commit", "true")
            .set("enable.auto.offset.store", "false")
            .set(
                "auto.commit.interval.ms",
                self.auto_commit_interval_ms.to_string(),
            )
            .set("session.timeout.ms", self.session_timeout_ms.to_string())
            .set(
                "max.poll.interval.ms",
                self.max_poll_interval_ms.to_string(),
            )
            .set("partition.assignment.strategy", self.partition_assignor)
            .set("enable.partition.eof", "false")
            .set("fetch.wait.max.ms", self.fetch_wait_max_ms.to_string());
        if let Some(ms) = self.heartbeat_interval_ms {
            config.set("heartbeat.interval.ms", ms.to_string());
        }
        config
    }
}

/// Which exchange headers become Kafka record headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HeaderSelection {
    /// Every header except Camel's own (`Camel…`) and `kafka.…` ones.
    All,
    None,
    Named(Vec<String>),
}

/// `to: kafka:TOPIC`.
#[derive(Debug, Clone)]
pub(crate) struct ProducerSettings {
    pub(crate) common: CommonSettings,
    pub(crate) key: Option<BoxExpression>,
    pub(crate) partition: Option<i32>,
    pub(crate) headers: HeaderSelection,
    pub(crate) enable_idempotence: bool,
    pub(crate) acks: String,
    pub(crate) linger_ms: Option<u64>,
    pub(crate) delivery_timeout_ms: Option<u64>,
}

impl ProducerSettings {
    /// Reads the producer's settings (the key expression is compiled by `ctx`).
    pub(crate) fn from_uri(
        uri: &EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Self, CamelError> {
        let mut params = uri.parameters.clone();
        let common = CommonSettings::take(uri, &mut params)?;
        let key = match params.take_str("key") {
            Some(text) if !text.trim().is_empty() => Some(ctx.expression("simple", &text)?),
            _ => None,
        };
        let partition = params.take::<i32>("partition_key")?;
        if partition.is_some_and(|p| p < 0) {
            return Err(CamelError::invalid_uri(
                uri.raw(),
                "`partition_key` is a partition number, 0 or more",
            ));
        }
        let headers = match params.take_str("headers") {
            None => HeaderSelection::All,
            Some(v) if v.trim().eq_ignore_ascii_case("all") => HeaderSelection::All,
            Some(v) if v.trim().eq_ignore_ascii_case("none") || v.trim().is_empty() => {
                HeaderSelection::None
            }
            Some(v) => HeaderSelection::Named(
                v.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect(),
            ),
        };
        let acks = match (
            params.take_str("request_required_acks"),
            params.take_str("acks"),
        ) {
            (Some(_), Some(_)) => {
                return Err(CamelError::invalid_uri(
                    uri.raw(),
                    "give `request_required_acks` or its alias `acks`, not both",
                ))
            }
            (Some(a), None) | (None, Some(a)) => a.trim().to_string(),
            (None, None) => "all".to_string(),
        };
        if !matches!(acks.as_str(), "all" | "-1" | "0" | "1") {
            return Err(CamelError::invalid_uri(
                uri.raw(),
                format!("`request_required_acks` = `{acks}`: expected all, -1, 0 or 1"),
            ));
        }
        let enable_idempotence = params.take_bool("enable_idempotence")?.unwrap_or(true);
        if enable_idempotence && !matches!(acks.as_str(), "all" | "-1") {
            return Err(CamelError::invalid_uri(
                uri.raw(),
                "`enable_idempotence` needs `request_required_acks: all`; set \
                 `enable_idempotence: false` to use fewer acks",
            ));
        }
        let settings = ProducerSettings {
            common,
            key,
            partition,
            headers,
            enable_idempotence,
            acks,
            linger_ms: params.take("linger_ms")?,
            delivery_timeout_ms: params.take("delivery_timeout_ms")?,
        };
        params.finish(&known(PRODUCER_PARAMETERS))?;
        Ok(settings)
    }

    pub(crate) fn client_config(&self) -> ClientConfig {
        let mut config = self.common.base();
        config
            .set("enable.idempotence", self.enable_idempotence.to_string())
            .set("acks", &self.acks);
        if let Some(ms) = self.linger_ms {
            config.set("linger.ms", ms.to_string());
        }
        if let Some(ms) = self.delivery_timeout_ms {
            config.set("delivery.timeout.ms", ms.to_string());
        }
        config
    }
}

fn known(side: &[&'static str]) -> Vec<&'static str> {
    COMMON_PARAMETERS.iter().chain(side).copied().collect()
}

fn positive(
    uri: &EndpointUri,
    params: &mut Parameters,
    name: &str,
    default: usize,
) -> Result<usize, CamelError> {
    match params.take::<usize>(name)? {
        None => Ok(default),
        Some(0) => Err(CamelError::invalid_uri(
            uri.raw(),
            format!("`{name}` must be at least 1"),
        )),
        Some(n) => Ok(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn consumer(raw: &str) -> Result<ConsumerSettings, CamelError> {
        ConsumerSettings::from_uri(&EndpointUri::parse(raw)?)
    }

    #[test]
    fn consumer_defaults_follow_camel_except_the_failure_policy() {
        let s = consumer("kafka:orders?groupId=g").unwrap();
        assert_eq!(s.common.topic, "orders");
        assert_eq!(s.common.brokers, DEFAULT_BROKERS);
        assert_eq!(s.max_poll_records, 500);
        assert_eq!(s.consumers_count, 1);
        assert_eq!(s.auto_offset_reset, OffsetReset::Latest);
        assert_eq!(
            s.on_failure,
            OnFailure::BreakOnFirstError {
                delay: Duration::from_secs(1)
            }
        );
        assert_eq!(s.partition_assignor, "cooperative-sticky");
        assert_eq!(s.fetch_wait_max_ms, 500);
    }

    #[test]
    fn the_fetch_wait_follows_a_short_break_on_first_error_delay() {
        let wait = |raw: &str| consumer(raw).unwrap().fetch_wait_max_ms;
        assert_eq!(
            wait("kafka:o?group_id=g&break_on_first_error_delay=20ms"),
            20
        );
        assert_eq!(
            wait("kafka:o?group_id=g&break_on_first_error_delay=0ms"),
            10
        );
        assert_eq!(
            wait("kafka:o?group_id=g&break_on_first_error_delay=5s"),
            500
        );
        assert_eq!(wait("kafka:o?group_id=g&break_on_first_error=false"), 500);
        let explicit = "kafka:o?group_id=g&break_on_first_error_delay=20ms&fetch_wait_max_ms=300";
        assert_eq!(wait(explicit), 300);
        let c = consumer(explicit).unwrap().client_config();
        assert_eq!(c.get("fetch.wait.max.ms"), Some("300"));
    }

    #[test]
    fn consumer_mistakes_are_named() {
        // No group: one of its own, named at random, as Camel's consumer does.
        let a = consumer("kafka:orders").unwrap();
        let b = consumer("kafka:orders").unwrap();
        assert!(a.group_id.starts_with("camel-rs-"), "{}", a.group_id);
        assert_ne!(a.group_id, b.group_id);
        assert_eq!(a.client_config().get("group.id"), Some(a.group_id.as_str()));
        let e = consumer("kafka:orders?group_id=g&max_poll_records=0").unwrap_err();
        assert!(e.to_string().contains("max_poll_records"), "{e}");
        let e = consumer("kafka:orders?group_id=g&group_idd=x").unwrap_err();
        assert!(e.to_string().contains("did you mean `group_id`"), "{e}");
        let e = consumer("kafka:orders?group_id=g&break_on_first_error=true&dead_letter_topic=dlt")
            .unwrap_err();
        assert!(e.to_string().contains("contradict"), "{e}");
        let e = consumer("kafka:or ders?group_id=g").unwrap_err();
        assert!(e.to_string().contains("topic name"), "{e}");
        let e = consumer("kafka:o?group_id=g&auto_offset_reset=first").unwrap_err();
        assert!(e.to_string().contains("earliest"), "{e}");
    }

    #[test]
    fn failure_policies() {
        let s = consumer("kafka:o?group_id=g&break_on_first_error=false").unwrap();
        assert_eq!(s.on_failure, OnFailure::Skip);
        let s = consumer("kafka:o?group_id=g&dead_letter_topic=o.dlt").unwrap();
        assert_eq!(s.on_failure, OnFailure::DeadLetterTopic("o.dlt".into()));
    }
}
