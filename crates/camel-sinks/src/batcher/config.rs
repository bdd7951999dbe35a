//! Batch tuning and bounds, with the defaults the spec gives.

use std::time::Duration;

use camel_api::{CamelError, Parameters};

use crate::codec::{BatchIdentity, Limits};

/// How a batcher groups deliveries and how much it may hold.
///
/// `max_entries` and `max_bytes` default to the codec's limits and are capped by them;
/// the queue bounds protect memory when a destination is slow or dead: a delivery that
/// does not fit is refused at once instead of waiting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchConfig {
    /// Most entries per request (`None`: the codec's limit).
    pub max_entries: Option<usize>,
    /// Most bytes per request (`None`: the codec's limit).
    pub max_bytes: Option<usize>,
    /// How long a non-empty queue waits for more entries before a short batch goes out.
    pub linger: Duration,
    /// Most requests in flight for the destination (default 8).
    pub max_inflight: usize,
    /// Most entries queued (default 4096).
    pub queue_max: usize,
    /// Most bytes queued (default 128 MiB).
    pub queue_max_bytes: usize,
    /// Most entries queued for one tenant (default 1024).
    pub tenant_max: usize,
    /// Longest one request may take before its entries fail (default 30 s).
    pub send_timeout: Duration,
    /// A batcher with nothing queued or in flight for this long stops (default 60 s).
    pub idle_timeout: Duration,
    /// Cap of the full-jitter wait a refused delivery is told to observe (default 1 s).
    pub retry_after_max: Duration,
    /// How long a delivery that found its batcher stopping waits for it to go before
    /// starting the replacement (default 250 ms).
    pub replace_wait: Duration,
}

impl Default for BatchConfig {
    fn default() -> Self {
        BatchConfig {
            max_entries: None,
            max_bytes: None,
            linger: Duration::from_millis(10),
            max_inflight: 8,
            queue_max: 4096,
            queue_max_bytes: 128 * 1024 * 1024,
            tenant_max: 1024,
            send_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            retry_after_max: Duration::from_secs(1),
            replace_wait: Duration::from_millis(250),
        }
    }
}

/// The endpoint parameters [`BatchConfig::take_parameters`] understands.
pub const BATCH_PARAMETERS: &[&str] = &[
    "max_entries",
    "max_bytes",
    "linger_ms",
    "max_inflight",
    "queue_max",
    "queue_max_bytes",
    "tenant_max",
    "send_timeout",
    "idle_timeout",
    "retry_after_max",
];

impl BatchConfig {
    /// Takes the batch tuning parameters from an endpoint URI.
    pub fn take_parameters(params: &mut Parameters) -> Result<Self, CamelError> {
        let d = BatchConfig::default();
        Ok(BatchConfig {
            max_entries: params.take("max_entries")?,
            max_bytes: params.take("max_bytes")?,
            linger: params.take_duration("linger_ms")?.unwrap_or(d.linger),
            max_inflight: params.take("max_inflight")?.unwrap_or(d.max_inflight),
            queue_max: params.take("queue_max")?.unwrap_or(d.queue_max),
            queue_max_bytes: params.take("queue_max_bytes")?.unwrap_or(d.queue_max_bytes),
            tenant_max: params.take("tenant_max")?.unwrap_or(d.tenant_max),
            send_timeout: params
                .take_duration("send_timeout")?
                .unwrap_or(d.send_timeout),
            idle_timeout: params
                .take_duration("idle_timeout")?
                .unwrap_or(d.idle_timeout),
            retry_after_max: params
                .take_duration("retry_after_max")?
                .unwrap_or(d.retry_after_max),
            ..d
        })
    }

    /// Checks the values make sense, naming the first that does not.
    pub fn validate(&self, uri: &str) -> Result<(), CamelError> {
        let positive = [
            ("max_entries", self.max_entries.unwrap_or(1)),
            ("max_bytes", self.max_bytes.unwrap_or(1)),
            ("max_inflight", self.max_inflight),
            ("queue_max", self.queue_max),
            ("queue_max_bytes", self.queue_max_bytes),
            ("tenant_max", self.tenant_max),
        ];
        for (name, value) in positive {
            if value == 0 {
                return Err(CamelError::invalid_uri(
                    uri.to_string(),
                    format!("parameter `{name}` must be at least 1"),
                ));
            }
        }
        Ok(())
    }

    /// Entries per request: the configured value capped by the codec's limit.
    pub(crate) fn entries_per_request(&self, limits: &Limits) -> usize {
        self.max_entries
            .unwrap_or(limits.max_entries)
            .clamp(1, limits.max_entries.max(1))
    }

    /// Bytes per request: the configured value capped by the codec's limit.
    pub(crate) fn bytes_per_request(&self, limits: &Limits) -> usize {
        self.max_bytes
            .unwrap_or(limits.max_request_bytes)
            .clamp(1, limits.max_request_bytes.max(1))
    }

    /// Adds the tuning to a batch identity: two endpoints tuned differently get
    /// different batchers.
    pub(crate) fn add_to_identity(&self, identity: &mut BatchIdentity) {
        identity
            .part("max_entries", format!("{:?}", self.max_entries))
            .part("max_bytes", format!("{:?}", self.max_bytes))
            .part("linger", self.linger.as_micros())
            .part("max_inflight", self.max_inflight)
            .part("queue_max", self.queue_max)
            .part("queue_max_bytes", self.queue_max_bytes)
            .part("tenant_max", self.tenant_max)
            .part("send_timeout", self.send_timeout.as_micros())
            .part("idle_timeout", self.idle_timeout.as_micros())
            .part("retry_after_max", self.retry_after_max.as_micros());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use camel_api::EndpointUri;

    #[test]
    fn parameters_override_defaults_and_camel_case_is_accepted() {
        let mut uri = EndpointUri::parse(
            "x:y?maxEntries=5&linger_ms=50&queue_max=10&tenantMax=3&retryAfterMax=250ms",
        )
        .unwrap();
        let c = BatchConfig::take_parameters(&mut uri.parameters).unwrap();
        uri.parameters.finish(&[]).unwrap();
        assert_eq!(c.max_entries, Some(5));
        assert_eq!(c.linger, Duration::from_millis(50));
        assert_eq!(c.queue_max, 10);
        assert_eq!(c.tenant_max, 3);
        assert_eq!(c.retry_after_max, Duration::from_millis(250));
        assert_eq!(c.max_inflight, 8);
    }

    #[test]
    fn caps_by_codec_limits_and_rejects_zero() {
        let limits = Limits {
            max_entries: 10,
            max_request_bytes: 100,
            max_entry_bytes: 100,
        };
        let c = BatchConfig {
            max_entries: Some(50),
            ..BatchConfig::default()
        };
        assert_eq!(c.entries_per_request(&limits), 10);
        assert_eq!(c.bytes_per_request(&limits), 100);
        let bad = BatchConfig {
            max_inflight: 0,
            ..BatchConfig::default()
        };
        assert!(bad
            .validate("x:y")
            .unwrap_err()
            .to_string()
            .contains("max_inflight"));
    }
}
