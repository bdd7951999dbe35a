use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use camel_api::{names, BoxProcessor, CamelError, ConsumerContext, Exchange, Value};
use tokio::task::JoinHandle;

use super::super::{headers, FileComponent};
use crate::testing::{endpoint, text};

pub(super) type Seen = Arc<Mutex<Vec<Exchange>>>;

pub(super) fn write(dir: &Path, name: &str, body: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
}

pub(super) fn names_in(seen: &Seen) -> Vec<String> {
    seen.lock()
        .unwrap()
        .iter()
        .map(|ex| ex.header(names::FILE_NAME).unwrap().to_string())
        .collect()
}

/// Starts a consumer of `dir` with `options`; the pipeline records every exchange and
/// fails those for which `fail` says so.
pub(super) fn consume(
    dir: &Path,
    options: &str,
    fail: impl Fn(&Exchange) -> bool + Send + Sync + 'static,
) -> (ConsumerContext, JoinHandle<Result<(), CamelError>>, Seen) {
    let uri = format!("file:{}?initialDelay=0&{options}", dir.display());
    let ep = endpoint(&FileComponent, &uri).unwrap();
    let seen: Seen = Arc::default();
    let sink = seen.clone();
    let pipeline = BoxProcessor::sync(move |ex: Exchange| {
        sink.lock().unwrap().push(ex.clone());
        if fail(&ex) {
            return Err(CamelError::processor("refused"));
        }
        Ok(ex)
    });
    let ctx = ConsumerContext::for_pipeline("files", pipeline);
    let task = tokio::spawn(ep.consumer().unwrap().run(ctx.clone()));
    (ctx, task, seen)
}

pub(super) async fn stop(ctx: ConsumerContext, task: JoinHandle<Result<(), CamelError>>) {
    ctx.cancellation().cancel();
    task.await.unwrap().unwrap();
}

pub(super) fn never(_: &Exchange) -> bool {
    false
}

#[tokio::test(start_paused = true)]
async fn takes_files_in_name_order_with_headers_then_moves_them_to_dot_camel() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "b.txt", "second");
    write(dir.path(), "a.txt", "first");
    let (ctx, task, seen) = consume(dir.path(), "", never);
    ctx.stats().wait_for(2).await;
    stop(ctx, task).await;

    assert_eq!(names_in(&seen), ["a.txt", "b.txt"]);
    let first = seen.lock().unwrap()[0].clone();
    assert_eq!(text(&first), "first");
    assert_eq!(first.header(headers::FILE_LENGTH), Some(&Value::Int(5)));
    assert!(
        first
            .header(headers::FILE_LAST_MODIFIED)
            .and_then(Value::as_i64)
            > Some(0)
    );
    assert!(!dir.path().join("a.txt").exists());
    let moved = std::fs::read_to_string(dir.path().join(".camel/a.txt")).unwrap();
    assert_eq!(moved, "first");
}

#[tokio::test(start_paused = true)]
async fn include_exclude_and_hidden_files() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "a.csv",
        "b.txt",
        ".hidden.csv",
        "skip.csv",
        ".camel/old.csv",
    ] {
        write(dir.path(), name, "x");
    }
    let (ctx, task, seen) = consume(dir.path(), "include=*.csv&exclude=skip*", never);
    ctx.stats().wait_for(1).await;
    tokio::time::sleep(Duration::from_secs(5)).await; // ten more polls
    stop(ctx, task).await;
    assert_eq!(names_in(&seen), ["a.csv"]);
    assert!(dir.path().join("b.txt").exists() && dir.path().join("skip.csv").exists());
}

#[tokio::test(start_paused = true)]
async fn noop_leaves_the_file_and_takes_it_once() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "x");
    let (ctx, task, seen) = consume(dir.path(), "noop=true", never);
    ctx.stats().wait_for(1).await;
    write(dir.path(), "b.txt", "y");
    tokio::time::sleep(Duration::from_secs(5)).await;
    stop(ctx, task).await;
    assert_eq!(names_in(&seen), ["a.txt", "b.txt"]);
    assert!(dir.path().join("a.txt").exists());
    assert!(!dir.path().join(".camel").exists());
}

#[tokio::test(start_paused = true)]
async fn delete_removes_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "x");
    let (ctx, task, _seen) = consume(dir.path(), "delete=true", never);
    ctx.stats().wait_for(1).await;
    stop(ctx, task).await;
    assert!(!dir.path().join("a.txt").exists());
    assert!(!dir.path().join(".camel").exists());
}

