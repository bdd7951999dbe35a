//! The SQL repositories on SQLite (always) and PostgreSQL (`CAMEL_TEST_PG_URL`): the
//! versioned writes, two "processes" (separate pools) on the same keys losing nothing,
//! open groups completed after a restart, recovery and its dead letter, and the
//! idempotent repository's atomic add.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use camel_api::{BoxProcessor, CamelError, Exchange, Expression, ShutdownReason, Value};
use camel_eip::aggregate::{
    names, Aggregator, AggregatorOptions, AggregatorParts, RepositoryError, SharedRepository,
};
use camel_eip::aggregation::builtin;
use camel_eip::state::StoreFactory;
use camel_state::StateStores;
use tokio::sync::mpsc;

/// `(label, url)` of each backend to test; PostgreSQL only with its env var.
fn backends(dir: &tempfile::TempDir) -> Vec<(&'static str, String)> {
    let mut out = vec![(
        "sqlite",
        format!("sqlite:{}", dir.path().join("state.db").display()),
    )];
    match std::env::var("CAMEL_TEST_PG_URL") {
        Ok(url) => out.push(("postgres", url)),
        Err(_) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("CAMEL_TEST_PG_URL is required under CI")
        }
        Err(_) => println!("skipping PostgreSQL: CAMEL_TEST_PG_URL is not set"),
    }
    out
}

fn unique(name: &str) -> String {
    format!("test-{name}-{:x}", rand_suffix())
}

fn rand_suffix() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    t ^ (std::process::id() as u64) << 32
}

#[derive(Debug)]
struct Key;

impl Expression for Key {
    fn evaluate(&self, ex: &Exchange) -> Result<Value, CamelError> {
        Ok(ex.header("key").cloned().unwrap_or_default())
    }
}

fn aggregator(
    repository: SharedRepository,
    options: AggregatorOptions,
    steps: BoxProcessor,
    dead_letter: Option<BoxProcessor>,
) -> Aggregator {
    Aggregator::build(
        "state-test",
        "aggregate",
        options,
        AggregatorParts {
            correlation: Arc::new(Key),
            strategy: builtin("grouped_body").unwrap(),
            completion_size: None,
            completion_timeout: None,
            completion_predicate: None,
            repository: Some(repository),
            steps,
            dead_letter,
        },
    )
}

/// Steps that send each aggregate on `tx`.
fn forward(tx: mpsc::UnboundedSender<Exchange>) -> BoxProcessor {
    BoxProcessor::sync(move |ex: Exchange| {
        let _ = tx.send(ex.clone());
        Ok(ex)
    })
}

async fn next(rx: &mut mpsc::UnboundedReceiver<Exchange>) -> Exchange {
    tokio::time::timeout(Duration::from_secs(20), rx.recv())
        .await
        .expect("an aggregate within 20 s")
        .expect("the channel is open")
}

fn ex(key: &str, body: &str) -> Exchange {
    Exchange::new(body).with_header("key", key)
}

#[tokio::test]
async fn writes_are_versioned_and_completions_kept_until_confirmed() {
    let dir = tempfile::tempdir().unwrap();
    for (label, url) in backends(&dir) {
        let repo = StateStores::default()
            .aggregation(&url, &unique("versions"))
            .unwrap();
        let v1 = repo.put("k", &ex("k", "a"), None).await.unwrap();
        assert!(
            matches!(
                repo.put("k", &ex("k", "b"), None).await,
                Err(RepositoryError::Conflict)
            ),
            "{label}"
        );
        let v2 = repo.put("k", &ex("k", "b"), Some(v1)).await.unwrap();
        assert!(matches!(
            repo.put("k", &ex("k", "c"), Some(v1)).await,
            Err(RepositoryError::Conflict)
        ));
        let got = repo.get("k").await.unwrap().unwrap();
        assert_eq!((got.version, got.exchange.message.body), (v2, "b".into()));
        assert_eq!(repo.keys().await.unwrap(), ["k"]);
        repo.complete("k", Some(v2), "c1", &ex("k", "done"))
            .await
            .unwrap();
        assert!(repo.get("k").await.unwrap().is_none(), "{label}");
        assert!(repo.keys().await.unwrap().is_empty());
        let pending = repo.unconfirmed(Duration::ZERO).await.unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].exchange.message.body, "done".into());
        repo.record_attempt("c1").await.unwrap();
        assert_eq!(
            repo.unconfirmed(Duration::ZERO).await.unwrap()[0].attempts,
            1
        );
        assert!(repo
            .unconfirmed(Duration::from_secs(60))
            .await
            .unwrap()
            .is_empty());
        repo.confirm("c1").await.unwrap();
        assert!(
            repo.unconfirmed(Duration::ZERO).await.unwrap().is_empty(),
            "{label}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_processes_on_the_same_keys_lose_no_update() {
    let dir = tempfile::tempdir().unwrap();
    for (label, url) in backends(&dir) {
        let name = unique("two");
        let (tx, mut rx) = mpsc::unbounded_channel();
        let options = AggregatorOptions {
            completion_size: Some(10),
            ..Default::default()
        };
        // Separate factories: separate pools, as two processes would have.
        let mut nodes = Vec::new();
        for _ in 0..2 {
            let repo = StateStores::default().aggregation(&url, &name).unwrap();
            let agg = aggregator(repo, options.clone(), forward(tx.clone()), None);
            agg.lifecycle.start().await.unwrap();
            nodes.push(Arc::new(agg));
        }
        let mut tasks = Vec::new();
        for (n, node) in nodes.iter().enumerate() {
            for t in 0..2 {
                let node = node.clone();
                tasks.push(tokio::spawn(async move {
                    for i in 0..50 {
                        let m = (n * 2 + t) * 50 + i;
                        node.processor
                            .process(ex(&format!("k{}", m % 4), &m.to_string()))
                            .await
                            .unwrap();
                    }
                }));
            }
        }
        for t in tasks {
            t.await.unwrap();
        }
        let mut all = Vec::new();
        for _ in 0..20 {
            let g = next(&mut rx).await;
            let items = camel_eip::aggregation::body_json(&g.message.body);
            assert_eq!(items.as_array().unwrap().len(), 10, "{label}");
            all.extend(
                items
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap().parse::<usize>().unwrap()),
            );
        }
        all.sort_unstable();
        assert_eq!(
            all,
            (0..200).collect::<Vec<_>>(),
            "{label}: every update kept once"
        );
        for node in nodes {
            node.lifecycle
                .shutdown(ShutdownReason::RouteStop)
                .await
                .unwrap();
        }
    }
}

