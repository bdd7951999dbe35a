//! Partitioned routes (ADR 0148): `master:NAMESPACE/N:ENDPOINT`, or `partitions: N` on a
//! route, splits the work of a polling consumer into N partitions with one owner each
//! across the processes of a cluster.
//!
//! Ownership lives in the same lease store as leader-only routes:
//!
//! - **Members.** Each process takes one *member slot*, a lease on `NAMESPACE/m<j>` for
//!   the first free `j` below N. The slots held tell every process how many share the
//!   work; a process that dies loses its slot when the lease expires.
//! - **Partitions.** Partition `k` is owned by the holder of the lease `NAMESPACE/p<k>`.
//!   Every retry interval a process counts the members (M) and aims at its fair share
//!   `ceil(N / M)`: above it, it releases its highest partitions (so a process that joins
//!   gets work); below it, it contends for partitions nobody holds, starting from
//!   `j × share` so members do not all reach for the same ones.
//! - **Work.** While owning partition `k`, the process runs a consumer of ENDPOINT with
//!   `partition=k&partitions=N` added: the file consumer takes only files whose name
//!   hashes to `k`, the SQL poller only rows whose key column does
//!   ([`partition_of`]). Exchanges carry the partition's epoch (`CamelClusterEpoch`,
//!   namespace `NAMESPACE/p<k>`), so fenced writes work per partition.
//!
//! An owner stops its partition's consumer as a leader-only route does on loss: by the
//! local lease deadline, before any other process can take the lease over.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use camel_api::{
    BoxProcessor, CamelError, ConsumerContext, Endpoint, ExchangeStats, RoutePipeline,
};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::master::LeaderConsumer;
use crate::service::{ClusterService, Membership};
use crate::store::LeaseStore;

/// The most partitions a route may have.
pub const MAX_PARTITIONS: u32 = 256;

/// The partition of `key` among `count`: FNV-1a of its bytes, modulo `count`. The same
/// on every process, platform and version (it decides who takes a file).
pub fn partition_of(key: &str, count: u32) -> u32 {
    u32::try_from(fnv1a(key) % u64::from(count.max(1))).unwrap_or(0)
}

/// The 64-bit FNV-1a hash of `text`: small, and fixed across versions and platforms.
pub(crate) fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Reads the `partition` and `partitions` options a partitioned route gives its
/// endpoint: `Ok(None)` when neither is there.
pub fn partition_options(
    partition: Option<&str>,
    partitions: Option<&str>,
) -> Result<Option<(u32, u32)>, String> {
    match (partition, partitions) {
        (None, None) => Ok(None),
        (Some(k), Some(n)) => {
            let n: u32 = n
                .trim()
                .parse()
                .ok()
                .filter(|n| (1..=MAX_PARTITIONS).contains(n))
                .ok_or_else(|| format!("`partitions` is a count from 1 to {MAX_PARTITIONS}"))?;
            let k: u32 = k
                .trim()
                .parse()
                .ok()
                .filter(|k| *k < n)
                .ok_or_else(|| format!("`partition` is a number below `partitions` ({n})"))?;
            Ok(Some((k, n)))
        }
        _ => Err(
            "`partition` and `partitions` go together (a partitioned route sets them: \
                  `partitions: N` on the route)"
                .into(),
        ),
    }
}

/// The lease namespace of partition `k`.
pub(crate) fn partition_namespace(namespace: &str, k: u32) -> String {
    format!("{namespace}/p{k}")
}

fn member_namespace(namespace: &str, j: u32) -> String {
    format!("{namespace}/m{j}")
}

/// The fair share of `count` partitions among `members`.
pub(crate) fn fair_share(count: u32, members: u32) -> u32 {
    count.div_ceil(members.max(1))
}

/// One partition this process owns or contends for.
struct Owned {
    cancel: CancellationToken,
    task: JoinHandle<()>,
    leading: tokio::sync::watch::Receiver<bool>,
    since: Instant,
}

impl Owned {
    fn leads(&self) -> bool {
        *self.leading.borrow()
    }

    async fn stop(self) {
        self.cancel.cancel();
        let _ = self.task.await;
    }
}

/// The consumer of a partitioned route.
#[derive(Debug)]
pub(crate) struct PartitionedConsumer {
    pub(crate) namespace: String,
    /// The inner endpoint of each partition.
    pub(crate) partitions: Vec<Arc<dyn Endpoint>>,
    pub(crate) service: Arc<ClusterService>,
}

impl PartitionedConsumer {
    fn count(&self) -> u32 {
        u32::try_from(self.partitions.len()).unwrap_or(MAX_PARTITIONS)
    }

    pub(crate) async fn run(self, ctx: ConsumerContext) -> Result<(), CamelError> {
        let tick = self.service.settings().retry_interval;
        let store = loop {
            match self.service.store().await {
                Ok(store) => break store,
                Err(e) => {
                    ctx.health().set_failing(&e);
                    tokio::select! {
                        _ = ctx.cancelled() => return Ok(()),
                        _ = tokio::time::sleep(tick) => {}
                    }
                }
            }
        };
        ctx.health().set_healthy();
        let mut member: Option<(u32, Membership, Instant)> = None;
        let mut owned: BTreeMap<u32, Owned> = BTreeMap::new();
        loop {
            if let Err(e) = self
                .rebalance(&ctx, store.as_ref(), &mut member, &mut owned, tick)
                .await
            {
                tracing::warn!(route_id = ctx.route_id(), namespace = %self.namespace, error = %e, "cannot read the partition leases; retrying");
            }
            tokio::select! {
                _ = ctx.cancelled() => break,
                _ = tokio::time::sleep(tick) => {}
            }
        }
        for (_, o) in std::mem::take(&mut owned) {
            o.stop().await;
        }
        if let Some((_, m, _)) = member {
            m.leave().await;
        }
        Ok(())
    }

