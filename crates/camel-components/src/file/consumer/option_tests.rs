//! `idempotent`, `idempotent_key`, `scheduler` and `partition` of the file consumer.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::super::FileComponent;
use super::tests::{consume, names_in, never, stop, write};
use crate::testing::{endpoint, text};

#[tokio::test(start_paused = true)]
async fn idempotent_skips_a_name_taken_before_even_when_it_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "first");
    let (ctx, task, seen) = consume(dir.path(), "idempotent=true&delay=100", never);
    ctx.stats().wait_for(1).await;
    // Once b.txt is through, a.txt has been moved away.
    write(dir.path(), "b.txt", "other");
    ctx.stats().wait_for(2).await;
    // Dropped again under the same name (its key, the absolute path, is known), then c.
    write(dir.path(), "a.txt", "again");
    write(dir.path(), "c.txt", "third");
    ctx.stats().wait_for(3).await;
    stop(ctx, task).await;
    // c.txt came in the listing that passed over a.txt, which stays where it is.
    assert_eq!(names_in(&seen), ["a.txt", "b.txt", "c.txt"]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "again"
    );
}

#[tokio::test(start_paused = true)]
async fn an_idempotent_key_of_name_and_size_takes_a_changed_file_again_under_noop() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "1");
    let (ctx, task, seen) = consume(
        dir.path(),
        "noop=true&idempotentKey=${file:name}-${file:size}&delay=100",
        never,
    );
    ctx.stats().wait_for(1).await;
    write(dir.path(), "a.txt", "22");
    ctx.stats().wait_for(2).await;
    stop(ctx, task).await;
    let bodies: Vec<String> = seen.lock().unwrap().iter().map(text).collect();
    assert_eq!(bodies, ["1", "22"]);
}

#[tokio::test(start_paused = true)]
async fn a_failed_file_gives_its_key_back_and_is_tried_again() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "x");
    let calls = Arc::new(AtomicUsize::new(0));
    let count = calls.clone();
    let (ctx, task, seen) = consume(dir.path(), "idempotent=true&delay=100", move |_| {
        count.fetch_add(1, Ordering::SeqCst) == 0
    });
    // The failure, then the success on a later poll.
    ctx.stats().wait_for(2).await;
    stop(ctx, task).await;
    assert_eq!(names_in(&seen), ["a.txt", "a.txt"]);
    assert!(!dir.path().join("a.txt").exists());
}

#[tokio::test(start_paused = true)]
async fn noop_with_idempotent_false_takes_the_same_file_every_poll() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "x");
    let (ctx, task, seen) = consume(dir.path(), "noop=true&idempotent=false&delay=100", never);
    ctx.stats().wait_for(3).await;
    stop(ctx, task).await;
    assert!(names_in(&seen).len() >= 3);
    // Plain noop remembers the name.
    let (ctx, task, seen) = consume(dir.path(), "noop=true&delay=100", never);
    ctx.stats().wait_for(1).await;
    tokio::time::sleep(std::time::Duration::from_millis(1000)).await;
    stop(ctx, task).await;
    assert_eq!(names_in(&seen), ["a.txt"]);
}

// Real time: cron fire times are wall-clock times. Every second, so the first poll
// comes within one.
#[tokio::test]
async fn a_cron_scheduler_polls_on_the_cron() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "x");
    let (ctx, task, seen) = consume(
        dir.path(),
        "scheduler=quartz&scheduler.cron=*+*+*+*+*+?&initialDelay=3600000",
        never,
    );
    // The hour-long initial delay does not apply on a cron scheduler.
    ctx.stats().wait_for(1).await;
    stop(ctx, task).await;
    assert_eq!(names_in(&seen), ["a.txt"]);
}

#[test]
fn scheduler_and_idempotent_mistakes_are_named() {
    let err = |q: &str| {
        endpoint(&FileComponent, &format!("file:in?{q}"))
            .unwrap_err()
            .to_string()
    };
    assert!(err("scheduler=spring").contains("needs `scheduler.cron`"));
    assert!(err("scheduler.cron=0+*+*+*+*+?").contains("needs `scheduler=spring`"));
    assert!(err("scheduler=quartz&scheduler.cron=bad").contains("`scheduler.cron`"));
    assert!(err("scheduler=%23mine&scheduler.cron=0+*+*+*+*+?").contains("custom scheduler"));
    assert!(
        err("scheduler=spring&scheduler.cron=0+*+*+*+*+?&scheduler.timeZone=Europe/Paris")
            .contains("scheduler.time_zone")
    );
    assert!(err("idempotent=false&idempotentKey=${file:name}").contains("needs `idempotent`"));
    assert!(err("idempotent=true&idempotentRepository=%23repo").contains("does not support yet"));
    assert!(endpoint(
        &FileComponent,
        "file:in?scheduler=spring&scheduler.cron=0/5+*+*+*+*+?&scheduler.timeZone=%2B01:00&idempotentEager=false"
    )
    .is_ok());
}

#[tokio::test(start_paused = true)]
async fn partitions_split_the_files_by_name_hash_with_none_left_or_taken_twice() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..30).map(|i| format!("f{i:02}.txt")).collect();
    for name in &names {
        write(dir.path(), name, name);
    }
    let mut taken = Vec::new();
    for k in 0..3 {
        let mine = names
            .iter()
            .filter(|n| camel_cluster::partition_of(n, 3) == k)
            .count();
        let options = format!("noop=true&delay=100&partition={k}&partitions=3");
        let (ctx, task, seen) = consume(dir.path(), &options, never);
        ctx.stats().wait_for(mine as u64).await;
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        stop(ctx, task).await;
        let got = names_in(&seen);
        assert_eq!(got.len(), mine, "partition {k} took only its own files");
        taken.extend(got);
    }
    taken.sort();
    assert_eq!(taken, names, "every file in exactly one partition");
    for bad in [
        "partition=1",
        "partition=3&partitions=3",
        "partitions=0&partition=0",
    ] {
        let e = endpoint(
            &FileComponent,
            &format!("file:{}?{bad}", dir.path().display()),
        )
        .err()
        .unwrap_or_else(|| panic!("{bad} accepted"));
        assert!(e.to_string().contains("partition"), "{e}");
    }
}
