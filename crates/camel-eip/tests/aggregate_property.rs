//! For any input order, an aggregator with completion size k emits every message exactly
//! once, in groups of k of one key each; a swap hands open groups over intact; and split
//! then aggregate by index restores the original, for any list and any group size.

use std::sync::{Arc, Mutex};

use camel_api::{BoxProcessor, CamelError, Exchange, Expression, ShutdownReason, Value};
use camel_eip::aggregate::{names, Aggregator, AggregatorOptions, AggregatorParts};
use camel_eip::aggregation::builtin;
use camel_eip::split::{Split, SplitExpression, SplitOptions, SPLIT_INDEX};
use proptest::prelude::*;

#[derive(Debug)]
struct Key;

impl Expression for Key {
    fn evaluate(&self, ex: &Exchange) -> Result<Value, CamelError> {
        Ok(ex.header("key").cloned().unwrap_or_default())
    }
}

type Seen = Arc<Mutex<Vec<Exchange>>>;

/// An aggregator of size `k` over grouped bodies. `optimistic` takes the asynchronous
/// intake (versioned writes, no update lock); otherwise the synchronous one runs.
fn aggregator(k: usize, seen: &Seen, optimistic: bool) -> Aggregator {
    let sink = seen.clone();
    let steps = BoxProcessor::sync(move |ex: Exchange| {
        sink.lock().unwrap().push(ex.clone());
        Ok(ex)
    });
    Aggregator::build(
        "prop",
        "aggregate",
        AggregatorOptions {
            completion_size: Some(k),
            optimistic_locking: optimistic,
            ..Default::default()
        },
        AggregatorParts {
            correlation: Arc::new(Key),
            strategy: builtin("grouped_body").unwrap(),
            completion_size: None,
            completion_timeout: None,
            completion_predicate: None,
            repository: None,
            steps,
            dead_letter: None,
        },
    )
}

/// Messages `0..keys*k*groups`, message `m` on key `m % keys`, in the order `order` gives.
fn messages(keys: usize, k: usize, groups: usize, order: &[usize]) -> Vec<(String, usize)> {
    let n = keys * k * groups;
    let mut ids: Vec<usize> = (0..n).collect();
    for (i, j) in order.iter().enumerate() {
        let i = i % n;
        ids.swap(i, j % n);
    }
    ids.into_iter()
        .map(|m| (format!("k{}", m % keys), m))
        .collect()
}

fn check(seen: &Seen, keys: usize, k: usize, groups: usize) {
    let out = seen.lock().unwrap();
    assert_eq!(out.len(), keys * groups);
    let mut all = Vec::new();
    for g in out.iter() {
        let key = g
            .property(names::CORRELATION_KEY)
            .and_then(Value::as_str)
            .unwrap()
            .to_string();
        let items = camel_eip::aggregation::body_json(&g.message.body);
        let items = items.as_array().unwrap();
        assert_eq!(items.len(), k);
        for v in items {
            let m: usize = v.as_str().unwrap().parse().unwrap();
            assert_eq!(
                format!("k{}", m % keys),
                key,
                "a message in another key's group"
            );
            all.push(m);
        }
    }
    all.sort_unstable();
    assert_eq!(
        all,
        (0..keys * k * groups).collect::<Vec<_>>(),
        "every message exactly once"
    );
}

/// The group of a split part: its `CamelSplitIndex` divided by the group size.
#[derive(Debug)]
struct IndexGroup(i64);

