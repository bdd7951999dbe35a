//! Entries that are not plain files: FIFOs, symbolic links (followed or not, inside or
//! outside the folder), links to folders. None may hang the consumer, leak a file from
//! outside the folder, or keep the rest of the folder from being taken.

use std::os::unix::fs::{symlink, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::read::read;
use super::scan::{Found, Skip};
use super::tests::{consume, names_in, never, stop, write};
use super::{AfterSuccess, ConsumerOptions, FileConsumer};
use crate::testing::text;

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Opens the FIFO's writing end without waiting and closes it, so that a reader stuck in
/// `open` (the old consumer) returns and the test can fail instead of hanging.
fn unblock(fifo: &Path) {
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(fifo);
}

/// Plays the writer a consumer opening `fifo` would wait for (paused time does not run
/// on while a blocking read is in flight, so no timeout could end such a wait): the read
/// then ends with an empty body and the test fails on what was taken instead of hanging.
/// [`release`] ends it when nobody opened the FIFO.
fn writer_for(fifo: &Path) -> std::thread::JoinHandle<()> {
    let fifo = fifo.to_path_buf();
    std::thread::spawn(move || {
        let _ = std::fs::OpenOptions::new().write(true).open(fifo);
    })
}

/// Opens the FIFO's reading end without waiting, which lets `writer_for`'s open return.
fn release(fifo: &Path, writer: std::thread::JoinHandle<()>) {
    let _reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(fifo);
    writer.join().unwrap();
}

/// Waits for `count` exchanges, at most 30 s of (paused) time.
async fn expect_taken(ctx: &camel_api::ConsumerContext, count: u64) {
    let waited = tokio::time::timeout(Duration::from_secs(30), ctx.stats().wait_for(count)).await;
    assert!(waited.is_ok(), "fewer than {count} files taken");
}

#[tokio::test(start_paused = true)]
async fn a_fifo_or_a_socket_is_skipped_without_opening_it_and_the_rest_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "a");
    let fifo = dir.path().join("b.pipe");
    mkfifo(&fifo);
    let writer = writer_for(&fifo);
    let _socket = std::os::unix::net::UnixListener::bind(dir.path().join("b.sock")).unwrap();
    write(dir.path(), "c.txt", "c");
    let (ctx, task, seen) = consume(dir.path(), "", never);
    expect_taken(&ctx, 2).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop(ctx, task).await;
    release(&fifo, writer);
    assert_eq!(names_in(&seen), ["a.txt", "c.txt"]);
    assert!(dir.path().join("b.pipe").exists(), "the FIFO stays");
    assert!(dir.path().join("b.sock").exists(), "the socket stays");
}

#[tokio::test]
async fn reading_an_entry_swapped_for_a_fifo_or_a_link_refuses_it_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("swapped");
    mkfifo(&fifo);
    let found = |open: PathBuf| Found {
        name: "swapped".into(),
        path: open.clone(),
        open,
    };
    let swapped = found(fifo.clone());
    let read_fifo = tokio::time::timeout(Duration::from_secs(10), read(&swapped, false));
    let outcome = match read_fifo.await {
        Ok(outcome) => outcome,
        Err(_) => {
            unblock(&fifo);
            panic!("reading a FIFO blocked");
        }
    };
    assert!(
        matches!(outcome, Err(Skip::NotRegular("FIFO"))),
        "{outcome:?}"
    );

    write(dir.path(), "secret", "s");
    let link = dir.path().join("link");
    symlink(dir.path().join("secret"), &link).unwrap();
    let outcome = read(&found(link), false).await;
    assert!(matches!(outcome, Err(Skip::BecameSymlink)), "{outcome:?}");
}

#[tokio::test(start_paused = true)]
async fn an_unreadable_file_does_not_use_up_max_messages_per_poll() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "b.txt", "b");
    std::fs::create_dir(dir.path().join("folder")).unwrap();
    let options = ConsumerOptions {
        include: None,
        exclude: None,
        after_success: AfterSuccess::Leave,
        move_failed: None,
        initial_delay: Duration::ZERO,
        delay: Duration::ZERO,
        recursive: false,
        max_per_poll: 1,
        follow_symlinks: false,
        lazy_body: false,
        idempotent: None,
        remember_noop: true,
        schedule: None,
        partition: None,
    };
    let mut consumer = FileConsumer::new("file:test".into(), dir.path().into(), options, false);
    let pipeline = camel_api::BoxProcessor::sync(Ok);
    let ctx = camel_api::ConsumerContext::for_pipeline("files", pipeline);
    // As if `a.txt` had been listed as a file and turned into a folder before the read
    // (as root, the tests cannot make a file unreadable by its permissions).
    let unreadable = Found {
        name: "a.txt".into(),
        path: dir.path().join("folder"),
        open: dir.path().join("folder"),
    };
    let readable = Found {
        name: "b.txt".into(),
        path: dir.path().join("b.txt"),
        open: dir.path().join("b.txt"),
    };
    let mut skipped = Vec::new();
    consumer
        .take(vec![unreadable, readable], &ctx, &mut skipped)
        .await;
    assert_eq!(ctx.stats().completed(), 1);
    assert!(
        matches!(skipped[..], [(_, Skip::NotRegular("folder"))]),
        "{skipped:?}"
    );
}

