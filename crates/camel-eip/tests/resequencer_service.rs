//! The resequencer as a route step: acknowledgement, key errors, InOut guard,
//! backpressure, stopped exchanges, continuation failures and dead letters.

mod resequencer_support;

use std::time::Duration;

use camel_api::{BoxProcessor, CamelError, Exchange, ExchangePattern, ShutdownReason, Value};
use camel_eip::resequencer::{names, GapPolicy, ResequenceConfig, ResequenceError, ResequenceMode};
use resequencer_support::*;

#[tokio::test]
async fn ack_is_empty_and_marked_accepted() {
    let rec = Recorder::default();
    let r = build(&stream_config(Some(1), 10, 1000), rec.processor(), None);
    r.lifecycle.start().await.unwrap();
    let input = ex(1).with_header("other", "x");
    let id = input.id;
    let ack = r.processor.process(input).await.unwrap();
    assert!(ack.message.body.is_empty());
    assert!(ack.message.headers.is_empty());
    assert_eq!(ack.id, id);
    assert_eq!(ack.property(names::ACCEPTED), Some(&Value::Bool(true)));
    assert_eq!(ack.property(names::INOUT_WARN), None);
    rec.wait_for(1).await;
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert_eq!(r.stats.accepted(), 1);
    assert_eq!(r.stats.delivered(), 1);
}

#[tokio::test]
async fn bad_keys_fail_before_acceptance() {
    let rec = Recorder::default();
    let r = build(&stream_config(Some(1), 10, 1000), rec.processor(), None);
    r.lifecycle.start().await.unwrap();
    for bad in [
        Exchange::default(),
        Exchange::default().with_header("seq", "x"),
        Exchange::default().with_header("seq", -4),
    ] {
        let err = r.processor.process(bad).await.unwrap_err();
        assert!(
            matches!(
                ResequenceError::from_camel(&err),
                Some(ResequenceError::InvalidKey { .. })
            ),
            "{err}"
        );
    }
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert_eq!(r.stats.accepted(), 0);
    assert!(rec.seqs().is_empty());
}

#[tokio::test]
async fn batch_ignore_invalid_skips_instead_of_failing() {
    let rec = Recorder::default();
    let mut cfg = ResequenceConfig::batch("${header.seq}");
    let r = build(&cfg, rec.processor(), None);
    r.lifecycle.start().await.unwrap();
    assert!(r.processor.process(Exchange::default()).await.is_err());
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();

    if let ResequenceMode::Batch(b) = &mut cfg.mode {
        b.ignore_invalid = true;
    }
    let r = build(&cfg, rec.processor(), None);
    r.lifecycle.start().await.unwrap();
    let ack = r.processor.process(Exchange::default()).await.unwrap();
    assert_eq!(ack.property(names::ACCEPTED), Some(&Value::Bool(false)));
    r.processor.process(ex(5)).await.unwrap();
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert_eq!(rec.seqs(), [5]);
    assert_eq!(r.stats.dropped(), 1);
}

#[tokio::test]
async fn reject_old_is_a_typed_error() {
    let rec = Recorder::default();
    let mut cfg = stream_config(Some(1), 10, 1000);
    stream_mut(&mut cfg).reject_old = true;
    let r = build(&cfg, rec.processor(), None);
    r.lifecycle.start().await.unwrap();
    for n in [1, 2, 3] {
        r.processor.process(ex(n)).await.unwrap();
    }
    rec.wait_for(3).await;
    let err = r.processor.process(ex(2)).await.unwrap_err();
    assert_eq!(
        ResequenceError::from_camel(&err),
        Some(&ResequenceError::RejectedOld {
            sequence: 2,
            last_delivered: 3
        })
    );
    r.processor.process(ex(4)).await.unwrap();
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert_eq!(rec.seqs(), [1, 2, 3, 4]);
}

