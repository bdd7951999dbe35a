//! Scenario `routing`: the recipient list and the wire tap against hand-written fan-outs
//! doing the same sends, in the same run (ADRs 0060, 0061).
//!
//! - `recipient_list`: `direct:start` → `recipient_list` over a header naming three
//!   `direct:` routes (one `set_header` each), latest reply kept; the baseline route runs
//!   one Rust step that clones the exchange and calls the same three producers in turn.
//! - `wire_tap`: `direct:tap` → `wire_tap` to a `direct:` route that counts → one
//!   `set_header`; the baseline route clones the exchange and `tokio::spawn`s the send by
//!   hand (unbounded). Both count every delivered copy before the time stops.
//!
//! ```text
//! cargo run --release -p camel-bench --bin routing     # ROUTING_EXCHANGES=100000
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use camel_api::{BoxProcessor, CamelError, Exchange};
use camel_bench::{count_from_env, peak_rss_kb, per_second, result_line, Latencies};
use camel_core::builder::{constant, header, RecipientList, RouteBuilder, WireTap};
use camel_core::{CamelContext, RouteDefinition};

const TARGETS: [&str; 3] = ["direct:r1", "direct:r2", "direct:r3"];

fn input() -> Exchange {
    Exchange::new("payload").with_header("to", TARGETS.join(","))
}

/// Runs `total` exchanges through `producer` from `callers` spawned tasks.
async fn drive(total: u64, callers: u64, producer: BoxProcessor) -> (Duration, Latencies) {
    let per_caller = total / callers;
    let start = Instant::now();
    let tasks: Vec<_> = (0..callers)
        .map(|_| {
            let p = producer.clone();
            tokio::spawn(async move {
                let mut lat = Latencies::with_capacity(per_caller as usize);
                for _ in 0..per_caller {
                    let t = Instant::now();
                    if let Err(e) = p.process(input()).await {
                        panic!("exchange failed: {e}");
                    }
                    lat.record(t.elapsed());
                }
                lat
            })
        })
        .collect();
    let mut all = Latencies::with_capacity(total as usize);
    for t in tasks {
        match t.await {
            Ok(l) => all.extend(l),
            Err(e) => panic!("caller task failed: {e}"),
        }
    }
    (start.elapsed(), all)
}

async fn recipient_list_case(total: u64) {
    let ctx = CamelContext::new();
    let mut routes: Vec<RouteDefinition> = TARGETS
        .iter()
        .map(|t| {
            RouteBuilder::from(*t)
                .set_header("seen", constant("yes"))
                .build()
        })
        .collect();
    routes.push(
        RouteBuilder::from("direct:start")
            .recipient_list(RecipientList::new(header("to")))
            .build(),
    );
    ctx.add_routes(routes)
        .await
        .expect("the bench routes compile");
    ctx.start().await.expect("the bench routes start");
    let producers: Arc<Vec<BoxProcessor>> = Arc::new(
        TARGETS
            .iter()
            .map(|t| ctx.producer(t).expect("a direct producer"))
            .collect(),
    );
    let by_hand = BoxProcessor::from_fn(move |ex: Exchange| {
        let producers = producers.clone();
        async move {
            let mut last = None;
            for p in producers.iter() {
                last = Some(p.process(ex.clone()).await?);
            }
            Ok::<_, CamelError>(last.unwrap_or(ex))
        }
    });
    ctx.add_routes(vec![RouteBuilder::from("direct:hand")
        .process_with(by_hand)
        .build()])
        .await
        .expect("the baseline route compiles");
    ctx.start().await.expect("the baseline route starts");
    let ours = ctx.producer("direct:start").expect("a direct producer");
    let hand = ctx.producer("direct:hand").expect("a direct producer");
    for callers in [1u64, 64] {
        drive(total / 10, callers, ours.clone()).await;
        drive(total / 10, callers, hand.clone()).await;
        let (t_hand, _) = drive(total, callers, hand.clone()).await;
        let (t_ours, mut lat) = drive(total, callers, ours.clone()).await;
        let (o, b) = (per_second(total, t_ours), per_second(total, t_hand));
        result_line(
            "routing_recipient_list",
            &[
                ("recipients", "3".into()),
                ("callers", callers.to_string()),
                ("ours_per_s", format!("{o:.0}")),
                ("baseline_per_s", format!("{b:.0}")),
                ("ratio", format!("{:.2}", o / b)),
                ("p50_us", format!("{:.2}", lat.percentile_us(50.0))),
                ("p99_us", format!("{:.2}", lat.percentile_us(99.0))),
                ("rss_kb", peak_rss_kb().to_string()),
            ],
        );
    }
    ctx.stop().await;
}

