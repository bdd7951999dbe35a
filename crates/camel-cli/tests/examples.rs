//! The examples, run through the `camel` binary as a user would.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod support;

use support::{CdcCleanup, KillOnDrop};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn camel_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_camel"))
        .args(args)
        .env("RUST_LOG", "info")
        .current_dir(dir)
        .output()
        .expect("the camel binary runs")
}

/// Runs `camel run FILE --max-messages N --max-seconds 60` in `dir`; returns stderr,
/// failing the test on a non-zero exit.
fn run_example(dir: &Path, file: &str, max_messages: &str) -> String {
    let out = camel_in(
        dir,
        &[
            "run",
            file,
            "--max-messages",
            max_messages,
            "--max-seconds",
            "60",
        ],
    );
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "exit {:?}; the log's end:\n{}\n--- the whole log:\n{log}",
        out.status.code(),
        tail(&log, 40),
    );
    log
}

/// The numbers that follow `marker` on each line of `text` (up to the next space).
fn numbers_after(text: &str, marker: &str) -> Vec<u32> {
    text.lines()
        .filter_map(|l| l.split(marker).nth(1))
        .filter_map(|rest| rest.split_whitespace().next()?.parse().ok())
        .collect()
}

/// Asserts that `seen` is non-empty and ascending.
fn assert_ascending(seen: &[u32], what: &str, context: &str) {
    assert!(!seen.is_empty(), "nothing seen for {what}:\n{context}");
    assert!(
        seen.windows(2).all(|w| w[0] <= w[1]),
        "{what} out of order:\n{context}"
    );
}

#[test]
fn resequencer_example_logs_in_sequence_order() {
    let log = run_example(&root(), "examples/resequencer/routes.yaml", "8");
    let outs = numbers_after(&log, "out: ");
    assert_eq!(outs, (1..=8).collect::<Vec<_>>(), "{log}");
}

#[test]
fn outbox_example_delivers_each_order_in_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let routes = root().join("examples/outbox/routes.yaml");
    let log = run_example(dir.path(), routes.to_str().unwrap(), "40");
    let delivered = std::fs::read_to_string(dir.path().join("camel-data/delivered/orders.txt"))
        .unwrap_or_else(|e| panic!("nothing delivered: {e}\n{log}"));
    for order in ["order-1", "order-2"] {
        let events = numbers_after(&delivered, &format!("{order} event "));
        assert_ascending(&events, order, &delivered);
    }
}

#[test]
fn sinks_example_keeps_each_customers_order() {
    if camel_api::test_support::service_from_env("CAMEL_TEST_NATS_URL").is_none() {
        return;
    }
    // The batcher's flush events are at debug.
    let out = Command::new(env!("CARGO_BIN_EXE_camel"))
        .args([
            "run",
            "examples/sinks/routes.yaml",
            "--max-messages",
            "200",
            "--max-seconds",
            "60",
        ])
        .env("RUST_LOG", "info,camel_sinks=debug")
        .current_dir(root())
        .output()
        .expect("the camel binary runs");
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    // CI output keeps the start of a long message: the exit code and the end of the log
    // (the stop report, the warnings) come first.
    assert!(
        out.status.success(),
        "exit {:?}; {} orders received; the log's end:\n{}\n--- the whole log:\n{log}",
        out.status.code(),
        log.matches("received customer=").count(),
        tail(&log, 40),
    );
    for customer in ["A", "B", "C", "D", "E", "F", "G", "H", "I", "J"] {
        let seen = numbers_after(&log, &format!("order={customer}-"));
        assert_ascending(&seen, customer, &log);
    }
    // Ten concurrent callers: requests carry several entries each, not one or two.
    let flushes: String = log
        .lines()
        .filter(|l| l.contains("batch flushed"))
        .map(|l| format!("{l}\n"))
        .collect();
    let batches = numbers_after(&flushes, " entries=");
    let sent: u32 = batches.iter().sum();
    assert_eq!(sent, 100, "every order sent once: {batches:?}");
    assert!(
        batches.len() <= 25,
        "100 orders in {} requests: {batches:?}",
        batches.len()
    );
}

