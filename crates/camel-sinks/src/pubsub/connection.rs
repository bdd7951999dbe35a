//! Where a `pubsub:`/`google-pubsub:` endpoint talks to and with which token: read once
//! from the URI, used by the sink and by the subscription consumer alike.

use std::path::PathBuf;

use camel_api::{CamelError, Parameters};

use super::credentials::{metadata_host_from_env, AdcEnvironment};
use super::token::{TokenOrigin, TokenSource};

/// Connection parameters shared by the sink and the consumer.
pub const CONNECTION_PARAMETERS: &[&str] = &[
    "emulator_host",
    "token_env",
    "token_source",
    "metadata_host",
    "service_account_key",
];

/// The base URL and the token choice of one endpoint.
#[derive(Debug, Clone)]
pub(crate) struct Connection {
    /// `http://127.0.0.1:8085` (the emulator) or `https://pubsub.googleapis.com`.
    pub(crate) base: String,
    emulator: bool,
    token_env: String,
    token_source: Option<&'static str>,
    metadata_host: Option<String>,
    key_file: Option<PathBuf>,
}

impl Connection {
    /// Takes the connection parameters of `raw` (the URI, for errors).
    pub(crate) fn take_parameters(raw: &str, params: &mut Parameters) -> Result<Self, CamelError> {
        let emulator = params.take_str("emulator_host").or_else(|| {
            std::env::var("PUBSUB_EMULATOR_HOST")
                .ok()
                .filter(|v| !v.is_empty())
        });
        let token_env = params
            .take_str("token_env")
            .unwrap_or_else(|| "GOOGLE_OAUTH_ACCESS_TOKEN".to_string());
        let token_source = params.take_choice("token_source", &["env", "metadata", "adc"])?;
        let metadata_host = params.take_str("metadata_host");
        let key_file = params
            .take_str("service_account_key")
            .map(|k| key_file(raw, &k))
            .transpose()?;
        let base = match &emulator {
            Some(host) if host.starts_with("http") => host.trim_end_matches('/').to_string(),
            Some(host) => format!("http://{}", host.trim_end_matches('/')),
            None => "https://pubsub.googleapis.com".to_string(),
        };
        Ok(Connection {
            base,
            emulator: emulator.is_some(),
            token_env,
            token_source,
            metadata_host,
            key_file,
        })
    }

    /// True when the endpoint is the Pub/Sub emulator.
    pub(crate) fn is_emulator(&self) -> bool {
        self.emulator
    }

    /// A token source for one client: none for the emulator; else a credentials file,
    /// the metadata server, the variable `token_env`, or Application Default Credentials,
    /// in that order of precedence (`token_source` picks one).
    pub(crate) fn token(&self) -> TokenSource {
        if self.emulator {
            return TokenSource::None;
        }
        if let Some(file) = &self.key_file {
            return TokenSource::refreshing(TokenOrigin::File(file.clone()));
        }
        let adc = || {
            TokenSource::refreshing(TokenOrigin::Adc(AdcEnvironment::from_process(
                self.metadata_host.clone(),
            )))
        };
        match self.token_source {
            Some("metadata") => {
                let host = self
                    .metadata_host
                    .clone()
                    .unwrap_or_else(metadata_host_from_env);
                TokenSource::refreshing(TokenOrigin::Metadata(
                    host.trim_end_matches('/').to_string(),
                ))
            }
            Some("adc") => adc(),
            source => match std::env::var(&self.token_env)
                .ok()
                .filter(|v| !v.is_empty())
            {
                Some(token) => TokenSource::Fixed(token),
                // `token_source=env` names the variable as the only source.
                None if source == Some("env") => TokenSource::None,
                None => adc(),
            },
        }
    }
}

/// The path of `service_account_key`: a file path, optionally `file:`-prefixed as in
/// Camel (which also reads `classpath:` and `http:` resources; there is no classpath
/// here, and fetching secrets over HTTP is not offered).
fn key_file(raw: &str, value: &str) -> Result<PathBuf, CamelError> {
    let path = value.strip_prefix("file:").unwrap_or(value);
    if path.is_empty() || path.starts_with("classpath:") || path.starts_with("http") {
        return Err(CamelError::invalid_uri(
            raw.to_string(),
            format!("`service_account_key` must be a file path (`file:` optional), not `{value}`"),
        ));
    }
    Ok(PathBuf::from(path))
}
