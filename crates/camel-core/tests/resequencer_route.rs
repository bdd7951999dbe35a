//! The resequencer inside a route: the continuation boundary, both YAML spellings, prompt
//! stop, and hot swap under load with `flush` and `handoff`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use camel_api::{Exchange, Value};
use camel_components::MockComponent;
use camel_core::{CamelContext, RouteDefinition};

fn shuffled_in_windows(n: u64, window: usize, seed: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (1..=n).collect();
    let mut state = seed;
    for chunk in v.chunks_mut(window) {
        for i in (1..chunk.len()).rev() {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let j = (state >> 33) as usize % (i + 1);
            chunk.swap(i, j);
        }
    }
    v
}

fn load(yaml: &str) -> Vec<RouteDefinition> {
    camel_core::yaml::load_str(yaml, "reseq.yaml").unwrap_or_else(|e| panic!("{e}"))
}

async fn context(yaml: &str) -> (CamelContext, MockComponent) {
    let ctx = CamelContext::new();
    let mock = MockComponent::new();
    ctx.add_component(Arc::new(mock.clone()));
    ctx.add_routes(load(yaml))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    ctx.start().await.unwrap();
    (ctx, mock)
}

fn seqs(mock: &MockComponent) -> Vec<u64> {
    mock.endpoint("out")
        .received()
        .iter()
        .map(|e| e.header("seq").and_then(Value::as_i64).unwrap_or(-1) as u64)
        .collect()
}

async fn send(ctx: &CamelContext, seq: u64) {
    let ack = ctx
        .request(
            "direct:in",
            Exchange::new(format!("m{seq}")).with_header("seq", seq),
        )
        .await
        .unwrap();
    assert_eq!(
        ack.property("CamelResequencerAccepted"),
        Some(&Value::Bool(true))
    );
}

const CANONICAL: &str = "- route:\n    id: reseq\n    from:\n      uri: direct:in\n      steps:\n        - resequence:\n            stream: {sequence: '${header.seq}', initial_sequence: 1, capacity: 1000}\n        - to: mock:out\n";

#[tokio::test]
async fn canonical_form_orders_a_shuffled_stream() {
    let (ctx, mock) = context(CANONICAL).await;
    for seq in shuffled_in_windows(500, 50, 7) {
        send(&ctx, seq).await;
    }
    ctx.stop().await;
    assert_eq!(seqs(&mock), (1..=500).collect::<Vec<_>>());
}

#[tokio::test]
async fn camel_form_with_nested_steps() {
    let yaml = "- from:\n    uri: direct:in\n    steps:\n      - resequence:\n          simple: '${header.seq}'\n          streamConfig: {capacity: 100, timeout: 5000}\n          steps:\n            - to: mock:out\n";
    let (ctx, mock) = context(yaml).await;
    for seq in [2u64, 1, 4, 3, 5] {
        send(&ctx, seq).await;
    }
    ctx.stop().await;
    assert_eq!(seqs(&mock), vec![1, 2, 3, 4, 5]);
}

#[tokio::test]
async fn batch_mode_sorts_numbers_numerically() {
    let yaml = "- from:\n    uri: direct:in\n    steps:\n      - resequence:\n          batch: {sort: '${header.seq}', size: 12, timeout_ms: 60000}\n      - to: mock:out\n";
    let (ctx, mock) = context(yaml).await;
    for seq in [10u64, 9, 11, 1, 2, 12, 3, 8, 4, 7, 5, 6] {
        send(&ctx, seq).await;
    }
    mock.endpoint("out").expected_message_count(12);
    mock.endpoint("out")
        .assert_is_satisfied(Duration::from_secs(10))
        .await
        .unwrap();
    ctx.stop().await;
    assert_eq!(seqs(&mock), (1..=12).collect::<Vec<_>>());
}

