//! Item 8 of the hardening round: a message revived with `retry_dead` behind a group
//! whose head is held in backoff goes out at once (also in strict mode); two publishers
//! of one group are relayed in the order their publishes ran, whatever order they wrote
//! or committed in (PostgreSQL); and messages without a group key in group mode neither
//! block nor wait behind the blocked groups around them.

mod common;

use std::time::Duration;

use camel_api::CamelError;
use camel_outbox::admin::{DeadSelection, OutboxAdmin};
use camel_outbox::{Backoff, Datasource, MaxAttempts, NewMessage, Outbox, OutboxConfig};
use common::*;

const LIMIT: Duration = Duration::from_secs(20);
const HOUR: Duration = Duration::from_secs(3600);

fn slow_retries(name: &str) -> OutboxConfig {
    let mut cfg = fast_config(name);
    cfg.backoff = Backoff {
        min: HOUR,
        max: HOUR,
        jitter: false,
    };
    cfg.sweep_interval = HOUR;
    cfg
}

async fn wait_dead(admin: &OutboxAdmin, n: u64) {
    let deadline = tokio::time::Instant::now() + LIMIT;
    while admin.counts().await.unwrap().dead < n {
        assert!(tokio::time::Instant::now() < deadline, "never dead");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Message 1 of group `g` dies under a dead-letter relay; then a strict relay holds
/// message 2 of `g` in backoff for an hour. Reviving 1 must relay it at once.
async fn revived_behind_a_held_head(ds: Datasource, name: &str, separate_admin: bool) {
    let mut cfg = slow_retries(name);
    cfg.max_attempts = MaxAttempts::Limit(1);
    let first = Outbox::open(ds.clone(), cfg.clone()).await.unwrap();
    let rec = Recorder::new();
    rec.set_policy(|_| Err(CamelError::processor("poison")));
    let relay = rec.spawn(first.clone());
    let dead = publish(&first, vec![NewMessage::text("dead").group("g")]).await[0];
    wait_dead(&first.admin(), 1).await;
    relay.shutdown().await.unwrap();

    cfg.max_attempts = MaxAttempts::Infinity;
    let outbox = Outbox::open(ds.clone(), cfg.clone()).await.unwrap();
    let rec = Recorder::new();
    rec.set_policy(|m| {
        if m.payload.as_ref() == b"held" {
            Err(CamelError::processor("still failing"))
        } else {
            Ok(())
        }
    });
    let relay = rec.spawn(outbox.clone());
    let held = publish(&outbox, vec![NewMessage::text("held").group("g")]).await[0];
    rec.wait_for(LIMIT, "the head to fail", |l| {
        l.iter().any(|d| d.id == held && !d.ok)
    })
    .await;
    let admin = if separate_admin {
        OutboxAdmin::from_config(ds.clone(), &cfg).unwrap()
    } else {
        outbox.admin()
    };
    assert_eq!(
        admin
            .retry_dead(DeadSelection::Ids(vec![dead]))
            .await
            .unwrap(),
        1
    );
    rec.wait_for(Duration::from_secs(5), "the revived message", |l| {
        l.iter().any(|d| d.id == dead && d.ok)
    })
    .await;
    relay.shutdown().await.unwrap();
    let held_tries = rec.snapshot().iter().filter(|d| d.id == held).count();
    assert_eq!(
        held_tries, 1,
        "the held head still waits for its retry time"
    );
    drop_tables(&ds, outbox.table().as_str()).await;
}

#[tokio::test]
async fn sqlite_a_revived_message_behind_a_head_in_backoff_goes_out_at_once() {
    let (_dir, ds) = sqlite();
    revived_behind_a_held_head(ds, "revive_held", false).await;
}

#[tokio::test]
async fn sqlite_a_message_revived_by_another_process_behind_a_held_head_goes_out() {
    let (_dir, ds) = sqlite();
    revived_behind_a_held_head(ds, "revive_held_remote", true).await;
}

#[tokio::test]
async fn postgres_a_revived_message_behind_a_head_in_backoff_goes_out_at_once() {
    let Some(ds) = postgres() else { return };
    revived_behind_a_held_head(ds, &unique("ob_revive_held"), false).await;
}

#[tokio::test]
async fn postgres_a_message_revived_by_another_process_behind_a_held_head_goes_out() {
    let Some(ds) = postgres() else { return };
    revived_behind_a_held_head(ds, &unique("ob_revive_remote"), true).await;
}

/// Two transactions publish to one group with `serialize_writes`: the one that publishes
/// second had begun writing first (its transaction id is the lower one, which without
/// `serialize_writes` can put its row first: see docs/outbox.md). Its publish waits for
/// the first publisher's transaction, and delivery follows the publishes.
async fn later_publisher_wrote_first(first_ends_in_rollback: bool) {
    let Some(ds) = postgres() else { return };
    let Datasource::Postgres(pool) = &ds else {
        unreachable!()
    };
    let mut cfg = fast_config(&unique("ob_wrote_first"));
    cfg.serialize_writes = true;
    let outbox = Outbox::open(ds.clone(), cfg).await.unwrap();
    let rec = Recorder::new();
    let relay = rec.spawn(outbox.clone());
    let mut x = pool.begin().await.unwrap();
    // Stands for a business write: it gives the transaction its id.
    let x_pid: i32 =
        sqlx::query_scalar("SELECT pg_backend_pid() FROM (SELECT pg_current_xact_id()) AS w")
            .fetch_one(&mut *x)
            .await
            .unwrap();
    let mut y = pool.begin().await.unwrap();
    let first = outbox
        .publish(&mut y, NewMessage::text("first").group("g"))
        .await
        .unwrap();
    let publisher = outbox.clone();
    let second = tokio::spawn(async move {
        let id = publisher
            .publish(&mut x, NewMessage::text("second").group("g"))
            .await
            .unwrap();
        publisher.commit(x).await.unwrap();
        id
    });
    // The second publish waits on the group's lock until the first transaction ends.
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let waiting: bool = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = $1 AND locktype = 'advisory' AND NOT granted)",
        )
        .bind(x_pid)
        .fetch_one(pool)
        .await
        .unwrap();
        if waiting {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the second publish never waited"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    if first_ends_in_rollback {
        y.rollback().await.unwrap();
    } else {
        outbox.commit(y).await.unwrap();
    }
    let second = second.await.unwrap();
    assert!(first < second);
    let expected = if first_ends_in_rollback {
        vec![second]
    } else {
        vec![first, second]
    };
    rec.wait_for(LIMIT, "the messages", |l| {
        l.iter().filter(|d| d.ok).count() >= expected.len()
    })
    .await;
    relay.shutdown().await.unwrap();
    assert_eq!(rec.confirmed(), expected, "delivered in publish order");
    drop_tables(&ds, outbox.table().as_str()).await;
}

