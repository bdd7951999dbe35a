//! The SQS sink against moto: batching, FIFO group order and deduplication, per-entry
//! failures mapped back to their callers, and bisection of a refused request (the last
//! two through a fault-injecting proxy, since moto cannot produce them).

#[path = "support/fault_proxy.rs"]
mod fault_proxy;

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_sqs::types::QueueAttributeName;
use camel_api::test_support::service_from_env;
use camel_api::{CamelError, Component, EndpointUri, Exchange, Process};
use camel_sinks::sqs::{
    SqsCodec, SqsComponent, SqsCredentials, MESSAGE_ID_HEADER, SEQUENCE_NUMBER_HEADER,
};
use camel_sinks::testing::{deliver_all, HeaderContext, HeaderExpression};
use camel_sinks::{BatchConfig, BatcherRegistry, SinkOptions, SinkProducer};
use fault_proxy::Fault;

fn credentials() -> SqsCredentials {
    SqsCredentials {
        access_key_id: "test".into(),
        secret_access_key: "test".into(),
        session_token: None,
    }
}

fn client(endpoint: &str) -> aws_sdk_sqs::Client {
    let config = aws_sdk_sqs::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "test"))
        .endpoint_url(endpoint)
        .build();
    aws_sdk_sqs::Client::from_conf(config)
}

/// A queue of its own for one test, deleted by [`TempQueue::drain_and_delete`].
struct TempQueue {
    client: aws_sdk_sqs::Client,
    name: String,
    url: String,
}

impl TempQueue {
    async fn create(endpoint: &str, fifo: bool) -> Self {
        let client = client(endpoint);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let mut name = format!("camel-sinks-{}-{nanos}", std::process::id());
        let mut request = client.create_queue();
        if fifo {
            name.push_str(".fifo");
            request = request.attributes(QueueAttributeName::FifoQueue, "true");
        }
        let out = request.queue_name(&name).send().await.unwrap();
        TempQueue {
            client,
            name,
            url: out.queue_url.unwrap(),
        }
    }

    /// Receives (and deletes) everything, in the order moto hands it out, then deletes
    /// the queue.
    async fn drain_and_delete(self, expected: usize) -> Vec<String> {
        let mut bodies = Vec::new();
        for _ in 0..(expected / 10 + 10) {
            let out = self
                .client
                .receive_message()
                .queue_url(&self.url)
                .max_number_of_messages(10)
                .send()
                .await
                .unwrap();
            let messages = out.messages.unwrap_or_default();
            if messages.is_empty() && bodies.len() >= expected {
                break;
            }
            for m in messages {
                bodies.push(m.body.unwrap_or_default());
                if let Some(handle) = m.receipt_handle {
                    self.client
                        .delete_message()
                        .queue_url(&self.url)
                        .receipt_handle(handle)
                        .send()
                        .await
                        .unwrap();
                }
            }
        }
        self.client
            .delete_queue()
            .queue_url(&self.url)
            .send()
            .await
            .unwrap();
        bodies
    }
}

fn producer(queue: &str, endpoint: &str, max_entries: usize) -> SinkProducer<SqsCodec> {
    let options = SinkOptions {
        group_key: Some(Arc::new(HeaderExpression("group".into()))),
        idempotency_key: Some(Arc::new(HeaderExpression("key".into()))),
        ..SinkOptions::default()
    };
    let config = BatchConfig {
        max_entries: Some(max_entries),
        linger: Duration::from_millis(20),
        ..BatchConfig::default()
    };
    SinkProducer::new(
        SqsCodec::new(queue, "us-east-1", Some(endpoint), credentials()),
        config,
        options,
        BatcherRegistry::new(),
    )
}

#[tokio::test]
async fn standard_queue_receives_every_batched_message() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let queue = TempQueue::create(&endpoint, false).await;
    let p = producer(&queue.name, &endpoint, 10);
    let exchanges = (0..25).map(|i| Exchange::new(format!("m{i}"))).collect();
    let results = deliver_all(&p, exchanges).await;
    let mut bodies = queue.drain_and_delete(25).await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    bodies.sort();
    let mut expected: Vec<String> = (0..25).map(|i| format!("m{i}")).collect();
    expected.sort();
    assert_eq!(bodies, expected);
}

#[tokio::test]
async fn fifo_queue_keeps_group_order_and_deduplicates_retries() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let queue = TempQueue::create(&endpoint, true).await;
    let p = producer(&queue.name, &endpoint, 10);
    let exchanges = (0..30)
        .map(|i| {
            let g = ["a", "b", "c"][i % 3];
            Exchange::new(format!("{g}-{i}"))
                .with_header("group", g)
                .with_header("key", format!("k{i}"))
        })
        .collect();
    let results = deliver_all(&p, exchanges).await;
    // The retry of k0 carries the same deduplication id: SQS keeps one copy.
    let retry = Exchange::new("a-0")
        .with_header("group", "a")
        .with_header("key", "k0");
    let retried = p.deliver(&retry).await;
    let missing_group = p
        .deliver(&Exchange::new("x").with_header("key", "kx"))
        .await;
    let bodies = queue.drain_and_delete(30).await;

    assert!(results.iter().all(Result::is_ok), "{results:?}");
    retried.unwrap();
    assert!(missing_group.unwrap_err().to_string().contains("group_key"));
    assert_eq!(bodies.len(), 30, "{bodies:?}");
    let mut last: HashMap<String, usize> = HashMap::new();
    for b in bodies {
        let (g, i) = b.split_once('-').unwrap();
        let i: usize = i.parse().unwrap();
        if let Some(prev) = last.insert(g.to_string(), i) {
            assert!(prev < i, "group {g}: {i} after {prev}");
        }
    }
}

