//! Scale-out on one JetStream durable: two `camel run` processes share the work; one is
//! SIGKILLed mid-stream. Nothing is lost, and the only duplicates are messages the killed
//! process had taken but not acknowledged (JetStream redelivers them to the survivor).

mod support;

use std::collections::HashMap;
use std::time::Duration;

use async_nats::jetstream::{self, stream};
use futures::StreamExt;
use support::{run_id, spawn, wait_line, KillOnDrop};

/// Messages published.
const MESSAGES: usize = 3000;
/// `max_ack_pending` of the durable: the most messages both processes hold unacknowledged.
const MAX_ACK_PENDING: usize = 20;

fn routes(worker: &str, url: &str, input: &str, stream: &str, output: &str) -> String {
    format!(
        r#"
- route:
    id: scale-{worker}
    from:
      uri: "nats:{input}?servers={url}&durable_name=scale&jetstream_name={stream}&max_ack_pending={MAX_ACK_PENDING}&ack_wait=2s"
      steps:
        - set_header:
            name: worker
            constant: "{worker}"
        - to: "nats:{output}?servers={url}&headers=worker,CamelNatsJetStreamDelivered&linger_ms=1"
"#
    )
}

#[test]
fn two_processes_share_a_durable_and_a_sigkill_loses_nothing() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_NATS_URL") else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    // The NATS client's handles are dropped at the end of the test, inside the runtime.
    let _enter = rt.enter();
    let id = run_id();
    let (in_stream, out_stream) = (
        format!("CAMEL_SCALE_IN_{id}"),
        format!("CAMEL_SCALE_OUT_{id}"),
    );
    let (input, output) = (
        format!("camel.scale.{id}.in"),
        format!("camel.scale.{id}.out"),
    );
    let (js, mut results) = rt.block_on(async {
        let client = async_nats::connect(&url).await.expect("connect to NATS");
        let js = jetstream::new(client.clone());
        for (name, subject) in [(&in_stream, &input), (&out_stream, &output)] {
            js.create_stream(stream::Config {
                name: name.clone(),
                subjects: vec![subject.clone()],
                storage: stream::StorageType::Memory,
                ..Default::default()
            })
            .await
            .expect("create a stream");
        }
        let results = client
            .subscribe(output.clone())
            .await
            .expect("subscribe to the results");
        (js, results)
    });

    let dir = tempfile::tempdir().expect("a temp dir");
    let mut children = Vec::new();
    for worker in ["a", "b"] {
        let file = dir.path().join(format!("{worker}.yaml"));
        std::fs::write(&file, routes(worker, &url, &input, &in_stream, &output))
            .expect("write the routes");
        let (child, rx) = spawn(&["run", file.to_str().expect("a UTF-8 path")]);
        let child = KillOnDrop(child);
        wait_line(&rx, "consuming from the JetStream durable");
        children.push((child, rx));
    }

    rt.block_on(async {
        let mut acks = Vec::new();
        for i in 0..MESSAGES {
            acks.push(
                js.publish(input.clone(), format!("m{i}").into())
                    .await
                    .expect("publish"),
            );
        }
        for ack in acks {
            ack.await.expect("stored");
        }
        // Mid-stream: a quarter of the results are out.
        for _ in 0..MESSAGES / 4 {
            tokio::time::timeout(Duration::from_secs(20), results.next())
                .await
                .expect("results keep coming")
                .expect("the subscription is open");
        }
    });
    let (mut killed, _) = children.remove(0);
    killed.0.kill().expect("SIGKILL worker a");
    let _ = killed.0.wait();

    // The survivor finishes the stream, including what `a` held (after ack_wait).
    let info = rt.block_on(async {
        let stream = js.get_stream(&in_stream).await.expect("the input stream");
        let mut durable: jetstream::consumer::PullConsumer =
            stream.get_consumer("scale").await.expect("the durable");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let info = durable.info().await.expect("durable info").clone();
            if (info.num_pending == 0 && info.num_ack_pending == 0)
                || tokio::time::Instant::now() > deadline
            {
                return info;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    drop(children);

    let stored = rt.block_on(async {
        let mut out = js.get_stream(&out_stream).await.expect("the output stream");
        let count = out.info().await.expect("stream info").state.messages;
        let mut stored = Vec::new();
        for seq in 1..=count {
            let m = out.get_raw_message(seq).await.expect("a stored result");
            let header = |name: &str| {
                m.headers
                    .get(name)
                    .map(|v| v.as_str().to_string())
                    .unwrap_or_default()
            };
            stored.push((
                String::from_utf8_lossy(&m.payload).into_owned(),
                header("worker"),
                header("CamelNatsJetStreamDelivered")
                    .parse::<i64>()
                    .unwrap_or(0),
            ));
        }
        let _ = js.delete_stream(&in_stream).await;
        let _ = js.delete_stream(&out_stream).await;
        stored
    });

    let mut per_body: HashMap<&str, Vec<(&str, i64)>> = HashMap::new();
    for (body, worker, delivered) in &stored {
        per_body
            .entry(body.as_str())
            .or_default()
            .push((worker.as_str(), *delivered));
    }
    let first_by = |w: &str| {
        stored
            .iter()
            .filter(|(_, worker, d)| worker == w && *d == 1)
            .count()
    };
    let duplicated: Vec<_> = per_body.iter().filter(|(_, v)| v.len() > 1).collect();
    let duplicates: usize = duplicated.iter().map(|(_, v)| v.len() - 1).sum();
    println!(
        "scale-out: messages={MESSAGES} results={} unique={} duplicates={duplicates} first_by_a={} first_by_b={} durable_pending={} durable_ack_pending={}",
        stored.len(),
        per_body.len(),
        first_by("a"),
        first_by("b"),
        info.num_pending,
        info.num_ack_pending
    );
    assert_eq!(info.num_pending, 0, "the survivor drained the durable");
    assert_eq!(info.num_ack_pending, 0);
    // Nothing lost.
    assert_eq!(per_body.len(), MESSAGES);
    // Both processes took work.
    assert!(first_by("a") > 0 && first_by("b") > 0);
    // Every duplicate is a redelivery of a message the killed process had taken but not
    // acknowledged: first seen by `a`, then again by `b` with a higher delivery count.
    for (body, deliveries) in &duplicated {
        assert!(
            deliveries.iter().any(|(w, d)| *w == "a" && *d == 1),
            "{body}: {deliveries:?}"
        );
        assert!(
            deliveries.iter().any(|(w, d)| *w == "b" && *d > 1),
            "{body}: {deliveries:?}"
        );
    }
    // At most what the durable lets be unacknowledged (plus nothing else).
    assert!(
        duplicates <= MAX_ACK_PENDING,
        "{duplicates} duplicates, more than max_ack_pending"
    );
}
