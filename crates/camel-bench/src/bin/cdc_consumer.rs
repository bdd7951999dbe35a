//! Scenario `cdc_consumer`, on PostgreSQL (`CAMEL_TEST_PG_URL`, wal_level=logical):
//! `from: pg-replication-slot:` (pgoutput, `max_inflight=1`, the slot confirmed after
//! each transaction's changes went through the route) through a route that counts,
//! against a hand-written pgwire-replication loop on the same kind of session: it
//! decodes each pgoutput Insert far enough to read every column's text, and confirms
//! each transaction at its Commit.
//!
//! Each run has a table, publication and slot of its own; the slot is made before the
//! rows are inserted, so the whole backlog waits in the WAL when the consumer starts.
//! The clock runs from the first row to the last. The route side also turns each row
//! into a JSON body with its headers, which the baseline does not: that is the
//! consumer's work.
//!
//! Count: `CDC_ROWS` (default 50000), `CDC_ROWS_PER_TX` (default 100).

use std::sync::Arc;
use std::time::{Duration, Instant};

use camel_bench::{count_from_env, median, per_second, result_line};
use pgwire_replication::{ReplicationClient, ReplicationConfig, ReplicationEvent};
use sqlx::{Connection, PgConnection};

/// Where the server is, from a `postgres://user[:password]@host[:port]/database` URL.
#[derive(Clone)]
struct Server {
    user: String,
    password: String,
    host: String,
    port: u16,
    database: String,
}

impl Server {
    fn parse(url: &str) -> Server {
        let rest = url
            .split_once("://")
            .map_or(url, |(_, r)| r)
            .split('?')
            .next()
            .unwrap_or_default();
        let (credentials, rest) = rest.rsplit_once('@').unwrap_or(("postgres", rest));
        let (user, password) = credentials.split_once(':').unwrap_or((credentials, ""));
        let (address, database) = rest.split_once('/').unwrap_or((rest, "postgres"));
        let (host, port) = address.rsplit_once(':').unwrap_or((address, "5432"));
        Server {
            user: user.to_string(),
            password: password.to_string(),
            host: host.to_string(),
            port: port.parse().expect("a port number"),
            database: database.to_string(),
        }
    }
}

/// Makes the table, its publication and the slot (all named `name`), then inserts `n`
/// rows, `per_tx` a transaction.
async fn backlog(conn: &mut PgConnection, name: &str, n: u64, per_tx: u64) {
    for statement in [
        format!("CREATE TABLE {name} (id bigint PRIMARY KEY, payload text NOT NULL)"),
        format!("CREATE PUBLICATION {name} FOR TABLE {name}"),
        format!("SELECT pg_create_logical_replication_slot('{name}', 'pgoutput')"),
    ] {
        sqlx::query(&statement)
            .execute(&mut *conn)
            .await
            .expect("set-up");
    }
    let insert = format!(
        "INSERT INTO {name} SELECT g, 'row number ' || g FROM generate_series($1::bigint, $2::bigint) g"
    );
    let mut i = 0u64;
    while i < n {
        let last = (i + per_tx).min(n);
        sqlx::query(&insert)
            .bind(i64::try_from(i + 1).unwrap_or(i64::MAX))
            .bind(i64::try_from(last).unwrap_or(i64::MAX))
            .execute(&mut *conn)
            .await
            .expect("insert");
        i = last;
    }
}

/// Drops the slot (ending any session still on it), the publication and the table.
async fn clean_up(conn: &mut PgConnection, name: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let _ = sqlx::query(
            "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots \
             WHERE slot_name = $1 AND active_pid IS NOT NULL",
        )
        .bind(name)
        .execute(&mut *conn)
        .await;
        let dropped = sqlx::query(
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1",
        )
        .bind(name)
        .execute(&mut *conn)
        .await;
        if dropped.is_ok() || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = sqlx::query(&format!("DROP PUBLICATION IF EXISTS {name}"))
        .execute(&mut *conn)
        .await;
    let _ = sqlx::query(&format!("DROP TABLE IF EXISTS {name}"))
        .execute(&mut *conn)
        .await;
}

