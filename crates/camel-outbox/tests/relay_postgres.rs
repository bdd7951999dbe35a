//! The relay on a real PostgreSQL: partitions, `serialize_writes`, and a blocked head with
//! a long backlog behind it.

mod common;

use std::time::{Duration, Instant};

use camel_api::CamelError;
use camel_outbox::admin::OutboxAdmin;
use camel_outbox::{Datasource, NewMessage, Outbox, OutboxError};
use common::*;

const LIMIT: Duration = Duration::from_secs(60);

#[tokio::test]
async fn four_partitions_deliver_in_group_order_and_refuse_a_new_count() {
    let Some(ds) = postgres() else { return };
    let name = unique("ob_parts");
    let mut cfg = fast_config(&name);
    cfg.partitions = 4;
    let outbox = Outbox::open(ds.clone(), cfg.clone()).await.unwrap();
    let messages: Vec<_> = (0..200)
        .map(|i| {
            NewMessage::text(format!("m{i}"))
                .group(format!("g{}", i % 10))
                .header("n", i)
        })
        .collect();
    publish(&outbox, messages).await;
    let mut two = cfg.clone();
    two.partitions = 2;
    let refused = Outbox::open(ds.clone(), two).await.unwrap_err();
    assert!(matches!(
        refused,
        OutboxError::PartitionsChanged {
            stored: 4,
            configured: 2,
            ..
        }
    ));
    let rec = Recorder::new();
    let relay = rec.spawn(outbox.clone());
    rec.wait_for(LIMIT, "200 confirmations", |l| {
        l.iter().filter(|d| d.ok).count() == 200
    })
    .await;
    relay.shutdown().await.unwrap();
    assert_group_order(&rec.snapshot());
    let admin = OutboxAdmin::from_config(ds.clone(), &cfg).unwrap();
    assert_eq!(admin.counts().await.unwrap().pending, 0);
    drop_tables(&ds, &format!("camel_outbox_{name}")).await;
}

/// Polls PostgreSQL until a session waits on an advisory lock (PostgreSQL cannot notify
/// us of that, so this asks again without sleeping in between).
async fn wait_for_lock_waiter(ds: &Datasource) {
    let Datasource::Postgres(pool) = ds else {
        return;
    };
    for _ in 0..100_000 {
        let waiting: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
        )
        .fetch_one(pool)
        .await
        .unwrap();
        if waiting > 0 {
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("no publisher ever waited on the group lock");
}

async fn two_writers(serialize: bool) -> (Vec<i64>, i64, i64) {
    let Some(ds) = postgres() else {
        return (vec![], 0, 0);
    };
    let Datasource::Postgres(pool) = ds.clone() else {
        unreachable!()
    };
    let name = unique("ob_ser");
    let mut cfg = fast_config(&name);
    cfg.serialize_writes = serialize;
    let outbox = Outbox::open(ds.clone(), cfg).await.unwrap();
    let rec = Recorder::new();
    let relay = rec.spawn(outbox.clone());
    let mut first = pool.begin().await.unwrap();
    let first_id = outbox
        .publish(&mut first, NewMessage::text("first").group("g"))
        .await
        .unwrap();
    let second = {
        let (outbox, pool) = (outbox.clone(), pool.clone());
        tokio::spawn(async move {
            let mut tx = pool.begin().await.unwrap();
            let id = outbox
                .publish(&mut tx, NewMessage::text("second").group("g"))
                .await
                .unwrap();
            outbox.commit(tx).await.unwrap();
            id
        })
    };
    let second_id = if serialize {
        // The second publisher queues on the group lock until the first commits.
        wait_for_lock_waiter(&ds).await;
        outbox.commit(first).await.unwrap();
        second.await.unwrap()
    } else {
        // The second transaction inserts after the first but commits before it. Its
        // row waits behind the first transaction (ADR 0032) until that one commits.
        let id = second.await.unwrap();
        outbox.commit(first).await.unwrap();
        id
    };
    rec.wait_for(LIMIT, "both messages", |l| {
        l.iter().filter(|d| d.ok).count() == 2
    })
    .await;
    relay.shutdown().await.unwrap();
    drop_tables(&ds, &format!("camel_outbox_{name}")).await;
    (rec.confirmed(), first_id, second_id)
}

#[tokio::test]
async fn serialize_writes_delivers_in_commit_order() {
    let (order, first, second) = two_writers(true).await;
    if order.is_empty() {
        return;
    }
    assert!(
        first < second,
        "the waiting publisher got its id after the first committed"
    );
    assert_eq!(
        order,
        vec![first, second],
        "commit order = id order = delivery order"
    );
}

#[tokio::test]
async fn without_serialize_writes_delivery_follows_insertion_not_commit() {
    let (order, first, second) = two_writers(false).await;
    if order.is_empty() {
        return;
    }
    // The second row committed first, but it was inserted after the first row, whose
    // transaction was still running: it waits for it (before ADR 0032 it went first,
    // and the lower id came after it).
    assert!(first < second);
    assert_eq!(order, vec![first, second]);
}

#[tokio::test]
async fn a_blocked_head_with_100k_rows_behind_it_does_not_slow_another_group() {
    let Some(ds) = postgres() else { return };
    // Baseline: group `b` alone.
    let alone = deliver_b(&ds, 0).await;
    let behind = deliver_b(&ds, 100_000).await;
    println!("group b (2000 messages): alone {alone:?}, beside a blocked head with 100000 rows behind it {behind:?}");
    assert!(
        behind < alone * 3 + Duration::from_millis(500),
        "blocked backlog slowed another group: {behind:?} vs {alone:?}"
    );
}

/// Publishes `backlog` rows of a failing group `a`, waits until its head failed, then
/// times the delivery of 2,000 messages of group `b`.
async fn deliver_b(ds: &Datasource, backlog: usize) -> Duration {
    let name = unique("ob_block");
    let mut cfg = fast_config(&name);
    cfg.backoff.min = Duration::from_secs(30);
    cfg.backoff.max = Duration::from_secs(30);
    let outbox = Outbox::open(ds.clone(), cfg).await.unwrap();
    let rec = Recorder::new();
    rec.set_policy(|m| match m.group_key.as_deref() {
        Some("a") => Err(CamelError::processor("down")),
        _ => Ok(()),
    });
    let relay = rec.spawn(outbox.clone());
    if backlog > 0 {
        for chunk in 0..backlog.div_ceil(10_000) {
            let n = (backlog - chunk * 10_000).min(10_000);
            publish(
                &outbox,
                (0..n)
                    .map(|i| NewMessage::bytes(vec![0u8; 16]).group("a").header("i", i))
                    .collect(),
            )
            .await;
        }
        rec.wait_for(LIMIT, "the head of a to fail", |l| l.iter().any(|d| !d.ok))
            .await;
    }
    let started = Instant::now();
    publish(
        &outbox,
        (0..2000)
            .map(|i| NewMessage::text(format!("b{i}")).group("b"))
            .collect(),
    )
    .await;
    rec.wait_for(LIMIT, "group b", |l| {
        l.iter().filter(|d| d.ok).count() == 2000
    })
    .await;
    let took = started.elapsed();
    relay.shutdown().await.unwrap();
    let log = rec.snapshot();
    assert_eq!(
        log.iter()
            .filter(|d| d.group.as_deref() == Some("a"))
            .map(|d| d.id)
            .collect::<std::collections::HashSet<_>>()
            .len(),
        usize::from(backlog > 0),
        "only a's head ever went out"
    );
    drop_tables(ds, &format!("camel_outbox_{name}")).await;
    took
}
