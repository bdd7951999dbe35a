//! The lease contract on Redis (`CAMEL_TEST_REDIS_URL`).

mod support;

use std::sync::Arc;

use camel_api::test_support::service_from_env;
use camel_cluster::{LeaseStore, RedisLeaseStore};

async fn store(url: &str) -> Arc<dyn LeaseStore> {
    Arc::new(
        RedisLeaseStore::connect(url, "camel:test:")
            .await
            .expect("connects"),
    )
}

#[tokio::test]
async fn one_of_two_contenders_wins() {
    let Some(url) = service_from_env("CAMEL_TEST_REDIS_URL") else {
        return;
    };
    support::one_of_two_wins(store(&url).await, store(&url).await).await;
}

#[tokio::test]
async fn a_holder_cut_off_loses_and_the_other_takes_over_with_a_higher_epoch() {
    let Some(url) = service_from_env("CAMEL_TEST_REDIS_URL") else {
        return;
    };
    support::cut_off_holder_loses_and_the_other_takes_over(store(&url).await, store(&url).await)
        .await;
}

#[tokio::test]
async fn a_stop_releases_the_lease() {
    let Some(url) = service_from_env("CAMEL_TEST_REDIS_URL") else {
        return;
    };
    support::stop_hands_over_at_once(store(&url).await, store(&url).await).await;
}
