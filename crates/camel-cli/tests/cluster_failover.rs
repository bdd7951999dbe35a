//! Leader-only routes through the binary, on PostgreSQL leases (`CAMEL_TEST_PG_URL`).
//!
//! - The kill test: three `camel run` processes with a leader-only timer route writing a
//!   row per tick (its epoch and holder) with `fence=true`; the leader is SIGKILLed
//!   (then replaced by a new process) and SIGSTOPped past its lease then SIGCONTinued,
//!   alternately, `CAMEL_CLUSTER_KILL_CYCLES` times (default 20). Measured: failover time
//!   (disruption to the first row of a higher epoch), ticks lost, and rows written
//!   under an epoch after a higher epoch had written (must be 0 with fencing).
//! - The fencing test: a leader paused while an exchange waits in a `delay` step,
//!   past its lease; a new leader writes; the old one resumes: its write is refused with
//!   `fence=true` and lands without it (so the refusal is the fence's doing).

mod support;

use std::process::Child;
use std::time::{Duration, Instant};

use camel_api::test_support::service_from_env;
use sqlx::PgPool;
use support::*;

const LEASE_MS: u64 = 1000;
const PERIOD_MS: u64 = 50;

fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}_{}_{}", std::process::id(), nanos % 1_000_000_000)
}

fn signal(child: &Child, sig: &str) {
    let status = std::process::Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill {sig} failed");
}

struct Node {
    holder: String,
    child: Child,
    log: std::sync::mpsc::Receiver<String>,
}

impl Node {
    fn start(routes: &str, url: &str, holder: &str) -> Node {
        Node::start_on(routes, "postgres", url, holder)
    }

    fn start_on(routes: &str, backend: &str, url: &str, holder: &str) -> Node {
        // The default lease table, which `fence=true` checks; namespaces are unique. The
        // NATS bucket's entries expire after the lease.
        let props = [
            format!("camel.cluster.backend={backend}"),
            format!("camel.cluster.url={url}"),
            "camel.cluster.nats.bucket=camel_cluster_kill_test".to_string(),
            format!("camel.cluster.holder-id={holder}"),
            format!("camel.cluster.lease-duration={LEASE_MS}"),
            "camel.cluster.renew-interval=250".to_string(),
            "camel.cluster.retry-interval=100".to_string(),
        ];
        let mut args = vec!["run", routes, "--max-seconds", "240"];
        for p in &props {
            args.push("--property");
            args.push(p);
        }
        let (child, log) = spawn(&args);
        Node {
            holder: holder.to_string(),
            child,
            log,
        }
    }

