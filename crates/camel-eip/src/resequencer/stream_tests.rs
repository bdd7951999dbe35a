use std::time::Duration;

use camel_api::Value;

use super::*;

fn config() -> StreamConfig {
    StreamConfig {
        sequence: "${header.seq}".into(),
        capacity: 10,
        gap_timeout_ms: 100,
        on_gap: GapPolicy::EmitPartial,
        on_capacity: CapacityPolicy::LogAndDrop,
        dedup: false,
        reject_old: false,
        initial_sequence: Some(1),
        ignore_invalid: false,
        delivery_attempt_interval: None,
    }
}

fn policy(cfg: &StreamConfig) -> StreamPolicy {
    StreamPolicy::new(cfg, true)
}

fn ex(seq: u64) -> Exchange {
    Exchange::default().with_header("seq", seq)
}

fn seq_of(ex: &Exchange) -> u64 {
    ex.header("seq").and_then(Value::as_i64).unwrap_or(-1) as u64
}

/// Delivered numbers and (number, reason) of drops.
fn split(out: Vec<Release>) -> (Vec<u64>, Vec<(u64, DropReason)>) {
    let mut delivered = Vec::new();
    let mut dropped = Vec::new();
    for r in out {
        match r {
            Release::Deliver(e) => delivered.push(seq_of(&e)),
            Release::Drop {
                exchange, reason, ..
            } => dropped.push((seq_of(&exchange), reason)),
        }
    }
    (delivered, dropped)
}

fn feed(p: &mut StreamPolicy, seqs: &[u64], now: Instant) -> Vec<Release> {
    let mut out = Vec::new();
    for &s in seqs {
        p.accept(ex(s), s, now, &mut out);
    }
    out
}

#[test]
fn releases_contiguous_runs() {
    let mut p = policy(&config());
    let now = Instant::now();
    let (d, _) = split(feed(&mut p, &[3, 2, 5], now));
    assert!(d.is_empty());
    assert_eq!(p.held(), 3);
    let (d, _) = split(feed(&mut p, &[1], now));
    assert_eq!(d, [1, 2, 3]);
    let (d, _) = split(feed(&mut p, &[4], now));
    assert_eq!(d, [4, 5]);
    assert_eq!(p.deadline(), None);
}

#[test]
fn gap_timeout_emits_partial_and_rearms() {
    let mut p = policy(&config());
    let t0 = Instant::now();
    feed(&mut p, &[3, 6], t0);
    assert_eq!(p.deadline(), Some(t0 + Duration::from_millis(100)));
    let mut out = Vec::new();
    p.on_deadline(t0 + Duration::from_millis(50), &mut out);
    assert!(out.is_empty(), "not yet due");
    let t1 = t0 + Duration::from_millis(100);
    p.on_deadline(t1, &mut out);
    assert_eq!(split(out).0, [3]);
    assert_eq!(
        p.deadline(),
        Some(t1 + Duration::from_millis(100)),
        "re-armed for 4..5"
    );
    let mut out = Vec::new();
    p.on_deadline(t1 + Duration::from_millis(100), &mut out);
    assert_eq!(split(out).0, [6]);
    assert_eq!(p.deadline(), None);
    // A late number below the watermark is delivered at once without reject_old.
    assert_eq!(split(feed(&mut p, &[2], t1)).0, [2]);
}

#[test]
fn gap_drop_policies_name_the_reason() {
    for (on_gap, dead_letter) in [
        (GapPolicy::DropAndLog, false),
        (GapPolicy::DeadLetter, true),
    ] {
        let mut p = policy(&StreamConfig { on_gap, ..config() });
        let t0 = Instant::now();
        feed(&mut p, &[2, 3, 5], t0);
        let mut out = Vec::new();
        p.on_deadline(t0 + Duration::from_millis(100), &mut out);
        assert_eq!(out.len(), 2);
        for r in &out {
            assert!(
                matches!(r, Release::Drop { reason: DropReason::Gap, dead_letter: d, .. } if *d == dead_letter)
            );
        }
        assert_eq!(p.held(), 1, "5 stays behind the next gap");
    }
}

