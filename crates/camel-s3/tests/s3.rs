//! `aws2-s3:` against moto (`CAMEL_TEST_SQS_ENDPOINT`: moto serves S3 on the same port):
//! delete only after success, a failing object left in place and not fetched in a tight
//! loop, move after read, big objects spooled to a file, and the producer's operations
//! (a multipart upload among them).

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use camel_api::test_support::service_from_env;
use camel_api::{
    Body, BoxProcessor, CamelError, Component, ConsumerContext, EndpointUri, Exchange,
};
use camel_s3::{headers, S3Component};
use support::{Bucket, NoContext};
use tokio::sync::Notify;

fn uri(bucket: &str, endpoint: &str, extra: &str) -> String {
    format!(
        "aws2-s3://{bucket}?overrideEndpoint=true&uriEndpointOverride={endpoint}&forcePathStyle=true&accessKey=test&secretKey=test&region=us-east-1&initialDelay=0&delay=50{extra}"
    )
}

fn start(uri: &str, pipeline: BoxProcessor) -> (ConsumerContext, tokio::task::JoinHandle<()>) {
    let ctx_for_uri = NoContext;
    let consumer = S3Component::new()
        .endpoint(EndpointUri::parse(uri).unwrap(), &ctx_for_uri)
        .unwrap()
        .consumer()
        .unwrap();
    let ctx = ConsumerContext::for_pipeline("s3-test", pipeline);
    let run_ctx = ctx.clone();
    let handle = tokio::spawn(async move { consumer.run(run_ctx).await.unwrap() });
    (ctx, handle)
}

#[derive(Default)]
struct Seen(
    Mutex<Vec<(String, String)>>,
    Notify,
    Mutex<Vec<tokio::time::Instant>>,
);

impl Seen {
    fn record(&self, ex: &Exchange) -> String {
        let key = ex
            .header(headers::KEY)
            .map(|v| v.to_string())
            .unwrap_or_default();
        let body = ex.message.body.as_text().unwrap_or_default().to_string();
        if key.ends_with("bad.txt") {
            self.2.lock().unwrap().push(tokio::time::Instant::now());
        }
        self.0.lock().unwrap().push((key.clone(), body));
        self.1.notify_waiters();
        key
    }

    async fn wait_for(&self, n: usize) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let notified = self.1.notified();
            if self.0.lock().unwrap().len() >= n {
                return;
            }
            assert!(
                tokio::time::timeout_at(deadline, notified).await.is_ok(),
                "only {} of {n} objects arrived",
                self.0.lock().unwrap().len()
            );
        }
    }
}

#[tokio::test]
async fn objects_are_deleted_after_success_and_a_failing_one_stays_without_a_tight_loop() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let b = Bucket::create(&endpoint, "consume").await;
    for i in 0..12 {
        b.put(&format!("in/o{i:02}.txt"), format!("body {i}").into_bytes())
            .await;
    }
    b.put("in/bad.txt", b"bad".to_vec()).await;
    b.put("other/skip.txt", b"not under the prefix".to_vec())
        .await;
    let seen = Arc::new(Seen::default());
    let s = seen.clone();
    let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
        let s = s.clone();
        async move {
            let key = s.record(&ex);
            assert!(ex.header(headers::BUCKET_NAME).is_some());
            assert!(ex.header(headers::E_TAG).is_some(), "{key}: an ETag");
            assert!(ex.header(headers::LAST_MODIFIED).is_some());
            if key.ends_with("bad.txt") {
                return Err(CamelError::processor("bad object"));
            }
            Ok(ex)
        }
    });
    let (ctx, run) = start(
        &uri(
            &b.name,
            &endpoint,
            "&prefix=in/&maxMessagesPerPoll=5&concurrentConsumers=3",
        ),
        pipeline,
    );
    // 12 good objects once, the failing one three times: at once, after 1 s, after 2 s
    // more (not at every poll, every 50 ms here).
    seen.wait_for(15).await;
    let left = b.holds(&["in/bad.txt", "other/skip.txt"]).await;
    ctx.cancellation().cancel();
    run.await.unwrap();
    assert_eq!(left, ["in/bad.txt", "other/skip.txt"]);
    let all = seen.0.lock().unwrap().clone();
    let bad = seen.2.lock().unwrap().clone();
    assert!(
        bad.len() >= 3,
        "the failing object was read {} times",
        bad.len()
    );
    let (first, second, third) = (bad[1] - bad[0], bad[2] - bad[1], bad[2] - bad[0]);
    assert!(
        first >= Duration::from_millis(950) && second >= Duration::from_millis(1950),
        "retries came after {first:?} and {second:?}"
    );
    assert!(third < Duration::from_secs(10), "{third:?}");
    let good: Vec<&(String, String)> = all.iter().filter(|(k, _)| k != "in/bad.txt").collect();
    assert_eq!(good.len(), 12, "each good object once: {good:?}");
    assert!(good
        .iter()
        .any(|(k, body)| k == "in/o07.txt" && body == "body 7"));
}

