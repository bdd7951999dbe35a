//! `logical_replication`: a message another process commits (no local wake-up, no
//! `NOTIFY`) reaches a relay whose polls and sweeps are 60 s apart within a second, in
//! group order; and the relay leaves no replication slot behind.
#![cfg(feature = "replication")]

mod common;

use std::time::Duration;

use camel_outbox::{Datasource, NewMessage, Outbox};
use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inserts_committed_elsewhere_wake_the_relay_through_the_stream() {
    let Some(ds) = postgres() else { return };
    let Datasource::Postgres(pool) = &ds else {
        unreachable!("postgres() is a PostgreSQL datasource")
    };
    let name = unique("wake");
    let mut config = fast_config(&name);
    config.logical_replication = true;
    config.poll_interval = Duration::from_secs(60);
    config.sweep_interval = Duration::from_secs(60);
    let outbox = Outbox::open(ds.clone(), config).await.expect("open");
    let table = outbox.table().as_str().to_string();
    let recorder = Recorder::new();
    let relay = recorder.spawn(outbox.clone());
    // The relay's first read happens at start; wait for its slot, then publish.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let active: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'camel_wake_%' AND active_pid IS NOT NULL AND temporary",
        )
        .fetch_one(pool)
        .await
        .expect("slots");
        if active > 0 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no replication slot"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Committed with plain `commit`: nothing in this process wakes the workers.
    for i in 0..5 {
        let mut tx = pool.begin().await.expect("begin");
        outbox
            .publish(&mut tx, NewMessage::text(format!("m{i}")).group("g"))
            .await
            .expect("publish");
        tx.commit().await.expect("commit");
    }
    recorder
        .wait_for(
            Duration::from_secs(2),
            "five deliveries woken by the stream",
            |log| log.iter().filter(|d| d.ok).count() == 5,
        )
        .await;
    assert_group_order(&recorder.snapshot());
    relay.shutdown().await.expect("shutdown");
    // The slot was temporary: gone with its session.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let left: i64 = sqlx::query_scalar(&format!(
            "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'camel_wake_{}_0'",
            std::process::id()
        ))
        .fetch_one(pool)
        .await
        .expect("slots");
        if left == 0 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the slot outlived the relay"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _ = sqlx::query(&format!("DROP PUBLICATION IF EXISTS {table}_wake"))
        .execute(pool)
        .await;
    drop_tables(&ds, &table).await;
}
