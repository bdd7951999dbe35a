//! The `sqs:` component.

use std::sync::Arc;

use camel_api::{CamelError, Component, ComponentContext, Endpoint, EndpointUri};

use super::codec::{SqsCodec, SqsCredentials};
use crate::attributes::HeaderSelection;
use crate::batcher::BatcherRegistry;
use crate::endpoint::registry_constructors;
use crate::endpoint::{required_path, SinkEndpoint};

/// Parameters of `sqs:` besides the common sink and batch ones.
pub const SQS_PARAMETERS: &[&str] = &[
    "region",
    "endpoint",
    "access_key",
    "secret_key",
    "session_token",
    "headers",
    "max_message_bytes",
];

/// Makes `sqs:QUEUE` sink endpoints.
#[derive(Debug, Clone)]
pub struct SqsComponent {
    registry: Arc<BatcherRegistry>,
}

registry_constructors!(SqsComponent);

impl Component for SqsComponent {
    fn scheme(&self) -> &str {
        "sqs"
    }

    fn endpoint(
        &self,
        uri: EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let raw = uri.as_str().to_string();
        SinkEndpoint::build(
            uri,
            ctx,
            self.registry.clone(),
            SQS_PARAMETERS,
            |path, params| {
                let queue =
                    required_path(&raw, path, "a queue name or URL, as in `sqs:orders.fifo`")?;
                let region = params
                    .take_str("region")
                    .or_else(|| std::env::var("AWS_REGION").ok())
                    .unwrap_or_else(|| "us-east-1".to_string());
                let endpoint = params.take_str("endpoint");
                let credentials = match (params.take_str("access_key"), params.take_str("secret_key")) {
                (Some(access_key_id), Some(secret_access_key)) => SqsCredentials {
                    access_key_id,
                    secret_access_key,
                    session_token: params.take_str("session_token"),
                },
                (None, None) => SqsCredentials::from_env().ok_or_else(|| {
                    CamelError::invalid_uri(
                        raw.clone(),
                        "no credentials: set access_key and secret_key, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
                    )
                })?,
                _ => {
                    return Err(CamelError::invalid_uri(
                        raw.clone(),
                        "access_key and secret_key go together",
                    ))
                }
            };
                let headers = HeaderSelection::take_parameter(params)?;
                let mut codec = SqsCodec::new(&queue, &region, endpoint.as_deref(), credentials)
                    .with_headers(headers);
                if let Some(max) = params.take::<usize>("max_message_bytes")? {
                    codec = codec.with_max_message_bytes(max);
                }
                Ok(codec)
            },
        )
    }
}
