//! `from: kafka:` against a real broker: offsets committed only after success, a failed
//! record read again (and again after a restart), the dead-letter topic, and a slow route
//! never holding more than `max_poll_records`.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use camel_api::{BoxProcessor, CamelError, Exchange};
use rdkafka::message::Headers;
use support::*;
use tokio::sync::mpsc;

fn route(topic: &str, params: &str) -> String {
    format!(
        r#"
- route:
    id: consume
    from:
      uri: "kafka:{topic}"
      parameters: {{ {params} }}
      steps:
        - process: {{ ref: work }}
"#
    )
}

/// A processor that reports each body it sees and fails on `fail_on` while `failures`
/// is above zero (counting down).
fn work(
    seen: mpsc::UnboundedSender<String>,
    fail_on: &'static str,
    failures: Arc<AtomicUsize>,
) -> BoxProcessor {
    BoxProcessor::from_fn(move |ex: Exchange| {
        let seen = seen.clone();
        let failures = failures.clone();
        async move {
            let body = ex.message.body.as_text().unwrap_or_default().to_string();
            let _ = seen.send(body.clone());
            if body == fail_on
                && failures
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                    .is_ok()
            {
                return Err(CamelError::processor(format!("{body} fails")));
            }
            Ok(ex)
        }
    })
}

fn records(n: usize) -> Vec<(String, String)> {
    (0..n).map(|i| ("k".to_string(), i.to_string())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_record_is_never_committed_and_is_read_again_after_a_restart() {
    let Some(brokers) = brokers() else { return };
    let topic = unique("camel-commit");
    let group = unique("g");
    create_topic(&brokers, &topic, 1).await;
    produce(&brokers, &topic, &records(5)).await;
    let params = format!(
        "{}, break_on_first_error_delay: 20ms",
        consumer_parameters(&brokers, &group)
    );

    // First run: "2" fails every time.
    let (tx, mut seen) = mpsc::unbounded_channel();
    let always = Arc::new(AtomicUsize::new(usize::MAX));
    let w = work(tx, "2", always);
    let ctx = context(&route(&topic, &params), |ctx| {
        ctx.add_resource("work", Arc::new(w))
    })
    .await;
    let mut first = Vec::new();
    while first.iter().filter(|b: &&String| b.as_str() == "2").count() < 3 {
        first.push(seen.recv().await.unwrap());
    }
    ctx.stop().await;
    assert_eq!(
        first[..3],
        ["0", "1", "2"],
        "in order, nothing after the failure"
    );
    assert!(
        first[3..].iter().all(|b| b == "2"),
        "the partition is read again from the failed record, nothing after it: {first:?}"
    );
    assert_eq!(
        committed(&brokers, &group, &topic, 1).await,
        vec![2],
        "committed up to the failed record, not past it"
    );

    // Second run, same group: it starts at the failed record and now succeeds.
    let (tx, mut seen) = mpsc::unbounded_channel();
    let w = work(tx, "2", Arc::new(AtomicUsize::new(0)));
    let ctx = context(&route(&topic, &params), |ctx| {
        ctx.add_resource("work", Arc::new(w))
    })
    .await;
    let mut second = Vec::new();
    while second.len() < 3 {
        second.push(seen.recv().await.unwrap());
    }
    ctx.stop().await;
    assert_eq!(second, ["2", "3", "4"]);
    assert_eq!(committed(&brokers, &group, &topic, 1).await, vec![5]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_record_goes_to_the_dead_letter_topic_and_the_partition_goes_on() {
    let Some(brokers) = brokers() else { return };
    let topic = unique("camel-dlt");
    let dlt = format!("{topic}.dlt");
    let group = unique("g");
    create_topic(&brokers, &topic, 1).await;
    create_topic(&brokers, &dlt, 1).await;
    produce(&brokers, &topic, &records(4)).await;
    let params = format!(
        "{}, dead_letter_topic: '{dlt}'",
        consumer_parameters(&brokers, &group)
    );
    let (tx, mut seen) = mpsc::unbounded_channel();
    let w = work(tx, "1", Arc::new(AtomicUsize::new(usize::MAX)));
    let ctx = context(&route(&topic, &params), |ctx| {
        ctx.add_resource("work", Arc::new(w))
    })
    .await;
    let mut got = Vec::new();
    while got.len() < 4 {
        got.push(seen.recv().await.unwrap());
    }
    ctx.stop().await;
    assert_eq!(got, ["0", "1", "2", "3"], "no retry: the record went away");
    assert_eq!(committed(&brokers, &group, &topic, 1).await, vec![4]);
    let dead = read(&brokers, &dlt, 1, 1).await;
    assert_eq!(dead.len(), 1);
    assert_eq!(text(&dead[0]), "1");
    let headers = rdkafka::Message::headers(&dead[0]).unwrap();
    let error = headers
        .iter()
        .find(|h| h.key == camel_kafka::headers::DLT_ERROR)
        .and_then(|h| h.value)
        .map(|v| String::from_utf8_lossy(v).into_owned());
    assert!(
        error.as_deref().is_some_and(|e| e.contains("1 fails")),
        "{error:?}"
    );
}

/// Runs the 40 records of `topic` through a slow route in a new group and returns the
/// most exchanges that were in flight at once.
async fn most_in_flight(brokers: &str, topic: &str, max_poll_records: usize) -> usize {
    let group = unique("g");
    let params = format!(
        "{}, max_poll_records: {max_poll_records}",
        consumer_parameters(brokers, &group)
    );
    let in_flight = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (tx, mut seen) = mpsc::unbounded_channel::<String>();
    let w = {
        let (in_flight, most) = (in_flight.clone(), most.clone());
        BoxProcessor::from_fn(move |ex: Exchange| {
            let (in_flight, most, tx) = (in_flight.clone(), most.clone(), tx.clone());
            async move {
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                // A slow step, so records pile up behind it.
                tokio::time::sleep(Duration::from_millis(20)).await;
                in_flight.fetch_sub(1, Ordering::SeqCst);
                let _ = tx.send(ex.message.body.as_text().unwrap_or_default().to_string());
                Ok(ex)
            }
        })
    };
    let ctx = context(&route(topic, &params), |ctx| {
        ctx.add_resource("work", Arc::new(w))
    })
    .await;
    let mut got = std::collections::HashSet::new();
    while got.len() < 40 {
        got.insert(seen.recv().await.unwrap());
    }
    ctx.stop().await;
    let total: i64 = committed(brokers, &group, topic, 4)
        .await
        .iter()
        .map(|o| (*o).max(0))
        .sum();
    assert_eq!(total, 40, "every record committed after the stop");
    most.load(Ordering::SeqCst)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_route_never_holds_more_than_max_poll_records() {
    let Some(brokers) = brokers() else { return };
    let topic = unique("camel-slow");
    create_topic(&brokers, &topic, 4).await;
    let recs: Vec<(String, String)> = (0..40)
        .map(|i| (format!("key{}", i % 8), i.to_string()))
        .collect();
    produce(&brokers, &topic, &recs).await;
    // With room, the four partitions run side by side ...
    let wide = most_in_flight(&brokers, &topic, 500).await;
    assert!(
        wide > 2,
        "{wide} in flight: the partitions should run side by side"
    );
    // ... and max_poll_records holds them back.
    let narrow = most_in_flight(&brokers, &topic, 2).await;
    assert!(
        narrow <= 2,
        "{narrow} exchanges in flight with max_poll_records 2"
    );
}
