use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use camel_api::{Body, BoxProcessor, CamelError, Exchange};
use tower::{Service, ServiceExt};

use super::*;

/// A target that records its name in the `seen` header and counts its calls.
fn target(name: &'static str, calls: Arc<AtomicUsize>) -> BoxProcessor {
    BoxProcessor::sync(move |mut ex: Exchange| {
        calls.fetch_add(1, Ordering::SeqCst);
        ex.message.body = Body::from(name);
        Ok(ex)
    })
}

/// A target failing with `kind`, after a paused-clock delay.
fn failing(kind: &'static str, calls: Arc<AtomicUsize>) -> BoxProcessor {
    BoxProcessor::from_fn(move |_ex: Exchange| {
        let calls = calls.clone();
        async move {
            calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(100)).await;
            Err(CamelError::user(kind, "target down"))
        }
    })
}

fn counters(n: usize) -> Vec<Arc<AtomicUsize>> {
    (0..n).map(|_| Arc::new(AtomicUsize::new(0))).collect()
}

async fn bodies(lb: &BoxProcessor, n: usize, ex: impl Fn(usize) -> Exchange) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..n {
        let r = lb.process(ex(i)).await.unwrap();
        out.push(r.message.body.as_text().unwrap_or_default().to_string());
    }
    out
}

fn abc(c: &[Arc<AtomicUsize>]) -> Vec<BoxProcessor> {
    vec![
        target("a", c[0].clone()),
        target("b", c[1].clone()),
        target("c", c[2].clone()),
    ]
}

#[tokio::test]
async fn round_robin_cycles() {
    let c = counters(3);
    let lb = LoadBalance::new(abc(&c), Policy::RoundRobin)
        .unwrap()
        .into_processor();
    let seen = bodies(&lb, 4, |_| Exchange::new("x")).await;
    assert_eq!(seen, ["a", "b", "c", "a"]);
}

#[tokio::test]
async fn random_reaches_every_target() {
    let c = counters(3);
    let lb = LoadBalance::new(abc(&c), Policy::Random)
        .unwrap()
        .into_processor();
    bodies(&lb, 300, |_| Exchange::new("x")).await;
    for (i, n) in c.iter().enumerate() {
        let n = n.load(Ordering::SeqCst);
        assert!(n > 50, "target {i} got {n} of 300");
    }
}

#[tokio::test]
async fn weighted_follows_the_ratios() {
    let c = counters(3);
    let policy = Policy::Weighted {
        ratios: vec![4, 2, 1],
        round_robin: true,
    };
    let lb = LoadBalance::new(abc(&c), policy).unwrap().into_processor();
    bodies(&lb, 70, |_| Exchange::new("x")).await;
    let got: Vec<usize> = c.iter().map(|n| n.load(Ordering::SeqCst)).collect();
    assert_eq!(got, [40, 20, 10]);

    let c = counters(3);
    let policy = Policy::Weighted {
        ratios: vec![1, 0, 3],
        round_robin: false,
    };
    let lb = LoadBalance::new(abc(&c), policy).unwrap().into_processor();
    bodies(&lb, 400, |_| Exchange::new("x")).await;
    let got: Vec<usize> = c.iter().map(|n| n.load(Ordering::SeqCst)).collect();
    assert_eq!(got[1], 0, "a zero ratio is never picked");
    assert!(got[2] > 2 * got[0], "3:1 at random: {got:?}");
}

#[tokio::test]
async fn sticky_keeps_a_correlation_value_on_one_target() {
    let c = counters(3);
    let key = camel_language::simple("${header.customer}").unwrap();
    let lb = LoadBalance::new(abc(&c), Policy::Sticky(key))
        .unwrap()
        .into_processor();
    let customer = |i: usize| Exchange::new("x").with_header("customer", format!("c{}", i % 5));
    let first = bodies(&lb, 5, customer).await;
    let again = bodies(&lb, 5, customer).await;
    assert_eq!(first, again);
    let spread: std::collections::HashSet<_> = bodies(&lb, 60, |i| {
        Exchange::new("x").with_header("customer", format!("k{i}"))
    })
    .await
    .into_iter()
    .collect();
    assert!(spread.len() > 1, "different keys spread over the targets");
}

#[tokio::test]
async fn topic_sends_a_copy_to_every_target_and_keeps_the_exchange() {
    let c = counters(3);
    let lb = LoadBalance::new(abc(&c), Policy::Topic)
        .unwrap()
        .into_processor();
    let out = lb.process(Exchange::new("original")).await.unwrap();
    assert_eq!(out.message.body, Body::from("original"));
    assert!(c.iter().all(|n| n.load(Ordering::SeqCst) == 1));
}

fn failover(options: FailoverPolicy, targets: Vec<BoxProcessor>) -> BoxProcessor {
    LoadBalance::new(targets, Policy::Failover(options))
        .unwrap()
        .into_processor()
}