#[tokio::test(start_paused = true)]
async fn inout_guard_marks_every_ack_but_warns_once_per_30s() {
    let rec = Recorder::default();
    let r = build(&stream_config(Some(1), 10_000, 1000), rec.processor(), None);
    r.lifecycle.start().await.unwrap();
    for n in 1..=90u64 {
        let ack = r
            .processor
            .process(ex(n).with_pattern(ExchangePattern::InOut))
            .await
            .unwrap();
        assert_eq!(ack.property(names::INOUT_WARN), Some(&Value::Bool(true)));
        tokio::time::advance(Duration::from_secs(1)).await;
    }
    assert_eq!(
        r.stats.inout_warnings_logged(),
        3,
        "90 s of InOut traffic, one warning per 30 s"
    );
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();

    let mut cfg = stream_config(Some(1), 10, 1000);
    cfg.allow_inout = true;
    let r = build_for_route("inout-allowed-route", &cfg, rec.processor(), None);
    let ack = r
        .processor
        .process(ex(1).with_pattern(ExchangePattern::InOut))
        .await
        .unwrap();
    assert_eq!(ack.property(names::INOUT_WARN), None);
    assert_eq!(r.stats.inout_warnings_logged(), 0);
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_full_input_channel_makes_the_caller_wait() {
    let rec = Recorder::default();
    let mut cfg = stream_config(Some(1), 10, 1000);
    cfg.channel_capacity = 2;
    let r = build(&cfg, rec.processor(), None);
    // Not started: nothing drains the channel.
    r.processor.process(ex(1)).await.unwrap();
    r.processor.process(ex(2)).await.unwrap();
    let third = r.processor.process(ex(3));
    let waiting = tokio::spawn(third);
    tokio::task::yield_now().await;
    assert!(!waiting.is_finished(), "the third call waits for room");
    r.lifecycle.start().await.unwrap();
    let ack = tokio::time::timeout(Duration::from_millis(10), waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(ack.property(names::ACCEPTED), Some(&Value::Bool(true)));
    rec.wait_for(3).await;
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert_eq!(rec.seqs(), [1, 2, 3]);
    let err = r.processor.process(ex(4)).await.unwrap_err();
    assert!(matches!(err, CamelError::Stopping(_)), "{err}");
}

#[tokio::test]
async fn stopped_exchanges_are_skipped_and_failures_dead_lettered() {
    let dead = Recorder::default();
    let delivered = Recorder::default();
    let sink = delivered.processor();
    let continuation = BoxProcessor::from_fn(move |ex: Exchange| {
        let sink = sink.clone();
        async move {
            if ex.header("seq").and_then(Value::as_i64) == Some(2) {
                return Err(CamelError::processor("downstream refused 2"));
            }
            sink.process(ex).await
        }
    });
    let mut cfg = stream_config(Some(1), 10, 1000);
    cfg.dead_letter_uri = Some("mock:dead".into());
    let r = build(&cfg, continuation, Some(dead.processor()));
    r.lifecycle.start().await.unwrap();
    let mut stopped = ex(3);
    stopped.stop();
    for e in [ex(1), ex(2), stopped, ex(4)] {
        r.processor.process(e).await.unwrap();
    }
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert_eq!(delivered.seqs(), [1, 4]);
    assert_eq!(dead.entries(), [(2, Some("continuation_failed".into()))]);
    assert_eq!(r.stats.failed(), 1);
    assert_eq!(r.stats.skipped_stopped(), 1);
    assert_eq!(r.stats.dead_lettered(), 1);
}

#[tokio::test(start_paused = true)]
async fn gap_dead_letter_names_the_reason() {
    let dead = Recorder::default();
    let delivered = Recorder::default();
    let mut cfg = stream_config(Some(1), 10, 100);
    stream_mut(&mut cfg).on_gap = GapPolicy::DeadLetter;
    cfg.dead_letter_uri = Some("mock:dead".into());
    let r = build(&cfg, delivered.processor(), Some(dead.processor()));
    r.lifecycle.start().await.unwrap();
    for n in [1, 3, 4, 6] {
        r.processor.process(ex(n)).await.unwrap();
    }
    // 2 never comes: after the gap timeout 3..4 go to the dead letter; then 6 after 5.
    dead.wait_for(3).await;
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert_eq!(delivered.seqs(), [1]);
    let gap = Some("gap".to_string());
    assert_eq!(
        dead.entries(),
        [(3, gap.clone()), (4, gap.clone()), (6, gap)]
    );
}

#[tokio::test]
async fn dead_letter_choices_need_a_dead_letter_processor() {
    let mut cfg = stream_config(Some(1), 10, 100);
    stream_mut(&mut cfg).on_gap = GapPolicy::DeadLetter;
    let expressions = camel_eip::resequencer::ResequenceExpressions {
        key: std::sync::Arc::new(Header("seq")),
        correlation: None,
    };
    let err = camel_eip::resequencer::ResequencerService::build_with(
        &cfg,
        expressions,
        "r",
        "s",
        BoxProcessor::identity(),
        None,
    )
    .unwrap_err();
    assert!(
        matches!(
            ResequenceError::from_camel(&err),
            Some(ResequenceError::Config(_))
        ),
        "{err}"
    );
}

#[tokio::test]
async fn build_compiles_simple_expressions() {
    let rec = Recorder::default();
    let mut cfg = ResequenceConfig::batch("${header.seq}");
    if let ResequenceMode::Batch(b) = &mut cfg.mode {
        b.correlation = Some("${header.corr}".into());
        b.size = 2;
    }
    let r = camel_eip::resequencer::ResequencerService::build(
        &cfg,
        "route-1",
        "resequence",
        rec.processor(),
        None,
    )
    .unwrap();
    r.lifecycle.start().await.unwrap();
    for (n, corr) in [(20, "a"), (9, "b"), (10, "a"), (3, "b")] {
        r.processor
            .process(ex(n).with_header("corr", corr))
            .await
            .unwrap();
    }
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    let out = rec.seqs();
    assert_eq!(out.len(), 4);
    let a: Vec<i64> = out.iter().copied().filter(|n| *n >= 10).collect();
    let b: Vec<i64> = out.iter().copied().filter(|n| *n < 10).collect();
    assert_eq!(
        (a, b),
        (vec![10, 20], vec![3, 9]),
        "each group sorted on its own"
    );

    let err = camel_eip::resequencer::ResequencerService::build(
        &ResequenceConfig::stream("${header.seq"),
        "route-1",
        "resequence",
        rec.processor(),
        None,
    )
    .unwrap_err();
    assert!(matches!(err, CamelError::Expression(_)), "{err}");
}

#[tokio::test(start_paused = true)]
async fn initial_sequence_absent_waits_one_gap_timeout_for_a_smaller_number() {
    let rec = Recorder::default();
    let r = build(&stream_config(None, 100, 1000), rec.processor(), None);
    r.lifecycle.start().await.unwrap();
    for n in [7, 5, 6, 9] {
        r.processor.process(ex(n)).await.unwrap();
    }
    tokio::time::advance(Duration::from_millis(900)).await;
    tokio::task::yield_now().await;
    assert!(rec.seqs().is_empty(), "nothing is assumed to be first");
    r.processor.process(ex(4)).await.unwrap();
    rec.wait_for(4).await;
    assert_eq!(
        rec.seqs(),
        [4, 5, 6, 7],
        "the smallest within the timeout went first"
    );
    r.processor.process(ex(8)).await.unwrap();
    rec.wait_for(6).await;
    assert_eq!(rec.seqs(), [4, 5, 6, 7, 8, 9]);
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
}

#[tokio::test(start_paused = true)]
async fn initial_sequence_present_starts_there_without_waiting() {
    let rec = Recorder::default();
    let r = build(&stream_config(Some(5), 100, 1000), rec.processor(), None);
    r.lifecycle.start().await.unwrap();
    let started = tokio::time::Instant::now();
    for n in [6, 5] {
        r.processor.process(ex(n)).await.unwrap();
    }
    rec.wait_for(2).await;
    assert_eq!(rec.seqs(), [5, 6]);
    assert_eq!(started.elapsed(), Duration::ZERO, "no timeout was needed");
    // 3 is below the start: without reject_old it is delivered at once.
    r.processor.process(ex(3)).await.unwrap();
    rec.wait_for(3).await;
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert_eq!(rec.seqs(), [5, 6, 3]);
}

#[tokio::test]
async fn stream_ignore_invalid_skips_instead_of_failing() {
    let rec = Recorder::default();
    let mut cfg = stream_config(Some(1), 10, 1000);
    stream_mut(&mut cfg).ignore_invalid = true;
    let r = build(&cfg, rec.processor(), None);
    r.lifecycle.start().await.unwrap();
    let ack = r
        .processor
        .process(Exchange::default().with_header("seq", "not a number"))
        .await
        .unwrap();
    assert_eq!(ack.property(names::ACCEPTED), Some(&Value::Bool(false)));
    r.processor.process(ex(1)).await.unwrap();
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert_eq!(rec.seqs(), [1]);
    assert_eq!((r.stats.accepted(), r.stats.dropped()), (1, 1));
}