/// A first aggregator on the repository `name` takes "1" and "2" of key `a` and is dropped
/// without a stop, as a killed process would be; a second one is then started on the
/// same repository and returned.
async fn restart_after_a_kill(
    url: &str,
    name: &str,
    options: &AggregatorOptions,
    tx: &mpsc::UnboundedSender<Exchange>,
) -> Aggregator {
    {
        let repo = StateStores::default().aggregation(url, name).unwrap();
        let first = aggregator(repo, options.clone(), forward(tx.clone()), None);
        first.lifecycle.start().await.unwrap();
        first.processor.process(ex("a", "1")).await.unwrap();
        first.processor.process(ex("a", "2")).await.unwrap();
    }
    let repo = StateStores::default().aggregation(url, name).unwrap();
    let second = aggregator(repo, options.clone(), forward(tx.clone()), None);
    second.lifecycle.start().await.unwrap();
    second
}

#[tokio::test]
async fn open_groups_left_by_a_stopped_process_complete_by_timeout_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    for (label, url) in backends(&dir) {
        let name = unique("restart");
        let (tx, mut rx) = mpsc::unbounded_channel();
        let options = AggregatorOptions {
            completion_size: Some(3),
            completion_timeout: Some(Duration::from_millis(300)),
            ..Default::default()
        };
        let second = restart_after_a_kill(&url, &name, &options, &tx).await;
        assert!(rx.try_recv().is_err());
        let g = next(&mut rx).await;
        assert_eq!(
            camel_eip::aggregation::body_json(&g.message.body),
            serde_json::json!(["1", "2"]),
            "{label}"
        );
        assert_eq!(
            g.property(names::COMPLETED_BY),
            Some(&Value::from("timeout"))
        );
        second
            .lifecycle
            .shutdown(ShutdownReason::RouteStop)
            .await
            .unwrap();
    }
}