#[test]
fn without_initial_sequence_the_smallest_within_the_timeout_goes_first() {
    let mut p = policy(&StreamConfig {
        initial_sequence: None,
        ..config()
    });
    let t0 = Instant::now();
    let (d, _) = split(feed(&mut p, &[7, 5, 6, 9], t0));
    assert!(d.is_empty(), "nothing is assumed to come first");
    let mut out = Vec::new();
    p.on_deadline(t0 + Duration::from_millis(100), &mut out);
    assert_eq!(split(out).0, [5, 6, 7]);
    assert_eq!(split(feed(&mut p, &[8], t0)).0, [8, 9]);
}

#[test]
fn reject_old_and_dedup() {
    let mut p = policy(&StreamConfig {
        reject_old: true,
        ..config()
    });
    let now = Instant::now();
    assert_eq!(p.admit(&2), Ok(()), "2 is not below the watermark yet");
    feed(&mut p, &[1, 2], now);
    assert_eq!(
        p.admit(&2),
        Err(ResequenceError::RejectedOld {
            sequence: 2,
            last_delivered: 2
        })
    );
    assert_eq!(p.admit(&3), Ok(()));
    // Accepted without a verdict (carried over a swap): dropped as old, never delivered.
    let (_, dropped) = split(feed(&mut p, &[2], now));
    assert_eq!(dropped, [(2, DropReason::Old)]);

    let mut p = policy(&StreamConfig {
        dedup: true,
        ..config()
    });
    let (d, dropped) = split(feed(&mut p, &[3, 3, 1, 1, 2, 2, 3], now));
    assert_eq!(d, [1, 2, 3]);
    assert_eq!(dropped.len(), 4);
    assert!(dropped.iter().all(|(_, r)| *r == DropReason::Duplicate));
}

#[test]
fn dedup_still_delivers_a_number_skipped_by_a_gap() {
    let mut p = policy(&StreamConfig {
        dedup: true,
        ..config()
    });
    let t0 = Instant::now();
    feed(&mut p, &[1, 3], t0);
    let mut out = Vec::new();
    p.on_deadline(t0 + Duration::from_millis(100), &mut out);
    assert_eq!(split(out).0, [3]);
    assert_eq!(
        split(feed(&mut p, &[2, 2], t0)),
        (vec![2], vec![(2, DropReason::Duplicate)])
    );
}

#[test]
fn capacity_policies() {
    let now = Instant::now();
    let cfg = StreamConfig {
        capacity: 2,
        ..config()
    };
    let mut p = policy(&cfg);
    let (_, dropped) = split(feed(&mut p, &[3, 4, 5], now));
    assert_eq!(dropped, [(5, DropReason::Capacity)]);

    let mut p = policy(&StreamConfig {
        on_capacity: CapacityPolicy::DropOldest,
        ..cfg.clone()
    });
    let (d, dropped) = split(feed(&mut p, &[3, 4, 6], now));
    assert_eq!(dropped, [(3, DropReason::Capacity)]);
    assert_eq!(d, [4], "1..2 given up, 3 dropped, 4 delivered");
    assert_eq!(p.held(), 1);

    let mut p = policy(&StreamConfig {
        on_capacity: CapacityPolicy::DeadLetter,
        ..cfg
    });
    let out = feed(&mut p, &[3, 4, 5], now);
    assert!(matches!(
        out.as_slice(),
        [Release::Drop {
            dead_letter: true,
            reason: DropReason::Capacity,
            ..
        }]
    ));
}

#[test]
fn flush_and_handoff_carry_the_watermark() {
    let now = Instant::now();
    let mut old = policy(&config());
    feed(&mut old, &[1, 4, 3], now);
    let mut out = Vec::new();
    old.flush(&mut out);
    assert_eq!(split(out).0, [3, 4]);
    let state = old.export(false);
    let mut new = policy(&config());
    let mut out = Vec::new();
    new.import(state, now, &mut out);
    assert!(out.is_empty());
    assert_eq!(
        split(feed(&mut new, &[5], now)).0,
        [5],
        "continues after 4, not at 1"
    );

    let mut old = policy(&config());
    feed(&mut old, &[1, 4, 3], now);
    let state = old.export(true);
    assert_eq!(old.held(), 0);
    let mut new = policy(&config());
    let mut out = Vec::new();
    new.import(state, now, &mut out);
    assert!(out.is_empty());
    assert_eq!(split(feed(&mut new, &[2], now)).0, [2, 3, 4]);
}
