//! Who leads, through the admin API of two `camel run` processes on Redis leases
//! (`CAMEL_TEST_REDIS_URL`): `/health?details` names the leader on both, and the metric
//! says 1 on the leader, 0 on the follower; a leading route's health is its inner
//! consumer's.

mod support;

use camel_api::test_support::service_from_env;
use serde_json::Value;
use support::admin_api::{admin_client, Camel};
use support::write_file;

fn props(url: &str, holder: &str) -> Vec<String> {
    [
        "camel.cluster.backend=redis".to_string(),
        format!("camel.cluster.url={url}"),
        format!("camel.cluster.holder-id={holder}"),
        "camel.cluster.lease-duration=2s".to_string(),
        format!(
            "camel.cluster.redis.prefix=camel:health:{}:",
            std::process::id()
        ),
    ]
    .into_iter()
    .flat_map(|p| ["--property".to_string(), p])
    .collect()
}

/// Polls `base`'s `/health?details` until `done` holds for it (25 s at most).
async fn health_until(base: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(25);
    loop {
        let h = health(base).await;
        if done(&h) {
            return h;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "health never got there: {h}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

async fn health(base: &str) -> Value {
    admin_client()
        .get(format!("{base}/health?details"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn health_details_and_the_metric_say_who_leads() {
    let Some(url) = service_from_env("CAMEL_TEST_REDIS_URL") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let routes = write_file(
        dir.path(),
        "routes.yaml",
        "- route:\n    id: ticker\n    route_policy: {leader: reports}\n    from:\n      uri: timer:tick\n      parameters: {period: 200}\n      steps:\n        - log: tick\n",
    );
    let first_props = props(&url, "first");
    let args: Vec<&str> = first_props.iter().map(String::as_str).collect();
    let mut first = Camel::start_with(std::path::Path::new(&routes), dir.path(), &args);
    let first_base = first.base_url().await;
    // (The log's order of "leadership acquired" and the admin's line varies: ask the API.)
    health_until(&first_base, |h| {
        h["cluster"]["namespaces"][0]["leader"] == true
    })
    .await;
    let second_props = props(&url, "second");
    let args: Vec<&str> = second_props.iter().map(String::as_str).collect();
    let mut second = Camel::start_with(std::path::Path::new(&routes), dir.path(), &args);
    let second_base = second.base_url().await;
    // The follower's route is started (standing by), so it is ready too.
    let b = health_until(&second_base, |h| {
        h["cluster"]["namespaces"][0]["current_leader"]["holder"] == "first"
    })
    .await;
    let a = health(&first_base).await;
    assert_eq!(a["cluster"]["backend"], "redis");
    assert_eq!(a["cluster"]["holder"], "first");
    assert_eq!(a["cluster"]["namespaces"][0]["namespace"], "reports");
    assert_eq!(a["cluster"]["namespaces"][0]["leader"], true);
    assert_eq!(b["cluster"]["namespaces"][0]["leader"], false);
    assert_eq!(
        b["cluster"]["namespaces"][0]["current_leader"]["holder"],
        "first"
    );
    assert_eq!(b["status"], "UP", "{b}");
    let metrics = |base: String| async move {
        admin_client()
            .get(format!("{base}/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    let (ma, mb) = (metrics(first_base).await, metrics(second_base).await);
    assert!(
        ma.contains("camel_cluster_leader{namespace=\"reports\"} 1"),
        "{ma}"
    );
    assert!(
        mb.contains("camel_cluster_leader{namespace=\"reports\"} 0"),
        "{mb}"
    );
    let _ = first.child.kill();
    let _ = second.child.kill();
}

#[tokio::test]
async fn a_leading_routes_health_is_its_inner_consumers() {
    let Some(url) = service_from_env("CAMEL_TEST_REDIS_URL") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // A poller on a database nobody listens on: its consumer reports the source down
    // (MySQL: after `sql:`'s 10 s connection timeout).
    let routes = write_file(
        dir.path(),
        "routes.yaml",
        "- route:\n    id: poller\n    route_policy: {leader: polls}\n    from:\n      uri: 'sql:SELECT 1'\n      parameters: {datasource: 'mysql://root@127.0.0.1:1/none', delay: 100, initial_delay: 0}\n      steps:\n        - log: row\n",
    );
    let p = props(&url, "poller");
    let args: Vec<&str> = p.iter().map(String::as_str).collect();
    let mut camel = Camel::start_with(std::path::Path::new(&routes), dir.path(), &args);
    let base = camel.base_url().await;
    let h = health_until(&base, |h| h["status"] == "DOWN").await;
    assert_eq!(h["failing"][0]["id"], "poller", "{h}");
    assert_eq!(h["cluster"]["namespaces"][0]["leader"], true, "{h}");
    let _ = camel.child.kill();
}