/// Issue 24, item 14: the exchange in flight at a crash comes back from the broker
/// later than the restored group's timeout. With `restored_group_delay` the group waits
/// for it and completes once, with it; without, it would complete twice.
#[tokio::test]
async fn a_restored_group_waits_for_the_redelivered_exchange_and_completes_once() {
    let dir = tempfile::tempdir().unwrap();
    for (label, url) in backends(&dir) {
        let name = unique("redelivered");
        let (tx, mut rx) = mpsc::unbounded_channel();
        let options = AggregatorOptions {
            completion_size: Some(3),
            completion_timeout: Some(Duration::from_millis(100)),
            restored_group_delay: Some(Duration::from_secs(60)),
            ..Default::default()
        };
        // Killed while "3" was in flight: never acknowledged to the broker.
        let second = restart_after_a_kill(&url, &name, &options, &tx).await;
        // The broker's redelivery arrives well after the 100 ms completion timeout.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(
            rx.try_recv().is_err(),
            "{label}: completed without the in-flight exchange"
        );
        second.processor.process(ex("a", "3")).await.unwrap();
        let g = next(&mut rx).await;
        assert_eq!(
            camel_eip::aggregation::body_json(&g.message.body),
            serde_json::json!(["1", "2", "3"]),
            "{label}"
        );
        assert!(rx.try_recv().is_err(), "{label}: the key completed twice");
        second
            .lifecycle
            .shutdown(ShutdownReason::RouteStop)
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn recovery_redelivers_a_completed_group_and_dead_letters_it_when_exhausted() {
    let dir = tempfile::tempdir().unwrap();
    for (label, url) in backends(&dir) {
        let name = unique("recovery");
        let recovering = AggregatorOptions {
            completion_size: Some(2),
            use_recovery: true,
            recovery_interval: Duration::from_millis(100),
            ..Default::default()
        };
        // The first process completes a group, but its steps fail (as if it crashed
        // before they finished): the group stays in the repository.
        let repo = StateStores::default().aggregation(&url, &name).unwrap();
        let failing = BoxProcessor::sync(|_| Err(CamelError::processor("down")));
        let first = aggregator(repo.clone(), recovering.clone(), failing, None);
        first.processor.process(ex("a", "1")).await.unwrap();
        first.processor.process(ex("a", "2")).await.unwrap();
        drop(first);
        assert_eq!(
            repo.unconfirmed(Duration::ZERO).await.unwrap().len(),
            1,
            "{label}"
        );

        let (tx, mut rx) = mpsc::unbounded_channel();
        let repo = StateStores::default().aggregation(&url, &name).unwrap();
        let second = aggregator(repo.clone(), recovering.clone(), forward(tx), None);
        second.lifecycle.start().await.unwrap();
        let g = next(&mut rx).await;
        assert_eq!(
            g.property("CamelRedelivered"),
            Some(&Value::from(true)),
            "{label}"
        );
        assert_eq!(
            camel_eip::aggregation::body_json(&g.message.body),
            serde_json::json!(["1", "2"])
        );
        second
            .lifecycle
            .shutdown(ShutdownReason::RouteStop)
            .await
            .unwrap();
        assert!(
            repo.unconfirmed(Duration::ZERO).await.unwrap().is_empty(),
            "{label}: confirmed"
        );

        // Steps that always fail: after two attempts the group goes to the dead letter.
        let name = unique("dead");
        let (dead_tx, mut dead_rx) = mpsc::unbounded_channel();
        let attempts = Arc::new(Mutex::new(0));
        let counter = attempts.clone();
        let failing = BoxProcessor::sync(move |_| {
            *counter.lock().unwrap() += 1;
            Err(CamelError::processor("down"))
        });
        let repo = StateStores::default().aggregation(&url, &name).unwrap();
        let agg = aggregator(
            repo.clone(),
            AggregatorOptions {
                maximum_redeliveries: 2,
                ..recovering.clone()
            },
            failing,
            Some(forward(dead_tx)),
        );
        agg.lifecycle.start().await.unwrap();
        agg.processor.process(ex("b", "1")).await.unwrap();
        agg.processor.process(ex("b", "2")).await.unwrap();
        let dead = next(&mut dead_rx).await;
        assert_eq!(
            camel_eip::aggregation::body_json(&dead.message.body),
            serde_json::json!(["1", "2"])
        );
        assert_eq!(
            *attempts.lock().unwrap(),
            3,
            "{label}: first delivery + 2 redeliveries"
        );
        agg.lifecycle
            .shutdown(ShutdownReason::RouteStop)
            .await
            .unwrap();
        assert!(repo.unconfirmed(Duration::ZERO).await.unwrap().is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn idempotent_add_is_atomic_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    for (label, url) in backends(&dir) {
        let name = unique("idem");
        let a = StateStores::default().idempotent(&url, &name).unwrap();
        let b = StateStores::default().idempotent(&url, &name).unwrap();
        let mut tasks = Vec::new();
        for repo in [a.clone(), b.clone()] {
            tasks.push(tokio::spawn(async move {
                let mut won = 0;
                for i in 0..100 {
                    if repo.add(&format!("m{i}")).await.unwrap() {
                        won += 1;
                    }
                }
                won
            }));
        }
        let mut total = 0;
        for t in tasks {
            total += t.await.unwrap();
        }
        assert_eq!(total, 100, "{label}: each id added once");
        assert!(a.contains("m5").await.unwrap());
        b.remove("m5").await.unwrap();
        assert!(!a.contains("m5").await.unwrap());
    }
}

/// Stores made on a context's pools use the context's one pool for the database, and
/// make a new one after it was closed (a context stopped and started again).
#[tokio::test]
async fn stores_share_the_given_pools() {
    use camel_api::pools::{Pools, SharedPool};
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("state.db").display());
    let key = camel_outbox::component::database_key(&url);
    let pools = Pools::new();
    // As the outbox (or `sql:`) on the same file would have made it first.
    let first: camel_outbox::Datasource = pools
        .get_or_try_insert_with(&key, || camel_outbox::Datasource::connect(&url))
        .unwrap();
    let stores = StateStores::with_pools(pools.clone());
    let repo = stores.idempotent(&url, "shared").unwrap();
    assert!(repo.add("m1").await.unwrap());
    assert_eq!(pools.keys(), vec![key.clone()], "no second pool");

    pools.close().await;
    assert!(first.is_closed());
    assert!(repo.contains("m1").await.unwrap(), "a new pool, same file");
    assert_eq!(pools.keys(), vec![key]);
}
