//! The `pubsub:` component.

use std::sync::Arc;

use camel_api::{CamelError, Component, ComponentContext, Endpoint, EndpointUri};

use super::codec::PubSubCodec;
use super::pause::{paused_ordering_keys, resume_ordering_key};
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
    "headers",
];

/// Makes `pubsub:projects/P/topics/T` sink endpoints.
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
        let registry = self.registry.clone();
        SinkEndpoint::build(
            uri,
            ctx,
            self.registry.clone(),
            PUBSUB_PARAMETERS,
            |path, params| {
                if !is_topic_path(path) {
                    return Err(CamelError::invalid_uri(
                    raw.clone(),
                    "expected `pubsub:projects/PROJECT/topics/TOPIC` (a topic name starts with a letter)",
                ));
                }
                let emulator = params.take_str("emulator_host").or_else(|| {
                    std::env::var("PUBSUB_EMULATOR_HOST")
                        .ok()
                        .filter(|v| !v.is_empty())
                });
                let token_env = params
                    .take_str("token_env")
                    .unwrap_or_else(|| "GOOGLE_OAUTH_ACCESS_TOKEN".to_string());
                let metadata = match params.take_choice("token_source", &["env", "metadata"])? {
                    Some("metadata") => {
                        Some(params.take_str("metadata_host").unwrap_or_else(|| {
                            std::env::var("GCE_METADATA_HOST")
                                .ok()
                                .filter(|v| !v.is_empty())
                                .unwrap_or_else(|| "metadata.google.internal".to_string())
                        }))
                    }
                    _ => None,
                };
                let headers = HeaderSelection::take_parameter(params)?;
                let (base, token) = match &emulator {
                    Some(host) if host.starts_with("http") => (host.clone(), None),
                    Some(host) => (format!("http://{host}"), None),
                    None => (
                        "https://pubsub.googleapis.com".to_string(),
                        std::env::var(&token_env).ok().filter(|v| !v.is_empty()),
                    ),
                };
                let mut codec = PubSubCodec::new(path, &base, token);
                if let (None, Some(host)) = (&emulator, metadata) {
                    codec = codec.with_metadata_token(&host);
                }
                Ok(codec.with_headers(headers).with_registry(&registry))
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_paths() {
        assert!(is_topic_path("projects/p/topics/orders"));
        assert!(!is_topic_path("projects/p/topics/1orders"));
        assert!(!is_topic_path("topics/orders"));
    }
}
