//! What a stream gap timeout does with the run held behind the gap: delivered by default
//! (`emit_partial`, Camel's behaviour), dropped under `drop_and_log` (the spec's
//! behaviour). Paused clock: the timeout fires exactly when the clock passes it.

mod resequencer_support;

use std::time::Duration;

use camel_api::ShutdownReason;
use camel_eip::resequencer::{GapPolicy, ResequenceConfig, ResequenceMode, Resequencer};
use resequencer_support::*;
use tokio::time::sleep;

const GAP: Duration = Duration::from_millis(100);

/// A stream configuration written as a user would, without `on_gap`.
fn configured(extra: serde_json::Value) -> ResequenceConfig {
    let mut stream = serde_json::json!({
        "sequence": "${header.seq}",
        "gap_timeout_ms": 100,
        "initial_sequence": 1
    });
    if let (Some(s), Some(e)) = (stream.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    serde_json::from_value(serde_json::json!({ "stream": stream })).expect("valid configuration")
}

fn on_gap(cfg: &ResequenceConfig) -> GapPolicy {
    match &cfg.mode {
        ResequenceMode::Stream(s) => s.on_gap,
        ResequenceMode::Batch(_) => panic!("stream expected"),
    }
}

/// Starts a resequencer for `cfg`, sends 1, 3, 4 and 6 (2 and 5 never come) and lets the
/// clock run to just before the gap timeout: only 1 is delivered so far.
async fn held_behind_a_gap(cfg: &ResequenceConfig) -> (Recorder, Resequencer) {
    let rec = Recorder::default();
    let r = build(cfg, rec.processor(), None);
    r.lifecycle.start().await.unwrap();
    for n in [1, 3, 4, 6] {
        r.processor.process(ex(n)).await.unwrap();
    }
    sleep(GAP - Duration::from_millis(1)).await;
    assert_eq!(rec.seqs(), [1], "2 is still waited for");
    assert_eq!(r.stats.held(), 3);
    assert_eq!(
        r.stats.dropped(),
        0,
        "nothing is given up on before the timeout"
    );
    (rec, r)
}

#[tokio::test(start_paused = true)]
async fn by_default_a_gap_timeout_delivers_the_held_run() {
    let cfg = configured(serde_json::json!({}));
    assert_eq!(on_gap(&cfg), GapPolicy::EmitPartial);
    let (rec, r) = held_behind_a_gap(&cfg).await;
    // 2 never comes: 3..4 are delivered, and the timer re-arms for the gap at 5.
    sleep(Duration::from_millis(2)).await;
    assert_eq!(rec.seqs(), [1, 3, 4]);
    sleep(GAP).await;
    assert_eq!(rec.seqs(), [1, 3, 4, 6]);
    // Without reject_old a number given up on is delivered when it turns up.
    r.processor.process(ex(2)).await.unwrap();
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert_eq!(rec.seqs(), [1, 3, 4, 6, 2]);
    assert_eq!(r.stats.dropped(), 0);
}

#[tokio::test(start_paused = true)]
async fn drop_and_log_drops_the_held_run_after_a_gap_timeout() {
    let cfg = configured(serde_json::json!({ "on_gap": "drop_and_log" }));
    assert_eq!(on_gap(&cfg), GapPolicy::DropAndLog);
    let rec = Recorder::default();
    let r = build(&cfg, rec.processor(), None);
    r.lifecycle.start().await.unwrap();
    for n in [1, 3, 4, 6] {
        r.processor.process(ex(n)).await.unwrap();
    }
    sleep(GAP - Duration::from_millis(1)).await;
    assert_eq!(rec.seqs(), [1]);
    assert_eq!(
        r.stats.dropped(),
        0,
        "nothing is given up on before the timeout"
    );
    sleep(Duration::from_millis(2)).await;
    assert_eq!(r.stats.dropped(), 2, "3 and 4 dropped");
    assert_eq!(r.stats.held(), 1, "6 waits behind the gap at 5");
    // 5 arrives within the next timeout: the watermark is at 5, so 5 and 6 go on.
    r.processor.process(ex(5)).await.unwrap();
    rec.wait_for(3).await;
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert_eq!(rec.seqs(), [1, 5, 6]);
    assert_eq!(r.stats.dropped(), 2);
}