#[tokio::test]
async fn postgres_serialized_publishers_keep_publish_order_when_the_later_one_wrote_first() {
    later_publisher_wrote_first(false).await;
}

#[tokio::test]
async fn postgres_a_serialized_publisher_goes_on_when_the_first_rolls_back() {
    later_publisher_wrote_first(true).await;
}

/// Many groups whose heads fail (held for an hour) and messages without a key, some of
/// which fail too, published concurrently by several tasks: every ungrouped message that
/// does not fail is delivered while the groups are blocked, and a failing ungrouped
/// message holds back nothing, neither other ungrouped messages nor the groups'
/// followers once their heads succeed.
async fn nil_keys_neither_block_nor_are_blocked(ds: Datasource, name: &str) {
    const GROUPS: usize = 20;
    const UNGROUPED_PER_TASK: usize = 25;
    const TASKS: usize = 4;
    let mut cfg = slow_retries(name);
    cfg.partitions = 2;
    let outbox = Outbox::open(ds.clone(), cfg).await.unwrap();
    let rec = Recorder::new();
    // Heads of the groups and every tenth ungrouped message fail; a failing ungrouped
    // message would wait an hour for its retry.
    rec.set_policy(|m| {
        let body = std::str::from_utf8(&m.payload).unwrap_or("");
        if body.starts_with("head") || body.ends_with("poison") {
            Err(CamelError::processor("poison"))
        } else {
            Ok(())
        }
    });
    let relay = rec.spawn(outbox.clone());
    let heads: Vec<NewMessage> = (0..GROUPS)
        .map(|g| NewMessage::text("head").group(format!("g{g}")))
        .collect();
    let head_ids = publish(&outbox, heads).await;
    rec.wait_for(LIMIT, "every head to fail", |l| {
        head_ids
            .iter()
            .all(|h| l.iter().any(|d| d.id == *h && !d.ok))
    })
    .await;
    // Publishers run at once: followers of the blocked groups interleaved with ungrouped
    // messages.
    let mut tasks = Vec::new();
    for t in 0..TASKS {
        let outbox = outbox.clone();
        tasks.push(tokio::spawn(async move {
            let mut ungrouped = Vec::new();
            let mut poisoned = Vec::new();
            for i in 0..UNGROUPED_PER_TASK {
                let follower =
                    NewMessage::text("follower").group(format!("g{}", (t * 7 + i) % GROUPS));
                let body = if i % 10 == 3 {
                    format!("{t}-{i}-poison")
                } else {
                    format!("{t}-{i}")
                };
                let ids = publish(&outbox, vec![follower, NewMessage::text(body.clone())]).await;
                if body.ends_with("poison") {
                    poisoned.push(ids[1]);
                } else {
                    ungrouped.push(ids[1]);
                }
            }
            (ungrouped, poisoned)
        }));
    }
    let mut ungrouped = Vec::new();
    let mut poisoned = Vec::new();
    for t in tasks {
        let (u, p) = t.await.unwrap();
        ungrouped.extend(u);
        poisoned.extend(p);
    }
    rec.wait_for(LIMIT, "every healthy ungrouped message", |l| {
        ungrouped
            .iter()
            .all(|u| l.iter().any(|d| d.id == *u && d.ok))
    })
    .await;
    let log = rec.snapshot();
    assert!(
        log.iter()
            .all(|d| d.group.is_none() || head_ids.contains(&d.id)),
        "no follower of a blocked group went out"
    );
    let tried: Vec<_> = log.iter().filter(|d| poisoned.contains(&d.id)).collect();
    assert!(
        poisoned
            .iter()
            .all(|p| log.iter().filter(|d| d.id == *p).count() <= 1),
        "a failing ungrouped message waits for its own retry time: {tried:?}"
    );
    // The groups go on once their heads are discarded; the failing ungrouped messages
    // stay held and hold nothing back.
    let admin = outbox.admin();
    for h in &head_ids {
        assert!(admin.discard(*h).await.unwrap());
    }
    let followers = TASKS * UNGROUPED_PER_TASK;
    rec.wait_for(LIMIT, "every follower", |l| {
        l.iter().filter(|d| d.group.is_some() && d.ok).count() >= followers
    })
    .await;
    relay.shutdown().await.unwrap();
    let log = rec.snapshot();
    assert_group_order(&log);
    assert!(
        poisoned
            .iter()
            .all(|p| log.iter().filter(|d| d.id == *p).count() <= 1),
        "the admin changes did not send a failing ungrouped message before its time"
    );
    drop_tables(&ds, outbox.table().as_str()).await;
}

#[tokio::test]
async fn sqlite_ungrouped_messages_neither_block_nor_wait_behind_blocked_groups() {
    let (_dir, ds) = sqlite();
    nil_keys_neither_block_nor_are_blocked(ds, "nil_keys").await;
}

#[tokio::test]
async fn postgres_ungrouped_messages_neither_block_nor_wait_behind_blocked_groups() {
    let Some(ds) = postgres() else { return };
    nil_keys_neither_block_nor_are_blocked(ds, &unique("ob_nil_keys")).await;
}
