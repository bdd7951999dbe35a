//! Group order on PostgreSQL when transactions commit out of id order (ADR 0032).
//!
//! Many groups, each with one writer that publishes strictly one message at a time, and
//! every transaction holding its insert open for a random moment, so commits land in an
//! order unrelated to the ids. Beside them, unrelated transactions write elsewhere, stay
//! open a while and commit or roll back. The sweep is an hour away: every row must come
//! through the frontier scan, in group order, none left behind.

mod common;

use std::time::Duration;

use camel_outbox::{Datasource, NewMessage, Outbox};
use common::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const GROUPS: usize = 24;
const PER_GROUP: usize = 40;

/// Holds a transaction open for a random moment: a few scheduler turns, or a short timer.
async fn linger(rng: &mut StdRng) {
    match rng.gen_range(0..4) {
        0 => {}
        1 => {
            for _ in 0..rng.gen_range(1..20) {
                tokio::task::yield_now().await;
            }
        }
        _ => tokio::time::sleep(Duration::from_micros(rng.gen_range(100..3_000))).await,
    }
}

async fn writer(outbox: Outbox, pool: sqlx::PgPool, group: String, seed: u64) -> Vec<i64> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut ids = Vec::with_capacity(PER_GROUP);
    for i in 0..PER_GROUP {
        let mut tx = pool.begin().await.expect("begin");
        // Sometimes the transaction writes something else first, so its id is older
        // than its insert.
        if rng.gen_bool(0.3) {
            sqlx::query("SELECT pg_current_xact_id()")
                .execute(&mut *tx)
                .await
                .expect("xid");
            linger(&mut rng).await;
        }
        let id = outbox
            .publish(&mut tx, NewMessage::text(format!("{i}")).group(&group))
            .await
            .expect("publish");
        linger(&mut rng).await;
        outbox.commit(tx).await.expect("commit");
        ids.push(id);
    }
    ids
}

/// Unrelated transactions that take an id, stay open a while, and end either way.
async fn noise(pool: sqlx::PgPool, seed: u64, stop: tokio_util::sync::CancellationToken) {
    let mut rng = StdRng::seed_from_u64(seed);
    while !stop.is_cancelled() {
        let mut tx = pool.begin().await.expect("begin");
        sqlx::query("SELECT pg_current_xact_id()")
            .execute(&mut *tx)
            .await
            .expect("xid");
        linger(&mut rng).await;
        if rng.gen_bool(0.5) {
            tx.commit().await.expect("commit");
        } else {
            tx.rollback().await.expect("rollback");
        }
    }
}

async fn round(ds: &Datasource, seed: u64) {
    let Datasource::Postgres(pool) = ds.clone() else {
        unreachable!()
    };
    let name = unique("ob_late");
    let mut cfg = fast_config(&name);
    cfg.partitions = 2;
    cfg.sweep_interval = Duration::from_secs(3600);
    let outbox = Outbox::open(ds.clone(), cfg).await.unwrap();
    let rec = Recorder::new();
    let relay = rec.spawn(outbox.clone());
    let stop = tokio_util::sync::CancellationToken::new();
    let noise = tokio::spawn(noise(pool.clone(), seed ^ 0x5eed, stop.clone()));
    let mut writers = tokio::task::JoinSet::new();
    for g in 0..GROUPS {
        writers.spawn(writer(
            outbox.clone(),
            pool.clone(),
            format!("g{g}"),
            seed.wrapping_mul(31).wrapping_add(g as u64),
        ));
    }
    let mut published = 0;
    while let Some(ids) = writers.join_next().await {
        published += ids.expect("a writer").len();
    }
    stop.cancel();
    noise.await.expect("noise");
    let all = rec
        .try_wait_for(Duration::from_secs(30), |log| {
            log.iter()
                .filter(|d| d.ok)
                .map(|d| d.id)
                .collect::<std::collections::HashSet<_>>()
                .len()
                == published
        })
        .await;
    if !all {
        // Say which rows stayed behind and what their groups delivered, for the hunt.
        let left: Vec<(i64, i32, Option<String>, i64)> = sqlx::query_as(&format!(
            "SELECT id, partition_no, group_key, tx_order FROM camel_outbox_{name} ORDER BY id"
        ))
        .fetch_all(&pool)
        .await
        .expect("rows left");
        let log = rec.snapshot();
        let mut report = String::new();
        for (id, partition, group, order) in &left {
            let delivered = log.iter().any(|d| d.id == *id && d.ok);
            let of_group: Vec<i64> = log
                .iter()
                .filter(|d| d.group == *group && d.ok)
                .map(|d| d.id)
                .collect();
            report.push_str(&format!(
                "\n  id {id} partition {partition} group {group:?} tx_order {order} delivered {delivered}; group delivered {of_group:?}"
            ));
        }
        panic!(
            "seed {seed}: {} of {published} delivered; rows in the table:{report}",
            log.iter().filter(|d| d.ok).count()
        );
    }
    relay.shutdown().await.unwrap();
    assert_group_order(&rec.snapshot());
    drop_tables(ds, &format!("camel_outbox_{name}")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn commits_out_of_id_order_keep_group_order_and_lose_nothing() {
    let Some(ds) = postgres() else { return };
    for seed in [1, 2, 3] {
        round(&ds, seed).await;
    }
}