#[tokio::test]
async fn stopping_is_prompt_idle_and_with_1000_held() {
    let (ctx, _mock) = context(CANONICAL).await;
    let started = Instant::now();
    ctx.route_controller().stop_route("reseq").await.unwrap();
    let idle = started.elapsed();

    let yaml = CANONICAL.replace("capacity: 1000}", "capacity: 2000, gap_timeout_ms: 600000}");
    let (ctx, mock) = context(&yaml).await;
    // 1 never arrives, so 2..=1001 are all held.
    for seq in 2..=1001u64 {
        send(&ctx, seq).await;
    }
    let started = Instant::now();
    ctx.route_controller().stop_route("reseq").await.unwrap();
    let held = started.elapsed();
    println!("drain latency: idle stop {idle:?}, stop with 1000 held {held:?}");
    assert_eq!(
        seqs(&mock),
        (2..=1001).collect::<Vec<_>>(),
        "held messages are flushed in order"
    );
    assert!(idle < Duration::from_millis(100), "idle stop took {idle:?}");
    assert!(
        held < Duration::from_millis(100),
        "stop with 1000 held took {held:?}"
    );
}

async fn swap_under_load(on_swap: &str) -> Vec<u64> {
    let yaml = CANONICAL.replace(
        "capacity: 1000}",
        &format!("capacity: 1000}}\n            on_swap: {on_swap}"),
    );
    let (ctx, mock) = context(&yaml).await;
    let definition = load(&yaml).remove(0);
    let order = shuffled_in_windows(10_000, 100, 42);
    let controller = ctx.route_controller();
    for (i, seq) in order.into_iter().enumerate() {
        if i > 0 && i % 1_650 == 0 && i < 9_000 {
            // Swap while exchanges are held (the window is half full).
            controller.swap("reseq", definition.clone()).await.unwrap();
        }
        send(&ctx, seq).await;
    }
    ctx.stop().await;
    seqs(&mock)
}

fn inversions(v: &[u64]) -> usize {
    v.windows(2).filter(|w| w[0] > w[1]).count()
}

#[tokio::test]
async fn hot_swap_with_handoff_keeps_order_and_loses_nothing() {
    let got = swap_under_load("handoff").await;
    assert_eq!(got.len(), 10_000);
    assert_eq!(got, (1..=10_000).collect::<Vec<_>>());
}

#[tokio::test]
async fn hot_swap_with_flush_delivers_everything_exactly_once() {
    let got = swap_under_load("flush").await;
    let mut sorted = got.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), 10_000, "nothing lost, nothing twice");
    assert_eq!(got.len(), 10_000);
    println!("flush swaps: {} inversions over 5 swaps", inversions(&got));
}

#[tokio::test]
async fn swapping_the_resequencer_away_flushes_what_it_held() {
    let yaml = CANONICAL.replace(
        "capacity: 1000}",
        "capacity: 1000, gap_timeout_ms: 600000}\n            on_swap: handoff",
    );
    let (ctx, mock) = context(&yaml).await;
    for seq in [3u64, 2] {
        send(&ctx, seq).await; // held: 1 has not arrived
    }
    let plain = load("- route:\n    id: reseq\n    from:\n      uri: direct:in\n      steps:\n        - to: mock:out\n").remove(0);
    ctx.route_controller().swap("reseq", plain).await.unwrap();
    assert_eq!(
        seqs(&mock),
        vec![2, 3],
        "held exchanges go out through the old continuation"
    );
    ctx.request("direct:in", Exchange::new("x").with_header("seq", 1))
        .await
        .unwrap();
    ctx.stop().await;
    assert_eq!(seqs(&mock), vec![2, 3, 1]);
}

#[tokio::test]
async fn a_context_can_be_started_again_after_a_stop() {
    let (ctx, mock) = context(CANONICAL).await;
    send(&ctx, 1).await;
    ctx.stop().await;
    ctx.start()
        .await
        .expect("a stopped resequencer route starts again, compiled afresh");
    send(&ctx, 1).await;
    ctx.stop().await;
    assert_eq!(seqs(&mock), vec![1, 1]);
}
