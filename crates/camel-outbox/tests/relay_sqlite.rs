//! The relay on a real SQLite file: order, strict and N modes, dead letters, admin.

mod common;

use std::time::Duration;

use camel_api::CamelError;
use camel_outbox::admin::{DeadSelection, OutboxAdmin};
use camel_outbox::{MaxAttempts, NewMessage, Ordering, Outbox, OutboxError};
use common::*;

const LIMIT: Duration = Duration::from_secs(20);

fn msgs(groups: &[&str], per_group: usize) -> Vec<NewMessage> {
    (0..per_group)
        .flat_map(|i| {
            groups
                .iter()
                .map(move |g| NewMessage::text(format!("{g}-{i}")).group(*g))
        })
        .collect()
}

#[tokio::test]
async fn delivers_everything_in_group_order() {
    let (_dir, ds) = sqlite();
    let mut cfg = fast_config("basic");
    cfg.partitions = 3;
    let outbox = Outbox::open(ds, cfg).await.unwrap();
    let ids = publish(&outbox, msgs(&["a", "b", "c", "d"], 25)).await;
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "ids increase in input order"
    );
    let rec = Recorder::new();
    let relay = rec.spawn(outbox.clone());
    rec.wait_for(LIMIT, "100 confirmations", |l| {
        l.iter().filter(|d| d.ok).count() == 100
    })
    .await;
    relay.shutdown().await.unwrap();
    assert_group_order(&rec.snapshot());
    let admin = OutboxAdmin::from_config(outbox.datasource().clone(), outbox.config()).unwrap();
    assert_eq!(admin.counts().await.unwrap().pending, 0);
}

#[tokio::test]
async fn strict_mode_blocks_one_group_while_others_flow() {
    let (_dir, ds) = sqlite();
    let outbox = Outbox::open(ds, fast_config("strict")).await.unwrap();
    let rec = Recorder::new();
    rec.set_policy(|m| match m.group_key.as_deref() {
        Some("bad") => Err(CamelError::processor("destination refuses")),
        _ => Ok(()),
    });
    let ids = publish(&outbox, msgs(&["bad", "good"], 10)).await;
    let relay = rec.spawn(outbox.clone());
    rec.wait_for(LIMIT, "good group done and bad head retried", |l| {
        l.iter().filter(|d| d.ok).count() == 10 && l.iter().filter(|d| !d.ok).count() >= 3
    })
    .await;
    let log = rec.snapshot();
    let bad_head = ids[0];
    assert!(
        log.iter()
            .filter(|d| d.group.as_deref() == Some("bad"))
            .all(|d| d.id == bad_head),
        "nothing behind the failing head of `bad` went out: {log:?}"
    );
    let attempts: Vec<u32> = log
        .iter()
        .filter(|d| d.id == bad_head)
        .map(|d| d.attempt)
        .collect();
    assert_eq!(
        attempts,
        (1..=attempts.len() as u32).collect::<Vec<_>>(),
        "attempts count up"
    );
    let admin = OutboxAdmin::from_config(outbox.datasource().clone(), outbox.config()).unwrap();
    let counts = admin.counts().await.unwrap();
    assert_eq!(counts.dead, 0, "strict mode never kills");
    assert!(
        counts.pending >= 10,
        "the blocked group's ten stay pending: {counts:?}"
    );
    // Discarding the head unblocks the group.
    assert!(admin.discard(bad_head).await.unwrap());
    rec.set_policy(|_| Ok(()));
    rec.wait_for(LIMIT, "bad group drained after discard", |l| {
        l.iter().filter(|d| d.ok).count() == 19
    })
    .await;
    relay.shutdown().await.unwrap();
    assert!(!rec.confirmed().contains(&bad_head));
    assert_group_order(&rec.snapshot());
}

