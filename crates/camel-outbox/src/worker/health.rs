//! What a running relay says about its database: a partition whose worker cannot reach
//! the store is *down* until it owns the partition and has read from the store again.
//! The `outbox:` consumer hands its route's [`ConsumerHealth`] in, so `/health` turns
//! `DOWN` within one poll of the database going away and `UP` once it answers.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use camel_api::ConsumerHealth;

/// The failing partitions of one relay, reported to one consumer's health.
#[derive(Debug)]
pub(crate) struct RelayHealth {
    outbox: String,
    target: Arc<ConsumerHealth>,
    /// Partition → why it is down. Written on a change of state only.
    down: Mutex<BTreeMap<u32, String>>,
}

impl RelayHealth {
    pub(crate) fn new(outbox: &str, target: Arc<ConsumerHealth>) -> Self {
        RelayHealth {
            outbox: outbox.to_string(),
            target,
            down: Mutex::new(BTreeMap::new()),
        }
    }

    /// Partition `partition` cannot use its store.
    pub(crate) fn down(&self, partition: u32, reason: impl std::fmt::Display) {
        let mut down = self.lock();
        down.insert(partition, reason.to_string());
        self.publish(&down);
    }

    /// Partition `partition` reads its store again (or another process owns it, which
    /// takes a working database too).
    pub(crate) fn up(&self, partition: u32) {
        let mut down = self.lock();
        if down.remove(&partition).is_some() {
            self.publish(&down);
        }
    }

    fn publish(&self, down: &BTreeMap<u32, String>) {
        match down.iter().next() {
            None => self.target.set_healthy(),
            Some((partition, reason)) => self.target.set_failing(format_args!(
                "outbox `{}`: {} of its partitions cannot reach the database (partition {partition}: {reason})",
                self.outbox,
                down.len()
            )),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u32, String>> {
        self.down.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The health a relay reports to, if any (a relay run by hand reports nowhere).
#[derive(Clone, Debug, Default)]
pub(crate) struct Report(Option<Arc<RelayHealth>>);

impl Report {
    pub(crate) fn to(health: Arc<RelayHealth>) -> Self {
        Report(Some(health))
    }

    pub(crate) fn down(&self, partition: u32, reason: impl std::fmt::Display) {
        if let Some(h) = &self.0 {
            h.down(partition, reason);
        }
    }

    pub(crate) fn up(&self, partition: u32) {
        if let Some(h) = &self.0 {
            h.up(partition);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn down_while_any_partition_is_down() {
        let target = Arc::new(ConsumerHealth::default());
        let health = RelayHealth::new("orders", target.clone());
        health.down(0, "connection refused");
        health.down(1, "connection refused");
        let failing = target.failing().expect("down");
        assert!(failing.contains("2 of its partitions"), "{failing}");
        assert!(failing.contains("connection refused"), "{failing}");
        health.up(0);
        assert!(target.failing().is_some(), "partition 1 is still down");
        health.up(1);
        assert_eq!(target.failing(), None);
    }
}
