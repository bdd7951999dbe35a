//! The consumer against the local PostgreSQL (`CAMEL_TEST_PG_URL`, wal_level=logical):
//! changes in commit order with their headers, the slot confirmed only after the route
//! succeeded (a failed route's transaction comes again), the in-flight bound, and the
//! initial snapshot. Every test uses its own table, slot and publication and drops them
//! at the end, even when it fails (an abandoned slot keeps WAL on the server for ever).

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use camel_api::test_support::{service_from_env, SlowRoute};
use camel_api::{BoxProcessor, CamelError, Consumer, ConsumerContext, EndpointUri, Exchange};
use camel_cdc::{
    CdcConsumer, CdcOptions, BEFORE_HEADER, COMMIT_LSN_HEADER, COMMIT_TIME_HEADER, LSN_HEADER,
    OPERATION_HEADER, SCHEMA_HEADER, TABLE_HEADER,
};
use sqlx::{Connection, PgConnection};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

const WITHIN: Duration = Duration::from_secs(30);

/// A table, slot and publication of this test alone; dropped when it goes out of scope.
struct Names {
    url: String,
    name: String,
}

impl Names {
    fn new(url: &str, test: &str) -> Names {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        Names {
            url: url.to_string(),
            name: format!("cdc_{test}_{}_{nanos}", std::process::id()),
        }
    }

    fn uri(&self, extra: &str) -> String {
        let rest = self.url.trim_start_matches("postgres://");
        let (user, rest) = rest.split_once('@').unwrap_or(("postgres", rest));
        format!(
            "pg-replication-slot:{rest}/{}?user={user}&tables={}&reconnectDelay=100ms&statusInterval=200ms{extra}",
            self.name, self.name
        )
    }
}

impl Drop for Names {
    fn drop(&mut self) {
        // Synchronous (psql), so it also runs when the test panicked and its consumer
        // still streams: end that session, drop the slot before the consumer reconnects
        // (it waits at least 100 ms), and try again until the slot is gone.
        let n = &self.name;
        let psql = |sql: &str| {
            std::process::Command::new("psql")
                .args([self.url.as_str(), "-qtA", "-c", sql])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .unwrap_or_default()
        };
        for _ in 0..50 {
            psql(&format!(
                "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '{n}' AND active_pid IS NOT NULL"
            ));
            psql(&format!(
                "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '{n}' AND NOT active"
            ));
            if psql(&format!(
                "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '{n}'"
            )) == "0"
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        psql(&format!(
            "DROP PUBLICATION IF EXISTS {n}; DROP TABLE IF EXISTS {n}"
        ));
    }
}

/// Every exchange the route saw.
#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<Exchange>>,
    changed: Notify,
}

impl Recorder {
    fn record(&self, ex: &Exchange) {
        self.seen.lock().unwrap().push(ex.clone());
        self.changed.notify_waiters();
    }

    fn all(&self) -> Vec<Exchange> {
        self.seen.lock().unwrap().clone()
    }

