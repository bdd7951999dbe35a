//! Redis Streams through the binary, against the local Redis (`CAMEL_TEST_REDIS_URL`):
//! two `camel run` processes in one consumer group relay a stream to another; one is
//! SIGKILLed mid-stream and started again. Nothing is lost (its own pending entries come
//! back when it restarts under the same consumer name, or the other process claims them
//! with XAUTOCLAIM), the group ends with nothing pending, and the entries relayed twice
//! are counted and printed.

mod support;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use redis::streams::StreamRangeReply;
use redis::AsyncCommands;
use support::{run_id, spawn, wait_line, KillOnDrop};

/// Entries in the input stream.
const ENTRIES: usize = 3000;
/// `max_inflight` of each process.
const MAX_INFLIGHT: usize = 20;

fn routes(worker: &str, at: &str, input: &str, output: &str) -> String {
    format!(
        r#"
- route:
    id: relay-{worker}
    from:
      uri: "spring-redis:{at}?stream={input}&group=relay&consumerName={worker}&groupStartId=0&claimMinIdle=1000&claimInterval=200&block=200&maxInflight={MAX_INFLIGHT}&count=10"
      steps:
        - set_header:
            name: worker
            constant: "{worker}"
        - to: "spring-redis:{at}?command=XADD&stream={output}"
"#
    )
}

#[test]
fn a_sigkilled_stream_consumer_loses_nothing() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_REDIS_URL") else {
        return;
    };
    let at = url
        .trim_start_matches("redis://")
        .trim_end_matches('/')
        .to_string();
    let id = run_id();
    let (input, output) = (
        format!("camel-test:kill:{id}:in"),
        format!("camel-test:kill:{id}:out"),
    );
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    let mut c = rt.block_on(async {
        let mut c = redis::Client::open(url.as_str())
            .expect("a client")
            .get_multiplexed_async_connection()
            .await
            .expect("connected");
        let mut pipe = redis::pipe();
        for i in 0..ENTRIES {
            pipe.xadd(&input, "*", &[("body", format!("r{i}"))])
                .ignore();
        }
        let _: () = pipe.query_async(&mut c).await.expect("the input stream");
        c
    });

    let dir = tempfile::tempdir().expect("a temp dir");
    let start = |worker: &str| {
        let file = dir.path().join(format!("{worker}.yaml"));
        std::fs::write(&file, routes(worker, &at, &input, &output)).expect("write the routes");
        let (child, rx) = spawn(&["run", file.to_str().expect("a UTF-8 path")]);
        let child = KillOnDrop(child);
        wait_line(&rx, "consuming from the Redis stream");
        (child, rx)
    };
    let (mut a, _a_log) = start("a");
    let (_b, _b_log) = start("b");

    let xlen = |c: &mut redis::aio::MultiplexedConnection| -> usize {
        rt.block_on(async { c.xlen(&output).await.unwrap_or(0) })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while xlen(&mut c) < ENTRIES / 4 {
        assert!(Instant::now() < deadline, "the relay is not relaying");
        std::thread::sleep(Duration::from_millis(5));
    }
    a.0.kill().expect("SIGKILL worker a");
    let _ = a.0.wait();
    let relayed_at_kill = xlen(&mut c);
    let (_a2, _a2_log) = start("a");

    // Done when the group has read everything and nothing is pending.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (lag, pending) = rt.block_on(async {
            let groups: redis::Value = redis::cmd("XINFO")
                .arg("GROUPS")
                .arg(&input)
                .query_async(&mut c)
                .await
                .expect("XINFO GROUPS");
            (group_field(&groups, "lag"), group_field(&groups, "pending"))
        });
        if lag == Some(0) && pending == Some(0) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the group did not drain: lag {lag:?}, pending {pending:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out: StreamRangeReply = rt
        .block_on(async { c.xrange_all(&output).await })
        .expect("the output stream");
    let mut per_body: HashMap<String, Vec<String>> = HashMap::new();
    for entry in &out.ids {
        let text = |name: &str| match entry.map.get(name) {
            Some(redis::Value::BulkString(b)) => String::from_utf8_lossy(b).into_owned(),
            _ => String::new(),
        };
        per_body
            .entry(text("body"))
            .or_default()
            .push(text("worker"));
    }
    let duplicates: usize = per_body.values().map(|v| v.len() - 1).sum();
    let by = |w: &str| {
        per_body
            .values()
            .filter(|v| v.iter().any(|x| x == w))
            .count()
    };
    println!(
        "redis streams sigkill: entries={ENTRIES} relayed={} unique={} duplicates={duplicates} by_a={} by_b={} relayed_at_kill={relayed_at_kill}",
        out.ids.len(),
        per_body.len(),
        by("a"),
        by("b")
    );
    let lost: Vec<String> = (0..ENTRIES)
        .map(|i| format!("r{i}"))
        .filter(|b| !per_body.contains_key(b))
        .collect();
    assert!(lost.is_empty(), "lost {}: {lost:?}", lost.len());
    assert!(by("a") > 0 && by("b") > 0, "both processes relayed");
    // Only entries the killed process held (at most max_inflight, and those read but not
    // started, at most one count) can be relayed twice.
    assert!(
        duplicates <= MAX_INFLIGHT + 10,
        "{duplicates} duplicates, more than the killed process could hold"
    );
    rt.block_on(async {
        let _: () = c.del(&[&input, &output]).await.expect("DEL");
    });
}

/// A field of the first group in an XINFO GROUPS reply (RESP2: a flat name/value list).
fn group_field(reply: &redis::Value, name: &str) -> Option<i64> {
    let redis::Value::Array(groups) = reply else {
        return None;
    };
    let fields = match groups.first()? {
        redis::Value::Array(f) => f.clone(),
        redis::Value::Map(m) => m.iter().flat_map(|(k, v)| [k.clone(), v.clone()]).collect(),
        _ => return None,
    };
    fields.chunks(2).find_map(|pair| match pair {
        [redis::Value::BulkString(k), redis::Value::Int(v)] if k == name.as_bytes() => Some(*v),
        [redis::Value::SimpleString(k), redis::Value::Int(v)] if k == name => Some(*v),
        _ => None,
    })
}

#[test]
fn redis_routes_validate_without_a_server_and_mistakes_name_the_option() {
    let (ok, text) = support::validate_yaml(
        r#"
- route:
    from:
      uri: "spring-redis:127.0.0.1:9?stream=orders&group=billing&password=hunter2"
      steps:
        - to: "redis:127.0.0.1:9?command=PUBLISH&channels=done"
"#,
    );
    assert!(ok, "{text}");
    assert!(!text.contains("hunter2"), "{text}");
    let (ok, text) = support::validate_yaml(
        "- route:\n    from:\n      uri: \"spring-redis:127.0.0.1:9?stream=orders\"\n      steps:\n        - log: x\n",
    );
    assert!(!ok, "{text}");
    assert!(text.contains("needs stream and group"), "{text}");
}
