//! `discard` and `retry_dead` take effect at once, not at the held message's retry time
//! or the next sweep: in this process through [`Outbox::admin`], in another process at
//! the next poll, and on PostgreSQL with `listen_notify` at once.
//!
//! Backoff, sweep (and, where the test says so, polling) are an hour away, so a test can
//! only pass if the change itself wakes the worker.

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

/// Publishes a head and a follower in one group; the head always fails. Returns both ids
/// once the head failed (the group is then blocked for an hour).
async fn blocked_group(outbox: &Outbox, rec: &Recorder) -> (i64, i64) {
    rec.set_policy(|m| {
        if m.payload.as_ref() == b"head" {
            Err(CamelError::processor("poison"))
        } else {
            Ok(())
        }
    });
    let ids = publish(
        outbox,
        vec![
            NewMessage::text("head").group("g"),
            NewMessage::text("next").group("g"),
        ],
    )
    .await;
    rec.wait_for(LIMIT, "the head to fail", |l| l.iter().any(|d| !d.ok))
        .await;
    (ids[0], ids[1])
}

async fn discard_unblocks(ds: Datasource, cfg: OutboxConfig, separate_admin: bool) {
    let outbox = Outbox::open(ds.clone(), cfg.clone()).await.unwrap();
    let rec = Recorder::new();
    let relay = rec.spawn(outbox.clone());
    let (head, next) = blocked_group(&outbox, &rec).await;
    if cfg.listen_notify {
        wait_for_listener(&ds, outbox.table().as_str()).await;
    }
    let admin = if separate_admin {
        OutboxAdmin::from_config(ds.clone(), &cfg).unwrap()
    } else {
        outbox.admin()
    };
    assert!(admin.discard(head).await.unwrap());
    rec.wait_for(LIMIT, "the follower after the discard", |l| {
        l.iter().any(|d| d.id == next && d.ok)
    })
    .await;
    relay.shutdown().await.unwrap();
    drop_tables(&ds, outbox.table().as_str()).await;
}

/// Waits until the relay's listener has run `LISTEN` on the outbox's channel: a
/// notification sent before that is lost (the next poll would find the change).
async fn wait_for_listener(ds: &Datasource, table: &str) {
    let Datasource::Postgres(pool) = ds else {
        return;
    };
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let listening: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity WHERE query ILIKE 'LISTEN%' || $1 || '%'",
        )
        .bind(format!("{table}_wake"))
        .fetch_one(pool)
        .await
        .unwrap();
        if listening > 0 {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "no LISTEN");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn discarding_a_blocked_head_lets_its_group_go_on_at_once() {
    let (_dir, ds) = sqlite();
    let mut cfg = slow_retries("discard_local");
    cfg.poll_interval = HOUR;
    discard_unblocks(ds, cfg, false).await;
}

#[tokio::test]
async fn another_process_discarding_is_heard_at_the_next_poll() {
    let (_dir, ds) = sqlite();
    // fast_config polls every 50 ms.
    discard_unblocks(ds, slow_retries("discard_remote"), true).await;
}

#[tokio::test]
async fn on_postgres_with_listen_notify_another_process_is_heard_at_once() {
    let Some(ds) = postgres() else { return };
    let mut cfg = slow_retries(&unique("ob_discard"));
    cfg.poll_interval = HOUR;
    cfg.listen_notify = true;
    discard_unblocks(ds, cfg, true).await;
}

#[tokio::test]
async fn a_revived_message_goes_out_at_once() {
    let (_dir, ds) = sqlite();
    let mut cfg = slow_retries("revive");
    cfg.poll_interval = HOUR;
    cfg.max_attempts = MaxAttempts::Limit(1);
    let outbox = Outbox::open(ds.clone(), cfg).await.unwrap();
    let rec = Recorder::new();
    rec.set_policy(|m| {
        if m.attempts == 0 && m.retry_at_ms.is_none() {
            Err(CamelError::processor("first try fails"))
        } else {
            Ok(())
        }
    });
    let relay = rec.spawn(outbox.clone());
    let id = publish(&outbox, vec![NewMessage::text("x").group("g")]).await[0];
    let admin = outbox.admin();
    rec.wait_for(LIMIT, "the failure", |l| l.iter().any(|d| !d.ok))
        .await;
    // The failure is recorded before the row moves to the dead table: wait for the row.
    let deadline = tokio::time::Instant::now() + LIMIT;
    while admin.counts().await.unwrap().dead == 0 {
        assert!(tokio::time::Instant::now() < deadline, "never dead");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    rec.set_policy(|_| Ok(()));
    assert_eq!(admin.retry_dead(DeadSelection::All).await.unwrap(), 1);
    rec.wait_for(LIMIT, "the revived message", |l| {
        l.iter().any(|d| d.id == id && d.ok)
    })
    .await;
    relay.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_early_re_read_keeps_a_retry_time_that_has_not_come() {
    // Unordered messages: an admin change re-reads them early; one still in backoff must
    // not go out before its time.
    let (_dir, ds) = sqlite();
    let mut cfg = slow_retries("early");
    cfg.poll_interval = HOUR;
    cfg.ordering = camel_outbox::Ordering::None;
    let outbox = Outbox::open(ds.clone(), cfg).await.unwrap();
    let rec = Recorder::new();
    rec.set_policy(|m| {
        if m.payload.as_ref() == b"after" {
            Ok(())
        } else {
            Err(CamelError::processor("down"))
        }
    });
    let relay = rec.spawn(outbox.clone());
    let ids = publish(
        &outbox,
        vec![NewMessage::text("held"), NewMessage::text("discarded")],
    )
    .await;
    rec.wait_for(LIMIT, "both tried", |l| l.len() >= 2).await;
    // Discarding one of them re-reads what is held; `held` is still in backoff.
    assert!(outbox.admin().discard(ids[1]).await.unwrap());
    let after = publish(&outbox, vec![NewMessage::text("after")]).await[0];
    rec.wait_for(LIMIT, "a later message", |l| {
        l.iter().any(|d| d.id == after)
    })
    .await;
    relay.shutdown().await.unwrap();
    let held_tries = rec.snapshot().iter().filter(|d| d.id == ids[0]).count();
    assert_eq!(held_tries, 1, "the held message waits for its retry time");
}
