//! The SNS client and the topic's ARN.

use aws_sdk_sns::config::{BehaviorVersion, Credentials, Region};
use camel_api::CamelError;

use crate::aws::{describe, AwsCredentials, DefaultChain};

/// A client for `region`, optionally at `endpoint` (moto, LocalStack).
pub(crate) fn client(
    region: &str,
    endpoint: Option<&str>,
    credentials: Option<&AwsCredentials>,
) -> aws_sdk_sns::Client {
    let mut config = aws_sdk_sns::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(region.to_string()));
    if let Some(ep) = endpoint {
        config = config.endpoint_url(ep);
    }
    let config = match credentials {
        Some(c) => config.credentials_provider(Credentials::new(
            c.access_key_id.clone(),
            c.secret_access_key.clone(),
            c.session_token.clone(),
            None,
            "camel-sinks-sns",
        )),
        None => config.credentials_provider(DefaultChain::default()),
    };
    aws_sdk_sns::Client::from_conf(config.build())
}

/// The ARN of `topic`: as given when it is one; else made with `CreateTopic` (which
/// returns the existing topic's ARN too) when `create`, else found with `ListTopics`.
pub(crate) async fn topic_arn(
    client: &aws_sdk_sns::Client,
    topic: &str,
    create: bool,
) -> Result<String, CamelError> {
    if topic.starts_with("arn:") {
        return Ok(topic.to_string());
    }
    if create {
        let mut request = client.create_topic().name(topic);
        if topic.ends_with(".fifo") {
            request = request.attributes("FifoTopic", "true");
        }
        let out = request
            .send()
            .await
            .map_err(|e| describe(&format!("creating SNS topic `{topic}`"), e))?;
        return out
            .topic_arn
            .ok_or_else(|| CamelError::processor("SNS returned no topic ARN"));
    }
    let suffix = format!(":{topic}");
    let mut pages = client.list_topics().into_paginator().send();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| describe("listing SNS topics", e))?;
        for t in page.topics.unwrap_or_default() {
            if let Some(arn) = t.topic_arn.filter(|a| a.ends_with(&suffix)) {
                return Ok(arn);
            }
        }
    }
    Err(CamelError::processor(format!(
        "SNS topic `{topic}` does not exist (set autoCreateTopic=true to create it)"
    )))
}
