//! A partitioned file route (`partitions: 6`) on three `camel run` processes sharing one
//! inbox, with partition leases on PostgreSQL (`CAMEL_TEST_PG_URL`).
//!
//! Every file the route takes (20 ms each) is a row (file name, holder, partition, epoch). The three
//! processes first settle on two partitions each; a batch of files is taken, each once;
//! a second batch is written and one process is SIGKILLed while it is being taken: its
//! partitions go to the two others (three each) and the rest of the files are taken.
//! Measured: the takeover time (kill to every partition held again), and files taken
//! twice: a file whose row the killed process wrote but that it had not yet moved away
//! when it died is taken again by the new owner (at-least-once across a crash), so at
//! most one per partition the killed process owned; none from the rebalancing, which
//! lets the file in flight finish before a partition is given up.

mod support;

use std::collections::BTreeMap;
use std::process::Child;
use std::time::{Duration, Instant};

use camel_api::test_support::service_from_env;
use sqlx::PgPool;
use support::*;

const PARTITIONS: i64 = 6;
const BATCH: usize = 90;

fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}_{}_{}", std::process::id(), nanos % 1_000_000_000)
}

struct Node {
    holder: String,
    child: Child,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(routes: &str, url: &str, holder: &str) -> Node {
    let props = [
        "camel.cluster.backend=postgres".to_string(),
        format!("camel.cluster.url={url}"),
        format!("camel.cluster.holder-id={holder}"),
        "camel.cluster.lease-duration=1000".to_string(),
        "camel.cluster.renew-interval=250".to_string(),
        "camel.cluster.retry-interval=100".to_string(),
    ];
    let mut args = vec!["run", routes, "--max-seconds", "120"];
    for p in &props {
        args.push("--property");
        args.push(p);
    }
    let (child, _log) = spawn(&args);
    Node {
        holder: holder.to_string(),
        child,
    }
}

/// Live partition leases of route `id`: partition namespace → holder (none while the
/// first process has not created the lease table yet).
async fn owners(pool: &PgPool, id: &str) -> BTreeMap<String, String> {
    sqlx::query_as::<_, (String, String)>(
        "SELECT namespace, holder FROM camel_cluster_lease \
         WHERE starts_with(namespace, $1) AND expires_at > clock_timestamp()",
    )
    .bind(format!("{id}/p"))
    .fetch_all(pool)
    .await
    .unwrap_or_default()
    .into_iter()
    .collect()
}

/// Polls until every partition is held and each of `holders` holds `each` of them.
async fn settled(pool: &PgPool, id: &str, holders: &[&str], each: usize) -> Duration {
    let started = Instant::now();
    let deadline = started + Duration::from_secs(30);
    loop {
        let now = owners(pool, id).await;
        let held = |h: &str| now.values().filter(|v| v.as_str() == h).count();
        if now.len() == PARTITIONS as usize && holders.iter().all(|h| held(h) == each) {
            return started.elapsed();
        }
        assert!(
            Instant::now() < deadline,
            "partitions not settled on {holders:?}: {now:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn distinct_files(pool: &PgPool, table: &str) -> i64 {
    sqlx::query_scalar(&format!("SELECT count(DISTINCT name) FROM {table}"))
        .fetch_one(pool)
        .await
        .unwrap()
}

/// Polls until `n` distinct files have rows.
async fn taken(pool: &PgPool, table: &str, n: i64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let got = distinct_files(pool, table).await;
        if got >= n {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{got} of {n} files taken in 30 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn drop_files(inbox: &std::path::Path, batch: usize) {
    for i in 0..BATCH {
        // Written aside and renamed in, so a poll never sees half a file.
        let name = format!("order-{batch}-{i:03}.txt");
        let aside = inbox.join(format!(".{name}"));
        std::fs::write(&aside, &name).unwrap();
        std::fs::rename(&aside, inbox.join(&name)).unwrap();
    }
}

#[test]
fn three_processes_share_a_partitioned_file_route_and_take_over_a_killed_ones_partitions() {
    let Some(url) = service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let pool = rt.block_on(PgPool::connect(&url)).unwrap();
    let table = unique("partitioned_files");
    let id = unique("inbox");
    rt.block_on(
        sqlx::query(&format!(
            "CREATE TABLE {table} (id BIGSERIAL PRIMARY KEY, name TEXT NOT NULL, \
             holder TEXT NOT NULL, part TEXT NOT NULL, epoch BIGINT NOT NULL)"
        ))
        .execute(&pool),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let inbox = dir.path().join("inbox");
    std::fs::create_dir(&inbox).unwrap();
    let routes = write_file(
        dir.path(),
        "routes.yaml",
        &format!(
            r#"- route:
    id: {id}
    partitions: {PARTITIONS}
    from:
      uri: file:{inbox}
      parameters: {{delay: 50, initial_delay: 0}}
      steps:
        - delay: 20
        - to:
            uri: "sql:INSERT INTO {table} (name, holder, part, epoch) VALUES (:#${{header.CamelFileName}}, '{{{{camel.cluster.holder-id}}}}', :#${{exchangeProperty.CamelClusterNamespace}}, :#${{exchangeProperty.CamelClusterEpoch}})"
            parameters: {{datasource: "{url}"}}
"#,
            inbox = inbox.display()
        ),
    );
    let mut nodes: Vec<Node> = (0..3)
        .map(|i| start(&routes, &url, &format!("part-node-{i}")))
        .collect();
    // Joining rebalances: whoever came first gives partitions up to the others.
    let balanced = rt.block_on(settled(
        &pool,
        &id,
        &["part-node-0", "part-node-1", "part-node-2"],
        2,
    ));
    drop_files(&inbox, 1);
    rt.block_on(taken(&pool, &table, BATCH as i64));
    let per_holder: Vec<(String, i64)> = rt
        .block_on(
            sqlx::query_as(&format!(
                "SELECT holder, count(*) FROM {table} GROUP BY holder ORDER BY holder"
            ))
            .fetch_all(&pool),
        )
        .unwrap();
    assert_eq!(per_holder.len(), 3, "all three took files: {per_holder:?}");

    // The second batch; one process dies while it is being taken.
    let victim = nodes.remove(1);
    let victims: Vec<String> = rt
        .block_on(owners(&pool, &id))
        .into_iter()
        .filter(|(_, h)| *h == victim.holder)
        .map(|(ns, _)| ns)
        .collect();
    assert_eq!(victims.len(), 2);
    drop_files(&inbox, 2);
    rt.block_on(taken(&pool, &table, BATCH as i64 + 10));
    let killed = Instant::now();
    drop(victim); // SIGKILL
    let takeover =
        killed.elapsed() + rt.block_on(settled(&pool, &id, &["part-node-0", "part-node-2"], 3));
    rt.block_on(taken(&pool, &table, 2 * BATCH as i64));
    let total: i64 = rt
        .block_on(sqlx::query_scalar(&format!("SELECT count(*) FROM {table}")).fetch_one(&pool))
        .unwrap();
    // Files taken more than once, with the holder that took each first.
    let doubled: Vec<(String, String)> = rt
        .block_on(
            sqlx::query_as(&format!(
                "SELECT name, (array_agg(holder ORDER BY id))[1] FROM {table} \
                 GROUP BY name HAVING count(*) > 1"
            ))
            .fetch_all(&pool),
        )
        .unwrap();
    // The victim's partitions were taken over under higher epochs.
    let taken_over: i64 = rt
        .block_on(
            sqlx::query_scalar(&format!(
                "SELECT count(*) FROM {table} WHERE part = ANY($1) AND holder <> 'part-node-1'"
            ))
            .bind(&victims)
            .fetch_one(&pool),
        )
        .unwrap();
    eprintln!(
        "partitioned file route, 3 processes, {PARTITIONS} partitions, lease 1000 ms: \
         balanced in {balanced:?} after start; 2 x {BATCH} files, {total} rows, \
         files taken twice {}; SIGKILL of one process: its 2 partitions held again after \
         {takeover:?}, {taken_over} files of them taken by the survivors",
        doubled.len()
    );
    assert_eq!(rt.block_on(distinct_files(&pool, &table)), 2 * BATCH as i64);
    assert!(
        taken_over > 0,
        "the survivors took the victim's partitions' files"
    );
    // Only a file in flight on the killed process (written, not yet moved away) can be
    // taken twice: at most one per partition it owned.
    assert!(
        doubled.len() <= victims.len() && doubled.iter().all(|(_, first)| first == "part-node-1"),
        "files taken twice: {doubled:?}"
    );
    assert!(
        takeover < Duration::from_secs(5),
        "takeover took {takeover:?}"
    );
    drop(nodes);
    rt.block_on(sqlx::query(&format!("DROP TABLE {table}")).execute(&pool))
        .unwrap();
}