#[tokio::test]
async fn n_mode_dead_letters_and_retry_dead_keeps_the_id() {
    let (_dir, ds) = sqlite();
    let mut cfg = fast_config("nmode");
    cfg.max_attempts = MaxAttempts::Limit(3);
    let outbox = Outbox::open(ds, cfg).await.unwrap();
    let ids = publish(&outbox, msgs(&["g"], 5)).await;
    let poison = ids[1];
    let rec = Recorder::new();
    rec.set_policy(move |m| {
        if m.id == poison {
            Err(CamelError::processor("poison"))
        } else {
            Ok(())
        }
    });
    let relay = rec.spawn(outbox.clone());
    rec.wait_for(LIMIT, "the group to move past the dead message", |l| {
        l.iter().filter(|d| d.ok).count() == 4
    })
    .await;
    let log = rec.snapshot();
    assert_eq!(
        log.iter().filter(|d| d.id == poison).count(),
        3,
        "three attempts, then dead"
    );
    let first_after = log.iter().position(|d| d.id == ids[2]).unwrap();
    let last_poison = log.iter().rposition(|d| d.id == poison).unwrap();
    assert!(
        last_poison < first_after,
        "the group waited for the poison message to die"
    );
    let admin = OutboxAdmin::from_config(outbox.datasource().clone(), outbox.config()).unwrap();
    // The dead row moved before its group went on; confirmed rows may still wait for
    // their delete batch, so `pending` is checked after the relay stops.
    assert_eq!(admin.counts().await.unwrap().dead, 1);
    rec.set_policy(|_| Ok(()));
    assert_eq!(admin.retry_dead(DeadSelection::All).await.unwrap(), 1);
    rec.wait_for(LIMIT, "the revived message", |l| {
        l.iter().any(|d| d.id == poison && d.ok)
    })
    .await;
    let revived = rec
        .snapshot()
        .into_iter()
        .find(|d| d.id == poison && d.ok)
        .unwrap();
    assert_eq!(revived.attempt, 1, "attempts start over");
    relay.shutdown().await.unwrap();
    let counts = admin.counts().await.unwrap();
    assert_eq!((counts.pending, counts.dead), (0, 0));
    // Discard also removes dead messages.
    assert!(!admin.discard(poison).await.unwrap(), "gone already");
}

#[tokio::test]
async fn none_mode_lets_later_messages_of_a_group_pass_a_failure() {
    let (_dir, ds) = sqlite();
    let mut cfg = fast_config("unordered");
    cfg.ordering = Ordering::None;
    let outbox = Outbox::open(ds, cfg).await.unwrap();
    let ids = publish(&outbox, msgs(&["g"], 4)).await;
    let first = ids[0];
    let rec = Recorder::new();
    rec.set_policy(move |m| {
        if m.id == first && m.attempts < 2 {
            Err(CamelError::processor("later"))
        } else {
            Ok(())
        }
    });
    let relay = rec.spawn(outbox.clone());
    rec.wait_for(LIMIT, "all four", |l| {
        l.iter().filter(|d| d.ok).count() == 4
    })
    .await;
    relay.shutdown().await.unwrap();
    let confirmed = rec.confirmed();
    assert_eq!(
        confirmed.last(),
        Some(&first),
        "the failing one went last: {confirmed:?}"
    );
}

#[tokio::test]
async fn total_mode_stops_everything_behind_a_failure() {
    let (_dir, ds) = sqlite();
    let mut cfg = fast_config("total");
    cfg.ordering = Ordering::Total;
    let outbox = Outbox::open(ds, cfg).await.unwrap();
    let ids = publish(&outbox, msgs(&["a", "b"], 3)).await;
    let head = ids[0];
    let rec = Recorder::new();
    rec.set_policy(move |m| {
        if m.id == head && m.attempts < 2 {
            Err(CamelError::processor("x"))
        } else {
            Ok(())
        }
    });
    let relay = rec.spawn(outbox.clone());
    rec.wait_for(LIMIT, "all six", |l| l.iter().filter(|d| d.ok).count() == 6)
        .await;
    relay.shutdown().await.unwrap();
    let log = rec.snapshot();
    assert_eq!(rec.confirmed(), ids, "one global order");
    assert!(
        log[..3].iter().all(|d| d.id == head),
        "nothing passed the failing head: {log:?}"
    );
}

#[tokio::test]
async fn refusals_are_not_attempts() {
    // RetryAfter is back-pressure (a full queue downstream), not a failure: it must not
    // use up max_attempts. Two refusals then one real failure, with max_attempts 2: the
    // message is not dead, and its next try is its second attempt.
    let (_dir, ds) = sqlite();
    let mut cfg = fast_config("retryafter");
    cfg.max_attempts = MaxAttempts::Limit(2);
    let outbox = Outbox::open(ds, cfg).await.unwrap();
    publish(&outbox, msgs(&["g"], 1)).await;
    let rec = Recorder::new();
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    rec.set_policy(
        move |_| match calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
            0 | 1 => Err(CamelError::RetryAfter {
                ms: 5,
                reason: camel_api::RetryReason::Entries,
            }),
            2 => Err(CamelError::processor("a real failure")),
            _ => Ok(()),
        },
    );
    let relay = rec.spawn(outbox.clone());
    rec.wait_for(LIMIT, "delivery after two refusals and a failure", |l| {
        l.iter().any(|d| d.ok)
    })
    .await;
    relay.shutdown().await.unwrap();
    let attempts: Vec<u32> = rec.snapshot().iter().map(|d| d.attempt).collect();
    assert_eq!(
        attempts,
        vec![1, 1, 1, 2],
        "refusals leave the attempt count alone"
    );
}

