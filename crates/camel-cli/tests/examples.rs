//! The examples, run through the `camel` binary as a user would.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

#[test]
fn resequencer_example_logs_in_sequence_order() {
    let out = camel_in(
        &root(),
        &[
            "run",
            "examples/resequencer/routes.yaml",
            "--max-messages",
            "8",
        ],
    );
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    let outs: Vec<u32> = log
        .lines()
        .filter_map(|l| l.split("out: ").nth(1))
        .filter_map(|rest| rest.split_whitespace().next()?.parse().ok())
        .collect();
    assert_eq!(outs, (1..=8).collect::<Vec<_>>(), "{log}");
}

#[test]
fn outbox_example_delivers_each_order_in_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let routes = root().join("examples/outbox/routes.yaml");
    let out = camel_in(
        dir.path(),
        &[
            "run",
            routes.to_str().unwrap(),
            "--max-messages",
            "40",
            "--max-seconds",
            "60",
        ],
    );
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    let delivered = std::fs::read_to_string(dir.path().join("camel-data/delivered/orders.txt"))
        .unwrap_or_else(|e| panic!("nothing delivered: {e}\n{log}"));
    for order in ["order-1", "order-2"] {
        let events: Vec<u32> = delivered
            .lines()
            .filter(|l| l.contains(&format!("{order} event")))
            .filter_map(|l| l.rsplit(' ').next()?.parse().ok())
            .collect();
        assert!(!events.is_empty(), "no events of {order}:\n{delivered}");
        let mut sorted = events.clone();
        sorted.sort_unstable();
        assert_eq!(events, sorted, "{order} out of order:\n{delivered}");
    }
}

#[test]
fn sinks_example_keeps_each_customers_order() {
    if camel_api::test_support::service_from_env("CAMEL_TEST_NATS_URL").is_none() {
        return;
    }
    let out = camel_in(
        &root(),
        &[
            "run",
            "examples/sinks/routes.yaml",
            "--max-messages",
            "40",
            "--max-seconds",
            "60",
        ],
    );
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    for customer in ["A", "B"] {
        let seen: Vec<u32> = log
            .lines()
            .filter_map(|l| l.split(&format!("order={customer}-")).nth(1))
            .filter_map(|rest| rest.split_whitespace().next()?.parse().ok())
            .collect();
        assert!(!seen.is_empty(), "nothing received for {customer}:\n{log}");
        let mut sorted = seen.clone();
        sorted.sort_unstable();
        assert_eq!(seen, sorted, "customer {customer} out of order:\n{log}");
    }
}
