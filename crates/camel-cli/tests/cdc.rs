//! `pg-replication-slot:` through the binary, against the local PostgreSQL
//! (`CAMEL_TEST_PG_URL`, wal_level=logical): a `camel run` streaming a table's inserts
//! into another table (`sql:`) is SIGKILLed mid-stream and started again. Nothing is
//! lost (the slot is confirmed only after the route succeeded); the rows written twice
//! (what the killed process had written and not yet confirmed) are counted and printed.

mod support;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sqlx::{Connection, PgConnection};
use support::{spawn, wait_line, CdcCleanup, KillOnDrop};

async fn counts(conn: &mut PgConnection, sink: &str) -> (i64, i64) {
    sqlx::query_as(&format!("SELECT count(*), count(DISTINCT id) FROM {sink}"))
        .fetch_one(&mut *conn)
        .await
        .expect("the sink's counts")
}

#[test]
fn a_sigkilled_consumer_restarts_from_the_slot_and_loses_nothing() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    const ROWS: i64 = 1500;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let name = format!("cdc_kill_{}_{nanos}", std::process::id());
    let _cleanup = CdcCleanup {
        url: url.clone(),
        name: name.clone(),
    };
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    let mut conn = rt
        .block_on(PgConnection::connect(&url))
        .expect("PostgreSQL");
    rt.block_on(
        sqlx::raw_sql(&format!(
            "CREATE TABLE {name} (id int PRIMARY KEY); CREATE TABLE {name}_sink (id int NOT NULL)"
        ))
        .execute(&mut conn),
    )
    .expect("tables");
    let server = url.trim_start_matches("postgres://");
    let (user, server) = server.split_once('@').unwrap_or(("postgres", server));
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("routes.yaml");
    std::fs::write(
        &file,
        format!(
            r#"
- route:
    id: cdc-copy
    from:
      uri: "pg-replication-slot:{server}/{name}?user={user}&tables={name}&statusInterval=200ms&maxInflight=8"
      steps:
        - to:
            uri: "sql:insert into {name}_sink (id) values (:#id)"
            parameters: {{ datasource: "{url}" }}
"#
        ),
    )
    .expect("write the routes");
    let path = file.to_str().expect("a UTF-8 path").to_string();
    let (child, rx) = spawn(&["run", &path]);
    let mut child = KillOnDrop(child);
    wait_line(&rx, "streaming changes");

    // Ten rows a transaction, paced, so that the kill lands while changes still arrive.
    let feeding = rt.spawn({
        let url = url.clone();
        let name = name.clone();
        async move {
            let mut conn = PgConnection::connect(&url).await.expect("PostgreSQL");
            for start in (1..=ROWS).step_by(10) {
                sqlx::query(&format!(
                    "INSERT INTO {name} SELECT generate_series($1::int, $1::int + 9)"
                ))
                .bind(start as i32)
                .execute(&mut conn)
                .await
                .expect("insert");
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }
    });
    let sink = format!("{name}_sink");
    let deadline = Instant::now() + Duration::from_secs(60);
    while rt.block_on(counts(&mut conn, &sink)).1 < ROWS / 4 {
        assert!(Instant::now() < deadline, "the route is not copying");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.0.kill().expect("SIGKILL the consumer");
    let _ = child.0.wait();
    let before_restart = rt.block_on(counts(&mut conn, &sink)).1;

    let (child, rx) = spawn(&["run", &path]);
    let _child = KillOnDrop(child);
    wait_line(&rx, "streaming changes");
    rt.block_on(feeding).expect("every row inserted");
    let deadline = Instant::now() + Duration::from_secs(90);
    let (total, distinct) = loop {
        let (total, distinct) = rt.block_on(counts(&mut conn, &sink));
        if distinct >= ROWS || Instant::now() > deadline {
            break (total, distinct);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let duplicates = total - distinct;
    println!(
        "cdc sigkill: rows={ROWS} copied={distinct} duplicates={duplicates} copied_before_kill={before_restart}"
    );
    assert_eq!(distinct, ROWS, "lost {} rows", ROWS - distinct);
    // Only what the killed process wrote after its last confirmation comes twice: at
    // most a status interval's worth (200 ms) plus what was in flight.
    assert!(duplicates < ROWS / 2, "{duplicates} duplicates");
}
