//! The frontier scan on a real PostgreSQL, with transactions committing out of id order
//! (ADR 0032). Driven statement by statement, so every interleaving is exact.

use sqlx::{Connection, PgConnection};

use super::*;
use crate::{Datasource, NewMessage, Outbox, OutboxConfig};

struct Fixture {
    outbox: Outbox,
    pool: PgPool,
    store: PgPartition,
}

async fn fixture() -> Option<Fixture> {
    let url = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL")?;
    let ds = Datasource::connect(&url).unwrap();
    let Datasource::Postgres(pool) = ds.clone() else {
        unreachable!("a postgres URL")
    };
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = format!(
        "horizon_{}_{n}_{:x}",
        std::process::id(),
        crate::message::now_ms()
    );
    let outbox = Outbox::open(ds, OutboxConfig::new(&name)).await.unwrap();
    let conn = PgConnection::connect_with(&pool.connect_options())
        .await
        .unwrap();
    let store = PgPartition::new(conn, outbox.table().clone(), 0);
    Some(Fixture {
        outbox,
        pool,
        store,
    })
}

impl Fixture {
    async fn publish(&self, tx: &mut sqlx::Transaction<'_, sqlx::Postgres>, group: &str) -> i64 {
        self.outbox
            .publish(tx, NewMessage::text("x").group(group))
            .await
            .unwrap()
    }

    /// Reads from `frontier` until nothing more comes back; returns the ids read and
    /// whether the last page was held back.
    async fn read(&mut self, frontier: &mut Position) -> (Vec<i64>, bool) {
        let mut ids = Vec::new();
        loop {
            let page = self.store.scan(*frontier, 100, &[]).await.unwrap();
            if let Some(last) = page.rows.last() {
                *frontier = last.at;
            }
            ids.extend(page.rows.iter().map(|r| r.message.id));
            if !page.full(100) {
                return (ids, page.held_back);
            }
        }
    }

    /// Reads until `n` rows came back in all. Transactions of other tests (or of anything
    /// else on the server) can hold rows back for a moment: the horizon is cluster-wide.
    async fn read_all(&mut self, frontier: &mut Position, n: usize) -> Vec<i64> {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
        let mut ids = Vec::new();
        while ids.len() < n {
            assert!(
                tokio::time::Instant::now() < deadline,
                "only {ids:?} came back"
            );
            let (more, held_back) = self.read(frontier).await;
            ids.extend(more);
            if held_back {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        }
        ids
    }

    async fn drop(self) {
        for t in [
            self.outbox.table().to_string(),
            self.outbox.table().dead(),
            self.outbox.table().meta(),
        ] {
            sqlx::query(&format!("DROP TABLE {t}"))
                .execute(&self.pool)
                .await
                .unwrap();
        }
    }
}

#[tokio::test]
async fn a_row_committed_late_is_not_passed_over() {
    let Some(mut f) = fixture().await else { return };
    let mut frontier = Position::default();
    // `a` takes the lower id and stays open; `b` (another group) commits first.
    let mut slow = f.pool.begin().await.unwrap();
    let a = f.publish(&mut slow, "slow").await;
    let mut fast = f.pool.begin().await.unwrap();
    let b = f.publish(&mut fast, "fast").await;
    fast.commit().await.unwrap();
    assert!(a < b);
    // Read by id, `b` would move the frontier past `a`. Below the horizon it waits.
    let (ids, held_back) = f.read(&mut frontier).await;
    assert_eq!(ids, Vec::<i64>::new());
    assert!(held_back, "b is held back while a's transaction runs");
    slow.commit().await.unwrap();
    // The slow group publishes again after its first commit: the one-writer case.
    let mut next = f.pool.begin().await.unwrap();
    let c = f.publish(&mut next, "slow").await;
    next.commit().await.unwrap();
    assert_eq!(f.read_all(&mut frontier, 3).await, vec![a, b, c]);
    f.drop().await;
}

#[tokio::test]
async fn an_empty_page_still_says_its_horizon() {
    // What a worker woken by the replication stream relies on: a read made before the
    // announced transaction has ended finds nothing, and its horizon says so.
    let Some(mut f) = fixture().await else { return };
    let mut tx = f.pool.begin().await.unwrap();
    let id = f.publish(&mut tx, "g").await;
    let order: i64 = sqlx::query_scalar(&format!(
        "SELECT tx_order FROM {} WHERE id = $1",
        f.outbox.table()
    ))
    .bind(id)
    .fetch_one(&mut *tx)
    .await
    .unwrap();
    let page = f.store.scan(Position::default(), 100, &[]).await.unwrap();
    assert!(page.rows.is_empty() && !page.held_back);
    assert!(
        page.horizon > 0 && page.horizon <= order,
        "horizon {} with the row's transaction (order {order}) open",
        page.horizon
    );
    tx.commit().await.unwrap();
    // Other tests' transactions can hold the horizon for a moment.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let page = f.store.scan(Position::default(), 100, &[]).await.unwrap();
        if page.horizon > order {
            let ids: Vec<i64> = page.rows.iter().map(|r| r.message.id).collect();
            assert_eq!(ids, vec![id], "past the row's order key, the row is read");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the horizon stays at {}",
            page.horizon
        );
        tokio::task::yield_now().await;
    }
    f.drop().await;
}

