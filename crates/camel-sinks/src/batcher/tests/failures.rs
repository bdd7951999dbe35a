//! How the batcher fails: bisection of a refused request, per-entry failures, a send
//! that panics or overruns its timeout, and shutdown.

use std::time::Duration;

use camel_api::CamelError;
use tokio::time::Instant;

use super::{config, judged, rig, settle};
use crate::batcher::{BatchConfig, SinkError};
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

/// The keys of the accepted entries, in the order the destination took them.
fn accepted_keys(r: &super::Rig) -> Vec<String> {
    r.log
        .accepted()
        .iter()
        .map(|e| e.idempotency_key.to_string())
        .collect()
}

#[tokio::test(start_paused = true)]
async fn strict_order_fails_the_entries_of_a_group_after_its_failed_one_in_the_same_request() {
    // A fake destination answering a partial failure, as SQS does with `Failed[]`.
    let codec = judged("g2", Verdict::Fail).strict_group_order();
    let r = rig(codec, config(5, 60_000));
    let calls = [
        r.send("g1", Some("g"), "t"),
        r.send("g2", Some("g"), "t"),
        r.send("h1", Some("h"), "t"),
        r.send("g3", Some("g"), "t"),
        r.send("u", None, "t"),
    ];
    let mut results = Vec::new();
    for c in calls {
        results.push(c.await.unwrap());
    }
    assert_eq!(r.log.request_count(), 1);
    assert!(results[0].is_ok() && results[2].is_ok() && results[4].is_ok());
    assert!(results[1]
        .as_ref()
        .unwrap_err()
        .to_string()
        .contains("g2 failed"));
    let after = results[3].as_ref().unwrap_err();
    let text = after.to_string();
    assert!(
        text.contains("earlier entry of group `g`") && text.contains("same request"),
        "{text}"
    );
    let typed = match after {
        CamelError::External { source, .. } => source.downcast_ref::<SinkError>().cloned(),
        _ => None,
    };
    assert!(
        matches!(typed, Some(SinkError::EarlierEntryFailed { ref group, sent: true, .. }) if group == "g"),
        "{after:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn strict_order_withholds_a_groups_later_entries_from_a_bisected_batch() {
    let codec = judged("g1", Verdict::RefuseRequest).strict_group_order();
    let r = rig(codec, config(4, 60_000));
    let calls = [
        r.send("g1", Some("g"), "t"),
        r.send("h1", Some("h"), "t"),
        r.send("g2", Some("g"), "t"),
        r.send("h2", Some("h"), "t"),
    ];
    let mut results = Vec::new();
    for c in calls {
        results.push(c.await.unwrap());
    }
    assert!(results[0].is_err());
    let withheld = results[2].as_ref().unwrap_err().to_string();
    assert!(withheld.contains("not sent"), "{withheld}");
    assert!(results[1].is_ok() && results[3].is_ok());
    // [g1 h1 g2 h2] refused; [g1 h1] refused; [g1] refused; [h1]; g2 withheld; [h2].
    assert_eq!(
        r.log.requests(),
        vec![
            vec!["g1", "h1", "g2", "h2"],
            vec!["g1", "h1"],
            vec!["g1"],
            vec!["h1"],
            vec!["h2"]
        ]
    );
    assert_eq!(accepted_keys(&r), ["h1", "h2"]);
}

#[tokio::test(start_paused = true)]
async fn without_strict_order_a_later_entry_of_the_group_keeps_its_success() {
    let codec = judged("g1", Verdict::Fail);
    let r = rig(codec, config(2, 60_000));
    let calls = [r.send("g1", Some("g"), "t"), r.send("g2", Some("g"), "t")];
    let mut results = Vec::new();
    for c in calls {
        results.push(c.await.unwrap());
    }
    assert!(results[0].is_err() && results[1].is_ok());
    assert_eq!(accepted_keys(&r), ["g2"]);
}
