//! The `pubsub:` component.

use std::sync::Arc;

use camel_api::{CamelError, Component, ComponentContext, Endpoint, EndpointUri};

use super::codec::PubSubCodec;
use super::connection::{Connection, CONNECTION_PARAMETERS};
use super::consumer::PubSubConsumer;
use super::options::{PubSubConsumerOptions, PUBSUB_CONSUMER_PARAMETERS};
use super::pause::{paused_ordering_keys, resume_ordering_key};
use super::pull::SubscriptionClient;
use super::stream::StreamClient;
use crate::attributes::HeaderSelection;
use crate::batcher::BatcherRegistry;
use crate::endpoint::registry_constructors;
use crate::endpoint::SinkEndpoint;

/// Parameters of `pubsub:` besides the common sink and batch ones.
pub const PUBSUB_PARAMETERS: &[&str] = &[
    "emulator_host",
    "token_env",
    "token_source",
    "metadata_host",
    "service_account_key",
    "headers",
];

/// Makes `pubsub:projects/P/topics/T` sink endpoints and, in `from`,
/// `pubsub:projects/P/subscriptions/S` consumers.
#[derive(Debug, Clone)]
pub struct PubSubComponent {
    registry: Arc<BatcherRegistry>,
}

registry_constructors!(PubSubComponent);

/// True for `projects/P/topics/T` with non-empty parts.
fn is_topic_path(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    parts.len() == 4
        && parts[0] == "projects"
        && parts[2] == "topics"
        && !parts[1].is_empty()
        && parts[3]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
}

impl PubSubComponent {
    /// Resumes `ordering_key` of `topic` (`projects/P/topics/T`) for every route of this
    /// component's registry; true if it was paused.
    pub fn resume(&self, topic: &str, ordering_key: &str) -> bool {
        resume_ordering_key(&self.registry, topic, ordering_key)
    }

    /// The paused ordering keys of `topic`, sorted.
    pub fn paused(&self, topic: &str) -> Vec<String> {
        paused_ordering_keys(&self.registry, topic)
    }
}

impl Component for PubSubComponent {
    fn scheme(&self) -> &str {
        "pubsub"
    }

    fn endpoint(
        &self,
        uri: EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let raw = uri.as_str().to_string();
        if let Some(subscription) = subscription_path(uri.path()) {
            return subscription_endpoint(uri, &raw, &subscription);
        }
        if !is_topic_path(uri.path()) {
            return Err(CamelError::invalid_uri(
                raw,
                "expected `pubsub:projects/PROJECT/topics/TOPIC` (a topic name starts with a letter), or `projects/PROJECT/subscriptions/SUBSCRIPTION` in `from`",
            ));
        }
        self.sink(uri, ctx, &raw, &[])
    }
}

impl PubSubComponent {
    /// The sink endpoint of a topic URI; `also_known` are parameters read elsewhere
    /// (the consumer's), taken here so they are not left over.
    fn sink(
        &self,
        uri: EndpointUri,
        ctx: &dyn ComponentContext,
        raw: &str,
        also_known: &[&str],
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let registry = self.registry.clone();
        let mut known: Vec<&str> = PUBSUB_PARAMETERS.to_vec();
        known.extend_from_slice(also_known);
        SinkEndpoint::build(uri, ctx, self.registry.clone(), &known, |path, params| {
            for name in also_known {
                params.take_str(name);
            }
            let connection = Connection::take_parameters(raw, params)?;
            let headers = HeaderSelection::take_parameter(params)?;
            Ok(PubSubCodec::new(path, &connection.base, None)
                .with_token(connection.token())
                .with_headers(headers)
                .with_registry(&registry))
        })
    }
}

/// `projects/P/subscriptions/S` with non-empty parts.
fn subscription_path(path: &str) -> Option<String> {
    let parts: Vec<&str> = path.split('/').collect();
    (parts.len() == 4
        && parts[0] == "projects"
        && parts[2] == "subscriptions"
        && !parts[1].is_empty()
        && !parts[3].is_empty())
    .then(|| path.to_string())
}

/// A consumer-only endpoint of `subscription`.
fn subscription_endpoint(
    mut uri: EndpointUri,
    raw: &str,
    subscription: &str,
) -> Result<Arc<dyn Endpoint>, CamelError> {
    let consumer = PubSubConsumerOptions::take_parameters(raw, subscription, &mut uri.parameters)?;
    let connection = Connection::take_parameters(raw, &mut uri.parameters)?;
    let mut known: Vec<&str> = CONNECTION_PARAMETERS.to_vec();
    known.extend_from_slice(PUBSUB_CONSUMER_PARAMETERS);
    uri.parameters.finish(&known)?;
    Ok(Arc::new(PubSubEndpoint {
        uri: raw.to_string(),
        sink: None,
        subscription: Some((connection, consumer)),
    }))
}