/// The last `n` lines of `text`.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Relayed events as `(id, order, event number)`, from `relayed #ID ORDER: ORDER event N`.
fn relayed(line: &str) -> Option<(i64, String, u32)> {
    let rest = line.split("relayed #").nth(1)?;
    let (id, rest) = rest.split_once(' ')?;
    let (order, rest) = rest.split_once(':')?;
    let n = rest
        .split("event ")
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some((id.parse().ok()?, order.to_string(), n))
}

/// Reads lines until `done` holds over those read so far, at most 60 s.
fn read_until(
    rx: &std::sync::mpsc::Receiver<String>,
    lines: &mut Vec<String>,
    what: &str,
    done: impl Fn(&[String]) -> bool,
) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !done(lines) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => lines.push(line),
            Err(e) => panic!("{what}: {e}; lines so far:\n{}", lines.join("\n")),
        }
    }
}

fn owned(lines: &[String]) -> usize {
    lines
        .iter()
        .filter(|l| l.contains("outbox partition owned"))
        .count()
}

#[test]
fn outbox_postgres_example_moves_partitions_to_the_survivor_of_a_kill() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let name = format!("example_{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    for file in ["relay.yaml", "producer.yaml"] {
        let text = std::fs::read_to_string(root().join("examples/outbox-postgres").join(file))
            .unwrap()
            .replace("postgres://postgres@127.0.0.1:5432/test", &url)
            .replace("outbox:orders", &format!("outbox:{name}"));
        std::fs::write(dir.path().join(file), text).unwrap();
    }
    let relay = dir.path().join("relay.yaml");
    let producer = dir.path().join("producer.yaml");
    let relay = relay.to_str().unwrap();

    let (a, a_rx) = support::spawn(&["run", relay]);
    let mut a = KillOnDrop(a);
    let mut a_lines = Vec::new();
    read_until(&a_rx, &mut a_lines, "A owns every partition", |l| {
        owned(l) == 4
    });
    let (b, b_rx) = support::spawn(&["run", relay]);
    let _b = KillOnDrop(b);
    let mut b_lines = Vec::new();
    read_until(&b_rx, &mut b_lines, "B is up", |l| {
        l.iter().any(|l| l.contains("route started"))
    });
    let (publisher, _p_rx) = support::spawn(&[
        "run",
        producer.to_str().unwrap(),
        "--max-messages",
        "400",
        "--max-seconds",
        "60",
    ]);
    let mut publisher = KillOnDrop(publisher);
    read_until(&a_rx, &mut a_lines, "A relays", |l| {
        l.iter().filter_map(|l| relayed(l)).count() >= 40
    });
    a.0.kill().unwrap();
    a.0.wait().unwrap();
    // What A printed before it died.
    a_lines.extend(a_rx.iter());
    let from_a: Vec<_> = a_lines.iter().filter_map(|l| relayed(l)).collect();
    let ids_a: std::collections::HashSet<i64> = from_a.iter().map(|r| r.0).collect();
    read_until(
        &b_rx,
        &mut b_lines,
        "B takes over and relays the rest",
        |l| {
            let ids: std::collections::HashSet<i64> = l
                .iter()
                .filter_map(|l| relayed(l))
                .map(|r| r.0)
                .chain(ids_a.iter().copied())
                .collect();
            owned(l) == 4 && ids.len() == 400
        },
    );
    assert!(publisher.0.wait().unwrap().success());

    // Per order, first deliveries across both processes in event order.
    let mut seen = std::collections::HashSet::new();
    let mut last: std::collections::HashMap<String, u32> = Default::default();
    for (id, order, n) in from_a
        .into_iter()
        .chain(b_lines.iter().filter_map(|l| relayed(l)))
    {
        if seen.insert(id) {
            if let Some(prev) = last.insert(order.clone(), n) {
                assert!(prev < n, "{order}: event {n} relayed after {prev}");
            }
        }
    }
    assert_eq!(last.len(), 4);

    support::drop_outbox_tables(&url, &name);
}

