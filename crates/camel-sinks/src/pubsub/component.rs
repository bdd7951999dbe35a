//! The `pubsub:` component.

use std::sync::Arc;

use camel_api::{CamelError, Component, ComponentContext, Endpoint, EndpointUri};

use super::codec::PubSubCodec;
use super::credentials;
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
    "service_account_key",
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
                let token_source =
                    params.take_choice("token_source", &["env", "metadata", "adc"])?;
                let metadata_host = params.take_str("metadata_host");
                let key_file = params
                    .take_str("service_account_key")
                    .map(|k| key_file(&raw, &k))
                    .transpose()?;
                let headers = HeaderSelection::take_parameter(params)?;
                let base = match &emulator {
                    Some(host) if host.starts_with("http") => host.clone(),
                    Some(host) => format!("http://{host}"),
                    None => "https://pubsub.googleapis.com".to_string(),
                };
                let codec = PubSubCodec::new(path, &base, None);
                let codec = match (&emulator, key_file, token_source) {
                    // The emulator takes no credentials.
                    (Some(_), _, _) => codec,
                    (None, Some(file), _) => codec.with_credentials_file(file),
                    (None, None, Some("metadata")) => codec.with_metadata_token(
                        &metadata_host.unwrap_or_else(credentials::metadata_host_from_env),
                    ),
                    (None, None, Some("adc")) => {
                        codec.with_default_credentials(metadata_host.as_deref())
                    }
                    (None, None, source) => match env_token(&token_env) {
                        Some(token) => PubSubCodec::new(path, &base, Some(token)),
                        // `token_source=env` names the variable as the only source.
                        None if source == Some("env") => codec,
                        None => codec.with_default_credentials(metadata_host.as_deref()),
                    },
                };
                Ok(codec.with_headers(headers).with_registry(&registry))
            },
        )
    }
}

/// The token in the environment variable `name`, if set and not empty.
fn env_token(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The path of `service_account_key`: a file path, optionally `file:`-prefixed as in
/// Camel (which also reads `classpath:` and `http:` resources; there is no classpath
/// here, and fetching secrets over HTTP is not offered).
fn key_file(raw: &str, value: &str) -> Result<std::path::PathBuf, CamelError> {
    let path = value.strip_prefix("file:").unwrap_or(value);
    if path.is_empty() || path.starts_with("classpath:") || path.starts_with("http") {
        return Err(CamelError::invalid_uri(
            raw.to_string(),
            format!("`service_account_key` must be a file path (`file:` optional), not `{value}`"),
        ));
    }
    Ok(std::path::PathBuf::from(path))
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
