//! The rebalance hook: librdkafka calls it (inside `recv`) when partitions are revoked.

use std::sync::{Arc, Mutex, PoisonError};

use rdkafka::consumer::{BaseConsumer, Consumer as _, ConsumerContext, Rebalance};
use rdkafka::{ClientContext, Offset, TopicPartitionList};

use super::lanes::Lanes;
use super::worker::Pending;

/// Shared by the worker loop and librdkafka's rebalance callback. The lock is never held
/// across an `.await`, and the callback runs inside the worker's own `recv`, so the two
/// never wait for each other.
pub(crate) type SharedLanes = Arc<Mutex<Lanes<Pending>>>;

/// Forgets revoked partitions at once: their running exchanges are abandoned (their
/// results are ignored, nothing more is stored for them) and their queued records are
/// dropped. Their offsets not yet stored are stored here, and librdkafka commits stored
/// offsets as part of the revoke (`enable.auto.commit`), so the new owner starts right
/// after the last success.
pub(crate) struct RebalanceHook {
    pub(crate) lanes: SharedLanes,
    pub(crate) route_id: Arc<str>,
}

impl ClientContext for RebalanceHook {}

impl ConsumerContext for RebalanceHook {
    fn pre_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        match rebalance {
            Rebalance::Revoke(list) => {
                let mut unstored = TopicPartitionList::new();
                let mut lanes = self.lanes.lock().unwrap_or_else(PoisonError::into_inner);
                for elem in list.elements() {
                    if let Some(next) = lanes.revoke(&(elem.topic().into(), elem.partition())) {
                        let _ = unstored.add_partition_offset(
                            elem.topic(),
                            elem.partition(),
                            Offset::Offset(next),
                        );
                    }
                }
                drop(lanes);
                if unstored.count() > 0 {
                    if let Err(e) = consumer.store_offsets(&unstored) {
                        tracing::debug!(route_id = %self.route_id, error = %e,
                            "offsets of revoked partitions not stored");
                    }
                }
                tracing::info!(route_id = %self.route_id, partitions = list.count(),
                    "kafka partitions revoked; their unfinished records go to the new owner");
            }
            Rebalance::Assign(list) => {
                tracing::info!(route_id = %self.route_id, partitions = list.count(),
                    "kafka partitions assigned");
            }
            Rebalance::Error(e) => {
                tracing::warn!(route_id = %self.route_id, error = %e, "kafka rebalance failed");
            }
        }
    }
}
