//! The `aws2-sns:` sink against moto (`CAMEL_TEST_SQS_ENDPOINT`; moto serves SNS on the
//! same port): a topic made with `autoCreateTopic`, messages delivered to an SQS queue
//! subscribed to it, each caller with its own message id, the subject and the listed
//! headers as message attributes; a `Camel*` header is refused as an attribute.

use std::collections::HashSet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_sqs::types::QueueAttributeName;
use camel_api::test_support::service_from_env;
use camel_api::{Component, EndpointUri, Exchange};
use camel_sinks::sns::{SnsComponent, MESSAGE_ID_HEADER, SUBJECT_HEADER};
use camel_sinks::testing::HeaderContext;
use camel_sinks::BatcherRegistry;

fn unique(what: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("camel-{what}-{}-{nanos}", std::process::id())
}

fn sqs(endpoint: &str) -> aws_sdk_sqs::Client {
    aws_sdk_sqs::Client::from_conf(
        aws_sdk_sqs::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .credentials_provider(Credentials::new("test", "test", None, None, "test"))
            .endpoint_url(endpoint)
            .build(),
    )
}

fn sns(endpoint: &str) -> aws_sdk_sns::Client {
    aws_sdk_sns::Client::from_conf(
        aws_sdk_sns::Config::builder()
            .behavior_version(aws_sdk_sns::config::BehaviorVersion::latest())
            .region(aws_sdk_sns::config::Region::new("us-east-1"))
            .credentials_provider(aws_sdk_sns::config::Credentials::new(
                "test", "test", None, None, "test",
            ))
            .endpoint_url(endpoint)
            .build(),
    )
}

fn producer(uri: &str) -> Result<camel_api::BoxProcessor, camel_api::CamelError> {
    let ctx = HeaderContext {
        route_id: Some("sns-test".into()),
    };
    SnsComponent::with_registry(BatcherRegistry::new())
        .endpoint(EndpointUri::parse(uri)?, &ctx)?
        .producer()
}

#[tokio::test]
async fn messages_reach_a_subscribed_queue_each_caller_with_its_own_id() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let topic = unique("sns");
    let uri = format!(
        "aws2-sns:{topic}?overrideEndpoint=true&uriEndpointOverride={endpoint}&accessKey=test&secretKey=test&region=us-east-1&autoCreateTopic=true&subject=Orders&headers=order-id&lingerMs=20"
    );
    let to = producer(&uri).unwrap();
    // The topic exists once the first message went; subscribe a queue before the rest.
    let first = to
        .process(Exchange::new("first").with_header("order-id", "0"))
        .await
        .unwrap();
    assert!(first.header(MESSAGE_ID_HEADER).is_some());
    let sqs = sqs(&endpoint);
    let queue = unique("sns-sub");
    let url = sqs
        .create_queue()
        .queue_name(&queue)
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let arn = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .unwrap()
        .attributes
        .unwrap()
        .remove(&QueueAttributeName::QueueArn)
        .unwrap();
    let sns = sns(&endpoint);
    let topic_arn = sns
        .create_topic()
        .name(&topic)
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    sns.subscribe()
        .topic_arn(&topic_arn)
        .protocol("sqs")
        .endpoint(arn)
        .send()
        .await
        .unwrap();
    // 25 callers at once: three PublishBatch requests at most, one result each.
    let sends = (1..=25).map(|i| {
        let to = to.clone();
        let mut ex = Exchange::new(format!("order {i}")).with_header("order-id", i.to_string());
        if i == 7 {
            ex = ex.with_header(SUBJECT_HEADER, "Seventh");
        }
        async move { to.process(ex).await }
    });
    let results = futures::future::join_all(sends).await;
    let ids: HashSet<String> = results
        .into_iter()
        .map(|r| r.unwrap().header(MESSAGE_ID_HEADER).unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 25, "one message id per caller");
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while seen.len() < 25 && tokio::time::Instant::now() < deadline {
        let out = sqs
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(10)
            .wait_time_seconds(1)
            .send()
            .await
            .unwrap();
        for m in out.messages.unwrap_or_default() {
            let envelope: serde_json::Value =
                serde_json::from_str(m.body.as_deref().unwrap_or("{}")).unwrap();
            seen.push(envelope);
        }
    }
    assert_eq!(seen.len(), 25, "every message delivered: {seen:?}");
    let bodies: HashSet<&str> = seen.iter().filter_map(|e| e["Message"].as_str()).collect();
    assert!(bodies.contains("order 1") && bodies.contains("order 25"));
    let seventh = seen
        .iter()
        .find(|e| e["Message"] == "order 7")
        .expect("order 7 arrived");
    assert_eq!(seventh["Subject"], "Seventh");
    assert_eq!(seventh["MessageAttributes"]["order-id"]["Value"], "7");
    let other = seen.iter().find(|e| e["Message"] == "order 8").unwrap();
    assert_eq!(other["Subject"], "Orders");
}

#[tokio::test]
async fn camel_headers_never_become_attributes_and_unknown_topics_fail() {
    let e = producer("aws2-sns:t?headers=order-id,CamelFileName")
        .unwrap_err()
        .to_string();
    assert!(e.contains("CamelFileName"), "{e}");
    let both = producer("aws2-sns:t.fifo?group_key=x&messageGroupIdStrategy=useConstant")
        .unwrap_err()
        .to_string();
    assert!(both.contains("not both"), "{both}");
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let uri = format!(
        "aws2-sns:{}?endpoint={endpoint}&access_key=test&secret_key=test",
        unique("missing")
    );
    let err = producer(&uri)
        .unwrap()
        .process(Exchange::new("x"))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("does not exist"), "{err}");
}

/// `amazonAWSHost` and `protocol` name SQS queue URLs in Camel; SNS has no such option.
#[test]
fn camels_sqs_host_options_are_unknown_here() {
    for uri in [
        "aws2-sns:t?amazonAWSHost=example.net",
        "aws2-sns:t?protocol=http",
    ] {
        let e = producer(uri).unwrap_err().to_string();
        assert!(e.contains("unknown parameter"), "{uri}: {e}");
    }
}

#[tokio::test]
async fn a_fifo_topic_takes_camels_group_strategy() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let uri = format!(
        "aws2-sns:{}.fifo?endpoint={endpoint}&access_key=test&secret_key=test&autoCreateTopic=true&messageGroupIdStrategy=useConstant",
        unique("fifo")
    );
    let to = producer(&uri).unwrap();
    for i in 0..5 {
        let out = to.process(Exchange::new(format!("m{i}"))).await.unwrap();
        assert!(out.header(MESSAGE_ID_HEADER).is_some());
    }
    let without = producer(&format!(
        "aws2-sns:{}.fifo?endpoint={endpoint}&access_key=test&secret_key=test&autoCreateTopic=true",
        unique("fifo")
    ))
    .unwrap()
    .process(Exchange::new("x"))
    .await
    .unwrap_err()
    .to_string();
    assert!(without.contains("message group"), "{without}");
}
