//! A fault on a real PostgreSQL: the connections holding the partition locks are killed
//! (`pg_terminate_backend`) while deliveries are in flight. The workers must stop before
//! changing a row, win their partitions back, and deliver everything: nothing lost, per
//! group first deliveries in id order, duplicates only of what was in flight or confirmed
//! and not yet deleted.
//!
//! Its own test binary, so no other test's relay shares the database session list.

mod common;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use camel_outbox::admin::OutboxAdmin;
use camel_outbox::{Datasource, NewMessage, Outbox, Relay};
use common::*;
use tokio::sync::{watch, Notify};

const LIMIT: Duration = Duration::from_secs(60);

/// A condition over the delivery log: (id, group) per delivery, in order.
type LogCondition = Box<dyn Fn(&[(i64, String)]) -> bool + Send>;

#[tokio::test]
async fn killed_lock_connections_lose_nothing_and_keep_group_order() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    // Tag this test's sessions so only they are killed.
    let app = format!("camel_fault_{}", std::process::id());
    let sep = if url.contains('?') { '&' } else { '?' };
    let ds = Datasource::connect(&format!("{url}{sep}application_name={app}")).unwrap();
    let Datasource::Postgres(pool) = ds.clone() else {
        panic!("CAMEL_TEST_PG_URL must be a postgres URL")
    };
    let name = unique("ob_fault");
    let mut cfg = fast_config(&name);
    cfg.partitions = 2;
    let outbox = Outbox::open(ds.clone(), cfg.clone()).await.unwrap();
    let messages: Vec<_> = (0..1000)
        .map(|i| NewMessage::text(format!("m{i}")).group(format!("g{}", i % 20)))
        .collect();
    let ids: HashSet<i64> = publish(&outbox, messages).await.into_iter().collect();

    // The first 300 deliveries pass at once; later ones wait until the connections are
    // killed, so the kill lands with deliveries in flight.
    let log: Arc<Mutex<Vec<(i64, String)>>> = Arc::default();
    let changed = Arc::new(Notify::new());
    let (killed_tx, killed_rx) = watch::channel(false);
    let relay = {
        let (log, changed) = (log.clone(), changed.clone());
        Relay::new(outbox.clone(), move |m| {
            let (log, changed) = (log.clone(), changed.clone());
            let mut killed = killed_rx.clone();
            async move {
                let passed = log.lock().unwrap().len();
                if passed >= 300 {
                    let _ = killed.wait_for(|k| *k).await;
                }
                log.lock()
                    .unwrap()
                    .push((m.id, m.group_key.clone().unwrap_or_default()));
                changed.notify_waiters();
                Ok(())
            }
        })
        .spawn()
    };
    let wait_until = |cond: LogCondition| {
        let (log, changed) = (log.clone(), changed.clone());
        async move {
            let deadline = tokio::time::Instant::now() + LIMIT;
            loop {
                let notified = changed.notified();
                if cond(&log.lock().unwrap()) {
                    return;
                }
                if tokio::time::timeout_at(deadline, notified).await.is_err() {
                    panic!("timed out; {} deliveries", log.lock().unwrap().len());
                }
            }
        }
    };
    wait_until(Box::new(|l| l.len() >= 300)).await;

    // Both workers own their partitions by now on an idle machine; on a loaded one the
    // second may still be taking its lock. (PostgreSQL cannot notify us of that, so ask
    // again without sleeping.)
    let holders = "SELECT count(*) FROM pg_stat_activity a
         WHERE a.application_name = $1 AND a.pid <> pg_backend_pid()
           AND a.pid IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted)";
    let deadline = Instant::now() + LIMIT;
    loop {
        let n: i64 = sqlx::query_scalar(holders)
            .bind(&app)
            .fetch_one(&pool)
            .await
            .unwrap();
        if n == 2 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{n} lock holders after {LIMIT:?}"
        );
        tokio::task::yield_now().await;
    }
    let killed: Vec<i32> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(a.pid)::int FROM pg_stat_activity a
         WHERE a.application_name = $1 AND a.pid <> pg_backend_pid()
           AND a.pid IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory')",
    )
    .bind(&app)
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(killed.len(), 2, "one lock-holding session per partition");
    let cut = Instant::now();
    let _ = killed_tx.send(true);

    let all = ids.clone();
    wait_until(Box::new(move |l| {
        let seen: HashSet<i64> = l.iter().map(|(id, _)| *id).collect();
        all.is_subset(&seen)
    }))
    .await;
    // Everything was delivered, but the rows confirmed through a killed session were not
    // deleted: the workers must win their partitions back, re-deliver those, and delete.
    // (PostgreSQL cannot notify us when a table empties, so ask again without sleeping.)
    let admin = OutboxAdmin::from_config(ds.clone(), &cfg).unwrap();
    let deadline = Instant::now() + LIMIT;
    while admin.counts().await.unwrap().pending > 0 {
        assert!(Instant::now() < deadline, "rows left after {LIMIT:?}");
        tokio::task::yield_now().await;
    }
    let recovered = cut.elapsed();
    relay.shutdown().await.unwrap();

    let log = log.lock().unwrap().clone();
    // Per group, first deliveries in id order.
    let mut seen = HashSet::new();
    let mut last: std::collections::HashMap<String, i64> = Default::default();
    for (id, group) in &log {
        if seen.insert(*id) {
            if let Some(prev) = last.insert(group.clone(), *id) {
                assert!(prev < *id, "group {group}: {id} delivered after {prev}");
            }
        }
    }
    let duplicates = log.len() - seen.len();
    println!(
        "connection loss: 2 lock sessions killed after 300 of 1000 deliveries; every row \
         delivered and deleted {recovered:?} later; {duplicates} duplicate deliveries \
         (rows confirmed through a killed session are delivered again)"
    );
    assert!(seen.is_superset(&ids) && seen.len() == ids.len());
    drop_tables(&ds, &format!("camel_outbox_{name}")).await;
}
