//! `CamelExternalRedelivered`: a consumer marks an exchange whose message the broker had
//! delivered before, as Camel's consumers do. Each test's route fails the first delivery
//! (no local retries), so only the broker's redelivery reaches the logging branch, and
//! only if the consumer set the property.

mod support;

use std::time::Duration;

use support::spawn;

/// A route from `from` that fails any exchange without the property and logs the others;
/// a timer route publishes one message with `publish`.
fn routes(from: &str, publish: &str) -> String {
    format!(
        "\
- route:
    id: publish
    from:
      uri: timer:once
      parameters: {{repeat_count: 1, delay: 200}}
      steps:
        - set_body:
            constant: hello
        - to: '{publish}'
- route:
    id: consume
    from:
      uri: '{from}'
      steps:
        - choice:
            when:
              - simple: '${{exchangeProperty.CamelExternalRedelivered}} == true'
                steps:
                  - log: 'redelivered by the broker: ${{body}}'
            otherwise:
              steps:
                - throw_exception:
                    exception_type: java.lang.IllegalStateException
                    message: first delivery
"
    )
}

fn run_until_redelivered(yaml: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, yaml).unwrap();
    let file = file.display().to_string();
    let (mut child, log) = spawn(&["run", &file]);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    let found = loop {
        match log.recv_timeout(Duration::from_millis(500)) {
            Ok(line) if line.contains("redelivered by the broker: hello") => break true,
            Ok(line) => seen.push(line),
            Err(_) => {}
        }
        if std::time::Instant::now() > deadline {
            break false;
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(found, "the redelivery carried the property: {seen:#?}");
}

#[test]
fn rabbitmq_marks_a_requeued_delivery() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_RABBITMQ_URL") else {
        return;
    };
    let name = format!("camel.redelivered.{}", std::process::id());
    let common = format!("addresses={url}&queue={name}.q&routing_key=k");
    run_until_redelivered(&routes(
        &format!("rabbitmq:{name}?{common}&maximum_retry_attempts=0&requeue=true&retry_delay=100"),
        &format!("rabbitmq:{name}?{common}"),
    ));
}

#[test]
fn jetstream_marks_a_second_delivery() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_NATS_URL") else {
        return;
    };
    let id = std::process::id();
    let subject = format!("camel.redelivered.{id}");
    let stream = format!("CAMEL_REDELIVERED_{id}");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let js = rt.block_on(async {
        let client = async_nats::connect(&url).await.expect("connect to NATS");
        let js = async_nats::jetstream::new(client);
        js.create_stream(async_nats::jetstream::stream::Config {
            name: stream.clone(),
            subjects: vec![subject.clone()],
            storage: async_nats::jetstream::stream::StorageType::Memory,
            ..Default::default()
        })
        .await
        .expect("a stream");
        js
    });
    run_until_redelivered(&routes(
        &format!(
            "nats:{subject}?servers={url}&durable_name=r&jetstream_name={stream}&nak_delay=100ms"
        ),
        &format!("nats:{subject}?servers={url}&linger_ms=1"),
    ));
    rt.block_on(async {
        let _ = js.delete_stream(&stream).await;
    });
}

#[test]
fn sqs_marks_a_second_receive() {
    let Some(endpoint) = camel_api::test_support::service_from_env("CAMEL_TEST_SQS_ENDPOINT")
    else {
        return;
    };
    let queue = format!("camel-redelivered-{}", std::process::id());
    support::create_sqs_queue(&endpoint, &queue);
    let aws = format!("region=us-east-1&endpoint={endpoint}&access_key=test&secret_key=test");
    run_until_redelivered(&routes(
        &format!("sqs:{queue}?{aws}&wait_time_seconds=1&visibility_timeout=1"),
        &format!("sqs:{queue}?{aws}&linger_ms=1"),
    ));
}