    /// One round: keep a member slot, count the members, give up partitions above the
    /// fair share and contend for free ones below it.
    async fn rebalance(
        &self,
        ctx: &ConsumerContext,
        store: &dyn LeaseStore,
        member: &mut Option<(u32, Membership, Instant)>,
        owned: &mut BTreeMap<u32, Owned>,
        tick: Duration,
    ) -> Result<(), crate::ClusterError> {
        let n = self.count();
        let patience = tick * 3;
        // A slot this process did not win (or lost) is given up, and a free one sought.
        if let Some((_, m, since)) = member {
            if m.watch().borrow().epoch().is_none() && since.elapsed() > patience {
                if let Some((_, m, _)) = member.take() {
                    m.leave().await;
                }
            }
        }
        let mut others = 0;
        for j in 0..n {
            let ours = member.as_ref().is_some_and(|(slot, _, _)| *slot == j);
            let held = store
                .leader(&member_namespace(&self.namespace, j))
                .await?
                .is_some();
            if held && !ours {
                others += 1;
            } else if !held && member.is_none() {
                let m = self
                    .service
                    .join(&member_namespace(&self.namespace, j))
                    .await?;
                *member = Some((j, m, Instant::now()));
            }
        }
        let share = fair_share(n, others + 1);
        // Contenders that did not win in time stop contending.
        let stale: Vec<u32> = owned
            .iter()
            .filter(|(_, o)| !o.leads() && o.since.elapsed() > patience)
            .map(|(k, _)| *k)
            .collect();
        for k in stale {
            if let Some(o) = owned.remove(&k) {
                o.stop().await;
            }
        }
        let leading: Vec<u32> = owned
            .iter()
            .filter(|(_, o)| o.leads())
            .map(|(k, _)| *k)
            .collect();
        if leading.len() > share as usize {
            // Above the fair share: the highest partitions go back for a newcomer.
            for k in leading.iter().rev().take(leading.len() - share as usize) {
                if let Some(o) = owned.remove(k) {
                    tracing::info!(route_id = ctx.route_id(), namespace = %self.namespace, partition = k, share, "giving a partition up to rebalance");
                    o.stop().await;
                }
            }
            return Ok(());
        }
        let slot = member.as_ref().map_or(0, |(j, _, _)| *j);
        let start = (slot * share) % n;
        for step in 0..n {
            if owned.len() >= share as usize {
                break;
            }
            let k = (start + step) % n;
            if owned.contains_key(&k) {
                continue;
            }
            let ns = partition_namespace(&self.namespace, k);
            if store.leader(&ns).await?.is_none() {
                owned.insert(k, self.contend(ctx, k, ns).await?);
            }
        }
        Ok(())
    }

    /// Joins the election of partition `k` and runs its consumer while leading.
    async fn contend(
        &self,
        ctx: &ConsumerContext,
        k: u32,
        namespace: String,
    ) -> Result<Owned, crate::ClusterError> {
        let membership = self.service.join(&namespace).await?;
        let cancel = ctx.cancellation().child_token();
        let (tx, leading) = tokio::sync::watch::channel(false);
        let mut watch = membership.watch();
        let route = ctx.clone();
        let forward = BoxProcessor::from_fn(move |exchange| {
            let route = route.clone();
            async move { route.send(exchange).await }
        });
        let child = ConsumerContext::new(
            ctx.route_id().into(),
            Arc::new(RoutePipeline::new(forward)),
            Arc::default(),
            cancel.clone(),
            ExchangeStats::new(),
            Arc::default(),
        );
        let mut consumer = LeaderConsumer {
            namespace,
            inner: self.partitions[k as usize].clone(),
            first: None,
            service: self.service.clone(),
        };
        let task = tokio::spawn(async move {
            let report = async {
                loop {
                    let _ = tx.send(watch.borrow_and_update().is_leader_now());
                    if watch.changed().await.is_err() {
                        break;
                    }
                }
            };
            let route_id = child.route_id().to_string();
            tokio::select! {
                result = consumer.lead_while_elected(&child, &membership) => {
                    if let Err(e) = result {
                        tracing::warn!(route_id, partition = k, error = %e, "the partition's consumer failed");
                    }
                }
                _ = report => {}
            }
            membership.leave().await;
        });
        Ok(Owned {
            cancel,
            task,
            leading,
            since: Instant::now(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_are_stable_and_spread() {
        // Fixed values: a change would move files between owners across versions.
        assert_eq!(partition_of("a.txt", 1), 0);
        let mut counts = [0u32; 3];
        for i in 0..300 {
            counts[partition_of(&format!("file-{i}.txt"), 3) as usize] += 1;
        }
        assert!(counts.iter().all(|c| *c > 60), "{counts:?}");
        assert_eq!(partition_of("file-1.txt", 3), partition_of("file-1.txt", 3));
    }

    #[test]
    fn fair_shares_cover_every_partition() {
        assert_eq!(fair_share(6, 3), 2);
        assert_eq!(fair_share(6, 2), 3);
        assert_eq!(fair_share(4, 3), 2);
        assert_eq!(fair_share(4, 0), 4);
        assert_eq!(fair_share(2, 5), 1);
    }

    #[test]
    fn options_come_in_pairs_and_in_range() {
        assert_eq!(partition_options(None, None), Ok(None));
        assert_eq!(partition_options(Some("2"), Some("3")), Ok(Some((2, 3))));
        assert!(partition_options(Some("3"), Some("3")).is_err());
        assert!(partition_options(Some("0"), Some("0")).is_err());
        assert!(partition_options(Some("0"), None).is_err());
        assert!(partition_options(None, Some("999")).is_err());
    }
}
