//! The `aws2-sns:` component.

use std::sync::Arc;

use camel_api::inbound::is_control_header;
use camel_api::{CamelError, Component, ComponentContext, Endpoint, EndpointUri, Parameters};

use super::codec::SnsCodec;
use crate::attributes::HeaderSelection;
use crate::aws::connection;
use crate::batcher::BatcherRegistry;
use crate::endpoint::{registry_constructors, required_path, SinkEndpoint};

/// Parameters of `aws2-sns:` besides the common sink and batch ones (Camel's names in
/// snake_case; `headers` is ours, as on `sqs:`).
pub const SNS_PARAMETERS: &[&str] = &[
    "region",
    "endpoint",
    "override_endpoint",
    "uri_endpoint_override",
    "access_key",
    "secret_key",
    "session_token",
    "headers",
    "subject",
    "message_structure",
    "auto_create_topic",
    "message_group_id_strategy",
    "message_deduplication_id_strategy",
    "use_default_credentials_provider",
];

/// Camel's constant group of `message_group_id_strategy=useConstant`.
const CONSTANT_GROUP: &str = "CamelSingleMessageGroup";

/// Makes `aws2-sns:TOPIC` endpoints: a batching sink (producer only, as in Camel).
#[derive(Debug, Clone)]
pub struct SnsComponent {
    registry: Arc<BatcherRegistry>,
}

registry_constructors!(SnsComponent);

impl Component for SnsComponent {
    fn scheme(&self) -> &str {
        "aws2-sns"
    }

    /// A FIFO topic keeps each message group's order; a standard topic keeps none.
    fn keeps_order(&self, uri: &EndpointUri) -> Option<bool> {
        Some(super::codec::is_fifo_topic(uri.path()))
    }

    fn endpoint(
        &self,
        uri: EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let raw = uri.as_str().to_string();
        let topic = required_path(
            &raw,
            uri.path().trim_start_matches("//"),
            "a topic name or ARN, as in `aws2-sns:orders`",
        )?;
        SinkEndpoint::build(
            uri,
            ctx,
            self.registry.clone(),
            SNS_PARAMETERS,
            |_, params| {
                let (region, endpoint, credentials) = connection(&raw, params)?;
                params.take_bool("use_default_credentials_provider")?;
                let headers = HeaderSelection::take_parameter(params)?;
                if let Some(name) = headers.names().find(|n| is_control_header(n)) {
                    return Err(CamelError::invalid_uri(
                    raw.clone(),
                    format!("headers: `{name}` is a Camel header and never becomes a message attribute"),
                ));
                }
                take_group_strategy(&raw, params)?;
                let content_based = params.take_choice(
                    "message_deduplication_id_strategy",
                    &["use_exchange_id", "use_content_based_deduplication"],
                )? == Some("use_content_based_deduplication");
                Ok(
                    SnsCodec::new(&topic, &region, endpoint.as_deref(), credentials)
                        .with_headers(headers)
                        .with_subject(params.take_str("subject"))
                        .with_message_structure(params.take_str("message_structure"))
                        .with_content_based_deduplication(content_based)
                        .with_auto_create_topic(
                            params.take_bool("auto_create_topic")?.unwrap_or(false),
                        ),
                )
            },
        )
    }
}

/// Camel's `message_group_id_strategy`, turned into the `group_key` the sink evaluates
/// per exchange (the sink reads `group_key` after this).
fn take_group_strategy(raw: &str, params: &mut Parameters) -> Result<(), CamelError> {
    let strategy = params.take_choice(
        "message_group_id_strategy",
        &["use_constant", "use_exchange_id", "use_property_value"],
    )?;
    let Some(strategy) = strategy else {
        return Ok(());
    };
    if params.contains("group_key") {
        return Err(CamelError::invalid_uri(
            raw.to_string(),
            "give group_key or message_group_id_strategy, not both",
        ));
    }
    let key = match strategy {
        "use_constant" => CONSTANT_GROUP,
        "use_exchange_id" => "${exchangeId}",
        _ => "${exchangeProperty.CamelAwsMessageGroupId}",
    };
    params.set("group_key", key.to_string());
    Ok(())
}
