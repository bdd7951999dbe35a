//! The lease contract on PostgreSQL (`CAMEL_TEST_PG_URL`), and the fencing check.

mod support;

use std::sync::Arc;

use camel_api::test_support::service_from_env;
use camel_cluster::{check_fence, FenceError, LeaseStore, PostgresLeaseStore};

const TABLE: &str = "camel_cluster_lease_test";

async fn store(url: &str) -> Arc<dyn LeaseStore> {
    Arc::new(
        PostgresLeaseStore::connect(url, TABLE)
            .await
            .expect("connects"),
    )
}

#[tokio::test]
async fn one_of_two_contenders_wins() {
    let Some(url) = service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    support::one_of_two_wins(store(&url).await, store(&url).await).await;
}

#[tokio::test]
async fn a_holder_cut_off_loses_and_the_other_takes_over_with_a_higher_epoch() {
    let Some(url) = service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    support::cut_off_holder_loses_and_the_other_takes_over(store(&url).await, store(&url).await)
        .await;
}

#[tokio::test]
async fn a_stop_releases_the_lease() {
    let Some(url) = service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    support::stop_hands_over_at_once(store(&url).await, store(&url).await).await;
}

#[tokio::test]
async fn the_fence_refuses_a_stale_epoch_and_admits_the_current_one() {
    let Some(url) = service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let s = PostgresLeaseStore::connect(&url, TABLE).await.unwrap();
    let ns = support::unique("fence");
    let first = s
        .try_acquire(&ns, "a", support::LEASE)
        .await
        .unwrap()
        .unwrap();
    let mut tx = s.pool().begin().await.unwrap();
    check_fence(&mut tx, TABLE, &ns, first.epoch)
        .await
        .expect("current epoch admitted");
    tx.rollback().await.unwrap();
    // Expire and take over: the old epoch is refused from then on.
    s.release(&first).await.unwrap();
    let second = s
        .try_acquire(&ns, "b", support::LEASE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second.epoch, first.epoch + 1);
    let mut tx = s.pool().begin().await.unwrap();
    let refused = check_fence(&mut tx, TABLE, &ns, first.epoch).await;
    assert!(
        matches!(refused, Err(FenceError::Stale { epoch, .. }) if epoch == first.epoch),
        "{refused:?}"
    );
}
