//! The SQS client both the sink and the consumer use: static credentials when the URI
//! gives them, else the AWS default credentials chain, resolved when the first request is
//! signed (so building an endpoint — `camel validate` — needs no credentials).

use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use camel_api::CamelError;

use crate::aws::{describe, AwsCredentials, DefaultChain};

/// A client for `region`, optionally at `endpoint` (moto, LocalStack).
pub(crate) fn client(
    region: &str,
    endpoint: Option<&str>,
    credentials: Option<&AwsCredentials>,
) -> aws_sdk_sqs::Client {
    let mut config = aws_sdk_sqs::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(region.to_string()));
    config = match credentials {
        Some(c) => config.credentials_provider(Credentials::new(
            c.access_key_id.clone(),
            c.secret_access_key.clone(),
            c.session_token.clone(),
            None,
            "camel-sinks",
        )),
        None => config.credentials_provider(DefaultChain::default()),
    };
    if let Some(ep) = endpoint {
        config = config.endpoint_url(ep);
    }
    aws_sdk_sqs::Client::from_conf(config.build())
}

/// The URL of `queue` (a name, resolved with `GetQueueUrl`, or already a URL).
pub(crate) async fn queue_url(
    client: &aws_sdk_sqs::Client,
    queue: &str,
) -> Result<String, CamelError> {
    if queue.starts_with("http://") || queue.starts_with("https://") {
        return Ok(queue.to_string());
    }
    let out = client
        .get_queue_url()
        .queue_name(queue)
        .send()
        .await
        .map_err(|e| describe(&format!("resolving the URL of SQS queue `{queue}`"), e))?;
    out.queue_url
        .ok_or_else(|| CamelError::processor("SQS returned no queue URL"))
}