/// The text bytes of a pgoutput Insert's new tuple (`I`, relation id, `N`, columns), or
/// `None` for any other message.
fn insert_text_len(data: &[u8]) -> Option<usize> {
    let (&kind, rest) = data.split_first()?;
    if kind != b'I' {
        return None;
    }
    let rest = rest.get(5..)?; // relation id (4) and 'N'
    let columns = u16::from_be_bytes([*rest.first()?, *rest.get(1)?]);
    let mut at = 2;
    let mut total = 0;
    for _ in 0..columns {
        match rest.get(at)? {
            b't' | b'b' => {
                let len = rest.get(at + 1..at + 5)?;
                let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
                std::str::from_utf8(rest.get(at + 5..at + 5 + len)?).ok()?;
                total += len;
                at += 5 + len;
            }
            _ => at += 1,
        }
    }
    Some(total)
}

/// The baseline: stream, read each inserted row's columns, confirm at each commit.
async fn raw_loop(server: &Server, name: &str, n: u64) -> Duration {
    let config = ReplicationConfig::new(
        server.host.clone(),
        server.user.clone(),
        server.password.clone(),
        server.database.clone(),
        name.to_string(),
        name.to_string(),
    )
    .with_port(server.port)
    .with_status_interval(Duration::from_secs(1))
    .with_buffer_size(64)
    .with_application_name("camel-bench");
    let mut client = ReplicationClient::connect(config)
        .await
        .expect("start replication");
    let mut first = None;
    let (mut seen, mut bytes) = (0u64, 0usize);
    while seen < n {
        match client.recv().await.expect("the stream") {
            Some(ReplicationEvent::XLogData { data, .. }) => {
                if let Some(len) = insert_text_len(&data) {
                    first.get_or_insert_with(Instant::now);
                    seen += 1;
                    bytes += len;
                }
            }
            Some(ReplicationEvent::Commit { end_lsn, .. }) => client.update_applied_lsn(end_lsn),
            Some(_) => {}
            None => panic!("the server ended the stream after {seen} rows"),
        }
    }
    let elapsed = first.map(|f| f.elapsed()).unwrap_or_default();
    assert!(bytes > 0);
    let _ = tokio::time::timeout(Duration::from_secs(5), client.shutdown()).await;
    elapsed
}

/// Ours: a route that counts; the time from the first exchange to the last.
async fn route(server: &Server, name: &str, n: u64) -> Duration {
    let password = if server.password.is_empty() {
        String::new()
    } else {
        format!(", password: '{}'", server.password)
    };
    let yaml = format!(
        r#"
- route:
    id: consume
    from:
      uri: "pg-replication-slot:{host}:{port}/{database}/{name}"
      parameters: {{ user: '{user}'{password}, publication: {name},
        auto_create_slot: false, auto_create_publication: false, max_inflight: 1,
        status_interval: 1000 }}
      steps:
        - process: {{ ref: work }}
"#,
        host = server.host,
        port = server.port,
        database = server.database,
        user = server.user,
    );
    camel_bench::time_consumer_route(Arc::new(camel_cdc::CdcComponent::new()), &yaml, n).await
}

#[tokio::main]
async fn main() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let server = Server::parse(&url);
    let n = count_from_env("CDC_ROWS", 50_000);
    let per_tx = count_from_env("CDC_ROWS_PER_TX", 100).max(1);
    let mut conn = PgConnection::connect(&url).await.expect("connect");
    let mut raw = Vec::new();
    let mut ours = Vec::new();
    for _ in 0..2 {
        let name = camel_bench::unique_name("bench_cdc", '_');
        backlog(&mut conn, &name, n, per_tx).await;
        // On a task of its own, as the route's consumer is: both sides then run on the
        // runtime's worker threads, not one on the `#[tokio::main]` thread.
        let (s, slot) = (server.clone(), name.clone());
        let took = tokio::spawn(async move { raw_loop(&s, &slot, n).await })
            .await
            .expect("the raw loop");
        raw.push(per_second(n, took));
        clean_up(&mut conn, &name).await;
        let name = camel_bench::unique_name("bench_cdc", '_');
        backlog(&mut conn, &name, n, per_tx).await;
        ours.push(per_second(n, route(&server, &name, n).await));
        clean_up(&mut conn, &name).await;
    }
    let (raw, ours) = (median(raw), median(ours));
    result_line(
        "cdc_consumer",
        &[
            ("rows", n.to_string()),
            ("rows_per_tx", per_tx.to_string()),
            ("raw_per_s", format!("{raw:.0}")),
            ("route_per_s", format!("{ours:.0}")),
            ("ratio", format!("{:.2}", ours / raw)),
        ],
    );
}
