use std::sync::Mutex;

use camel_api::Value;

use super::*;
use crate::testing::endpoint;

/// Milliseconds since the test started, of each firing.
type Firings = Arc<Mutex<Vec<u128>>>;

/// Records when each exchange arrives; the first one takes `first_takes`.
fn recorder(start: Instant, first_takes: Duration) -> (BoxProcessor, Firings) {
    let seen: Firings = Arc::default();
    let sink = seen.clone();
    let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
        let sink = sink.clone();
        async move {
            let first = {
                let mut seen = sink.lock().unwrap();
                seen.push(start.elapsed().as_millis());
                seen.len() == 1
            };
            if first {
                tokio::time::sleep(first_takes).await;
            }
            Ok(ex)
        }
    });
    (pipeline, seen)
}

async fn run(uri: &str, first_takes: Duration) -> Vec<u128> {
    let start = Instant::now();
    let (pipeline, seen) = recorder(start, first_takes);
    let ep = endpoint(&SchedulerComponent, uri).unwrap();
    let ctx = ConsumerContext::for_pipeline("s", pipeline);
    ep.consumer().unwrap().run(ctx).await.unwrap();
    let seen = seen.lock().unwrap().clone();
    seen
}

#[tokio::test(start_paused = true)]
async fn initial_delay_then_delay_until_the_repeat_count() {
    let seen = run(
        "scheduler:s?initialDelay=300&delay=2s&repeatCount=3",
        Duration::ZERO,
    )
    .await;
    assert_eq!(seen, [300, 2300, 4300]);
}

#[tokio::test(start_paused = true)]
async fn camels_defaults_are_one_second_then_half_a_second() {
    let seen = run("scheduler:s?repeatCount=3", Duration::ZERO).await;
    assert_eq!(seen, [1000, 1500, 2000]);
}

#[tokio::test(start_paused = true)]
async fn the_delay_counts_from_the_end_of_a_slow_exchange() {
    let slow = Duration::from_millis(700);
    let seen = run("scheduler:s?initial_delay=0&delay=100&repeat_count=3", slow).await;
    assert_eq!(seen, [0, 800, 900]);
    // With a fixed rate the overrun firings follow at once.
    let seen = run(
        "scheduler:s?initialDelay=0&delay=100&repeatCount=4&useFixedDelay=false",
        slow,
    )
    .await;
    assert_eq!(seen, [0, 700, 700, 700]);
}

#[tokio::test(start_paused = true)]
async fn time_unit_applies_to_bare_numbers_only() {
    let seen = run(
        "scheduler:s?timeUnit=SECONDS&initialDelay=2&delay=500ms&repeatCount=2",
        Duration::ZERO,
    )
    .await;
    assert_eq!(seen, [2000, 2500]);
}

#[tokio::test(start_paused = true)]
async fn metadata_only_when_asked() {
    let seen: Arc<Mutex<Vec<Exchange>>> = Arc::default();
    let sink = seen.clone();
    let pipeline = BoxProcessor::sync(move |ex: Exchange| {
        sink.lock().unwrap().push(ex.clone());
        Ok(ex)
    });
    for uri in [
        "scheduler:plain?initialDelay=0&repeatCount=1",
        "scheduler:meta?initialDelay=0&repeatCount=1&includeMetadata=true",
    ] {
        let ep = endpoint(&SchedulerComponent, uri).unwrap();
        let ctx = ConsumerContext::for_pipeline("s", pipeline.clone());
        ep.consumer().unwrap().run(ctx).await.unwrap();
    }
    let seen = seen.lock().unwrap();
    assert!(seen[0].message.headers.is_empty() && seen[0].properties.is_empty());
    let meta = &seen[1];
    assert_eq!(meta.property(TIMER_NAME).unwrap().to_string(), "meta");
    let fired = meta.property(TIMER_FIRED_TIME).and_then(Value::as_i64);
    assert!(fired.is_some_and(|ms| ms > 0));
    assert_eq!(
        meta.header(MESSAGE_TIMESTAMP).and_then(Value::as_i64),
        fired
    );
}

#[test]
fn bad_options_name_the_option() {
    let cases = [
        ("scheduler:s?delay=0", "`delay` must be more than 0"),
        ("scheduler:s?initialDelay=soon", "`initial_delay` = `soon`"),
        ("scheduler:s?timeUnit=fortnights", "`timeUnit`"),
        ("scheduler:s?greedy=true", "unknown parameter `greedy`"),
        ("scheduler:s?repeatCount=-1", "`repeatCount`"),
        ("scheduler:", "needs a name"),
    ];
    for (uri, needle) in cases {
        let err = endpoint(&SchedulerComponent, uri).unwrap_err().to_string();
        assert!(err.contains(needle), "{uri}: {err}");
    }
    let ep = endpoint(&SchedulerComponent, "scheduler:s").unwrap();
    assert!(ep.producer().is_err());
}
