//! Shared helpers of the integration tests: unique tables, databases, a recording relay.
#![allow(dead_code, unreachable_pub)]

use std::sync::atomic::{AtomicU32, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use camel_api::CamelError;
use camel_outbox::{
    Backoff, Datasource, NewMessage, Outbox, OutboxConfig, Relay, RelayHandle, StoredMessage,
};
use tokio::sync::Notify;

/// A table name no other test (or test process) uses.
pub fn unique(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, AtomicOrdering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{prefix}_{}_{n}_{nanos:x}", std::process::id())
}

/// The test PostgreSQL, or `None` (the test then skips).
pub fn postgres() -> Option<Datasource> {
    let url = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL")?;
    Some(Datasource::connect(&url).expect("CAMEL_TEST_PG_URL is a postgres URL"))
}

/// A fresh SQLite file in a temporary directory (kept alive by the returned guard).
pub fn sqlite() -> (tempfile::TempDir, Datasource) {
    let dir = tempfile::tempdir().expect("temp dir");
    let ds = Datasource::sqlite_file(dir.path().join("outbox.db")).expect("sqlite");
    (dir, ds)
}

/// A config with fast timers for tests.
pub fn fast_config(name: &str) -> OutboxConfig {
    let mut c = OutboxConfig::new(name);
    c.backoff = Backoff {
        min: Duration::from_millis(10),
        max: Duration::from_millis(40),
        jitter: false,
    };
    c.poll_interval = Duration::from_millis(50);
    c.sweep_interval = Duration::from_millis(100);
    c.takeover_interval = Duration::from_millis(100);
    // The same suite runs once per relay kind: `.ci/run` runs the PostgreSQL tests again
    // with CAMEL_TEST_OUTBOX_WAKE=replication (and the `replication` feature).
    c.logical_replication = relay_kind_is_replication();
    c
}

/// True when this run tests the relay woken by logical replication.
pub fn relay_kind_is_replication() -> bool {
    std::env::var("CAMEL_TEST_OUTBOX_WAKE").is_ok_and(|v| v == "replication")
}

/// Drops the tables of an outbox (PostgreSQL tests clean up after themselves).
pub async fn drop_tables(ds: &Datasource, table: &str) {
    if let Datasource::Postgres(pool) = ds {
        for t in [
            table.to_string(),
            format!("{table}_dead"),
            format!("{table}_meta"),
        ] {
            let _ = sqlx::query(&format!("DROP TABLE IF EXISTS {t}"))
                .execute(pool)
                .await;
        }
    }
}

/// Publishes `messages` in one transaction of the outbox's own database.
pub async fn publish(outbox: &Outbox, messages: Vec<NewMessage>) -> Vec<i64> {
    match outbox.datasource() {
        Datasource::Postgres(pool) => {
            let mut tx = pool.begin().await.expect("begin");
            let ids = outbox
                .publish_batch(&mut tx, messages)
                .await
                .expect("publish");
            outbox.commit(tx).await.expect("commit");
            ids
        }
        Datasource::Sqlite(pool) => {
            let mut conn = pool.acquire().await.expect("acquire");
            let mut tx = sqlx::Connection::begin_with(&mut *conn, "BEGIN IMMEDIATE")
                .await
                .expect("begin");
            let ids = outbox
                .publish_batch(&mut tx, messages)
                .await
                .expect("publish");
            outbox.commit(tx).await.expect("commit");
            ids
        }
        _ => unreachable!("no other backend"),
    }
}

/// One delivery as the recording relay saw it.
#[derive(Clone, Debug, PartialEq)]
pub struct Delivery {
    pub id: i64,
    pub group: Option<String>,
    pub attempt: u32,
    pub ok: bool,
}

/// Decides whether a delivery fails.
pub type Policy = Arc<dyn Fn(&StoredMessage) -> Result<(), CamelError> + Send + Sync>;

/// A relay handler that records every delivery and lets tests wait for conditions.
#[derive(Clone)]
pub struct Recorder {
    pub log: Arc<Mutex<Vec<Delivery>>>,
    changed: Arc<Notify>,
    policy: Arc<Mutex<Policy>>,
}

impl Recorder {
    pub fn new() -> Self {
        Recorder {
            log: Arc::default(),
            changed: Arc::new(Notify::new()),
            policy: Arc::new(Mutex::new(Arc::new(|_| Ok(())))),
        }
    }

    pub fn set_policy(
        &self,
        p: impl Fn(&StoredMessage) -> Result<(), CamelError> + Send + Sync + 'static,
    ) {
        *self.policy.lock().unwrap() = Arc::new(p);
    }

    pub fn spawn(&self, outbox: Outbox) -> RelayHandle {
        let me = self.clone();
        Relay::new(outbox, move |m| {
            let me = me.clone();
            async move {
                let policy = me.policy.lock().unwrap().clone();
                let result = policy(&m);
                me.log.lock().unwrap().push(Delivery {
                    id: m.id,
                    group: m.group_key.clone(),
                    attempt: m.attempts + 1,
                    ok: result.is_ok(),
                });
                me.changed.notify_waiters();
                result
            }
        })
        .spawn()
    }

    pub fn snapshot(&self) -> Vec<Delivery> {
        self.log.lock().unwrap().clone()
    }

    /// Ids confirmed, in delivery order.
    pub fn confirmed(&self) -> Vec<i64> {
        self.snapshot()
            .iter()
            .filter(|d| d.ok)
            .map(|d| d.id)
            .collect()
    }

    /// Resolves on the next delivery after this call.
    pub fn changed(&self) -> tokio::sync::futures::OwnedNotified {
        self.changed.clone().notified_owned()
    }

    /// Waits (at most `limit`) until `cond` holds over the log; panics with the log if not.
    pub async fn wait_for(&self, limit: Duration, what: &str, cond: impl Fn(&[Delivery]) -> bool) {
        if !self.try_wait_for(limit, cond).await {
            let log = self.snapshot();
            let tail: Vec<_> = log.iter().rev().take(20).collect();
            panic!(
                "timed out waiting for {what}; {} deliveries, last: {tail:?}",
                log.len()
            );
        }
    }

    /// Waits (at most `limit`) until `cond` holds over the log; false if it never did.
    pub async fn try_wait_for(&self, limit: Duration, cond: impl Fn(&[Delivery]) -> bool) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.changed.notified();
            if cond(&self.snapshot()) {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return false;
            }
        }
    }
}

/// Checks that, per group, first deliveries came in id order.
pub fn assert_group_order(log: &[Delivery]) {
    let mut seen = std::collections::HashSet::new();
    let mut last: std::collections::HashMap<String, i64> = Default::default();
    for d in log {
        if !seen.insert(d.id) {
            continue;
        }
        if let Some(g) = &d.group {
            if let Some(prev) = last.insert(g.clone(), d.id) {
                assert!(prev < d.id, "group {g}: {} delivered after {prev}", d.id);
            }
        }
    }
}
