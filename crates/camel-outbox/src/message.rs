//! The messages that go into an outbox and the rows that come out of it.

use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;

/// How the payload bytes are to be read back (so a route gets the body kind it published).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PayloadKind {
    /// No payload.
    Empty,
    /// Opaque bytes.
    #[default]
    Bytes,
    /// UTF-8 text.
    Text,
    /// A JSON document.
    Json,
}

impl PayloadKind {
    pub(crate) fn code(self) -> i16 {
        match self {
            PayloadKind::Empty => 0,
            PayloadKind::Bytes => 1,
            PayloadKind::Text => 2,
            PayloadKind::Json => 3,
        }
    }

    pub(crate) fn from_code(code: i64) -> Self {
        match code {
            0 => PayloadKind::Empty,
            2 => PayloadKind::Text,
            3 => PayloadKind::Json,
            _ => PayloadKind::Bytes,
        }
    }
}

/// A message to publish: an optional group key, headers and a payload.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NewMessage {
    /// Messages with the same key keep their order (`group` mode); `None` is unordered.
    pub group_key: Option<String>,
    /// Headers, as a JSON object.
    pub headers: serde_json::Map<String, serde_json::Value>,
    /// The payload.
    pub payload: Bytes,
    /// How the payload is to be read back.
    pub kind: PayloadKind,
}

impl NewMessage {
    /// A message carrying opaque bytes.
    pub fn bytes(payload: impl Into<Bytes>) -> Self {
        NewMessage {
            payload: payload.into(),
            ..Default::default()
        }
    }

    /// A message carrying UTF-8 text.
    pub fn text(payload: impl Into<String>) -> Self {
        NewMessage {
            payload: Bytes::from(payload.into()),
            kind: PayloadKind::Text,
            ..Default::default()
        }
    }

    /// A message carrying a JSON document.
    pub fn json(payload: &serde_json::Value) -> Self {
        NewMessage {
            payload: Bytes::from(payload.to_string()),
            kind: PayloadKind::Json,
            ..Default::default()
        }
    }

    /// Builder-style: sets the group key.
    pub fn group(mut self, key: impl Into<String>) -> Self {
        self.group_key = Some(key.into());
        self
    }

    /// Builder-style: sets a header.
    pub fn header(mut self, name: &str, value: impl Into<serde_json::Value>) -> Self {
        self.headers.insert(name.to_string(), value.into());
        self
    }
}

/// A message read back from the outbox by a worker.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredMessage {
    /// The id the database gave it; increases with insertion order, never reused.
    pub id: i64,
    /// The partition it was published to.
    pub partition: u32,
    /// Its group key.
    pub group_key: Option<String>,
    /// Its headers.
    pub headers: serde_json::Map<String, serde_json::Value>,
    /// Its payload.
    pub payload: Bytes,
    /// How to read the payload.
    pub kind: PayloadKind,
    /// Failed attempts so far.
    pub attempts: u32,
    /// Not to be delivered before this time (ms since the Unix epoch), after a failure.
    pub retry_at_ms: Option<i64>,
    /// When it was published (ms since the Unix epoch).
    pub created_at_ms: i64,
}

/// Milliseconds since the Unix epoch: the clock of retry times and ages in the tables.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A stable 64-bit hash (FNV-1a) of a group key: the same key maps to the same partition
/// in every process and every version, unlike `std`'s randomised hasher.
pub(crate) fn stable_hash(key: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The partition of a group key.
pub(crate) fn partition_of(key: &str, partitions: u32) -> u32 {
    (stable_hash(key) % u64::from(partitions.max(1))) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_is_stable_and_in_range() {
        assert_eq!(stable_hash("order:42"), stable_hash("order:42"));
        assert_ne!(stable_hash("order:42"), stable_hash("order:43"));
        for k in 0..100 {
            assert!(partition_of(&format!("g{k}"), 8) < 8);
        }
        assert_eq!(partition_of("anything", 1), 0);
    }

    #[test]
    fn payload_kind_round_trips() {
        for k in [
            PayloadKind::Empty,
            PayloadKind::Bytes,
            PayloadKind::Text,
            PayloadKind::Json,
        ] {
            assert_eq!(PayloadKind::from_code(k.code().into()), k);
        }
    }
}
