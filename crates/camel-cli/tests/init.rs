//! `camel init`: each starter is written, validates as written, and the timer one runs.

mod support;

use std::process::Command;

fn camel_in(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_camel"))
        .args(args)
        .env("RUST_LOG", "info")
        .current_dir(dir)
        .output()
        .expect("the camel binary runs")
}

#[test]
fn every_starter_validates_as_written() {
    let dir = tempfile::tempdir().unwrap();
    for from in ["timer", "rest", "outbox", "kafka"] {
        let name = format!("starter-{from}");
        let out = camel_in(dir.path(), &["init", &name, "--from", from]);
        assert!(out.status.success(), "{}", support::text(&out));
        let file = format!("{name}.camel.yaml");
        assert!(dir.path().join(&file).is_file());
        let out = camel_in(dir.path(), &["validate", &file]);
        assert!(out.status.success(), "{from}: {}", support::text(&out));
    }
}

#[test]
fn every_starter_comes_with_a_test_file_that_passes() {
    let dir = tempfile::tempdir().unwrap();
    for from in ["timer", "rest", "outbox", "kafka"] {
        let name = format!("t-{from}");
        let out = camel_in(dir.path(), &["init", &name, "--from", from]);
        assert!(out.status.success(), "{}", support::text(&out));
        let test = format!("{name}.test.yaml");
        assert!(
            support::text(&out).contains(&test),
            "{}",
            support::text(&out)
        );
        let out = camel_in(dir.path(), &["test", &test]);
        assert!(out.status.success(), "{from}: {}", support::text(&out));
    }
    // A test file already there is kept; the route file is still written.
    std::fs::write(dir.path().join("again.test.yaml"), "mine").unwrap();
    let out = camel_in(dir.path(), &["init", "again"]);
    assert!(out.status.success(), "{}", support::text(&out));
    assert!(
        support::text(&out).contains("kept the existing"),
        "{}",
        support::text(&out)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("again.test.yaml")).unwrap(),
        "mine"
    );
    assert!(dir.path().join("again.camel.yaml").is_file());
}

#[test]
fn the_timer_starter_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = camel_in(dir.path(), &["init", "hello"]);
    assert!(out.status.success(), "{}", support::text(&out));
    let out = camel_in(
        dir.path(),
        &[
            "run",
            "hello.camel.yaml",
            "--max-messages",
            "2",
            "--max-seconds",
            "30",
        ],
    );
    let log = support::stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("Hello from hello, tick 1"), "{log}");
}

#[test]
fn an_existing_file_or_link_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mine.camel.yaml"), "keep me").unwrap();
    let out = camel_in(dir.path(), &["init", "mine"]);
    assert!(!out.status.success());
    assert!(
        support::text(&out).contains("already exists"),
        "{}",
        support::text(&out)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("mine.camel.yaml")).unwrap(),
        "keep me"
    );
    #[cfg(unix)]
    {
        let target = dir.path().join("elsewhere.txt");
        std::os::unix::fs::symlink(&target, dir.path().join("link.yaml")).unwrap();
        let out = camel_in(dir.path(), &["init", "link.yaml"]);
        assert!(!out.status.success(), "{}", support::text(&out));
        assert!(!target.exists(), "the link was followed");
    }
}

#[test]
fn a_name_without_letters_or_an_unknown_starter_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = camel_in(dir.path(), &["init", "&&"]);
    assert!(!out.status.success());
    assert!(
        support::text(&out).contains("no route id"),
        "{}",
        support::text(&out)
    );
    let out = camel_in(dir.path(), &["init", "x", "--from", "ftp"]);
    assert!(!out.status.success());
    assert!(
        support::text(&out).contains("timer"),
        "{}",
        support::text(&out)
    );
    assert!(support::file_names(dir.path()).is_empty());
}

#[test]
fn the_outbox_starter_publishes_and_relays() {
    let dir = tempfile::tempdir().unwrap();
    let out = camel_in(dir.path(), &["init", "orders", "--from", "outbox"]);
    assert!(out.status.success(), "{}", support::text(&out));
    let out = camel_in(
        dir.path(),
        &[
            "run",
            "orders.camel.yaml",
            "--max-messages",
            "4",
            "--max-seconds",
            "30",
        ],
    );
    let log = support::stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("relayed event 1 of order-"), "{log}");
}

#[test]
fn run_without_files_picks_up_the_folders_route_files_and_properties() {
    let dir = tempfile::tempdir().unwrap();
    let out = camel_in(dir.path(), &["init", "hello"]);
    assert!(out.status.success(), "{}", support::text(&out));
    // The property is read: the route's text comes from it.
    let route = std::fs::read_to_string(dir.path().join("hello.camel.yaml"))
        .unwrap()
        .replace("Hello from hello", "{{greeting}}");
    std::fs::write(dir.path().join("hello.camel.yaml"), route).unwrap();
    std::fs::write(
        dir.path().join("application.properties"),
        "greeting=Hi there\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("notes.yaml"), "not: a route").unwrap();
    let out = camel_in(
        dir.path(),
        &["run", "--max-messages", "1", "--max-seconds", "30"],
    );
    let log = support::stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("Hi there, tick 1"), "{log}");

    let empty = tempfile::tempdir().unwrap();
    let out = camel_in(empty.path(), &["run", "--max-seconds", "1"]);
    assert_eq!(out.status.code(), Some(1), "{}", support::text(&out));
    assert!(
        support::text(&out).contains("camel init"),
        "{}",
        support::text(&out)
    );
}
