//! Two relay processes on one PostgreSQL: never two owners of a partition at once, and
//! after one is killed with SIGKILL the other takes its partitions over; the takeover time
//! is measured and printed.

mod common;

use std::collections::{HashMap, HashSet};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use camel_outbox::{Datasource, NewMessage, Outbox, OutboxConfig};
use common::*;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

const PARTITIONS: u32 = 4;

/// A probe process and the deliveries it prints: (partition, id).
fn spawn_probe(url: &str, name: &str, label: &str) -> (Child, mpsc::UnboundedReceiver<(u32, i64)>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_outbox-probe"))
        .args([url, name, &PARTITIONS.to_string(), label])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn outbox-probe");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut lines = BufReader::new(stdout).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let mut parts = line.split_whitespace().skip(1);
            if let (Some(Ok(p)), Some(Ok(id))) =
                (parts.next().map(str::parse), parts.next().map(str::parse))
            {
                let _ = tx.send((p, id));
            }
        }
    });
    (child, rx)
}

/// Receives deliveries until `done` holds over the partitions and ids seen so far.
async fn until(
    rx: &mut mpsc::UnboundedReceiver<(u32, i64)>,
    seen: &mut (HashSet<u32>, HashSet<i64>),
    what: &str,
    done: impl Fn(&HashSet<u32>, &HashSet<i64>) -> bool,
) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while !done(&seen.0, &seen.1) {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some((p, id))) => {
                seen.0.insert(p);
                seen.1.insert(id);
            }
            _ => panic!("timed out waiting for {what}"),
        }
    }
}

#[tokio::test]
async fn two_processes_share_partitions_and_survive_sigkill() {
    let Some(ds) = postgres() else { return };
    let url = std::env::var("CAMEL_TEST_PG_URL").unwrap_or_default();
    let Datasource::Postgres(pool) = ds.clone() else {
        unreachable!()
    };
    let name = unique("ob_2p");
    let mut config = OutboxConfig::new(&name);
    config.partitions = PARTITIONS;
    let outbox = Outbox::open(ds.clone(), config).await.unwrap();
    let table = outbox.table().to_string();
    sqlx::query(&format!(
        "CREATE TABLE {table}_log (process TEXT, partition_no INT, id BIGINT, group_key TEXT,
                                   started_us BIGINT, ended_us BIGINT)"
    ))
    .execute(&pool)
    .await
    .unwrap();

    let groups: Vec<String> = (0..40).map(|g| format!("g{g}")).collect();
    let mut published: Vec<i64> = publish(
        &outbox,
        groups
            .iter()
            .map(|g| NewMessage::text("warm").group(g))
            .collect(),
    )
    .await;
    let (mut a, mut a_rx) = spawn_probe(&url, &name, "A");
    let mut a_seen = Default::default();
    until(
        &mut a_rx,
        &mut a_seen,
        "A to drain every partition",
        |p, _| p.len() == PARTITIONS as usize,
    )
    .await;
    let (mut b, mut b_rx) = spawn_probe(&url, &name, "B");

    // Keep publishing while A is killed and B takes over: four publishers, each the one
    // writer of its ten groups, so their transactions commit out of id order all along.
    let running = Arc::new(AtomicBool::new(true));
    let publisher = {
        let (outbox, groups, running) = (outbox.clone(), groups.clone(), running.clone());
        tokio::spawn(async move {
            let mut writers = tokio::task::JoinSet::new();
            for w in 0..4 {
                let mine: Vec<String> = groups.iter().skip(w).step_by(4).cloned().collect();
                let (outbox, running) = (outbox.clone(), running.clone());
                writers.spawn(async move {
                    let mut ids = Vec::new();
                    let mut i = 0usize;
                    while running.load(AtomicOrdering::Relaxed) {
                        let batch = (0..2)
                            .map(|k| {
                                NewMessage::text("live").group(&mine[(i + k * 3) % mine.len()])
                            })
                            .collect();
                        ids.extend(publish(&outbox, batch).await);
                        i += 1;
                        tokio::task::yield_now().await;
                    }
                    ids
                });
            }
            let mut ids = Vec::new();
            while let Some(done) = writers.join_next().await {
                ids.extend(done.expect("a publisher"));
            }
            ids
        })
    };
    until(
        &mut a_rx,
        &mut a_seen,
        "A to deliver live traffic",
        |_, ids| ids.len() > 100,
    )
    .await;
    a.start_kill().expect("SIGKILL A");
    let killed = Instant::now();
    a.wait().await.expect("A exited");
    let mut b_seen = Default::default();
    until(
        &mut b_rx,
        &mut b_seen,
        "B to take every partition over",
        |p, _| p.len() == PARTITIONS as usize,
    )
    .await;
    let takeover = killed.elapsed();
    println!("takeover after SIGKILL: every one of {PARTITIONS} partitions delivered by the survivor within {takeover:?}");
    running.store(false, AtomicOrdering::Relaxed);
    published.extend(publisher.await.unwrap());
    let want: HashSet<i64> = published.iter().copied().collect();
    // A is dead: read what it reported before dying but the test had not consumed yet
    // (the channel closes at the end of A's output), or those ids would be waited for
    // from B, which never gets them (A confirmed them).
    while let Some((p, id)) = a_rx.recv().await {
        a_seen.0.insert(p);
        a_seen.1.insert(id);
    }
    let from_a = a_seen.1.clone();
    until(
        &mut b_rx,
        &mut b_seen,
        "every published message",
        |_, ids| {
            want.iter()
                .all(|id| ids.contains(id) || from_a.contains(id))
        },
    )
    .await;
    b.start_kill().expect("stop B");
    let _ = b.wait().await;

    assert!(
        takeover < Duration::from_secs(5),
        "takeover took {takeover:?}"
    );
    let rows: Vec<(String, i32, i64, Option<String>, i64, i64)> = sqlx::query_as(&format!(
        "SELECT process, partition_no, id, group_key, started_us, ended_us FROM {table}_log ORDER BY started_us"
    ))
    .fetch_all(&pool)
    .await
    .unwrap();
    // Never two owners at once: per partition, A's deliveries all end before B's begin.
    let mut spans: HashMap<(i32, String), (i64, i64)> = HashMap::new();
    for (process, part, _, _, start, end) in &rows {
        let span = spans
            .entry((*part, process.clone()))
            .or_insert((*start, *end));
        span.0 = span.0.min(*start);
        span.1 = span.1.max(*end);
    }
    for p in 0..PARTITIONS as i32 {
        if let (Some(a), Some(b)) = (spans.get(&(p, "A".into())), spans.get(&(p, "B".into()))) {
            assert!(
                a.1 <= b.0,
                "partition {p}: A delivered until {} but B started at {}",
                a.1,
                b.0
            );
        }
    }
    // Per group, first deliveries in id order across both processes.
    let mut first_seen = HashSet::new();
    let mut last: HashMap<String, i64> = HashMap::new();
    for (_, _, id, group, _, _) in &rows {
        if first_seen.insert(*id) {
            if let Some(g) = group {
                let prev = last.insert(g.clone(), *id);
                assert!(
                    prev.is_none_or(|p| p < *id),
                    "group {g}: {id} after {prev:?}"
                );
            }
        }
    }
    println!(
        "{} deliveries logged for {} messages",
        rows.len(),
        want.len()
    );
    let _ = sqlx::query(&format!("DROP TABLE IF EXISTS {table}_log"))
        .execute(&pool)
        .await;
    drop_tables(&ds, &table).await;
}