#[tokio::test]
async fn a_rolled_back_transaction_releases_the_horizon() {
    let Some(mut f) = fixture().await else { return };
    let mut frontier = Position::default();
    let mut doomed = f.pool.begin().await.unwrap();
    f.publish(&mut doomed, "g").await;
    let mut ok = f.pool.begin().await.unwrap();
    let b = f.publish(&mut ok, "h").await;
    ok.commit().await.unwrap();
    let first = f.read(&mut frontier).await;
    assert_eq!(first, (vec![], true), "b waits for the open transaction");
    doomed.rollback().await.unwrap();
    assert_eq!(f.read_all(&mut frontier, 1).await, vec![b]);
    f.drop().await;
}

#[tokio::test]
async fn an_unrelated_open_transaction_holds_rows_back_and_is_named() {
    let Some(mut f) = fixture().await else { return };
    let mut frontier = Position::default();
    // A transaction that wrote something elsewhere (here: its own temp table) and stays
    // open, like a forgotten BEGIN in a console.
    let mut other = f.pool.begin().await.unwrap();
    let xid: i64 = sqlx::query_scalar("SELECT pg_current_xact_id()::text::bigint")
        .fetch_one(&mut *other)
        .await
        .unwrap();
    let mut tx = f.pool.begin().await.unwrap();
    let id = f.publish(&mut tx, "g").await;
    tx.commit().await.unwrap();
    let page = f.store.scan(frontier, 100, &[]).await.unwrap();
    assert!(page.held_back && page.rows.is_empty());
    // Another test's transaction may be older still.
    assert!(page.horizon <= xid, "{} > {xid}", page.horizon);
    let who = f.store.describe_horizon(xid).await.unwrap();
    let who = who.expect("the open transaction is found in pg_stat_activity");
    assert!(who.starts_with("pid ") && who.contains("open for"), "{who}");
    other.commit().await.unwrap();
    assert_eq!(f.read_all(&mut frontier, 1).await, vec![id]);
    f.drop().await;
}

#[tokio::test]
async fn a_version_1_table_is_upgraded_and_its_rows_read_first() {
    let Some(f) = fixture().await else { return };
    let t = f.outbox.table().clone();
    // Make the table look like version 1: no order column, version "1".
    sqlx::query(&format!("DROP INDEX {t}_order"))
        .execute(&f.pool)
        .await
        .unwrap();
    sqlx::query(&format!("ALTER TABLE {t} DROP COLUMN tx_order"))
        .execute(&f.pool)
        .await
        .unwrap();
    sqlx::query(&format!(
        "UPDATE {} SET value = '1' WHERE key = 'schema_version'",
        t.meta()
    ))
    .execute(&f.pool)
    .await
    .unwrap();
    sqlx::query(&format!(
        "INSERT INTO {t} (partition_no, group_key, payload, created_at) VALUES (0, 'g', 'old', 0)"
    ))
    .execute(&f.pool)
    .await
    .unwrap();
    let outbox = Outbox::open(
        Datasource::Postgres(f.pool.clone()),
        f.outbox.config().clone(),
    )
    .await
    .unwrap();
    let version = Datasource::Postgres(f.pool.clone())
        .meta(&t, "schema_version")
        .await
        .unwrap();
    assert_eq!(version.as_deref(), Some(schema::SCHEMA_VERSION));
    let mut tx = f.pool.begin().await.unwrap();
    let new = outbox
        .publish(&mut tx, NewMessage::text("new").group("g"))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut f = Fixture { outbox, ..f };
    let mut frontier = Position::default();
    let ids = f.read_all(&mut frontier, 2).await;
    assert!(ids[0] < new && ids[1] == new, "{ids:?}");
    f.drop().await;
}
