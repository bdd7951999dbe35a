//! The `file` consumer through the binary, on folders holding what a careless or hostile
//! user leaves there: a FIFO, symbolic links out of the folder and to folders.

mod support;

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use support::spawn;

/// A route from `in/` to `out/` under `root`, polling every 50 ms; `parameters` are
/// extra consumer options in YAML flow syntax (`follow_symlinks: true, `).
fn routes(root: &Path, parameters: &str) -> PathBuf {
    let routes = root.join("routes.yaml");
    let yaml = format!(
        "- route:\n    id: files\n    from:\n      uri: 'file:{}'\n      parameters: {{{parameters}initial_delay: 0, delay: 50}}\n      steps:\n        - to: 'file:{}'\n",
        root.join("in").display(),
        root.join("out").display()
    );
    std::fs::write(&routes, yaml).unwrap();
    routes
}

/// Runs the binary to its end, killing it after 30 s (the old consumer hung for good on
/// a FIFO). Returns its log.
fn run_to_end(args: &[&str]) -> String {
    let (mut child, lines) = spawn(args);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // The reader thread ends at the end of the output, so every line is in.
    let log: Vec<String> = lines.iter().collect();
    let log = log.join("\n");
    match status {
        Some(status) => assert!(status.success(), "{status:?}\n{log}"),
        None => panic!("the run did not end within 30 s\n{log}"),
    }
    log
}

fn written(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root.join("out"))
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn warnings_about(log: &str, name: &str) -> usize {
    log.lines()
        .filter(|l| l.contains("file skipped") && l.contains(&format!("file={name}")))
        .count()
}

#[test]
fn a_fifo_in_the_folder_is_skipped_and_max_messages_still_ends_the_run() {
    let root = tempfile::tempdir().unwrap();
    let inbox = root.path().join("in");
    std::fs::create_dir_all(&inbox).unwrap();
    std::fs::write(inbox.join("a.txt"), "a").unwrap();
    let made = Command::new("mkfifo")
        .arg(inbox.join("b.pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::write(inbox.join("c.txt"), "c").unwrap();
    let routes = routes(root.path(), "");
    let log = run_to_end(&["run", routes.to_str().unwrap(), "--max-messages", "2"]);
    assert_eq!(written(root.path()), ["a.txt", "c.txt"], "{log}");
    assert!(log.contains("max-messages reached"), "{log}");
    assert_eq!(warnings_about(&log, "b.pipe"), 1, "{log}");
    assert!(inbox.join("b.pipe").exists());
}

/// `in/` holds `a.txt`, `c.txt`, a link to a file outside (`a_leak.txt`, sorted before
/// the bad entry so the old consumer took it), a link to a folder (`b_dir`, which failed
/// every poll) and a link to a file inside (`d_inside.txt`).
fn folder_with_links(root: &Path) {
    let inbox = root.join("in");
    let outside = root.join("outside");
    std::fs::create_dir_all(inbox.join("data")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(inbox.join("a.txt"), "a").unwrap();
    std::fs::write(inbox.join("c.txt"), "c").unwrap();
    std::fs::write(inbox.join("data/inside.txt"), "inside").unwrap();
    std::fs::write(outside.join("secret.txt"), "secret").unwrap();
    symlink(outside.join("secret.txt"), inbox.join("a_leak.txt")).unwrap();
    symlink(&outside, inbox.join("b_dir")).unwrap();
    symlink(inbox.join("data/inside.txt"), inbox.join("d_inside.txt")).unwrap();
}

#[test]
fn links_never_leave_the_folder_and_one_bad_entry_blocks_nothing() {
    for (parameters, expected) in [
        ("", vec!["a.txt", "c.txt"]),
        (
            "follow_symlinks: true, ",
            vec!["a.txt", "c.txt", "d_inside.txt"],
        ),
    ] {
        let root = tempfile::tempdir().unwrap();
        folder_with_links(root.path());
        let routes = routes(root.path(), parameters);
        let log = run_to_end(&["run", routes.to_str().unwrap(), "--max-idle-seconds", "1"]);
        assert_eq!(written(root.path()), expected, "{parameters}\n{log}");
        let secret = root.path().join("outside/secret.txt");
        assert_eq!(std::fs::read_to_string(secret).unwrap(), "secret");
        assert!(root.path().join("in/a_leak.txt").is_symlink());
        // About twenty polls, one warning per skipped entry.
        assert_eq!(warnings_about(&log, "a_leak.txt"), 1, "{log}");
        assert_eq!(warnings_about(&log, "b_dir"), 1, "{log}");
    }
}

/// The numbers logged after `marker`, in log order.
fn numbers_after(log: &str, marker: &str) -> Vec<u64> {
    log.lines()
        .filter_map(|l| l.split(marker).nth(1))
        .filter_map(|rest| rest.split_whitespace().next()?.parse().ok())
        .collect()
}

#[test]
fn the_resequencer_keys_on_a_files_body() {
    let root = tempfile::tempdir().unwrap();
    for (folder, bodies) in [("stream", ["3", "1", "2"]), ("batch", ["10", "9", "100"])] {
        let inbox = root.path().join(folder);
        std::fs::create_dir_all(&inbox).unwrap();
        for (name, body) in ["a.txt", "b.txt", "c.txt"].iter().zip(bodies) {
            std::fs::write(inbox.join(name), body).unwrap();
        }
    }
    // Camel's spelling: the expression beside the mode. The bodies stay bytes (no
    // convert_body_to), as a file consumer delivers them.
    let route = |mode: &str, config: &str| {
        format!(
            "- route:\n    id: {mode}\n    from:\n      uri: 'file:{}'\n      parameters: {{initial_delay: 0, delay: 50}}\n      steps:\n        - resequence: {{simple: '${{body}}', {mode}: {{{config}}}}}\n        - log: '{mode} out: ${{body}}'\n",
            root.path().join(mode).display()
        )
    };
    let yaml = route("stream", "initial_sequence: 1, gap_timeout_ms: 5000")
        + &route("batch", "size: 3, timeout_ms: 5000");
    let routes = root.path().join("routes.yaml");
    std::fs::write(&routes, yaml).unwrap();
    let log = run_to_end(&["run", routes.to_str().unwrap(), "--max-idle-seconds", "2"]);
    assert!(!log.contains("not an unsigned integer"), "{log}");
    assert_eq!(numbers_after(&log, "stream out: "), [1, 2, 3], "{log}");
    assert_eq!(numbers_after(&log, "batch out: "), [9, 10, 100], "{log}");
}
