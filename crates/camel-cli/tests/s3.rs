//! `aws2-s3:` through the binary, against moto (`CAMEL_TEST_SQS_ENDPOINT`; moto serves S3
//! on the same port):
//!
//! - a `camel run` consumer is SIGKILLed mid-bucket and started again: nothing is lost
//!   (every object reaches the output bucket); the objects delivered twice (those whose
//!   route had finished but whose delete had not) are counted and printed;
//! - a 256 MiB object is spooled to disk and handed over by path, with the process's
//!   peak RSS far below the object's size.

mod support;

use std::collections::HashMap;
use std::io::Write;
use std::time::{Duration, Instant};

use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_s3::primitives::ByteStream;
use camel_api::test_support::service_from_env;
use support::{spawn, unique_name, wait_until, KillOnDrop};

fn client(endpoint: &str) -> aws_sdk_s3::Client {
    aws_sdk_s3::Client::from_conf(
        aws_sdk_s3::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .credentials_provider(Credentials::new("test", "test", None, None, "test"))
            .endpoint_url(endpoint)
            .force_path_style(true)
            .build(),
    )
}

async fn keys(client: &aws_sdk_s3::Client, bucket: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut pages = client
        .list_objects_v2()
        .bucket(bucket)
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        out.extend(
            page.unwrap()
                .contents
                .unwrap_or_default()
                .into_iter()
                .filter_map(|o| o.key),
        );
    }
    out
}

fn endpoint_parameters(endpoint: &str) -> String {
    format!("overrideEndpoint=true&uriEndpointOverride={endpoint}&forcePathStyle=true&accessKey=test&secretKey=test&region=us-east-1")
}

