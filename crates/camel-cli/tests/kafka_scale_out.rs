//! Scale-out on a Kafka consumer group, through the binary: two `camel run` processes in
//! one group share a topic's partitions while records keep arriving; one is killed with
//! SIGKILL mid-stream. Nothing is lost, and the only records seen twice are ones the
//! killed process had taken (their offsets were not committed yet). Counted and printed.

mod support;

use std::collections::{HashMap, HashSet};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::ClientConfig;
use support::*;

const RECORDS: usize = 600;
const KEYS: usize = 8;

fn routes(brokers: &str, topic: &str, group: &str) -> String {
    format!(
        r#"- route:
    id: consume
    from:
      uri: "kafka:{topic}"
      parameters:
        brokers: '{brokers}'
        group_id: '{group}'
        auto_offset_reset: earliest
        session_timeout_ms: 6000
        heartbeat_interval_ms: 500
        auto_commit_interval_ms: 200
      steps:
        - log: 'consumed ${{body}}'
"#
    )
}

/// Bodies consumed so far, from the log lines that have arrived.
fn drain(rx: &Receiver<String>, into: &mut Vec<usize>) {
    while let Ok(line) = rx.try_recv() {
        if let Some(n) = line
            .split("consumed ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|n| n.parse().ok())
        {
            into.push(n);
        }
    }
}

#[test]
fn two_processes_share_a_group_and_a_killed_one_loses_nothing() {
    let Some(brokers) = camel_api::test_support::service_from_env("CAMEL_TEST_KAFKA_BROKERS")
    else {
        return;
    };
    let id = std::process::id();
    let topic = format!("camel-scale-{id}");
    let group = format!("camel-scale-g-{id}");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let admin: AdminClient<_> = ClientConfig::new()
            .set("bootstrap.servers", &brokers)
            .create()
            .unwrap();
        for r in admin
            .create_topics(
                &[NewTopic::new(&topic, 4, TopicReplication::Fixed(1))],
                &AdminOptions::new(),
            )
            .await
            .unwrap()
        {
            r.unwrap();
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, routes(&brokers, &topic, &group)).unwrap();
    let args = ["run", file.to_str().unwrap(), "--max-seconds", "90"];
    let (a, a_rx) = spawn(&args);
    let (b, b_rx) = spawn(&args);
    let mut children = Children(vec![a, b]);

    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", &brokers)
        .create()
        .unwrap();
    let (mut by_a, mut by_b) = (Vec::new(), Vec::new());
    let mut killed_after = None;
    let mut both_since = None;
    for i in 0..RECORDS {
        let key = format!("k{}", i % KEYS);
        let body = i.to_string();
        producer
            .send(BaseRecord::to(&topic).key(&key).payload(&body))
            .unwrap();
        producer.poll(Duration::ZERO);
        std::thread::sleep(Duration::from_millis(10));
        drain(&a_rx, &mut by_a);
        drain(&b_rx, &mut by_b);
        // Once both have taken records (they share the group), let them work side by
        // side for 1.5 s (several auto-commits), then kill A mid-stream.
        if both_since.is_none() && !by_a.is_empty() && !by_b.is_empty() {
            both_since = Some(i);
        }
        if killed_after.is_none() && both_since.is_some_and(|s| i >= s + 150) {
            children.kill(0);
            killed_after = Some(i);
        }
    }
    producer.flush(Duration::from_secs(10)).unwrap();
    let killed_after = killed_after.expect("both processes took records before the kill");
    drain(&a_rx, &mut by_a);

    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        drain(&b_rx, &mut by_b);
        let seen: HashSet<usize> = by_a.iter().chain(&by_b).copied().collect();
        if seen.len() == RECORDS || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    children.kill(1);

    let seen: HashSet<usize> = by_a.iter().chain(&by_b).copied().collect();
    let lost: Vec<usize> = (0..RECORDS).filter(|i| !seen.contains(i)).collect();
    assert!(lost.is_empty(), "lost {} records: {lost:?}", lost.len());

    // Duplicates: records seen more than once, in total.
    let mut count: HashMap<usize, usize> = HashMap::new();
    for n in by_a.iter().chain(&by_b) {
        *count.entry(*n).or_default() += 1;
    }
    let duplicates: Vec<usize> = count
        .iter()
        .filter(|(_, c)| **c > 1)
        .map(|(n, _)| *n)
        .collect();
    let a_took: HashSet<usize> = by_a.iter().copied().collect();
    assert!(
        duplicates.len() < by_a.len(),
        "what A committed before the kill is not read again ({} of {})",
        duplicates.len(),
        by_a.len()
    );
    assert!(
        duplicates.iter().all(|n| a_took.contains(n)),
        "only records the killed process had taken are seen twice"
    );
    // Each process sees every key in publish order.
    for (name, log) in [("A", &by_a), ("B", &by_b)] {
        let mut last: HashMap<usize, usize> = HashMap::new();
        let mut out_of_order = 0;
        for n in log.iter() {
            if let Some(prev) = last.insert(n % KEYS, *n) {
                if *n < prev {
                    out_of_order += 1;
                }
            }
        }
        // B reads A's uncommitted tail again after taking its partitions: that is
        // the only step back it may take, once per partition taken over.
        let allowed = if name == "B" { 4 } else { 0 };
        assert!(
            out_of_order <= allowed,
            "{name} went back {out_of_order} times in a key's order"
        );
    }
    println!(
        "RESULT kafka_scale_out records={RECORDS} by_a={} by_b={} killed_after={killed_after} \
         duplicates={} lost=0",
        by_a.len(),
        by_b.len(),
        duplicates.len()
    );
}

/// The two `camel` processes; whatever is still running is killed when the test ends,
/// however it ends.
struct Children(Vec<std::process::Child>);

impl Children {
    fn kill(&mut self, i: usize) {
        let _ = self.0[i].kill();
        let _ = self.0[i].wait();
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        for i in 0..self.0.len() {
            self.kill(i);
        }
    }
}
