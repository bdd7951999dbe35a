//! Property: over random interleavings of publishes, relay failures and worker crashes,
//! per group first deliveries come in id order, nothing is lost, and a message is
//! delivered (successfully) twice only if it was delivered and not yet deleted when the
//! worker crashed. Runs on a real SQLite file.

mod common;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use camel_api::CamelError;
use camel_outbox::{Datasource, NewMessage, Outbox};
use common::*;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Publish { group: Option<u8>, count: usize },
    Deliver(usize),
    Crash,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (proptest::option::weighted(0.85, 0u8..4), 1usize..6)
            .prop_map(|(group, count)| Op::Publish { group, count }),
        3 => (1usize..8).prop_map(Op::Deliver),
        1 => Just(Op::Crash),
    ]
}

async fn ids_in_table(ds: &Datasource, table: &str) -> HashSet<i64> {
    let Datasource::Sqlite(pool) = ds else {
        unreachable!()
    };
    sqlx::query_scalar::<_, i64>(&format!("SELECT id FROM {table}"))
        .fetch_all(pool)
        .await
        .unwrap()
        .into_iter()
        .collect()
}

/// Waits until every id of `left` was confirmed again after the `before`-th delivery, or
/// is no longer in the table. A crashed relay's last statement can still land after the
/// crash: `abort` drops the relay's futures, but a `DELETE` of rows it confirmed that
/// SQLite's connection thread had already started (or PostgreSQL had already received,
/// when a process dies) completes, and the rows it removes were confirmed, so nothing is
/// lost. The table is looked at again on every delivery and every 50 ms.
async fn redelivered_or_deleted(
    rec: &Recorder,
    ds: &Datasource,
    table: &str,
    left: &HashSet<i64>,
    before: usize,
    limit: Duration,
) {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let notified = rec.changed();
        let redone: HashSet<i64> = rec.snapshot()[before..]
            .iter()
            .filter(|d| d.ok)
            .map(|d| d.id)
            .collect();
        let still = ids_in_table(ds, table).await;
        let missing: Vec<i64> = left
            .iter()
            .filter(|id| !redone.contains(id) && still.contains(id))
            .copied()
            .collect();
        if missing.is_empty() {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for re-delivery of what crashed workers left: {missing:?} \
             still in the table and not delivered again; log: {:?}",
            rec.snapshot()
        );
        let _ = tokio::time::timeout(Duration::from_millis(50), notified).await;
    }
}

async fn run_case(ops: Vec<Op>, seed: u64, partitions: u32, inflight: u32) {
    let (_dir, ds) = sqlite();
    let mut cfg = fast_config("prop");
    cfg.partitions = partitions;
    cfg.max_inflight = inflight;
    cfg.backoff.min = Duration::from_millis(1);
    cfg.backoff.max = Duration::from_millis(4);
    let outbox = Outbox::open(ds.clone(), cfg).await.unwrap();
    let table = outbox.table().to_string();
    let rec = Recorder::new();
    rec.set_policy(move |m| {
        let roll = (m.id as u64)
            .wrapping_mul(31)
            .wrapping_add(u64::from(m.attempts) * 7)
            .wrapping_add(seed)
            % 4;
        if roll == 0 && m.attempts < 2 {
            Err(CamelError::processor("injected failure"))
        } else {
            Ok(())
        }
    });
    let mut relay = Some(rec.spawn(outbox.clone()));
    let mut published = HashSet::new();
    // Per id: how many crashed workers had confirmed it. Only those confirmations may be
    // repeated (the row may not have been deleted yet when the worker died).
    let mut crashed_confirmations: HashMap<i64, usize> = HashMap::new();
    let mut epoch_start = 0;
    let limit = Duration::from_secs(15);
    let all_confirmed = |target: HashSet<i64>| {
        move |l: &[Delivery]| {
            let done: HashSet<i64> = l.iter().filter(|d| d.ok).map(|d| d.id).collect();
            target.is_subset(&done)
        }
    };
    for op in ops {
        match op {
            Op::Publish { group, count } => {
                let msgs = (0..count)
                    .map(|i| {
                        let m = NewMessage::text(format!("{i}"));
                        match group {
                            Some(g) => m.group(format!("g{g}")),
                            None => m,
                        }
                    })
                    .collect();
                published.extend(publish(&outbox, msgs).await);
            }
            Op::Deliver(n) => {
                let before = rec.snapshot().len();
                let done = all_confirmed(published.clone());
                rec.wait_for(limit, "more deliveries", move |l| {
                    l.len() >= before + n || done(l)
                })
                .await;
            }
            Op::Crash => {
                if let Some(r) = relay.take() {
                    r.abort().await;
                }
                let log = rec.snapshot();
                for d in log[epoch_start..].iter().filter(|d| d.ok) {
                    *crashed_confirmations.entry(d.id).or_default() += 1;
                }
                epoch_start = log.len();
                relay = Some(rec.spawn(outbox.clone()));
            }
        }
    }
    rec.wait_for(
        limit,
        "every message confirmed",
        all_confirmed(published.clone()),
    )
    .await;
    if let Some(r) = relay.take() {
        r.shutdown().await.unwrap();
    }
    // A graceful stop deletes what it confirmed; what is left was confirmed by a crashed
    // worker, and a new relay must deliver it again.
    let left = ids_in_table(&ds, &table).await;
    for id in &left {
        assert!(
            crashed_confirmations.contains_key(id),
            "id {id} left undeleted by a graceful stop"
        );
    }
    if !left.is_empty() {
        let before = rec.snapshot().len();
        let again = rec.spawn(outbox.clone());
        redelivered_or_deleted(&rec, &ds, &table, &left, before, limit).await;
        again.shutdown().await.unwrap();
    }
    let log = rec.snapshot();
    assert_group_order(&log);
    let mut successes: HashMap<i64, usize> = HashMap::new();
    for d in log.iter().filter(|d| d.ok) {
        *successes.entry(d.id).or_default() += 1;
    }
    for (id, n) in &successes {
        let allowed = 1 + crashed_confirmations.get(id).copied().unwrap_or(0);
        assert!(
            *n <= allowed,
            "id {id}: confirmed {n} times, but only {} crash(es) caught it in flight",
            allowed - 1
        );
        assert!(
            published.contains(id),
            "delivered an id nobody published: {id}"
        );
    }
    assert_eq!(successes.len(), published.len(), "nothing lost");
    assert!(
        ids_in_table(&ds, &table).await.is_empty(),
        "confirmed rows are deleted"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn order_no_loss_and_bounded_duplicates(
        ops in proptest::collection::vec(op(), 1..14),
        seed in any::<u64>(),
        partitions in 1u32..4,
        inflight in 1u32..8,
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(run_case(ops, seed, partitions, inflight));
    }
}