/// The route step sets the `MessageId` (and, on a FIFO queue, the `SequenceNumber`) SQS
/// gave each message on its exchange.
#[tokio::test]
async fn the_exchange_carries_the_message_id_and_sequence_number() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let queue = TempQueue::create(&endpoint, true).await;
    let p = producer(&queue.name, &endpoint, 10);
    let mut seen = Vec::new();
    for i in 0..2 {
        let ex = Exchange::new(format!("a-{i}"))
            .with_header("group", "a")
            .with_header("key", format!("r{i}"));
        let out = p.process(ex).await.unwrap();
        let header = |h: &str| out.header(h).map(ToString::to_string).unwrap_or_default();
        seen.push((header(MESSAGE_ID_HEADER), header(SEQUENCE_NUMBER_HEADER)));
    }
    queue.drain_and_delete(2).await;
    assert!(seen.iter().all(|(id, _)| !id.is_empty()), "{seen:?}");
    assert_ne!(seen[0].0, seen[1].0, "one id per message");
    // SQS numbers a FIFO group's messages in increasing order; moto draws them at random,
    // so only their form is checked here.
    for (_, sequence) in &seen {
        assert!(
            !sequence.is_empty() && sequence.bytes().all(|b| b.is_ascii_digit()),
            "{seen:?}"
        );
    }
}

/// Sends ten messages through a fault proxy, the one at `bad` carrying `marker`; returns
/// each caller's result, the bodies the queue received, and the batch requests made.
async fn through_proxy(
    endpoint: &str,
    fault: Fault,
    marker: &str,
    bad: usize,
) -> (Vec<Result<(), CamelError>>, Vec<String>, usize) {
    let upstream = endpoint.trim_start_matches("http://").to_string();
    let proxy = fault_proxy::start(upstream, fault).await;
    let queue = TempQueue::create(endpoint, false).await;
    let p = producer(&queue.url, &proxy.endpoint, 10);
    let exchanges = (0..10)
        .map(|i| {
            Exchange::new(if i == bad {
                marker.to_string()
            } else {
                format!("m{i}")
            })
        })
        .collect();
    let results = deliver_all(&p, exchanges).await;
    let bodies = queue.drain_and_delete(9).await;
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r.is_err(), i == bad, "entry {i}: {r:?}");
    }
    (results, bodies, proxy.batch_requests.load(Ordering::SeqCst))
}

#[tokio::test]
async fn per_entry_failures_reach_only_their_callers() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let (results, bodies, requests) = through_proxy(
        &endpoint,
        Fault::FailEntriesContaining("reject"),
        "reject-3",
        3,
    )
    .await;
    let err = results[3].as_ref().unwrap_err().to_string();
    assert!(err.contains("InvalidMessageContents"), "{err}");
    assert_eq!(bodies.len(), 9);
    assert_eq!(requests, 1, "per-entry failures are not bisected");
}

#[tokio::test]
async fn a_refused_request_is_bisected_down_to_the_bad_entry() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    // The poisoned entry is admitted first, so it heads the batch of 10.
    let (results, bodies, requests) = through_proxy(
        &endpoint,
        Fault::RefuseRequestsContaining("poison"),
        "poison",
        0,
    )
    .await;
    assert!(results[0]
        .as_ref()
        .unwrap_err()
        .to_string()
        .contains("InvalidParameterValue"));
    assert_eq!(bodies.len(), 9);
    // [0..10] refused, [0..5] refused, [0..2] refused, [0] refused, [1], [2..5], [5..10].
    assert_eq!(requests, 7);
}

#[tokio::test]
async fn errors_no_entry_caused_fail_the_request_without_bisecting_it() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let upstream = endpoint.trim_start_matches("http://").to_string();
    for code in ["ExpiredToken", "KMS.DisabledException", "OverLimit"] {
        let proxy = fault_proxy::start(upstream.clone(), Fault::RefuseAllWith(code)).await;
        // Never reached (the proxy answers first), so its name is never resolved.
        let url = format!("{endpoint}/123456789012/never-reached");
        let p = producer(&url, &proxy.endpoint, 10);
        let exchanges = (0..10).map(|i| Exchange::new(format!("m{i}"))).collect();
        let results = deliver_all(&p, exchanges).await;
        for r in &results {
            let err = r.as_ref().expect_err(code).to_string();
            assert!(err.contains(code), "{code}: {err}");
        }
        assert_eq!(
            proxy.batch_requests.load(Ordering::SeqCst),
            1,
            "{code}: one request, no bisection"
        );
    }
}