/// The same Pub/Sub under Camel's scheme: `google-pubsub:PROJECT:DESTINATION`, where
/// the destination is a topic in `to` and a subscription in `from`.
#[derive(Debug, Clone, Default)]
pub struct GooglePubsubComponent(pub PubSubComponent);

impl Component for GooglePubsubComponent {
    fn scheme(&self) -> &str {
        "google-pubsub"
    }

    fn endpoint(
        &self,
        uri: EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let raw = uri.as_str().to_string();
        let Some((project, destination)) = uri
            .path()
            .split_once(':')
            .filter(|(p, d)| !p.is_empty() && !d.is_empty() && !d.contains(['/', ':']))
        else {
            return Err(CamelError::invalid_uri(
                raw,
                "expected `google-pubsub:PROJECT:DESTINATION` (a topic in `to`, a subscription in `from`)",
            ));
        };
        let subscription = format!("projects/{project}/subscriptions/{destination}");
        let mut copy = uri.parameters.clone();
        let consumer = PubSubConsumerOptions::take_parameters(&raw, &subscription, &mut copy)?;
        let connection = Connection::take_parameters(&raw, &mut copy)?;
        let mut topic =
            EndpointUri::parse(&format!("pubsub:projects/{project}/topics/{destination}"))?;
        topic.parameters = uri.parameters;
        // A name that cannot be a topic (one starting with a digit) is still a
        // subscription.
        let sink = if is_topic_path(topic.path()) {
            Some(self.0.sink(topic, ctx, &raw, PUBSUB_CONSUMER_PARAMETERS)?)
        } else {
            None
        };
        Ok(Arc::new(PubSubEndpoint {
            uri: raw,
            sink,
            subscription: Some((connection, consumer)),
        }))
    }
}

/// A topic's sink, a subscription's consumer, or both (`google-pubsub:`).
#[derive(Debug)]
struct PubSubEndpoint {
    uri: String,
    sink: Option<Arc<dyn Endpoint>>,
    subscription: Option<(Connection, PubSubConsumerOptions)>,
}

impl Endpoint for PubSubEndpoint {
    fn uri(&self) -> &str {
        &self.uri
    }

    fn producer(&self) -> Result<camel_api::BoxProcessor, CamelError> {
        match &self.sink {
            Some(sink) => sink.producer(),
            None => Err(CamelError::invalid_uri(
                self.uri.clone(),
                "a subscription is read in `from`; `to` publishes to a topic (`projects/P/topics/T`)",
            )),
        }
    }

    fn lifecycle(&self) -> Option<Arc<dyn camel_api::StepLifecycle>> {
        self.sink.as_ref().and_then(|s| s.lifecycle())
    }

    fn consumer(&self) -> Result<Box<dyn camel_api::Consumer>, CamelError> {
        let Some((connection, options)) = &self.subscription else {
            return Err(CamelError::invalid_uri(
                self.uri.clone(),
                "`from` reads a subscription (`projects/P/subscriptions/S`), not a topic",
            ));
        };
        let client =
            SubscriptionClient::new(&connection.base, &options.subscription, connection.token());
        let stream = match streams(options, connection) {
            false => None,
            true => Some(StreamClient::new(
                &connection.base,
                &options.subscription,
                connection.token(),
            )?),
        };
        Ok(Box::new(PubSubConsumer::new(
            client,
            stream,
            options.clone(),
        )))
    }
}

/// Streaming pull unless `synchronous_pull=true`, or, when unset, the emulator is the
/// endpoint (ADR 0171).
fn streams(options: &PubSubConsumerOptions, connection: &Connection) -> bool {
    !options
        .synchronous_pull
        .unwrap_or_else(|| connection.is_emulator())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_is_the_default_except_against_the_emulator() {
        let choice = |uri: &str| {
            let mut uri = EndpointUri::parse(uri).unwrap();
            let connection = Connection::take_parameters("u", &mut uri.parameters).unwrap();
            let options = PubSubConsumerOptions::take_parameters(
                "u",
                "projects/p/subscriptions/s",
                &mut uri.parameters,
            )
            .unwrap();
            streams(&options, &connection)
        };
        let base = "pubsub:projects/p/subscriptions/s";
        assert!(!choice(&format!("{base}?emulator_host=h:1")));
        assert!(choice(&format!(
            "{base}?emulator_host=h:1&synchronousPull=false"
        )));
        assert!(!choice(&format!("{base}?synchronous_pull=true")));
        if std::env::var_os("PUBSUB_EMULATOR_HOST").is_none() {
            assert!(choice(base), "Google itself: streaming, as Camel");
        }
    }

    #[test]
    fn topic_paths() {
        assert!(is_topic_path("projects/p/topics/orders"));
        assert!(!is_topic_path("projects/p/topics/1orders"));
        assert!(!is_topic_path("topics/orders"));
        assert!(subscription_path("projects/p/subscriptions/s").is_some());
        assert!(subscription_path("projects/p/topics/s").is_none());
    }
}
