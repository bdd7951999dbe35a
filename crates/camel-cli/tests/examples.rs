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
    assert!(out.status.success(), "{log}");
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
    let log = run_example(&root(), "examples/sinks/routes.yaml", "40");
    for customer in ["A", "B"] {
        let seen = numbers_after(&log, &format!("order={customer}-"));
        assert_ascending(&seen, customer, &log);
    }
}