/// Runs `total` exchanges and waits until `delivered` has grown by `expected` taps.
async fn drive_tapped(
    total: u64,
    producer: BoxProcessor,
    delivered: &AtomicU64,
    expected: u64,
) -> (Duration, Latencies) {
    let before = delivered.load(Ordering::Relaxed);
    let start = Instant::now();
    let (_, lat) = drive(total, 1, producer).await;
    while delivered.load(Ordering::Relaxed) - before < expected {
        tokio::task::yield_now().await;
    }
    (start.elapsed(), lat)
}

async fn wire_tap_case(total: u64) {
    let ctx = CamelContext::new();
    let delivered = Arc::new(AtomicU64::new(0));
    let count = delivered.clone();
    let sink = RouteBuilder::from("direct:sink")
        .process(move |ex| {
            count.fetch_add(1, Ordering::Relaxed);
            Ok(ex)
        })
        .build();
    // A queue as large as the run: the figure compares send costs, not drop policies.
    let tap = RouteBuilder::from("direct:tap")
        .wire_tap(WireTap::new("direct:sink").queue_size(total as usize))
        .set_header("after", constant("yes"))
        .build();
    ctx.add_routes(vec![sink, tap])
        .await
        .expect("the bench routes compile");
    ctx.start().await.expect("the bench routes start");
    let sink_producer = ctx.producer("direct:sink").expect("a direct producer");
    let by_hand = BoxProcessor::sync(move |ex: Exchange| {
        let copy = ex.clone();
        let p = sink_producer.clone();
        tokio::spawn(async move {
            let _ = p.process(copy).await;
        });
        Ok(ex)
    });
    ctx.add_routes(vec![RouteBuilder::from("direct:handtap")
        .process_with(by_hand)
        .set_header("after", constant("yes"))
        .build()])
        .await
        .expect("the baseline route compiles");
    ctx.start().await.expect("the baseline route starts");
    let ours = ctx.producer("direct:tap").expect("a direct producer");
    let hand = ctx.producer("direct:handtap").expect("a direct producer");
    let warm = total / 10;
    drive_tapped(warm, ours.clone(), &delivered, warm).await;
    drive_tapped(warm, hand.clone(), &delivered, warm).await;
    let (t_hand, _) = drive_tapped(total, hand, &delivered, total).await;
    let (t_ours, mut lat) = drive_tapped(total, ours, &delivered, total).await;
    let (o, b) = (per_second(total, t_ours), per_second(total, t_hand));
    result_line(
        "routing_wire_tap",
        &[
            ("callers", "1".into()),
            ("ours_per_s", format!("{o:.0}")),
            ("baseline_per_s", format!("{b:.0}")),
            ("ratio", format!("{:.2}", o / b)),
            ("main_p50_us", format!("{:.2}", lat.percentile_us(50.0))),
            ("main_p99_us", format!("{:.2}", lat.percentile_us(99.0))),
            ("rss_kb", peak_rss_kb().to_string()),
        ],
    );
    ctx.stop().await;
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        let total = count_from_env("ROUTING_EXCHANGES", 100_000);
        let only = std::env::var("ROUTING_ONLY").ok();
        if only.as_deref().is_none_or(|o| o == "recipient_list") {
            recipient_list_case(total).await;
        }
        if only.as_deref().is_none_or(|o| o == "wire_tap") {
            wire_tap_case(total).await;
        }
    });
}