impl Expression for IndexGroup {
    fn evaluate(&self, ex: &Exchange) -> Result<Value, CamelError> {
        let index = ex.property(SPLIT_INDEX).and_then(Value::as_i64);
        Ok(index.map_or(Value::Null, |i| Value::Int(i / self.0)))
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #[test]
    fn every_message_is_emitted_exactly_once(
        keys in 1usize..5,
        k in 1usize..6,
        groups in 1usize..4,
        order in proptest::collection::vec(0usize..1000, 0..120),
        optimistic in any::<bool>(),
    ) {
        runtime().block_on(async {
            let seen = Seen::default();
            let agg = aggregator(k, &seen, optimistic);
            agg.lifecycle.start().await.unwrap();
            for (key, m) in messages(keys, k, groups, &order) {
                agg.processor
                    .process(Exchange::new(m.to_string()).with_header("key", key))
                    .await
                    .unwrap();
            }
            agg.lifecycle.shutdown(ShutdownReason::RouteStop).await.unwrap();
            check(&seen, keys, k, groups);
        });
    }

    #[test]
    fn a_swap_at_any_point_hands_over_open_groups(
        keys in 1usize..4,
        k in 2usize..5,
        groups in 1usize..3,
        order in proptest::collection::vec(0usize..1000, 0..60),
        cut in 0usize..1000,
    ) {
        runtime().block_on(async {
            let seen = Seen::default();
            let old = aggregator(k, &seen, false);
            let new = aggregator(k, &seen, false);
            old.lifecycle.start().await.unwrap();
            let all = messages(keys, k, groups, &order);
            let cut = cut % (all.len() + 1);
            for (i, (key, m)) in all.into_iter().enumerate() {
                if i == cut {
                    old.lifecycle.shutdown(ShutdownReason::HotSwap).await.unwrap();
                    if let Some(state) = old.lifecycle.take_state() {
                        new.lifecycle.adopt_state(state);
                    }
                    new.lifecycle.start().await.unwrap();
                }
                let target = if i < cut { &old } else { &new };
                target.processor
                    .process(Exchange::new(m.to_string()).with_header("key", key))
                    .await
                    .unwrap();
            }
            check(&seen, keys, k, groups);
        });
    }

    #[test]
    fn split_then_aggregate_by_index_restores_the_original(
        items in proptest::collection::vec(any::<String>(), 0..40),
        group in 1usize..8,
        parallel in 1usize..5,
    ) {
        let restored = runtime().block_on(async {
            let seen = Seen::default();
            let sink = seen.clone();
            let steps = BoxProcessor::sync(move |ex: Exchange| {
                sink.lock().unwrap().push(ex.clone());
                Ok(ex)
            });
            // Each part carries its index in a header, which the grouped-message strategy
            // keeps; the last, smaller group completes when the route stops.
            let agg = Aggregator::build(
                "prop",
                "aggregate",
                AggregatorOptions {
                    completion_size: Some(group),
                    force_completion_on_stop: true,
                    ..Default::default()
                },
                AggregatorParts {
                    correlation: Arc::new(IndexGroup(group as i64)),
                    strategy: builtin("GroupedMessageAggregationStrategy").unwrap(),
                    completion_size: None,
                    completion_timeout: None,
                    completion_predicate: None,
                    repository: None,
                    steps,
                    dead_letter: None,
                },
            );
            agg.lifecycle.start().await.unwrap();
            let intake = agg.processor.clone();
            let per_part = BoxProcessor::from_fn(move |mut ex: Exchange| {
                let index = ex.property(SPLIT_INDEX).cloned().unwrap_or_default();
                ex.message.headers.insert("index", index);
                intake.process(ex)
            });
            let mut options = SplitOptions::new(SplitExpression::Body);
            options.parallel_limit = parallel;
            let body = serde_json::Value::Array(
                items.iter().cloned().map(serde_json::Value::String).collect(),
            );
            Split::new(options, per_part)
                .into_processor()
                .process(Exchange::new(body))
                .await
                .unwrap();
            agg.lifecycle.shutdown(ShutdownReason::RouteStop).await.unwrap();

            let mut groups: Vec<(i64, Vec<(i64, String)>)> = seen
                .lock()
                .unwrap()
                .iter()
                .map(|g| {
                    let key = g.property(names::CORRELATION_KEY).and_then(Value::as_str).unwrap();
                    let members = camel_eip::aggregation::body_json(&g.message.body)
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|m| {
                            let index = m["headers"]["index"].as_i64().unwrap();
                            (index, m["body"].as_str().unwrap().to_string())
                        })
                        .collect();
                    (key.parse().unwrap(), members)
                })
                .collect();
            groups.sort_by_key(|g| g.0);
            let mut restored = Vec::new();
            for (n, (key, mut members)) in groups.into_iter().enumerate() {
                assert_eq!(key, n as i64, "one group per index range, none missing");
                members.sort_by_key(|m| m.0);
                assert!(members.len() <= group);
                for (index, text) in members {
                    assert_eq!(index / group as i64, key, "a part in another group");
                    restored.push(text);
                }
            }
            restored
        });
        prop_assert_eq!(restored, items);
    }
}