#[tokio::test]
async fn move_after_read_copies_to_the_destination_then_deletes() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let src = Bucket::create(&endpoint, "move-src").await;
    let dst = Bucket::create(&endpoint, "move-dst").await;
    src.put("a b/report 1.csv", b"x,y".to_vec()).await;
    let seen = Arc::new(Seen::default());
    let s = seen.clone();
    let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
        let s = s.clone();
        async move {
            s.record(&ex);
            Ok(ex)
        }
    });
    let extra = format!(
        "&moveAfterRead=true&destinationBucket={}&destinationBucketPrefix=done/&destinationBucketSuffix=.read",
        dst.name
    );
    let (ctx, run) = start(&uri(&src.name, &endpoint, &extra), pipeline);
    seen.wait_for(1).await;
    let moved = dst.holds(&["done/a b/report 1.csv.read"]).await;
    let left = src.holds(&[]).await;
    ctx.cancellation().cancel();
    run.await.unwrap();
    assert_eq!(moved, ["done/a b/report 1.csv.read"]);
    assert!(left.is_empty(), "{left:?}");
}

#[tokio::test]
async fn objects_above_the_spool_threshold_are_handed_over_as_a_file() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let b = Bucket::create(&endpoint, "spool").await;
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    b.put("big.bin", big.clone()).await;
    b.put("small.txt", b"small".to_vec()).await;
    let spool = tempfile::tempdir().unwrap();
    let files = Arc::new(Mutex::new(Vec::new()));
    let f = files.clone();
    let done = Arc::new(AtomicUsize::new(0));
    let d = done.clone();
    let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
        let (f, d) = (f.clone(), d.clone());
        async move {
            match ex.header(headers::FILE_ABSOLUTE_PATH) {
                Some(path) => {
                    let path = path.to_string();
                    assert!(matches!(ex.message.body, Body::Empty));
                    let read = std::fs::read(&path).unwrap();
                    f.lock().unwrap().push((path, read));
                }
                None => assert_eq!(ex.message.body.as_text().as_deref(), Some("small")),
            }
            d.fetch_add(1, Ordering::SeqCst);
            Ok(ex)
        }
    });
    let extra = format!(
        "&spoolThreshold=1048576&spoolDirectory={}",
        spool.path().display()
    );
    let (ctx, run) = start(&uri(&b.name, &endpoint, &extra), pipeline);
    let left = b.holds(&[]).await;
    ctx.cancellation().cancel();
    run.await.unwrap();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(done.load(Ordering::SeqCst), 2);
    let files = files.lock().unwrap();
    assert_eq!(files.len(), 1);
    let (path, read) = &files[0];
    assert!(path.starts_with(&spool.path().display().to_string()));
    assert!(read == &big, "the spooled file holds the object");
    assert!(
        !std::path::Path::new(path).exists(),
        "the spool file is removed after the exchange"
    );
}

#[tokio::test]
async fn the_producer_puts_in_parts_gets_lists_copies_and_deletes() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let b = Bucket::create(&endpoint, "produce").await;
    let ctx = NoContext;
    let producer = |extra: &str| {
        S3Component::new()
            .endpoint(
                EndpointUri::parse(&uri(&b.name, &endpoint, extra)).unwrap(),
                &ctx,
            )
            .unwrap()
            .producer()
            .unwrap()
    };
    // 12 MiB in 5 MiB parts: three parts.
    let big: Vec<u8> = (0..12 * 1024 * 1024u32).map(|i| (i % 253) as u8).collect();
    let put = producer("&multiPartUpload=true&partSize=5242880");
    let out = put
        .process(Exchange::new(big.clone()).with_header(headers::KEY, "big.bin"))
        .await
        .unwrap();
    let e_tag = out.header(headers::E_TAG).unwrap().to_string();
    assert!(e_tag.contains("-3"), "a three-part upload's ETag: {e_tag}");
    producer("&keyName=note.txt")
        .process(Exchange::new("hello"))
        .await
        .unwrap();
    let got = producer("&operation=getObject")
        .process(Exchange::new(Body::Empty).with_header(headers::KEY, "big.bin"))
        .await
        .unwrap();
    match &got.message.body {
        Body::Bytes(b) => assert!(b.as_ref() == big.as_slice()),
        other => panic!("bytes expected, got {other:?}"),
    }
    let listed = producer("&operation=listObjects")
        .process(Exchange::new(Body::Empty))
        .await
        .unwrap();
    let Body::Json(list) = &listed.message.body else {
        panic!("a JSON list");
    };
    let keys: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["key"].as_str())
        .collect();
    assert_eq!(keys, ["big.bin", "note.txt"]);
    producer("&operation=copyObject")
        .process(
            Exchange::new(Body::Empty)
                .with_header(headers::KEY, "note.txt")
                .with_header(headers::BUCKET_DESTINATION_NAME, b.name.as_str())
                .with_header(headers::DESTINATION_KEY, "copy/note.txt"),
        )
        .await
        .unwrap();
    producer("&operation=deleteObject")
        .process(Exchange::new(Body::Empty).with_header(headers::KEY, "big.bin"))
        .await
        .unwrap();
    assert_eq!(b.keys().await, ["copy/note.txt", "note.txt"]);
    let no_key = producer("")
        .process(Exchange::new("x"))
        .await
        .unwrap_err()
        .to_string();
    assert!(no_key.contains("CamelAwsS3Key"), "{no_key}");
}

#[tokio::test]
async fn endpoints_build_without_credentials_or_a_reachable_service() {
    let ctx = NoContext;
    let endpoint = S3Component::new()
        .endpoint(
            EndpointUri::parse("aws2-s3://nowhere?region=eu-west-1").unwrap(),
            &ctx,
        )
        .unwrap();
    assert!(endpoint.producer().is_ok() && endpoint.consumer().is_ok());
}
