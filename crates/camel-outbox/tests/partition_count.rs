//! The stored partition count against running relays (ADR 0033), on PostgreSQL: a relay
//! keeps the count it started with; a process stating another count is refused while the
//! relay runs; a process stating none takes the stored count.

mod common;

use std::time::Duration;

use camel_outbox::{NewMessage, Outbox, OutboxError};
use common::Recorder;

const LIMIT: Duration = Duration::from_secs(20);

#[tokio::test]
async fn a_running_relay_keeps_its_partition_count() {
    let Some(ds) = common::postgres() else {
        return;
    };
    let table = common::unique("ob_parts");
    let mut two = common::fast_config("parts");
    two.table = Some(table.clone());
    two.partitions = 2;
    let outbox = Outbox::open(ds.clone(), two.clone()).await.unwrap();
    let rec = Recorder::new();
    let relay = rec.spawn(outbox.clone());
    // Unordered messages go round-robin: one to each partition. Both delivered means both
    // workers own their partitions.
    common::publish(&outbox, vec![NewMessage::text("a"), NewMessage::text("b")]).await;
    rec.wait_for(LIMIT, "both partitions drained", |l| {
        l.iter().filter(|d| d.ok).count() >= 2
    })
    .await;

    let mut eight = two.clone();
    eight.partitions = 8;
    // The outbox is empty, yet the count may not change under the running relay.
    let err = Outbox::open(ds.clone(), eight.clone()).await.unwrap_err();
    assert!(
        matches!(
            err,
            OutboxError::PartitionsInUse {
                stored: 2,
                configured: 8,
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("partitions = 2"),
        "says how to fix: {err}"
    );

    // A process that does not state a count follows the relay.
    let follower = Outbox::open_with_stored_partitions(ds.clone(), eight.clone())
        .await
        .unwrap();
    assert_eq!(follower.config().partitions, 2);
    let grouped = (0..8)
        .map(|i| NewMessage::text(format!("g{i}")).group(format!("order:{i}")))
        .collect();
    common::publish(&follower, grouped).await;
    rec.wait_for(LIMIT, "every message relayed", |l| {
        l.iter().filter(|d| d.ok).count() >= 10
    })
    .await;

    relay.shutdown().await.unwrap();
    // No relay and nothing pending: now the count may change. The server drops a closed
    // session's advisory locks when its backend exits, a moment after the close.
    let deadline = tokio::time::Instant::now() + LIMIT;
    let changed = loop {
        match Outbox::open(ds.clone(), eight.clone()).await {
            Err(OutboxError::PartitionsInUse { .. }) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await
            }
            other => break other.unwrap(),
        }
    };
    assert_eq!(changed.config().partitions, 8);
    let err = Outbox::open(ds.clone(), two).await;
    assert!(err.is_ok(), "and back, while empty: {err:?}");
    common::drop_tables(&ds, &table).await;
}

#[tokio::test]
async fn a_count_changed_before_the_workers_hold_their_partitions_stops_the_relay() {
    // The window ADR 0033 names: this relay checked the count when it opened, then another
    // process changed it before the workers took their locks. Simulated by changing the
    // stored count between open and run.
    let Some(ds) = common::postgres() else {
        return;
    };
    let camel_outbox::Datasource::Postgres(pool) = ds.clone() else {
        unreachable!()
    };
    let table = common::unique("ob_window");
    let mut two = common::fast_config("window");
    two.table = Some(table.clone());
    two.partitions = 2;
    let outbox = Outbox::open(ds.clone(), two).await.unwrap();
    sqlx::query(&format!(
        "UPDATE {table}_meta SET value = '8' WHERE key = 'partitions'"
    ))
    .execute(&pool)
    .await
    .unwrap();
    let relay = camel_outbox::Relay::new(outbox, |_| async { Ok(()) });
    let run = relay.run(tokio_util::sync::CancellationToken::new());
    let err = tokio::time::timeout(LIMIT, run)
        .await
        .expect("the relay stops by itself")
        .unwrap_err();
    assert!(
        matches!(
            err,
            OutboxError::PartitionsChangedUnderRelay {
                stored: 8,
                running: 2,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("partitions = 8"), "{err}");
    common::drop_tables(&ds, &table).await;
}