#[test]
fn outbox_kafka_example_keeps_each_orders_events_in_order() {
    let Some(brokers) = camel_api::test_support::service_from_env("CAMEL_TEST_KAFKA_BROKERS")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let id = std::process::id();
    let text = std::fs::read_to_string(root().join("examples/outbox-kafka/routes.yaml"))
        .unwrap()
        .replace("127.0.0.1:9092", &brokers)
        .replace(
            "camel-example-orders",
            &format!("camel-example-orders-{id}"),
        )
        .replace("order-audit", &format!("order-audit-{id}"));
    std::fs::write(dir.path().join("routes.yaml"), text).unwrap();
    let log = run_example(dir.path(), "routes.yaml", "90");
    for order in ["order-a", "order-b", "order-c"] {
        let consumed = numbers_after(&log, &format!("consumed {order} event "));
        assert_eq!(consumed.len(), 10, "{order}:\n{log}");
        assert_ascending(&consumed, order, &log);
    }
}

#[test]
fn mqtt_outbox_example_keeps_each_devices_readings_in_order() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_MQTT_URL") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let id = std::process::id();
    let text = std::fs::read_to_string(root().join("examples/mqtt-outbox/routes.yaml"))
        .unwrap()
        .replace("tcp://127.0.0.1:1883", &url)
        .replace(
            "camel-example/sensors",
            &format!("camel-example-{id}/sensors"),
        )
        .replace(
            "camel-example-ingest",
            &format!("camel-example-ingest-{id}"),
        )
        // A session that ends with the process, so the test leaves none behind.
        .replace(
            "cleanStart=false",
            "cleanStart=false&sessionExpiryInterval=0",
        );
    std::fs::write(dir.path().join("routes.yaml"), text).unwrap();
    let log = run_example(dir.path(), "routes.yaml", "60");
    for device in ["device-1", "device-2"] {
        let relayed = numbers_after(&log, &format!("relayed {device} reading "));
        assert_eq!(relayed.len(), 10, "{device}:\n{log}");
        assert_ascending(&relayed, device, &log);
    }
}

#[test]
fn cdc_kafka_example_keeps_each_orders_changes_in_commit_order() {
    let Some(brokers) = camel_api::test_support::service_from_env("CAMEL_TEST_KAFKA_BROKERS")
    else {
        return;
    };
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let id = std::process::id();
    let name = format!("camel_example_orders_{id}");
    let _cleanup = CdcCleanup {
        url: url.clone(),
        name: name.clone(),
    };
    let server = url.trim_start_matches("postgres://");
    let (user, server) = server.split_once('@').unwrap_or(("postgres", server));
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("examples/cdc-kafka/routes.yaml"))
        .unwrap()
        .replace("postgres://postgres@127.0.0.1:5432/test", &url)
        .replace("127.0.0.1:5432/test/", &format!("{server}/"))
        .replace("user: postgres", &format!("user: {user}"))
        .replace("127.0.0.1:9092", &brokers)
        .replace("camel_example_orders", &name)
        .replace(
            "camel-example-order-changes",
            &format!("camel-example-order-changes-{id}"),
        )
        .replace("order-changes-audit", &format!("order-changes-audit-{id}"));
    std::fs::write(dir.path().join("routes.yaml"), text).unwrap();
    // 1 table + 20 orders + 40 changes captured + 40 consumed.
    let log = run_example(dir.path(), "routes.yaml", "101");
    let consumed: Vec<(u32, String)> = log
        .lines()
        .filter_map(|l| l.split("consumed order ").nth(1))
        .filter_map(|rest| {
            let mut words = rest.split_whitespace();
            Some((words.next()?.parse().ok()?, words.next()?.to_string()))
        })
        .collect();
    assert_eq!(consumed.len(), 40, "{log}");
    for order in 1..=20u32 {
        let ops: Vec<&str> = consumed
            .iter()
            .filter(|(o, _)| *o == order)
            .map(|(_, op)| op.as_str())
            .collect();
        assert_eq!(ops, ["insert", "update"], "order {order}:\n{log}");
    }
}
