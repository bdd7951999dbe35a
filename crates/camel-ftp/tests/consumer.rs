//! The `ftp:`, `ftps:` and `sftp:` consumers against the real servers `.ci/ftp-servers`
//! starts (vsftpd, sshd): files taken once and deleted or moved only after the route
//! succeeded, a failed file left in place and not retried in a tight loop, filters,
//! `noop`, `readLock=changed`, and big files spooled to a local file.

mod support;

use std::sync::Arc;
use std::time::Duration;

use camel_api::{Body, BoxProcessor, Exchange};
use support::{eventually, recording, servers, Seen};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_are_deleted_after_success_and_a_failing_one_stays() {
    for server in servers() {
        let dir = server.folder("delete");
        for i in 0..6 {
            server.put(&format!("{dir}/f{i}.txt"), format!("body {i}").as_bytes());
        }
        server.put(&format!("{dir}/bad.txt"), b"bad");
        server.put(&format!("{dir}/skip.tmp"), b"not included");
        let seen = Arc::new(Seen::default());
        let uri = server.uri(&dir, "delete=true&include=.*\\.txt&initialDelay=0&delay=50");
        let (ctx, run) = server.start(&uri, recording(&seen, "bad.txt"));
        seen.until("six files and two tries of bad.txt", |s| {
            s.names().iter().filter(|n| n.starts_with('f')).count() >= 6 && s.count("bad.txt") >= 2
        })
        .await;
        eventually("the six files deleted", || {
            server.files(&dir) == ["bad.txt", "skip.tmp"]
        })
        .await;
        for i in 0..6 {
            assert_eq!(
                seen.count(&format!("f{i}.txt")),
                1,
                "{:?}: f{i} once",
                server.protocol
            );
        }
        let bodies = seen.exchanges.lock().unwrap().clone();
        assert!(bodies.iter().any(|(n, b)| n == "f3.txt" && b == b"body 3"));
        assert_eq!(seen.count("skip.tmp"), 0);
        // The failed file is retried after a pause (1 s, then 2 s), not in a tight loop.
        let tries = seen.count("bad.txt");
        assert!(
            tries <= 3,
            "{:?}: bad.txt tried {tries} times",
            server.protocol
        );
        ctx.cancellation().cancel();
        run.await.unwrap();
        println!(
            "{:?}: deleted after success; bad.txt tried {tries} times",
            server.protocol
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_are_moved_after_success_and_failed_ones_by_move_failed() {
    for server in servers() {
        let dir = server.folder("move");
        server.put(&format!("{dir}/a.csv"), b"a");
        server.put(&format!("{dir}/sub/b.csv"), b"b");
        server.put(&format!("{dir}/bad.csv"), b"bad");
        let seen = Arc::new(Seen::default());
        let uri = server.uri(
            &dir,
            "move=.done&moveFailed=failed/${file:name}.err&recursive=true&initialDelay=0&delay=50",
        );
        let (ctx, run) = server.start(&uri, recording(&seen, "bad.csv"));
        eventually("files moved", || {
            server.files(&format!("{dir}/.done")) == ["a.csv"]
                && server.files(&format!("{dir}/.done/sub")) == ["b.csv"]
                && server.files(&format!("{dir}/failed")) == ["bad.csv.err"]
        })
        .await;
        assert!(server.files(&dir).is_empty(), "{:?}", server.files(&dir));
        assert_eq!(seen.names(), ["a.csv", "bad.csv", "sub/b.csv"]);
        ctx.cancellation().cancel();
        run.await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn noop_takes_each_file_once_and_leaves_it() {
    for server in servers() {
        let dir = server.folder("noop");
        server.put(&format!("{dir}/one.txt"), b"1");
        let seen = Arc::new(Seen::default());
        let uri = server.uri(&dir, "noop=true&initialDelay=0&delay=20");
        let (ctx, run) = server.start(&uri, recording(&seen, ""));
        seen.until("one.txt", |s| s.count("one.txt") == 1).await;
        server.put(&format!("{dir}/two.txt"), b"2");
        seen.until("two.txt", |s| s.count("two.txt") == 1).await;
        // Polls every 20 ms: in 300 ms more, a file not remembered would come again.
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(seen.names(), ["one.txt", "two.txt"]);
        assert_eq!(server.files(&dir), ["one.txt", "two.txt"]);
        ctx.cancellation().cancel();
        run.await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_lock_changed_waits_until_the_file_stops_growing() {
    for server in servers() {
        let dir = server.folder("changed");
        let name = format!("{dir}/growing.log");
        server.put(&name, b"line 0\n");
        let seen = Arc::new(Seen::default());
        let uri = server.uri(
            &dir,
            "delete=true&readLock=changed&readLockCheckInterval=1500&initialDelay=0&delay=100",
        );
        let (ctx, run) = server.start(&uri, recording(&seen, ""));
        // The writer appends every 400 ms for 2.4 s: the file never stays unchanged for
        // the 1.5 s interval, so it must not be taken meanwhile.
        let mut content = b"line 0\n".to_vec();
        for i in 1..=6 {
            tokio::time::sleep(Duration::from_millis(400)).await;
            content.extend_from_slice(format!("line {i}\n").as_bytes());
            server.put(&name, &content);
            assert_eq!(
                seen.count("growing.log"),
                0,
                "{:?}: taken while growing",
                server.protocol
            );
        }
        seen.until("growing.log", |s| s.count("growing.log") == 1)
            .await;
        let got = seen.exchanges.lock().unwrap()[0].1.clone();
        assert_eq!(got, content, "{:?}: the whole file", server.protocol);
        ctx.cancellation().cancel();
        run.await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_big_file_is_spooled_to_a_local_file_and_removed_after() {
    for server in servers() {
        let dir = server.folder("spool");
        let body: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        server.put(&format!("{dir}/big.bin"), &body);
        let work = tempfile::tempdir().unwrap();
        let uri = server.uri(
            &dir,
            &format!(
                "delete=true&spoolThreshold=1000&localWorkDirectory={}&initialDelay=0&delay=50",
                work.path().display()
            ),
        );
        let seen = Arc::new(Seen::default());
        let s = seen.clone();
        let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
            let s = s.clone();
            async move {
                assert!(
                    matches!(ex.message.body, Body::Empty),
                    "spooled, not in memory"
                );
                let local = ex
                    .header("CamelFileAbsolutePath")
                    .map(|v| v.to_string())
                    .expect("CamelFileAbsolutePath");
                let mut copy = ex.clone();
                copy.message.body = Body::Bytes(std::fs::read(&local).unwrap().into());
                s.record(&copy);
                Ok(ex)
            }
        });
        let (ctx, run) = server.start(&uri, pipeline);
        seen.until("big.bin", |s| s.count("big.bin") == 1).await;
        assert_eq!(seen.exchanges.lock().unwrap()[0].1, body);
        eventually("deleted and unspooled", || {
            server.files(&dir).is_empty()
                && std::fs::read_dir(work.path())
                    .map(|d| d.count())
                    .unwrap_or(0)
                    == 0
        })
        .await;
        ctx.cancellation().cancel();
        run.await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headers_say_what_camel_says() {
    for server in servers() {
        let dir = server.folder("headers");
        server.put(&format!("{dir}/in/h.txt"), b"hello");
        let got = Arc::new(std::sync::Mutex::new(None::<Exchange>));
        let g = got.clone();
        let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
            let g = g.clone();
            async move {
                *g.lock().unwrap() = Some(ex.clone());
                Ok(ex)
            }
        });
        let uri = server.uri(&format!("{dir}/in"), "delete=true&initialDelay=0&delay=50");
        let (ctx, run) = server.start(&uri, pipeline);
        eventually("an exchange", || got.lock().unwrap().is_some()).await;
        let ex = got.lock().unwrap().clone().unwrap();
        let h = |n: &str| ex.header(n).map(|v| v.to_string()).unwrap_or_default();
        assert_eq!(h("CamelFileName"), "h.txt");
        assert_eq!(h("CamelFileNameOnly"), "h.txt");
        assert_eq!(h("CamelFileLength"), "5");
        assert_eq!(h("CamelFileHost"), "127.0.0.1");
        assert_eq!(h("CamelFilePath"), format!("{dir}/in/h.txt"));
        let modified: i64 = h("CamelFileLastModified").parse().unwrap();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        assert!(
            (now - modified).abs() < 120_000,
            "{:?}: {modified} vs {now}",
            server.protocol
        );
        ctx.cancellation().cancel();
        run.await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_file_does_not_hold_up_the_others() {
    use std::os::unix::fs::PermissionsExt;
    for server in servers() {
        let dir = server.folder("unreadable");
        server.put(&format!("{dir}/a-locked.txt"), b"secret");
        std::fs::set_permissions(
            server.path(&format!("{dir}/a-locked.txt")),
            std::fs::Permissions::from_mode(0o000),
        )
        .unwrap();
        server.put(&format!("{dir}/b-ok.txt"), b"ok");
        let seen = Arc::new(Seen::default());
        let uri = server.uri(&dir, "delete=true&initialDelay=0&delay=50");
        let (ctx, run) = server.start(&uri, recording(&seen, ""));
        seen.until("b-ok.txt", |s| s.count("b-ok.txt") == 1).await;
        eventually("b-ok.txt deleted", || {
            server.files(&dir) == ["a-locked.txt"]
        })
        .await;
        assert_eq!(seen.count("a-locked.txt"), 0, "{:?}", server.protocol);
        ctx.cancellation().cancel();
        run.await.unwrap();
    }
}
