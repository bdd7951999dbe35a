//! The `sqs:` component.

use std::sync::Arc;

use camel_api::{CamelError, Component, ComponentContext, Endpoint, EndpointUri, Parameters};

use super::codec::SqsCodec;
use super::consumer::{SqsConsumer, SqsConsumerOptions, SQS_CONSUMER_PARAMETERS};
use crate::attributes::HeaderSelection;
use crate::aws::{connection, AwsCredentials};
use crate::batcher::BatcherRegistry;
use crate::endpoint::registry_constructors;
use crate::endpoint::{required_path, SinkEndpoint};

/// Parameters of `sqs:` besides the common sink and batch ones.
pub const SQS_PARAMETERS: &[&str] = &[
    "region",
    "endpoint",
    "override_endpoint",
    "uri_endpoint_override",
    "amazon_a_w_s_host",
    "protocol",
    "access_key",
    "secret_key",
    "session_token",
    "headers",
    "max_message_bytes",
];

/// Makes `sqs:QUEUE` endpoints: a batching sink in `to`, a long-polling consumer in
/// `from`.
#[derive(Debug, Clone)]
pub struct SqsComponent {
    registry: Arc<BatcherRegistry>,
}

registry_constructors!(SqsComponent);

/// The same component under Camel's scheme, `aws2-sqs:QUEUE`.
#[derive(Debug, Clone, Default)]
pub struct Aws2SqsComponent(pub SqsComponent);

impl Component for Aws2SqsComponent {
    fn scheme(&self) -> &str {
        "aws2-sqs"
    }

    fn endpoint(
        &self,
        uri: EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        self.0.endpoint(uri, ctx)
    }

    fn keeps_order(&self, uri: &EndpointUri) -> Option<bool> {
        self.0.keeps_order(uri)
    }
}

impl Component for SqsComponent {
    fn scheme(&self) -> &str {
        "sqs"
    }

    /// A FIFO queue keeps each message group's order; a standard queue keeps none.
    fn keeps_order(&self, uri: &EndpointUri) -> Option<bool> {
        Some(super::codec::is_fifo_queue(uri.path()))
    }

    fn endpoint(
        &self,
        uri: EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let raw = uri.as_str().to_string();
        let mut copy = uri.parameters.clone();
        let queue = required_path(
            &raw,
            uri.path(),
            "a queue name or URL, as in `sqs:orders.fifo`",
        )?;
        let consumer = SqsConsumerOptions::take_parameters(&queue, &mut copy)?;
        let (region, endpoint, credentials) = sqs_connection(&raw, &mut copy)?;
        let client = super::client::client(&region, endpoint.as_deref(), credentials.as_ref());
        let mut known: Vec<&str> = SQS_PARAMETERS.to_vec();
        known.extend_from_slice(SQS_CONSUMER_PARAMETERS);
        let sink =
            SinkEndpoint::build(uri, ctx, self.registry.clone(), &known, |_path, params| {
                // Read above from the copy; taken here so they are not left over.
                sqs_connection(&raw, params)?;
                for name in SQS_CONSUMER_PARAMETERS {
                    params.take_str(name);
                }
                let headers = HeaderSelection::take_parameter(params)?;
                let mut codec = SqsCodec::with_credentials(
                    &queue,
                    &region,
                    endpoint.as_deref(),
                    credentials.clone(),
                )
                .with_headers(headers);
                if let Some(max) = params.take::<usize>("max_message_bytes")? {
                    codec = codec.with_max_message_bytes(max);
                }
                Ok(codec)
            })?;
        Ok(Arc::new(SqsEndpoint {
            sink,
            client,
            consumer,
        }))
    }
}

/// The AWS connection of every AWS component, and SQS's own way to name an endpoint:
/// Camel's aws2-sqs builds its queue URLs from `protocol` and `amazonAWSHost` (defaults
/// https and amazonaws.com; Kamelets pass them empty when not set). Other values name an
/// AWS-compatible service: here they become the endpoint, unless one is given.
fn sqs_connection(
    raw: &str,
    params: &mut Parameters,
) -> Result<(String, Option<String>, Option<AwsCredentials>), CamelError> {
    let (region, endpoint, credentials) = connection(raw, params)?;
    let host = params
        .take_str("amazon_a_w_s_host")
        .filter(|h| !h.is_empty() && h != "amazonaws.com");
    let protocol = params
        .take_str("protocol")
        .filter(|p| !p.is_empty() && !p.eq_ignore_ascii_case("https"));
    if let Some(p) = &protocol {
        if !p.eq_ignore_ascii_case("http") {
            return Err(CamelError::invalid_uri(
                raw.to_string(),
                format!("protocol `{p}`: https (the default) or http"),
            ));
        }
    }
    let host_endpoint = (host.is_some() || protocol.is_some()).then(|| {
        format!(
            "{}://sqs.{region}.{}",
            protocol.as_deref().unwrap_or("https"),
            host.as_deref().unwrap_or("amazonaws.com")
        )
    });
    Ok((region, endpoint.or(host_endpoint), credentials))
}

/// A sink endpoint that can also consume.
struct SqsEndpoint {
    sink: Arc<dyn Endpoint>,
    client: aws_sdk_sqs::Client,
    consumer: SqsConsumerOptions,
}

impl std::fmt::Debug for SqsEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqsEndpoint")
            .field("sink", &self.sink)
            .field("consumer", &self.consumer)
            .finish()
    }
}

impl Endpoint for SqsEndpoint {
    fn uri(&self) -> &str {
        self.sink.uri()
    }

    fn producer(&self) -> Result<camel_api::BoxProcessor, CamelError> {
        self.sink.producer()
    }

    fn consumer(&self) -> Result<Box<dyn camel_api::Consumer>, CamelError> {
        Ok(Box::new(SqsConsumer::new(
            self.client.clone(),
            self.consumer.clone(),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint_of(uri: &str) -> Result<Option<String>, CamelError> {
        let mut parsed = EndpointUri::parse(uri)?;
        sqs_connection(uri, &mut parsed.parameters).map(|(_, endpoint, _)| endpoint)
    }

    #[test]
    fn camels_aws_host_and_protocol_make_the_endpoint_only_when_not_the_defaults() {
        assert_eq!(endpoint_of("sqs:q?amazonAWSHost=&protocol=").unwrap(), None);
        assert_eq!(
            endpoint_of("sqs:q?amazonAWSHost=amazonaws.com&protocol=https").unwrap(),
            None
        );
        assert_eq!(
            endpoint_of("sqs:q?region=eu-west-1&amazonAWSHost=example.net").unwrap(),
            Some("https://sqs.eu-west-1.example.net".to_string())
        );
        assert_eq!(
            endpoint_of("sqs:q?region=eu-west-1&protocol=http").unwrap(),
            Some("http://sqs.eu-west-1.amazonaws.com".to_string())
        );
        // An explicit endpoint wins.
        assert_eq!(
            endpoint_of("sqs:q?amazonAWSHost=example.net&endpoint=http://127.0.0.1:5000").unwrap(),
            Some("http://127.0.0.1:5000".to_string())
        );
        assert!(endpoint_of("sqs:q?protocol=ftp").is_err());
    }
}