    async fn until(&self, what: &str, done: impl Fn(&[Exchange]) -> bool) {
        let deadline = tokio::time::Instant::now() + WITHIN;
        loop {
            let changed = self.changed.notified();
            if done(&self.all()) {
                return;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() && !done(&self.all()) {
                panic!(
                    "{what}: not within {WITHIN:?}; seen {:?}",
                    bodies(&self.all())
                );
            }
        }
    }
}

fn header(ex: &Exchange, name: &str) -> String {
    ex.header(name).map(|v| v.to_string()).unwrap_or_default()
}

fn body(ex: &Exchange) -> serde_json::Value {
    match &ex.message.body {
        camel_api::Body::Json(v) => (**v).clone(),
        other => panic!("not a JSON body: {other:?}"),
    }
}

fn bodies(all: &[Exchange]) -> Vec<String> {
    all.iter()
        .map(|e| format!("{} {}", header(e, OPERATION_HEADER), body(e)))
        .collect()
}

fn recording(
    seen: &Arc<Recorder>,
    fail: impl Fn(&Exchange) -> bool + Send + Sync + 'static,
) -> BoxProcessor {
    let seen = seen.clone();
    let fail = Arc::new(fail);
    BoxProcessor::from_fn(move |ex: Exchange| {
        let (seen, fail) = (seen.clone(), fail.clone());
        async move {
            seen.record(&ex);
            if fail(&ex) {
                return Err(CamelError::processor("refused by the test"));
            }
            Ok(ex)
        }
    })
}

struct Running {
    ctx: ConsumerContext,
    task: JoinHandle<Result<(), CamelError>>,
}

fn start(uri: &str, pipeline: BoxProcessor) -> Running {
    let options = CdcOptions::from_uri(EndpointUri::parse(uri).expect("a URI")).expect("options");
    let ctx = ConsumerContext::for_pipeline("cdc-test", pipeline);
    let task = tokio::spawn(Box::new(CdcConsumer::new(options)).run(ctx.clone()));
    Running { ctx, task }
}

impl Running {
    async fn stop(self) {
        self.ctx.cancellation().cancel();
        tokio::time::timeout(WITHIN, self.task)
            .await
            .expect("the consumer stops")
            .expect("joined")
            .expect("stopped cleanly");
    }
}

async fn connect(url: &str) -> PgConnection {
    PgConnection::connect(url).await.expect("PostgreSQL")
}

async fn exec(conn: &mut PgConnection, sql: &str) {
    sqlx::raw_sql(sql).execute(conn).await.expect(sql);
}

/// Waits until the consumer streams from the slot (the server lists it active).
async fn wait_streaming(conn: &mut PgConnection, slot: &str) {
    let deadline = tokio::time::Instant::now() + WITHIN;
    loop {
        let active: Option<bool> =
            sqlx::query_scalar("SELECT active FROM pg_replication_slots WHERE slot_name = $1")
                .bind(slot)
                .fetch_optional(&mut *conn)
                .await
                .expect("pg_replication_slots");
        if active == Some(true) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the consumer never streamed from {slot}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn confirmed_flush(conn: &mut PgConnection, slot: &str) -> u64 {
    let text: String = sqlx::query_scalar(
        "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1",
    )
    .bind(slot)
    .fetch_one(&mut *conn)
    .await
    .expect("the slot");
    parse_lsn(&text)
}

fn parse_lsn(text: &str) -> u64 {
    let (hi, lo) = text.split_once('/').expect("an LSN");
    (u64::from_str_radix(hi, 16).expect("hex") << 32) | u64::from_str_radix(lo, 16).expect("hex")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inserts_updates_deletes_arrive_in_commit_order_with_headers() {
    let Some(url) = service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let names = Names::new(&url, "order");
    let t = &names.name;
    let mut conn = connect(&url).await;
    exec(
        &mut conn,
        &format!("CREATE TABLE {t} (id int PRIMARY KEY, note text, doc jsonb, ok boolean)"),
    )
    .await;
    let seen = Arc::new(Recorder::default());
    let consumer = start(&names.uri(""), recording(&seen, |_| false));
    wait_streaming(&mut conn, t).await;

    exec(
        &mut conn,
        &format!("INSERT INTO {t} VALUES (1, 'a', '{{\"k\": [1]}}', true), (2, 'b', null, false)"),
    )
    .await;
    exec(
        &mut conn,
        &format!("UPDATE {t} SET note = 'a2' WHERE id = 1"),
    )
    .await;
    exec(&mut conn, &format!("UPDATE {t} SET id = 3 WHERE id = 2")).await;
    exec(&mut conn, &format!("DELETE FROM {t} WHERE id = 1")).await;
    // Two transactions open at once: the one that commits first comes first, whatever
    // the order they wrote in.
    let mut early = connect(&url).await;
    let mut late = connect(&url).await;
    exec(
        &mut late,
        &format!("BEGIN; INSERT INTO {t} (id, note) VALUES (10, 'began first')"),
    )
    .await;
    exec(
        &mut early,
        &format!("BEGIN; INSERT INTO {t} (id, note) VALUES (11, 'committed first'); COMMIT"),
    )
    .await;
    exec(&mut late, "COMMIT").await;

    seen.until("seven changes", |all| all.len() >= 7).await;
    let all = seen.all();
    let summary: Vec<String> = bodies(&all);
    assert_eq!(
        summary,
        vec![
            r#"insert {"doc":{"k":[1]},"id":1,"note":"a","ok":true}"#,
            r#"insert {"doc":null,"id":2,"note":"b","ok":false}"#,
            r#"update {"doc":{"k":[1]},"id":1,"note":"a2","ok":true}"#,
            r#"update {"doc":null,"id":3,"note":"b","ok":false}"#,
            r#"delete {"id":1}"#,
            r#"insert {"doc":null,"id":11,"note":"committed first","ok":null}"#,
            r#"insert {"doc":null,"id":10,"note":"began first","ok":null}"#,
        ],
        "{summary:#?}"
    );
    for ex in &all {
        assert_eq!(header(ex, TABLE_HEADER), *t);
        assert_eq!(header(ex, SCHEMA_HEADER), "public");
    }
    // A key change sends the old key; an update that kept it sends none.
    assert_eq!(header(&all[3], BEFORE_HEADER), r#"{"id":2}"#);
    assert!(all[2].header(BEFORE_HEADER).is_none());
    // Commit positions grow with the stream; both rows of one transaction share one.
    let commits: Vec<u64> = all
        .iter()
        .map(|e| parse_lsn(&header(e, COMMIT_LSN_HEADER)))
        .collect();
    assert!(commits.windows(2).all(|w| w[0] <= w[1]), "{commits:?}");
    assert_eq!(commits[0], commits[1]);
    assert!(parse_lsn(&header(&all[0], LSN_HEADER)) < parse_lsn(&header(&all[1], LSN_HEADER)));
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    let commit_ms: i64 = header(&all[0], COMMIT_TIME_HEADER).parse().expect("millis");
    assert!(
        (now_ms - commit_ms).abs() < 60_000,
        "commit time {commit_ms} vs now {now_ms}"
    );

    // Everything succeeded: the slot is confirmed past the last commit.
    let last = *commits.last().expect("commits");
    let deadline = tokio::time::Instant::now() + WITHIN;
    while confirmed_flush(&mut conn, t).await <= last {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the slot was never confirmed past {last:X}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    consumer.stop().await;

    // REPLICA IDENTITY FULL: an update and a delete carry the whole old row.
    exec(&mut conn, &format!("ALTER TABLE {t} REPLICA IDENTITY FULL; UPDATE {t} SET note = 'x' WHERE id = 3; DELETE FROM {t} WHERE id = 3")).await;
    let seen = Arc::new(Recorder::default());
    let consumer = start(&names.uri(""), recording(&seen, |_| false));
    seen.until("update and delete", |all| all.len() >= 2).await;
    let all = seen.all();
    assert_eq!(
        bodies(&all),
        vec![
            r#"update {"doc":null,"id":3,"note":"x","ok":false}"#,
            r#"delete {"doc":null,"id":3,"note":"x","ok":false}"#,
        ]
    );
    assert_eq!(
        header(&all[0], BEFORE_HEADER),
        r#"{"doc":null,"id":3,"note":"b","ok":false}"#
    );
    consumer.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_transaction_comes_again_and_the_slot_waits_for_it() {
    let Some(url) = service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let names = Names::new(&url, "retry");
    let t = &names.name;
    let mut conn = connect(&url).await;
    exec(&mut conn, &format!("CREATE TABLE {t} (id int PRIMARY KEY)")).await;
    // Row 2 fails its first three times.
    let failures = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let f = failures.clone();
    let seen = Arc::new(Recorder::default());
    let consumer = start(
        &names.uri(""),
        recording(&seen, move |ex| {
            body(ex)["id"] == 2 && f.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < 3
        }),
    );
    wait_streaming(&mut conn, t).await;
    for id in 1..=3 {
        exec(&mut conn, &format!("INSERT INTO {t} VALUES ({id})")).await;
    }
    seen.until("row 3 after row 2 succeeded", |all| {
        all.iter().any(|e| body(e)["id"] == 3)
    })
    .await;
    let ids: Vec<i64> = seen
        .all()
        .iter()
        .map(|e| body(e)["id"].as_i64().unwrap_or(-1))
        .collect();
    // Row 2 four times (three failures, then success), never overtaken by row 3.
    assert_eq!(ids.iter().filter(|i| **i == 2).count(), 4, "{ids:?}");
    let first_3 = ids.iter().position(|i| *i == 3).unwrap_or(usize::MAX);
    let last_2 = ids.iter().rposition(|i| *i == 2).unwrap_or(0);
    assert!(
        last_2 < first_3,
        "row 3 went before row 2 succeeded: {ids:?}"
    );
    assert!(ids.iter().filter(|i| **i == 1).count() >= 1);
    consumer.stop().await;
    // Stopped after everything succeeded: a new consumer gets nothing of it again.
    let seen = Arc::new(Recorder::default());
    let consumer = start(&names.uri(""), recording(&seen, |_| false));
    wait_streaming(&mut conn, t).await;
    exec(&mut conn, &format!("INSERT INTO {t} VALUES (4)")).await;
    seen.until("row 4", |all| !all.is_empty()).await;
    let ids: Vec<i64> = seen
        .all()
        .iter()
        .map(|e| body(e)["id"].as_i64().unwrap_or(-1))
        .collect();
    assert_eq!(
        ids,
        vec![4],
        "a graceful stop confirmed everything that succeeded"
    );
    consumer.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_most_max_inflight_exchanges_run_at_once() {
    let Some(url) = service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let names = Names::new(&url, "bound");
    let t = &names.name;
    let mut conn = connect(&url).await;
    exec(&mut conn, &format!("CREATE TABLE {t} (id int PRIMARY KEY)")).await;
    let route = SlowRoute::new(60, Duration::from_millis(20));
    let consumer = start(&names.uri("&maxInflight=4"), route.pipeline());
    wait_streaming(&mut conn, t).await;
    exec(
        &mut conn,
        &format!("INSERT INTO {t} SELECT generate_series(1, 60)"),
    )
    .await;
    route.wait_all(WITHIN).await;
    assert!(route.most() <= 4, "{} ran at once", route.most());
    assert!(
        route.most() >= 2,
        "the bound was never used: {}",
        route.most()
    );
    consumer.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_snapshot_delivers_existing_rows_once_then_changes_follow() {
    let Some(url) = service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let names = Names::new(&url, "snap");
    let t = &names.name;
    let mut conn = connect(&url).await;
    exec(&mut conn, &format!("CREATE TABLE {t} (id int PRIMARY KEY, n numeric); INSERT INTO {t} VALUES (1, 1.50), (2, 2)")).await;
    let seen = Arc::new(Recorder::default());
    let consumer = start(&names.uri("&snapshot=true"), recording(&seen, |_| false));
    seen.until("the snapshot", |all| all.len() >= 2).await;
    wait_streaming(&mut conn, t).await;
    exec(&mut conn, &format!("INSERT INTO {t} VALUES (3, 3)")).await;
    seen.until("the insert after it", |all| all.len() >= 3)
        .await;
    let mut summary = bodies(&seen.all());
    summary[..2].sort();
    assert_eq!(
        summary,
        vec![
            r#"snapshot {"id":1,"n":"1.50"}"#,
            r#"snapshot {"id":2,"n":"2"}"#,
            r#"insert {"id":3,"n":"3"}"#,
        ]
    );
    consumer.stop().await;
    // Finished: a restart does not take the snapshot again.
    let seen = Arc::new(Recorder::default());
    let consumer = start(&names.uri("&snapshot=true"), recording(&seen, |_| false));
    wait_streaming(&mut conn, t).await;
    exec(&mut conn, &format!("DELETE FROM {t} WHERE id = 1")).await;
    seen.until("the delete", |all| !all.is_empty()).await;
    assert_eq!(bodies(&seen.all()), vec![r#"delete {"id":1}"#]);
    consumer.stop().await;
}