#[test]
fn a_sigkilled_consumer_restarts_and_loses_no_object() {
    const OBJECTS: usize = 150;
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let s3 = client(&endpoint);
    let (src, dst) = (unique_name("kill-in"), unique_name("kill-out"));
    rt.block_on(async {
        for b in [&src, &dst] {
            s3.create_bucket().bucket(b).send().await.unwrap();
        }
        for i in 0..OBJECTS {
            s3.put_object()
                .bucket(&src)
                .key(format!("in/{i:04}"))
                .body(ByteStream::from(format!("object {i}").into_bytes()))
                .send()
                .await
                .unwrap();
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let routes = dir.path().join("s3.yaml");
    let params = endpoint_parameters(&endpoint);
    // Each delivery writes `<source key>/<exchange id>` to the output bucket, so a
    // duplicate shows as a second object under the same source key.
    std::fs::write(
        &routes,
        format!(
            r#"- route:
    id: s3-kill
    from:
      uri: 'aws2-s3://{src}?{params}&initialDelay=0&delay=50&maxMessagesPerPoll=10&concurrentConsumers=4'
      steps:
        - delay: 20
        - setHeader: {{name: CamelAwsS3Key, simple: "${{header.CamelAwsS3Key}}/${{exchangeId}}"}}
        - to: 'aws2-s3://{dst}?{params}'
"#
        ),
    )
    .unwrap();
    let routes = routes.to_str().unwrap().to_string();
    let delivered = || -> Vec<String> { rt.block_on(keys(&s3, &dst)) };
    let (within, every) = (Duration::from_secs(120), Duration::from_millis(100));
    let (child, _log) = spawn(&["run", &routes]);
    let mut child = KillOnDrop(child);
    wait_until("a third of the objects", within, every, &|| {
        delivered().len() >= OBJECTS / 3
    });
    child.0.kill().expect("SIGKILL the consumer");
    let _ = child.0.wait();
    let before_restart = delivered().len();
    let (again, _log) = spawn(&["run", &routes]);
    let _again = KillOnDrop(again);
    let source_left = || rt.block_on(keys(&s3, &src));
    wait_until("the input bucket to empty", within, every, &|| {
        source_left().is_empty()
    });
    let all = delivered();
    let mut per_source: HashMap<String, usize> = HashMap::new();
    for key in &all {
        let source = key.rsplit_once('/').map(|(s, _)| s).unwrap_or(key);
        *per_source.entry(source.to_string()).or_default() += 1;
    }
    let duplicates = all.len() - per_source.len();
    println!(
        "s3 sigkill: objects={OBJECTS} unique={} duplicates={duplicates} delivered_before_kill={before_restart}",
        per_source.len()
    );
    assert_eq!(
        per_source.len(),
        OBJECTS,
        "every object delivered, none lost"
    );
    // Only objects the killed process had routed but not yet deleted come twice: at
    // most the four it ran at once.
    assert!(duplicates <= 4, "{duplicates} duplicates");
}

/// The peak resident set of process `pid` in KiB (`VmHWM`).
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn a_256_mib_object_is_spooled_in_bounded_memory() {
    const SIZE: usize = 256 * 1024 * 1024;
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let s3 = client(&endpoint);
    let bucket = unique_name("big");
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("big.bin");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&source).unwrap());
        let line = format!("{}\n", "x".repeat(1023));
        for _ in 0..SIZE / line.len() {
            f.write_all(line.as_bytes()).unwrap();
        }
        f.flush().unwrap();
    }
    rt.block_on(async {
        s3.create_bucket().bucket(&bucket).send().await.unwrap();
        s3.put_object()
            .bucket(&bucket)
            .key("big.bin")
            .body(ByteStream::from_path(&source).await.unwrap())
            .send()
            .await
            .unwrap();
    });
    std::fs::remove_file(&source).unwrap();
    let out = dir.path().join("out");
    let spool = dir.path().join("spool");
    std::fs::create_dir_all(&spool).unwrap();
    let routes = dir.path().join("big.yaml");
    std::fs::write(
        &routes,
        format!(
            r#"- route:
    id: big
    from:
      uri: 'aws2-s3://{bucket}?{params}&initialDelay=0&delay=50&spoolDirectory={spool}'
      steps:
        - setBody: {{simple: "${{header.CamelFileLength}} ${{header.CamelAwsS3ContentLength}}"}}
        - to:
            uri: 'file:{out}'
            parameters: {{file_name: size.txt}}
"#,
            params = endpoint_parameters(&endpoint),
            spool = spool.display(),
            out = out.display()
        ),
    )
    .unwrap();
    let (child, lines) = spawn(&["run", routes.to_str().unwrap()]);
    let mut child = KillOnDrop(child);
    let pid = child.0.id();
    let deadline = Instant::now() + Duration::from_secs(240);
    let mut peak = 0;
    while !out.join("size.txt").exists() {
        peak = peak.max(peak_rss_kib(pid).unwrap_or(0));
        if Instant::now() > deadline {
            let log: Vec<String> = lines.try_iter().collect();
            panic!("no size.txt within 240 s\n{}", log.join("\n"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    peak = peak.max(peak_rss_kib(pid).unwrap_or(0));
    let written = std::fs::read_to_string(out.join("size.txt")).unwrap();
    // The delete follows the route's end.
    let settled = Instant::now() + Duration::from_secs(20);
    let mut bucket_left = rt.block_on(keys(&s3, &bucket));
    while !bucket_left.is_empty() && Instant::now() < settled {
        std::thread::sleep(Duration::from_millis(50));
        bucket_left = rt.block_on(keys(&s3, &bucket));
    }
    peak = peak.max(peak_rss_kib(pid).unwrap_or(0));
    let _ = child.0.kill();
    let spooled: Vec<_> = std::fs::read_dir(&spool).unwrap().collect();
    let expected = (SIZE / 1024 * 1024).to_string();
    assert_eq!(written, format!("{expected} {expected}"));
    assert!(
        bucket_left.is_empty(),
        "deleted after the route: {bucket_left:?}"
    );
    assert!(spooled.is_empty(), "the spool file is removed: {spooled:?}");
    println!("peak RSS while consuming a {SIZE}-byte S3 object: {peak} KiB");
    // The debug binary holds about 65 MiB once started; the object spooled through
    // 8 KiB-64 KiB chunks adds a few MiB. Held in memory it would add 256 MiB.
    assert!(peak > 0 && peak < 130 * 1024, "peak RSS {peak} KiB");
}