#[test]
fn component_reads_parameters_and_rejects_unknown_ones() {
    let component = SqsComponent::with_registry(BatcherRegistry::new());
    let ctx = HeaderContext {
        route_id: Some("r".into()),
    };
    let ok = EndpointUri::parse(
        "sqs:orders.fifo?region=eu-west-1&endpoint=http://127.0.0.1:5000&accessKey=a&secretKey=s3cr3tvalue&groupKey=${header.g}&maxEntries=5",
    )
    .unwrap();
    let endpoint = component.endpoint(ok, &ctx).unwrap();
    assert!(!format!("{endpoint:?}").contains("s3cr3tvalue"));
    let bad = EndpointUri::parse("sqs:orders?access_key=a&secret_key=b&regoin=x").unwrap();
    let err = component.endpoint(bad, &ctx).unwrap_err().to_string();
    assert!(err.contains("regoin") && err.contains("region"), "{err}");
    let half = EndpointUri::parse("sqs:orders?access_key=a").unwrap();
    assert!(component.endpoint(half, &ctx).is_err());
}

/// `max_message_bytes` lowers the per-message limit: a larger body is refused before any
/// request (the endpoint here is unreachable on purpose), with both sizes in the error.
#[tokio::test]
async fn max_message_bytes_refuses_a_larger_body_before_sending() {
    let component = SqsComponent::with_registry(BatcherRegistry::new());
    let ctx = HeaderContext {
        route_id: Some("r".into()),
    };
    let uri = EndpointUri::parse(
        "sqs:http://127.0.0.1:9/000000000000/small?region=us-east-1&endpoint=http://127.0.0.1:9&access_key=a&secret_key=b&max_message_bytes=10",
    )
    .unwrap();
    let producer = component.endpoint(uri, &ctx).unwrap().producer().unwrap();
    let err = producer
        .process(Exchange::new("twenty bytes of text"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("entry of 20 bytes exceeds the 10-byte limit"),
        "{err}"
    );
}

/// SQS FIFO, a partial failure (through the proxy, as moto cannot fail one entry): the
/// entries of the failed entry's group that follow it in the request fail too, with
/// `EarlierEntryFailed`; the other group and the entry before the failure succeed.
#[tokio::test]
async fn fifo_entries_after_a_failed_one_of_their_group_fail_too() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let upstream = endpoint.trim_start_matches("http://").to_string();
    let proxy = fault_proxy::start(upstream, Fault::FailEntriesContaining("reject")).await;
    let queue = TempQueue::create(&endpoint, true).await;
    let p = producer(&queue.url, &proxy.endpoint, 10);
    let sent = [
        ("a", "a-0"),
        ("a", "a-1-reject"),
        ("b", "b-0"),
        ("a", "a-2"),
        ("b", "b-1"),
        ("a", "a-3"),
    ];
    let exchanges = sent
        .iter()
        .enumerate()
        .map(|(i, (g, body))| {
            Exchange::new(*body)
                .with_header("group", *g)
                .with_header("key", format!("k{i}"))
        })
        .collect();
    let results = deliver_all(&p, exchanges).await;
    let bodies = queue.drain_and_delete(5).await;
    assert_eq!(proxy.batch_requests.load(Ordering::SeqCst), 1);
    assert!(
        results[0].is_ok() && results[2].is_ok() && results[4].is_ok(),
        "{results:?}"
    );
    let refused = results[1].as_ref().unwrap_err().to_string();
    assert!(refused.contains("InvalidMessageContents"), "{refused}");
    for i in [3, 5] {
        let e = results[i].as_ref().unwrap_err().to_string();
        assert!(e.contains("earlier entry of group `a`"), "entry {i}: {e}");
    }
    // What the proxy let through reached the queue, in order per group.
    assert_eq!(bodies, ["a-0", "b-0", "a-2", "b-1", "a-3"]);
}

/// SQS FIFO, a refused request bisected: the entries of the refused entry's group that
/// follow it are not sent at all.
#[tokio::test]
async fn fifo_entries_after_a_refused_one_of_their_group_are_not_sent() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let upstream = endpoint.trim_start_matches("http://").to_string();
    let proxy = fault_proxy::start(upstream, Fault::RefuseRequestsContaining("poison")).await;
    let queue = TempQueue::create(&endpoint, true).await;
    let p = producer(&queue.url, &proxy.endpoint, 10);
    let sent = [
        ("a", "a-0-poison"),
        ("b", "b-0"),
        ("a", "a-1"),
        ("b", "b-1"),
    ];
    let exchanges = sent
        .iter()
        .enumerate()
        .map(|(i, (g, body))| {
            Exchange::new(*body)
                .with_header("group", *g)
                .with_header("key", format!("k{i}"))
        })
        .collect();
    let results = deliver_all(&p, exchanges).await;
    let bodies = queue.drain_and_delete(2).await;
    assert!(
        results[0].is_err() && results[1].is_ok() && results[3].is_ok(),
        "{results:?}"
    );
    let withheld = results[2].as_ref().unwrap_err().to_string();
    assert!(withheld.contains("not sent"), "{withheld}");
    assert_eq!(bodies, ["b-0", "b-1"]);
}
