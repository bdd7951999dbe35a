//! The batcher's core promise as a property: for random arrivals, group keys, tenants,
//! tuning, latencies and per-entry failures, each group's successful entries reach the
//! destination in admission order, and every caller gets exactly one, correct result.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use camel_api::Exchange;
use camel_sinks::memory::{MemoryCodec, Verdict};
use camel_sinks::testing::HeaderExpression;
use camel_sinks::{BatchConfig, BatcherRegistry, SinkOptions, SinkProducer};
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct Arrival {
    gap_ms: u64,
    group: Option<u8>,
    tenant: u8,
    fails: bool,
}

fn arrival() -> impl Strategy<Value = Arrival> {
    (
        0u64..5,
        proptest::option::weighted(0.8, 0u8..4),
        0u8..3,
        proptest::bool::weighted(0.15),
    )
        .prop_map(|(gap_ms, group, tenant, fails)| Arrival {
            gap_ms,
            group,
            tenant,
            fails,
        })
}

#[derive(Clone, Debug)]
struct Tuning {
    max_entries: usize,
    max_inflight: usize,
    linger_ms: u64,
    one_group: bool,
    latencies: Vec<u64>,
}

fn tuning() -> impl Strategy<Value = Tuning> {
    (
        1usize..6,
        1usize..4,
        0u64..4,
        any::<bool>(),
        proptest::collection::vec(0u64..8, 1..8),
    )
        .prop_map(
            |(max_entries, max_inflight, linger_ms, one_group, latencies)| Tuning {
                max_entries,
                max_inflight,
                linger_ms,
                one_group,
                latencies,
            },
        )
}

fn run(arrivals: Vec<Arrival>, tuning: Tuning) -> Result<(), TestCaseError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    runtime.block_on(async move {
        let failing: HashSet<String> = arrivals
            .iter()
            .enumerate()
            .filter(|(_, a)| a.fails)
            .map(|(i, _)| i.to_string())
            .collect();
        let judged = failing.clone();
        let latencies = tuning.latencies.clone();
        let mut codec = MemoryCodec::new("prop")
            .with_verdict(move |e| {
                if judged.contains(e.idempotency_key.as_ref()) {
                    Verdict::Fail
                } else {
                    Verdict::Accept
                }
            })
            .with_latency(move |entries| {
                let first: usize = entries[0].idempotency_key.parse().unwrap_or(0);
                Duration::from_millis(latencies[first % latencies.len()])
            })
            .with_limits(camel_sinks::Limits {
                max_entries: tuning.max_entries,
                max_request_bytes: 1 << 20,
                max_entry_bytes: 1 << 20,
            });
        if tuning.one_group {
            codec = codec.one_group_per_batch();
        }
        let log = codec.log();
        let options = SinkOptions {
            group_key: Some(Arc::new(HeaderExpression("group".into()))),
            tenant: Some(Arc::new(HeaderExpression("tenant".into()))),
            idempotency_key: Some(Arc::new(HeaderExpression("key".into()))),
            ..SinkOptions::default()
        };
        let config = BatchConfig {
            max_inflight: tuning.max_inflight,
            linger: Duration::from_millis(tuning.linger_ms),
            ..BatchConfig::default()
        };
        let producer = SinkProducer::new(codec, config, options, BatcherRegistry::new());
        let mut calls = Vec::new();
        for (i, a) in arrivals.iter().enumerate() {
            tokio::time::sleep(Duration::from_millis(a.gap_ms)).await;
            let mut ex = Exchange::new(format!("m{i}"))
                .with_header("key", i.to_string())
                .with_header("tenant", format!("t{}", a.tenant));
            if let Some(g) = a.group {
                ex = ex.with_header("group", format!("g{g}"));
            }
            let p = producer.clone();
            calls.push(tokio::spawn(async move { p.deliver(&ex).await }));
            // Admit it now, so admission order is arrival order.
            tokio::task::yield_now().await;
        }
        let mut results = Vec::new();
        for c in calls {
            results.push(c.await.map_err(|e| TestCaseError::fail(e.to_string()))?);
        }
        // Every caller: exactly one result, and the right one.
        prop_assert_eq!(results.len(), arrivals.len());
        for (i, r) in results.iter().enumerate() {
            prop_assert_eq!(
                r.is_err(),
                failing.contains(&i.to_string()),
                "entry {}: {:?}",
                i,
                r
            );
        }
        // Each group's successful entries in admission order; nothing duplicated.
        let accepted: Vec<usize> = log
            .accepted()
            .iter()
            .map(|e| e.idempotency_key.parse().unwrap_or(usize::MAX))
            .collect();
        let unique: HashSet<_> = accepted.iter().collect();
        prop_assert_eq!(unique.len(), accepted.len());
        prop_assert_eq!(accepted.len(), arrivals.len() - failing.len());
        let mut last: HashMap<u8, usize> = HashMap::new();
        for i in accepted {
            if let Some(g) = arrivals[i].group {
                if let Some(prev) = last.insert(g, i) {
                    prop_assert!(prev < i, "group {}: {} after {}", g, i, prev);
                }
            }
        }
        Ok(())
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn groups_keep_admission_order_and_every_caller_gets_one_result(
        arrivals in proptest::collection::vec(arrival(), 1..60),
        tuning in tuning(),
    ) {
        run(arrivals, tuning)?;
    }
}
