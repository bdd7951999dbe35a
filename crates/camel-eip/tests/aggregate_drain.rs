//! The aggregator's stop waits for a group being delivered until the route's own stop
//! deadline (`shutdown_by`), not a fixed 5 s: a completed group whose steps take 8 s is
//! delivered when the deadline is 30 s away (issue 24, beside item 7).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use camel_api::{BoxProcessor, CamelError, Exchange, Expression, ShutdownReason, Value};
use camel_eip::aggregate::{Aggregator, AggregatorOptions, AggregatorParts};
use camel_eip::aggregation::builtin;
use tokio::time::Instant;

#[derive(Debug)]
struct Key;

impl Expression for Key {
    fn evaluate(&self, ex: &Exchange) -> Result<Value, CamelError> {
        Ok(ex.header("key").cloned().unwrap_or_default())
    }
}

/// An aggregator completing by a 100 ms timeout, whose steps take 8 s per group.
fn slow_aggregator(delivered: Arc<AtomicUsize>) -> Aggregator {
    let steps = BoxProcessor::from_fn(move |ex: Exchange| {
        let delivered = delivered.clone();
        async move {
            tokio::time::sleep(Duration::from_secs(8)).await;
            delivered.fetch_add(1, Ordering::SeqCst);
            Ok::<_, CamelError>(ex)
        }
    });
    let options = AggregatorOptions {
        completion_timeout: Some(Duration::from_millis(100)),
        ..Default::default()
    };
    Aggregator::build(
        "drain",
        "aggregate",
        options,
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

/// A started aggregator whose one group has timed out and is being delivered, with the
/// count of groups delivered so far.
async fn a_group_in_delivery() -> (Aggregator, Arc<AtomicUsize>) {
    let delivered = Arc::new(AtomicUsize::new(0));
    let agg = slow_aggregator(delivered.clone());
    agg.lifecycle.start().await.unwrap();
    agg.processor
        .process(Exchange::new("1").with_header("key", "a"))
        .await
        .unwrap();
    // The timeout fires and the 8 s delivery starts.
    tokio::time::sleep(Duration::from_millis(200)).await;
    (agg, delivered)
}

#[tokio::test(start_paused = true)]
async fn a_group_being_delivered_gets_the_whole_stop_deadline() {
    let (agg, delivered) = a_group_in_delivery().await;
    let drained = agg
        .lifecycle
        .shutdown_by(
            ShutdownReason::RouteStop,
            Instant::now() + Duration::from_secs(30),
        )
        .await
        .unwrap();
    assert_eq!(drained.lost, 0);
    assert_eq!(
        delivered.load(Ordering::SeqCst),
        1,
        "cut off before the deadline"
    );
}

#[tokio::test(start_paused = true)]
async fn a_shorter_deadline_still_cuts_the_delivery_off() {
    let (agg, delivered) = a_group_in_delivery().await;
    let started = Instant::now();
    agg.lifecycle
        .shutdown_by(ShutdownReason::RouteStop, started + Duration::from_secs(1))
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(delivered.load(Ordering::SeqCst), 0);
}
