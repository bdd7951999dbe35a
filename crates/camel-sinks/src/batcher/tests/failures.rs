//! How the batcher fails: bisection of a refused request, per-entry failures, a send
//! that panics or overruns its timeout, and shutdown.

use std::time::Duration;

use camel_api::CamelError;
use tokio::time::Instant;

use super::{config, judged, rig, settle};
use crate::batcher::BatchConfig;
use crate::memory::{MemoryCodec, Verdict};

#[tokio::test(start_paused = true)]
async fn bisection_isolates_one_refused_entry_with_exact_extra_requests() {
    let codec = judged("3", Verdict::RefuseRequest);
    let r = rig(codec, config(10, 60_000));
    let calls: Vec<_> = (0..10).map(|i| r.send(&i.to_string(), None, "t")).collect();
    let mut results = Vec::new();
    for c in calls {
        results.push(c.await.unwrap());
    }
    for (i, res) in results.iter().enumerate() {
        assert_eq!(res.is_err(), i == 3, "entry {i}: {res:?}");
    }
    // [0..10] refused; [0..5] refused; [0..2] ok; [2..5] refused; [2] ok; [3..5]
    // refused; [3] refused alone; [4] ok; [5..10] ok: 9 requests, 8 of them extra.
    let sizes: Vec<usize> = r.log.requests().iter().map(Vec::len).collect();
    assert_eq!(sizes, vec![10, 5, 2, 3, 1, 2, 1, 1, 5]);
    let accepted: Vec<String> = r
        .log
        .accepted()
        .iter()
        .map(|e| e.idempotency_key.to_string())
        .collect();
    assert_eq!(accepted, ["0", "1", "2", "4", "5", "6", "7", "8", "9"]);
}

#[tokio::test(start_paused = true)]
async fn a_panicking_send_fails_its_entries_and_the_batcher_goes_on() {
    let codec = judged("boom", Verdict::Panic);
    let r = rig(codec, config(1, 0));
    let err = r.send("boom", None, "t").await.unwrap().unwrap_err();
    assert!(err.to_string().contains("panicked"), "{err}");
    r.send("fine", None, "t").await.unwrap().unwrap();
    assert_eq!(r.registry.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_send_over_its_timeout_fails_its_entries_and_the_batcher_goes_on() {
    let codec = judged("slow", Verdict::Hang);
    let c = BatchConfig {
        send_timeout: Duration::from_secs(5),
        ..config(1, 0)
    };
    let r = rig(codec, c);
    let start = Instant::now();
    let err = r.send("slow", None, "t").await.unwrap().unwrap_err();
    assert!(matches!(err, CamelError::Timeout(_)), "{err:?}");
    assert_eq!(start.elapsed(), Duration::from_secs(5));
    r.send("fine", None, "t").await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn per_entry_failure_reaches_only_its_caller() {
    let codec = judged("bad", Verdict::Fail);
    let r = rig(codec, config(3, 60_000));
    let calls = [
        r.send("ok1", None, "t"),
        r.send("bad", None, "t"),
        r.send("ok2", None, "t"),
    ];
    let mut results = Vec::new();
    for c in calls {
        results.push(c.await.unwrap());
    }
    assert!(results[0].is_ok() && results[2].is_ok());
    assert!(results[1].as_ref().unwrap_err().to_string().contains("bad"));
    assert_eq!(
        r.log.request_count(),
        1,
        "a per-entry failure is not bisected"
    );
}

#[tokio::test(start_paused = true)]
async fn shutdown_sends_what_was_admitted_then_refuses_new_work() {
    let r = rig(MemoryCodec::new("d"), config(10, 60_000));
    let queued: Vec<_> = (0..3).map(|i| r.send(&i.to_string(), None, "t")).collect();
    settle().await;
    assert_eq!(r.log.request_count(), 0, "still lingering");
    r.registry.shutdown().await;
    for c in queued {
        c.await.unwrap().unwrap();
    }
    assert_eq!(r.log.requests(), vec![vec!["0", "1", "2"]]);
    assert!(r.registry.is_empty());
    let late = r.send("late", None, "t").await.unwrap();
    assert!(matches!(late, Err(CamelError::Stopping(_))), "{late:?}");
}

#[tokio::test(start_paused = true)]
async fn shutdown_by_a_deadline_reports_what_a_silent_destination_still_holds() {
    let codec = judged("slow", Verdict::Hang);
    let c = BatchConfig {
        send_timeout: Duration::from_secs(60),
        ..config(1, 0)
    };
    let r = rig(codec, c);
    let _waiting = r.send("slow", None, "t");
    settle().await;
    let start = Instant::now();
    let left = r.registry.shutdown_by(start + Duration::from_secs(5)).await;
    assert_eq!(start.elapsed(), Duration::from_secs(5));
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].requests_in_flight, 1);

    // A batcher that ends in time leaves nothing to report.
    let r = rig(MemoryCodec::new("d"), config(10, 60_000));
    let sent = r.send("a", None, "t");
    settle().await;
    let left = r
        .registry
        .shutdown_by(Instant::now() + Duration::from_secs(5))
        .await;
    assert!(left.is_empty(), "{left:?}");
    sent.await.unwrap().unwrap();
}