#[tokio::test]
async fn changing_partitions_on_a_backlog_is_refused_until_drained() {
    let (_dir, ds) = sqlite();
    let outbox = Outbox::open(ds.clone(), fast_config("parts"))
        .await
        .unwrap();
    publish(&outbox, msgs(&["a"], 2)).await;
    let mut four = fast_config("parts");
    four.partitions = 4;
    let err = Outbox::open(ds.clone(), four.clone()).await.unwrap_err();
    assert!(matches!(
        err,
        OutboxError::PartitionsChanged {
            stored: 1,
            configured: 4,
            pending: 2,
            ..
        }
    ));
    assert!(
        err.to_string().contains("pending 0"),
        "says how to fix it: {err}"
    );
    let rec = Recorder::new();
    let relay = rec.spawn(outbox);
    rec.wait_for(LIMIT, "drain", |l| l.iter().filter(|d| d.ok).count() == 2)
        .await;
    relay.shutdown().await.unwrap();
    let reopened = Outbox::open(ds, four)
        .await
        .expect("an empty outbox may change partitions");
    assert_eq!(reopened.config().partitions, 4);
}

/// A worker once went to sleep with messages ready in memory when deliveries finished
/// while it was scanning: only the poll timer woke it again. With polling and sweeping
/// an hour apart, a backlog that needs many scans must still drain at once.
#[tokio::test]
async fn a_backlog_drains_without_waiting_for_the_poll_timer() {
    use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
    use std::sync::Arc;

    let (_dir, ds) = sqlite();
    let mut cfg = fast_config("nopoll");
    cfg.poll_interval = Duration::from_secs(3600);
    cfg.sweep_interval = Duration::from_secs(3600);
    cfg.batch_size = 50;
    let outbox = Outbox::open(ds, cfg).await.unwrap();
    let groups: Vec<String> = (0..200).map(|g| format!("g{g}")).collect();
    let groups: Vec<&str> = groups.iter().map(String::as_str).collect();
    let total = publish(&outbox, msgs(&groups, 10)).await.len();
    let seen = Arc::new(AtomicUsize::new(0));
    let all = Arc::new(tokio::sync::Notify::new());
    let relay = {
        let (seen, all) = (seen.clone(), all.clone());
        camel_outbox::Relay::new(outbox.clone(), move |_| {
            if seen.fetch_add(1, AtomicOrdering::SeqCst) + 1 == total {
                all.notify_one();
            }
            async { Ok(()) }
        })
        .spawn()
    };
    let drained = tokio::time::timeout(LIMIT, all.notified()).await;
    let delivered = seen.load(AtomicOrdering::SeqCst);
    relay.shutdown().await.unwrap();
    assert!(
        drained.is_ok(),
        "only {delivered} of {total} delivered within {LIMIT:?}: the worker waited for its poll timer"
    );
}

/// A delivery that panics, when the handler is called, at its first poll (run inline by
/// the worker) or later (on its own task), is a failed attempt like an error: the message
/// is retried and the relay goes on.
#[tokio::test]
async fn a_panicking_delivery_is_a_failed_attempt() {
    use std::sync::{Arc, Mutex};

    let (_dir, ds) = sqlite();
    let outbox = Outbox::open(ds, fast_config("panics")).await.unwrap();
    let ids = publish(&outbox, msgs(&["call", "now", "later"], 2)).await;
    let attempts: Arc<Mutex<Vec<(i64, u32)>>> = Arc::default();
    let confirmed = Arc::new(tokio::sync::Notify::new());
    let relay = {
        let (attempts, confirmed) = (attempts.clone(), confirmed.clone());
        camel_outbox::Relay::new(outbox.clone(), move |m| {
            let first = m.attempts == 0;
            let group = m.group_key.clone().unwrap_or_default();
            if first && group == "call" {
                panic!("handler panicked before making its future");
            }
            let (attempts, confirmed) = (attempts.clone(), confirmed.clone());
            async move {
                if first && group == "now" {
                    panic!("route panicked at once");
                }
                if first {
                    tokio::task::yield_now().await;
                    panic!("route panicked after an await");
                }
                let mut log = attempts.lock().unwrap();
                log.push((m.id, m.attempts));
                if log.len() == 6 {
                    confirmed.notify_one();
                }
                Ok(())
            }
        })
        .spawn()
    };
    let done = tokio::time::timeout(LIMIT, confirmed.notified()).await;
    relay.shutdown().await.unwrap();
    assert!(done.is_ok(), "confirmed: {:?}", attempts.lock().unwrap());
    let mut log = attempts.lock().unwrap().clone();
    log.sort_unstable();
    let expected: Vec<(i64, u32)> = ids.iter().map(|id| (*id, 1)).collect();
    assert_eq!(
        log, expected,
        "each message confirmed on its second attempt"
    );
}