#[tokio::test(start_paused = true)]
async fn failover_moves_on_until_a_target_succeeds() {
    let c = counters(3);
    let lb = failover(
        FailoverPolicy::default(),
        vec![
            failing("IOException", c[0].clone()),
            failing("IOException", c[1].clone()),
            target("c", c[2].clone()),
        ],
    );
    let started = tokio::time::Instant::now();
    let out = lb.process(Exchange::new("x")).await.unwrap();
    assert_eq!(out.message.body, Body::from("c"));
    assert_eq!(started.elapsed(), Duration::from_millis(200));
    // Not round robin: the next exchange starts at the first target again.
    lb.process(Exchange::new("x")).await.unwrap();
    assert_eq!(c[0].load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn failover_only_on_listed_kinds() {
    let c = counters(2);
    let options = FailoverPolicy {
        exceptions: vec!["java.io.IOException".into()],
        ..FailoverPolicy::default()
    };
    let lb = failover(
        options,
        vec![
            failing("IllegalArgumentException", c[0].clone()),
            target("b", c[1].clone()),
        ],
    );
    let err = lb.process(Exchange::new("x")).await.unwrap_err();
    assert_eq!(err.kind_name(), "IllegalArgumentException");
    assert_eq!(c[1].load(Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn failover_attempts_are_bounded() {
    let c = counters(3);
    let all_failing = |c: &[Arc<AtomicUsize>]| {
        c.iter()
            .map(|n| failing("IOException", n.clone()))
            .collect::<Vec<_>>()
    };
    // Round robin wraps around the list: 1 call + 4 failovers = 5 calls.
    let options = FailoverPolicy {
        maximum_failover_attempts: Some(4),
        round_robin: true,
        ..FailoverPolicy::default()
    };
    let lb = failover(options, all_failing(&c));
    assert!(lb.process(Exchange::new("x")).await.is_err());
    let total: usize = c.iter().map(|n| n.load(Ordering::SeqCst)).sum();
    assert_eq!(total, 5);

    // Zero attempts: no failover at all.
    let c = counters(3);
    let options = FailoverPolicy {
        maximum_failover_attempts: Some(0),
        ..FailoverPolicy::default()
    };
    let lb = failover(options, all_failing(&c));
    assert!(lb.process(Exchange::new("x")).await.is_err());
    assert_eq!(c[1].load(Ordering::SeqCst), 0);

    // Without round robin the list is tried once, whatever the limit.
    let c = counters(3);
    let lb = failover(FailoverPolicy::default(), all_failing(&c));
    assert!(lb.process(Exchange::new("x")).await.is_err());
    assert!(c.iter().all(|n| n.load(Ordering::SeqCst) == 1));
}

#[tokio::test(start_paused = true)]
async fn failover_round_robin_and_sticky_start_points() {
    let c = counters(3);
    let options = FailoverPolicy {
        round_robin: true,
        ..FailoverPolicy::default()
    };
    let lb = failover(options, abc(&c));
    let seen = bodies(&lb, 3, |_| Exchange::new("x")).await;
    assert_eq!(seen, ["a", "b", "c"]);

    let c = counters(3);
    let options = FailoverPolicy {
        sticky: true,
        ..FailoverPolicy::default()
    };
    let lb = failover(
        options,
        vec![
            failing("IOException", c[0].clone()),
            target("b", c[1].clone()),
            target("c", c[2].clone()),
        ],
    );
    let seen = bodies(&lb, 3, |_| Exchange::new("x")).await;
    assert_eq!(seen, ["b", "b", "b"]);
    assert_eq!(
        c[0].load(Ordering::SeqCst),
        1,
        "sticky starts at the last good one"
    );
}

#[derive(Debug)]
struct ByHeader;

impl Balancer for ByHeader {
    fn choose(&self, ex: &Exchange, _targets: usize) -> Result<usize, CamelError> {
        ex.header("to")
            .and_then(|v| v.as_i64())
            .map(|i| i as usize)
            .ok_or_else(|| CamelError::processor("no `to` header"))
    }
}

#[tokio::test]
async fn custom_balancer_chooses() {
    let c = counters(3);
    let policy = Policy::Custom(CustomBalancer::new(ByHeader));
    let lb = LoadBalance::new(abc(&c), policy).unwrap().into_processor();
    let seen = bodies(&lb, 3, |i| {
        Exchange::new("x").with_header("to", 2 - i as i64)
    })
    .await;
    assert_eq!(seen, ["c", "b", "a"]);
    assert!(lb.process(Exchange::new("x")).await.is_err());
}

#[tokio::test]
async fn as_a_tower_layer_the_inner_service_gets_the_result() {
    let c = counters(3);
    let layer = LoadBalanceLayer::new(abc(&c), Policy::RoundRobin).unwrap();
    let inner = tower::service_fn(|mut ex: Exchange| async move {
        let picked = ex.message.body.as_text().unwrap_or_default().to_string();
        ex.message.body = Body::from(format!("after {picked}"));
        Ok::<_, CamelError>(ex)
    });
    let mut svc = tower::Layer::layer(&layer, inner);
    let out = svc
        .ready()
        .await
        .unwrap()
        .call(Exchange::new("x"))
        .await
        .unwrap();
    assert_eq!(out.message.body, Body::from("after a"));
    let out = svc
        .ready()
        .await
        .unwrap()
        .call(Exchange::new("x"))
        .await
        .unwrap();
    assert_eq!(out.message.body, Body::from("after b"));
}
