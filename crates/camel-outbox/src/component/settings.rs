//! The outbox-level parameters of `outbox:` endpoints. Producer and consumer endpoints of
//! one outbox may each state some of them; they are merged, and a contradiction is an
//! error, because a producer that hashed groups over another partition count than the
//! relay drains would break the order.

use std::collections::BTreeMap;

use camel_api::{parse_duration, CamelError, Parameters};

use crate::config::{MaxAttempts, Ordering, OutboxConfig};

/// Parameter names that configure the outbox itself (not one endpoint).
pub(crate) const OUTBOX_KEYS: &[&str] = &[
    "table",
    "ordering",
    "partitions",
    "max_attempts",
    "backoff_min",
    "backoff_max",
    "backoff_jitter",
    "serialize_writes",
    "batch_size",
    "poll_interval",
    "max_inflight",
    "sweep_interval",
    "takeover_interval",
    "listen_notify",
    "logical_replication",
];

/// Takes the outbox-level parameters out of `params`.
pub(crate) fn take(params: &mut Parameters) -> BTreeMap<String, String> {
    OUTBOX_KEYS
        .iter()
        .filter_map(|k| params.take_str(k).map(|v| (k.to_string(), v)))
        .collect()
}

/// Merges `new` into `merged`, refusing a different value for a key already set.
pub(crate) fn merge(
    uri: &str,
    merged: &mut BTreeMap<String, String>,
    new: BTreeMap<String, String>,
) -> Result<(), CamelError> {
    for (k, v) in new {
        match merged.get(&k) {
            Some(old) if old.trim() != v.trim() => {
                return Err(CamelError::invalid_uri(
                    uri,
                    format!("`{k}` = `{v}` contradicts `{k}` = `{old}` on another endpoint of this outbox; state it once or equally"),
                ))
            }
            _ => {
                merged.insert(k, v);
            }
        }
    }
    Ok(())
}

/// Builds the configuration of outbox `name` from merged settings.
pub(crate) fn config(
    uri: &str,
    name: &str,
    s: &BTreeMap<String, String>,
) -> Result<OutboxConfig, CamelError> {
    let bad = |k: &str, v: &str, why: &str| {
        CamelError::invalid_uri(
            uri,
            format!(
                "parameter `{k}` = `{}`: {why}",
                camel_api::shown_value(k, v)
            ),
        )
    };
    let mut c = OutboxConfig::new(name);
    for (k, v) in s {
        let num = || {
            v.trim()
                .parse::<u32>()
                .map_err(|_| bad(k, v, "expected a whole number"))
        };
        let dur =
            || parse_duration(v).ok_or_else(|| bad(k, v, "expected a duration (500ms, 2s, 1m)"));
        let flag = || {
            v.trim()
                .parse::<bool>()
                .map_err(|_| bad(k, v, "expected true or false"))
        };
        match k.as_str() {
            "table" => c.table = Some(v.clone()),
            "ordering" => c.ordering = Ordering::parse(v).map_err(|e| bad(k, v, &e.to_string()))?,
            "partitions" => c.partitions = num()?,
            "max_attempts" => {
                c.max_attempts = MaxAttempts::parse(v).map_err(|e| bad(k, v, &e.to_string()))?
            }
            "backoff_min" => c.backoff.min = dur()?,
            "backoff_max" => c.backoff.max = dur()?,
            "backoff_jitter" => c.backoff.jitter = flag()?,
            "serialize_writes" => c.serialize_writes = flag()?,
            "batch_size" => c.batch_size = num()?,
            "poll_interval" => c.poll_interval = dur()?,
            "max_inflight" => c.max_inflight = num()?,
            "sweep_interval" => c.sweep_interval = dur()?,
            "takeover_interval" => c.takeover_interval = dur()?,
            "listen_notify" => c.listen_notify = flag()?,
            "logical_replication" => c.logical_replication = flag()?,
            _ => {}
        }
    }
    c.validate().map_err(|e| CamelError::invalid_uri(uri, e))?;
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn merges_and_refuses_contradictions() {
        let mut m = map(&[("partitions", "4")]);
        merge(
            "outbox:o",
            &mut m,
            map(&[("partitions", "4"), ("ordering", "group")]),
        )
        .unwrap();
        let err = merge("outbox:o", &mut m, map(&[("partitions", "2")])).unwrap_err();
        assert!(err.to_string().contains("contradicts"), "{err}");
    }

    #[test]
    fn builds_a_validated_config() {
        let c = config(
            "outbox:o",
            "o",
            &map(&[
                ("partitions", "8"),
                ("max_attempts", "3"),
                ("backoff_min", "10ms"),
            ]),
        )
        .unwrap();
        assert_eq!(c.partitions, 8);
        assert_eq!(c.max_attempts, MaxAttempts::Limit(3));
        assert_eq!(c.backoff.min, std::time::Duration::from_millis(10));
        assert!(config("outbox:o", "o", &map(&[("partitions", "x")])).is_err());
        assert!(config(
            "outbox:o",
            "o",
            &map(&[("ordering", "total"), ("partitions", "2")])
        )
        .is_err());
    }
}
