//! A record whose exchange failed is read again after `break_on_first_error_delay`, not
//! after librdkafka's fetch back-offs: many records, one in seven failing once, against a
//! real broker.
//!
//! `CAMEL_KAFKA_REREAD_RECORDS` and `CAMEL_KAFKA_REREAD_PARTITIONS` change the size of the
//! run (to measure; the figures are in docs/brokers.md).

mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use camel_api::{BoxProcessor, CamelError, Exchange};
use futures::StreamExt;
use rdkafka::producer::FutureRecord;
use support::*;
use tokio::sync::Notify;

/// What the route saw: when each failing record failed and when it came back.
#[derive(Default)]
struct Seen {
    first: HashMap<u64, Instant>,
    again: HashMap<u64, Instant>,
    succeeded: usize,
    started: Option<Instant>,
    finished: Option<Instant>,
}

fn fails_once(n: u64) -> bool {
    n % 7 == 3
}

/// Publishes bodies `0..n` round-robin over the partitions, many sends in flight.
async fn fill(brokers: &str, topic: &str, n: u64, partitions: i32) {
    let p = producer(brokers);
    let mut sends = futures::stream::iter(0..n)
        .map(|i| {
            let p = p.clone();
            let topic = topic.to_string();
            async move {
                let body = i.to_string();
                let partition = i32::try_from(i % partitions as u64).unwrap_or(0);
                p.send(
                    FutureRecord::<str, str>::to(&topic)
                        .partition(partition)
                        .payload(&body),
                    Duration::from_secs(30),
                )
                .await
                .map(|_| ())
                .map_err(|(e, _)| e)
            }
        })
        .buffer_unordered(500);
    while let Some(sent) = sends.next().await {
        sent.unwrap();
    }
}

fn count_from_env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_failing_once_is_read_again_after_the_delay() {
    let Some(brokers) = brokers() else { return };
    let n = count_from_env("CAMEL_KAFKA_REREAD_RECORDS", 700);
    let partitions = i32::try_from(count_from_env("CAMEL_KAFKA_REREAD_PARTITIONS", 1))
        .unwrap_or(1)
        .max(1);
    let topic = unique("camel-reread");
    let group = unique("g");
    create_topic(&brokers, &topic, partitions).await;
    fill(&brokers, &topic, n, partitions).await;

    let seen = Arc::new(Mutex::new(Seen::default()));
    let done = Arc::new(Notify::new());
    let work = {
        let (seen, done) = (seen.clone(), done.clone());
        BoxProcessor::sync(move |ex: Exchange| {
            let now = Instant::now();
            let number: u64 = ex
                .message
                .body
                .as_text()
                .and_then(|t| t.parse().ok())
                .ok_or_else(|| CamelError::processor("not a number"))?;
            let mut seen = seen.lock().unwrap();
            seen.started.get_or_insert(now);
            if fails_once(number) && !seen.first.contains_key(&number) {
                seen.first.insert(number, now);
                return Err(CamelError::processor(format!("{number} fails once")));
            }
            if seen.first.contains_key(&number) {
                seen.again.entry(number).or_insert(now);
            }
            seen.succeeded += 1;
            if seen.succeeded as u64 == n {
                seen.finished = Some(now);
                done.notify_one();
            }
            Ok(ex)
        })
    };
    let yaml = format!(
        r#"
- route:
    id: reread
    from:
      uri: "kafka:{topic}"
      parameters: {{ {}, break_on_first_error_delay: 20ms }}
      steps:
        - process: {{ ref: work }}
"#,
        consumer_parameters(&brokers, &group)
    );
    let ctx = context(&yaml, |ctx| ctx.add_resource("work", Arc::new(work))).await;
    // The old consumer took about a second per failure (100 failures: ~100 s); the
    // deadline only stops a hung test.
    let failures = (0..n).filter(|i| fails_once(*i)).count();
    let deadline = Duration::from_secs(60 + failures as u64);
    let finished = tokio::time::timeout(deadline, done.notified()).await;
    ctx.stop().await;

    let seen = seen.lock().unwrap();
    let mut latencies: Vec<Duration> = seen
        .first
        .iter()
        .filter_map(|(number, failed)| Some(seen.again.get(number)?.duration_since(*failed)))
        .collect();
    latencies.sort();
    let total = match (seen.started, seen.finished) {
        (Some(start), Some(end)) => end.duration_since(start),
        _ => Duration::MAX,
    };
    let (median, p99, max) = (
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or_default(),
    );
    eprintln!(
        "records={n} partitions={partitions} failures={failures} re-read={} \
         total={total:?} re-read latency: median={median:?} p99={p99:?} max={max:?}",
        latencies.len()
    );
    assert!(
        finished.is_ok(),
        "{} of {n} records succeeded before the deadline",
        seen.succeeded
    );
    assert_eq!(
        seen.first.len(),
        failures,
        "every failing record failed once"
    );
    assert_eq!(
        latencies.len(),
        failures,
        "every failed record was read again"
    );
    // The delay is 20 ms; a re-read is a seek and one fetch from a local broker. The
    // bounds leave room for a loaded machine but not for a fetch back-off per failure.
    assert!(
        median < Duration::from_millis(250),
        "median re-read after {median:?} (delay 20 ms)"
    );
    assert!(
        max < Duration::from_secs(2),
        "slowest re-read after {max:?}"
    );
    let budget = Duration::from_secs(5) + Duration::from_millis(100) * failures as u32;
    assert!(
        total < budget,
        "{n} records took {total:?} (budget {budget:?})"
    );
}