    fn lines(&self) -> Vec<String> {
        self.log.try_iter().collect()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The leader-only ticker. With `delay_ms`, it hands each tick over `seda:` to a route
/// that waits that long, publishes to the outbox `{table}` (group key: the epoch) and
/// then writes the row: the exchange (and its epoch) outlives the leader-only consumer,
/// as work queued inside a process does.
fn routes(
    dir: &std::path::Path,
    ns: &str,
    table: &str,
    url: &str,
    fence: bool,
    delay_ms: u64,
) -> String {
    let write = format!(
        r#"        - to:
            uri: "sql:INSERT INTO {table} (epoch, holder) VALUES (:#${{exchangeProperty.CamelClusterEpoch}}, '{{{{camel.cluster.holder-id}}}}')"
            parameters: {{datasource: "{url}", fence: {fence}}}
"#
    );
    let publish = format!(
        r#"        - to:
            uri: "outbox:{table}"
            parameters: {{datasource: "{url}", group_key: "${{exchangeProperty.CamelClusterEpoch}}", fence: {fence}}}
"#
    );
    let (period, first, second) = if delay_ms > 0 {
        (
            200,
            "        - to: seda:work\n".to_string(),
            format!(
                "- route:\n    id: writer\n    from:\n      uri: seda:work\n      steps:\n        - delay: {delay_ms}\n{publish}{write}"
            ),
        )
    } else {
        (PERIOD_MS, write, String::new())
    };
    write_file(
        dir,
        "routes.yaml",
        &format!(
            r#"- route:
    id: ticker
    route_policy: {{leader: {ns}}}
    from:
      uri: timer:tick
      parameters: {{period: {period}, delay: 0}}
      steps:
{first}{second}"#
        ),
    )
}

async fn create_table(pool: &PgPool, table: &str) {
    sqlx::query(&format!(
        "CREATE TABLE {table} (id BIGSERIAL PRIMARY KEY, epoch BIGINT NOT NULL, \
         holder TEXT NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp())"
    ))
    .execute(pool)
    .await
    .unwrap();
}

/// Polls until a row with an epoch above `above` lands; its (epoch, holder).
async fn next_epoch(pool: &PgPool, table: &str, above: i64, limit: Duration) -> (i64, String) {
    let deadline = Instant::now() + limit;
    loop {
        let row: Option<(i64, String)> = sqlx::query_as(&format!(
            "SELECT epoch, holder FROM {table} WHERE epoch > $1 ORDER BY id LIMIT 1"
        ))
        .bind(above)
        .fetch_optional(pool)
        .await
        .unwrap();
        if let Some(row) = row {
            return row;
        }
        assert!(
            Instant::now() < deadline,
            "no leader wrote within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Rows written under an epoch lower than one already written before them.
async fn stale_rows(pool: &PgPool, table: &str) -> i64 {
    sqlx::query_scalar(&format!(
        "SELECT count(*) FROM (SELECT epoch, max(epoch) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before FROM {table}) r WHERE epoch < before"
    ))
    .fetch_one(pool)
    .await
    .unwrap()
}

/// Ticks missing between consecutive rows (a gap of k periods lost k - 1 ticks; a
/// tolerance of half a period for the timer's own jitter).
async fn lost_ticks(pool: &PgPool, table: &str) -> (i64, i64) {
    let gaps: Vec<Option<f64>> = sqlx::query_scalar(&format!(
        "SELECT EXTRACT(EPOCH FROM at - lag(at) OVER (ORDER BY id))::float8 * 1000 FROM {table} ORDER BY id"
    ))
    .fetch_all(pool)
    .await
    .unwrap();
    let lost: i64 = gaps
        .iter()
        .flatten()
        .map(|g| ((g / PERIOD_MS as f64) - 0.5).floor().max(0.0) as i64)
        .sum();
    let total: i64 = sqlx::query_scalar(&format!("SELECT count(*) FROM {table}"))
        .fetch_one(pool)
        .await
        .unwrap();
    (lost, total)
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The kill test on `backend` at `lease_url`, rows written to PostgreSQL at `url`.
fn kill_test(backend: &str, lease_url: &str, url: &str, fence: bool) {
    let cycles: usize = std::env::var("CAMEL_CLUSTER_KILL_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let rt = rt();
    let pool = rt.block_on(PgPool::connect(url)).unwrap();
    let table = unique("cluster_ticks");
    let ns = unique("ticker");
    rt.block_on(create_table(&pool, &table));
    let dir = tempfile::tempdir().unwrap();
    let file = routes(dir.path(), &ns, &table, url, fence, 0);
    let mut nodes: Vec<Node> = (0..3)
        .map(|i| Node::start_on(&file, backend, lease_url, &format!("node-{i}")))
        .collect();
    let mut next_id = 3;
    let started = Instant::now();
    let (mut epoch, mut holder) =
        rt.block_on(next_epoch(&pool, &table, 0, Duration::from_secs(20)));
    let mut failovers = Vec::new();
    for cycle in 0..cycles {
        // Let the leader write a few ticks first.
        std::thread::sleep(Duration::from_millis(200));
        let at = nodes
            .iter()
            .position(|n| n.holder == holder)
            .expect("the leader is ours");
        let disrupted = Instant::now();
        let kill = cycle % 2 == 0;
        if kill {
            signal(&nodes[at].child, "-KILL");
        } else {
            signal(&nodes[at].child, "-STOP");
        }
        let (e, h) = rt.block_on(next_epoch(&pool, &table, epoch, Duration::from_secs(10)));
        failovers.push(disrupted.elapsed());
        assert_ne!(h, holder, "the new epoch belongs to another node");
        if kill {
            nodes.remove(at);
            nodes.push(Node::start_on(
                &file,
                backend,
                lease_url,
                &format!("node-{next_id}"),
            ));
            next_id += 1;
        } else {
            signal(&nodes[at].child, "-CONT");
        }
        (epoch, holder) = (e, h);
    }
    // The resumed nodes had time to write if fencing let them.
    std::thread::sleep(Duration::from_millis(500));
    let total_time = started.elapsed();
    let stale = rt.block_on(stale_rows(&pool, &table));
    let (lost, rows) = rt.block_on(lost_ticks(&pool, &table));
    let mut sorted = failovers.clone();
    sorted.sort();
    let median = sorted[sorted.len() / 2];
    let max = *sorted.last().unwrap();
    let fenced: usize = nodes
        .iter()
        .flat_map(|n| n.lines())
        .filter(|l| l.contains("fenced"))
        .count();
    eprintln!(
        "{backend} (fence={fence}) failover (lease {LEASE_MS} ms, {cycles} disruptions: SIGKILL and SIGSTOP alternately): median {median:?}, max {max:?}; \
         rows {rows}, ticks lost {lost} (period {PERIOD_MS} ms), stale writes {stale}, fenced refusals logged {fenced}, run {total_time:?}"
    );
    if fence {
        assert_eq!(stale, 0, "a former leader wrote after its successor");
    }
    assert!(
        max < Duration::from_millis(LEASE_MS * 4),
        "a failover took {max:?}"
    );
    drop(nodes);
    rt.block_on(sqlx::query(&format!("DROP TABLE {table}")).execute(&pool))
        .unwrap();
}

#[test]
fn three_nodes_fail_over_on_postgres_leases_without_stale_writes() {
    let Some(url) = service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    kill_test("postgres", &url, &url, true);
}

#[test]
fn three_nodes_fail_over_on_redis_leases() {
    let Some(url) = service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let Some(redis) = service_from_env("CAMEL_TEST_REDIS_URL") else {
        return;
    };
    kill_test("redis", &redis, &url, false);
}

#[test]
fn three_nodes_fail_over_on_nats_kv_leases() {
    let Some(url) = service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let Some(nats) = service_from_env("CAMEL_TEST_NATS_URL") else {
        return;
    };
    kill_test("nats", &nats, &url, false);
}

/// One run of the fencing scenario; the number of rows the paused leader's epoch wrote
/// after the new leader's first row.
fn paused_leader_writes_after_takeover(url: &str, fence: bool) -> (i64, Vec<String>) {
    let rt = rt();
    let pool = rt.block_on(PgPool::connect(url)).unwrap();
    let table = unique("cluster_fence");
    let ns = unique("fence");
    rt.block_on(create_table(&pool, &table));
    let dir = tempfile::tempdir().unwrap();
    // Each exchange waits 1 s in the `seda:` route before its write: some are always in
    // flight.
    let file = routes(dir.path(), &ns, &table, url, fence, 1000);
    let old = Node::start(&file, url, "old");
    let (first, holder) = rt.block_on(next_epoch(&pool, &table, 0, Duration::from_secs(20)));
    assert_eq!(holder, "old");
    let new = Node::start(&file, url, "new");
    // Ticks keep arriving on the queue under the old epoch.
    std::thread::sleep(Duration::from_millis(300));
    signal(&old.child, "-STOP");
    let (second, holder) = rt.block_on(next_epoch(&pool, &table, first, Duration::from_secs(10)));
    assert_eq!(holder, "new");
    assert!(second > first);
    signal(&old.child, "-CONT");
    // The queued exchanges of the old epoch wake and try their writes, one a second.
    std::thread::sleep(Duration::from_millis(2500));
    let stale: i64 = rt
        .block_on(
            sqlx::query_scalar(&format!(
                "SELECT count(*) FROM {table} WHERE epoch = $1 AND id > (SELECT min(id) FROM {table} WHERE epoch = $2)"
            ))
            .bind(first)
            .bind(second)
            .fetch_one(&pool),
        )
        .unwrap();
    // Every exchange of the old epoch published and wrote, or did neither: had the
    // outbox's fence let one through that the `sql:` fence then refused, there would be
    // more messages than rows.
    let count = |sql: String| -> i64 {
        rt.block_on(sqlx::query_scalar(&sql).bind(first).fetch_one(&pool))
            .unwrap()
    };
    let published = count(format!(
        "SELECT count(*) FROM camel_outbox_{table} WHERE group_key = $1::text"
    ));
    let written = count(format!("SELECT count(*) FROM {table} WHERE epoch = $1"));
    let lines = old.lines();
    drop((old, new));
    rt.block_on(sqlx::query(&format!("DROP TABLE {table}")).execute(&pool))
        .unwrap();
    drop_outbox_tables(url, &table);
    assert!(written >= 1, "the old leader wrote before its pause");
    assert_eq!(
        published, written,
        "outbox messages of the old epoch vs rows"
    );
    (stale, lines)
}

#[test]
fn a_paused_leader_that_wakes_after_a_takeover_cannot_write_with_fencing() {
    let Some(url) = service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let (stale, lines) = paused_leader_writes_after_takeover(&url, true);
    assert_eq!(stale, 0, "the old leader's write landed: {lines:#?}");
    assert!(
        lines.iter().any(|l| l.contains("fenced")),
        "the refusal is logged: {lines:#?}"
    );
    // Without the fence the same write lands: the refusal above is the fence's doing.
    let (stale, _) = paused_leader_writes_after_takeover(&url, false);
    assert!(
        stale >= 1,
        "without fencing the paused leader's write lands"
    );
}