/// `in/` holding `a.txt`, `c.txt` and links; `outside/secret.txt` beside it.
fn folder_with_links() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let inbox = root.path().join("in");
    let outside = root.path().join("outside");
    write(&inbox, "a.txt", "a");
    write(&inbox, "c.txt", "c");
    write(&inbox, "data/x.txt", "x");
    write(&inbox, ".camel/old.txt", "old");
    write(&outside, "secret.txt", "secret");
    symlink(outside.join("secret.txt"), inbox.join("leak.txt")).unwrap();
    symlink(&outside, inbox.join("b_outside_dir")).unwrap();
    symlink(inbox.join("data"), inbox.join("b_inside_dir")).unwrap();
    symlink(inbox.join("data/x.txt"), inbox.join("inside.txt")).unwrap();
    symlink(inbox.join(".camel/old.txt"), inbox.join("moved.txt")).unwrap();
    symlink(inbox.join("gone.txt"), inbox.join("dangling.txt")).unwrap();
    (root, inbox, outside)
}

#[tokio::test(start_paused = true)]
async fn links_are_not_followed_by_default_and_do_not_block_the_folder() {
    let (_root, inbox, outside) = folder_with_links();
    let (ctx, task, seen) = consume(&inbox, "", never);
    expect_taken(&ctx, 2).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop(ctx, task).await;
    assert_eq!(names_in(&seen), ["a.txt", "c.txt"]);
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "secret"
    );
    assert!(inbox.join("leak.txt").is_symlink(), "the link was moved");
    assert!(!inbox.join(".camel/leak.txt").exists());
}

#[tokio::test(start_paused = true)]
async fn followed_links_are_taken_only_when_they_resolve_inside_the_folder() {
    let (_root, inbox, outside) = folder_with_links();
    let (ctx, task, seen) = consume(&inbox, "followSymlinks=true", never);
    expect_taken(&ctx, 3).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop(ctx, task).await;
    // Not `leak.txt` (outside), `moved.txt` (into `.camel`), `dangling.txt`, nor the
    // folders (not recursive).
    assert_eq!(names_in(&seen), ["a.txt", "c.txt", "inside.txt"]);
    let inside = seen.lock().unwrap()[2].clone();
    assert_eq!(text(&inside), "x");
    assert!(
        inbox.join(".camel/inside.txt").is_symlink(),
        "the link is moved"
    );
    assert!(inbox.join("data/x.txt").exists(), "its target stays");
    assert!(inbox.join("leak.txt").is_symlink());
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "secret"
    );
}

#[tokio::test(start_paused = true)]
async fn recursive_followed_links_descend_inside_only_and_never_loop() {
    let (_root, inbox, _outside) = folder_with_links();
    symlink(&inbox, inbox.join("data/loop")).unwrap();
    let (ctx, task, seen) = consume(
        &inbox,
        "followSymlinks=true&recursive=true&noop=true",
        never,
    );
    expect_taken(&ctx, 4).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop(ctx, task).await;
    let mut names = names_in(&seen);
    names.sort();
    // `data/x.txt` is reached directly and through `b_inside_dir` (whichever is listed
    // first) but never again through `data/loop`; nothing under `b_outside_dir`.
    let x = names.iter().filter(|n| n.ends_with("/x.txt")).count();
    assert_eq!(names.len(), 4, "{names:?}");
    assert_eq!(x, 1, "{names:?}");
    for name in ["a.txt", "c.txt", "inside.txt"] {
        assert!(names.contains(&name.to_string()), "{names:?}");
    }
    assert!(!names.iter().any(|n| n.contains("loop")), "{names:?}");
}

#[tokio::test(start_paused = true)]
async fn a_move_folder_planted_as_a_link_cannot_carry_files_out() {
    for (options, planted) in [("", ".camel"), ("move=done", "done")] {
        let root = tempfile::tempdir().unwrap();
        let (inbox, outside) = (root.path().join("in"), root.path().join("outside"));
        write(&inbox, "a.txt", "a");
        std::fs::create_dir_all(&outside).unwrap();
        symlink(&outside, inbox.join(planted)).unwrap();
        let (ctx, task, _seen) = consume(&inbox, options, never);
        expect_taken(&ctx, 1).await;
        stop(ctx, task).await;
        assert!(!outside.join("a.txt").exists(), "{options}: moved outside");
        assert!(inbox.join("a.txt").exists(), "{options}: the file stays");
    }
}

#[tokio::test(start_paused = true)]
async fn a_move_folder_outside_named_by_the_route_is_still_used() {
    let root = tempfile::tempdir().unwrap();
    let inbox = root.path().join("in");
    write(&inbox, "sub/a.txt", "a");
    let (ctx, task, _seen) = consume(&inbox, "move=../archive&recursive=true", never);
    expect_taken(&ctx, 1).await;
    stop(ctx, task).await;
    let archived = root.path().join("archive/sub/a.txt");
    assert_eq!(std::fs::read_to_string(archived).unwrap(), "a");
}

#[tokio::test]
async fn a_lazy_read_leaves_the_body_empty_and_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "big.txt", "line 1\nline 2\n");
    let path = dir.path().join("big.txt");
    let file = Found {
        name: "big.txt".into(),
        path: path.clone(),
        open: path,
    };
    let ex = read(&file, true).await.unwrap().unwrap();
    assert_eq!(ex.message.body, camel_api::Body::Empty);
    let path = ex.header("CamelFileAbsolutePath").unwrap().to_string();
    assert_eq!(std::fs::read_to_string(path).unwrap(), "line 1\nline 2\n");
    assert_eq!(
        ex.header("CamelFileLength"),
        Some(&camel_api::Value::from(14u64))
    );
}
