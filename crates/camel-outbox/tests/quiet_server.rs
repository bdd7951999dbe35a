//! A row whose order key no read's horizon passes on its own (ADR 0174).
//!
//! A row's order key is the later of its transaction's id and the end of the snapshot its
//! insert ran in, so a transaction that took its id after the publisher and ended before
//! the insert gives the row a key above the publisher's id. Once every transaction has
//! ended, a read's horizon is one past the newest ended id: equal to that key. Rows wait
//! while their key is not below the horizon, and on a server where nothing else takes a
//! transaction id the horizon never moves. This binary has one test so that no other
//! test's writes move it: run alone, it fails without the relay's fix.

mod common;

use std::time::Duration;

use camel_outbox::{Datasource, NewMessage, Outbox};
use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_row_goes_out_when_nothing_else_writes() {
    let Some(ds) = postgres() else { return };
    let Datasource::Postgres(pool) = ds.clone() else {
        unreachable!()
    };
    let name = unique("ob_quiet");
    let mut cfg = fast_config(&name);
    cfg.partitions = 1;
    cfg.sweep_interval = Duration::from_secs(3600);
    let outbox = Outbox::open(ds.clone(), cfg).await.unwrap();
    let rec = Recorder::new();
    let relay = rec.spawn(outbox.clone());

    // The publisher takes its transaction id first …
    let mut tx = pool.begin().await.expect("begin");
    let own: i64 = sqlx::query_scalar("SELECT pg_current_xact_id()::text::bigint")
        .fetch_one(&mut *tx)
        .await
        .expect("xid");
    // … a later transaction takes one and ends before the insert …
    let mut later = pool.begin().await.expect("begin");
    let later_id: i64 = sqlx::query_scalar("SELECT pg_current_xact_id()::text::bigint")
        .fetch_one(&mut *later)
        .await
        .expect("xid");
    later.commit().await.expect("commit");
    let id = outbox
        .publish(&mut tx, NewMessage::text("last").group("g"))
        .await
        .expect("publish");
    let key: i64 = sqlx::query_scalar(&format!(
        "SELECT tx_order FROM camel_outbox_{name} WHERE id = $1"
    ))
    .bind(id)
    .fetch_one(&mut *tx)
    .await
    .expect("key");
    outbox.commit(tx).await.expect("commit");
    assert!(
        key > own && key > later_id,
        "the setup gives the row a key above both ids (own {own}, later {later_id}, key {key})"
    );

    // … and nothing else writes: the relay still delivers the row.
    rec.wait_for(Duration::from_secs(10), "the row", |log| {
        log.iter().any(|d| d.id == id && d.ok)
    })
    .await;
    relay.shutdown().await.unwrap();
    drop_tables(&ds, &format!("camel_outbox_{name}")).await;
}