#[tokio::test(start_paused = true)]
async fn a_failed_file_stays_and_is_retried_on_a_later_poll() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "x");
    let attempts = Arc::new(Mutex::new(0));
    let counter = attempts.clone();
    let (ctx, task, _seen) = consume(dir.path(), "delay=2s&move=done", move |_| {
        let mut n = counter.lock().unwrap();
        *n += 1;
        *n == 1
    });
    ctx.stats().wait_for(1).await;
    assert_eq!(ctx.stats().failed(), 1);
    assert!(dir.path().join("a.txt").exists(), "a failed file must stay");
    let start = tokio::time::Instant::now();
    ctx.stats().wait_for(2).await;
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    stop(ctx, task).await;
    assert!(dir.path().join("done/a.txt").exists());
    assert!(!dir.path().join("a.txt").exists());
}

#[tokio::test(start_paused = true)]
async fn move_failed_takes_failed_files_aside() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "bad.txt", "x");
    let (ctx, task, _seen) = consume(dir.path(), "moveFailed=error", |_| true);
    ctx.stats().wait_for(1).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop(ctx, task).await;
    let aside = std::fs::read_to_string(dir.path().join("error/bad.txt")).unwrap();
    assert_eq!(aside, "x");
    assert!(!dir.path().join("bad.txt").exists());
}

#[tokio::test(start_paused = true)]
async fn recursive_keeps_relative_names_and_skips_the_move_folder() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "sub/deep/c.txt", "c");
    write(dir.path(), "a.txt", "a");
    write(dir.path(), "done/old.txt", "old");
    let (ctx, task, seen) = consume(dir.path(), "recursive=true&move=done", never);
    ctx.stats().wait_for(2).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop(ctx, task).await;
    assert_eq!(names_in(&seen), ["a.txt", "sub/deep/c.txt"]);
    assert!(dir.path().join("done/sub/deep/c.txt").exists());
    let only = seen.lock().unwrap()[1]
        .header(headers::FILE_NAME_ONLY)
        .cloned();
    assert_eq!(only, Some(Value::from("c.txt")));
}

#[tokio::test(start_paused = true)]
async fn polls_after_the_initial_delay_then_every_delay() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "a");
    let uri = format!("file:{}?initialDelay=3s&delay=250", dir.path().display());
    let ep = endpoint(&FileComponent, &uri).unwrap();
    let start = tokio::time::Instant::now();
    let at: Arc<Mutex<Vec<Duration>>> = Arc::default();
    let record = at.clone();
    let pipeline = BoxProcessor::sync(move |ex: Exchange| {
        record.lock().unwrap().push(start.elapsed());
        Ok(ex)
    });
    let ctx = ConsumerContext::for_pipeline("files", pipeline);
    let task = tokio::spawn(ep.consumer().unwrap().run(ctx.clone()));
    ctx.stats().wait_for(1).await;
    write(dir.path(), "b.txt", "b");
    ctx.stats().wait_for(2).await;
    stop(ctx, task).await;
    let at = at.lock().unwrap();
    assert_eq!(at[0], Duration::from_secs(3));
    assert_eq!(at[1], Duration::from_millis(3250));
}

#[tokio::test(start_paused = true)]
async fn max_messages_per_poll_limits_a_poll() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a", "b", "c"] {
        write(dir.path(), name, name);
    }
    let (ctx, task, seen) = consume(dir.path(), "maxMessagesPerPoll=2&delay=10s", never);
    ctx.stats().wait_for(2).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(names_in(&seen), ["a", "b"]);
    ctx.stats().wait_for(3).await;
    stop(ctx, task).await;
    assert_eq!(names_in(&seen), ["a", "b", "c"]);
}

#[tokio::test(start_paused = true)]
async fn creates_a_missing_folder() {
    let dir = tempfile::tempdir().unwrap();
    let inbox = dir.path().join("in/box");
    let (ctx, task, _seen) = consume(&inbox, "", never);
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop(ctx, task).await;
    assert!(inbox.is_dir());
}

#[test]
fn contradictory_options_are_refused() {
    for options in [
        "noop=true&delete=true",
        "delete=true&move=x",
        "include=[",
        "nop=true",
    ] {
        let uri = format!("file:/tmp/x?{options}");
        assert!(
            endpoint(&FileComponent, &uri).is_err(),
            "{options} was accepted"
        );
    }
}
