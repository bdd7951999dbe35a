//! Where the bearer token of a Google publish comes from.
//!
//! A token read once from the environment expires (Google's last an hour), after which
//! every publish fails with 401 and pauses its ordering key. On Google's runtimes (GCE,
//! GKE, Cloud Run) the metadata server hands out tokens for the attached service
//! account; this source asks it again a few minutes before the token it holds expires.

use std::sync::Arc;
use std::time::Duration;

use camel_api::CamelError;
use serde::Deserialize;
use tokio::time::Instant;

/// A token is replaced this long before Google says it expires: a request that starts
/// with it must still carry a valid token when it arrives.
const REFRESH_BEFORE: Duration = Duration::from_secs(300);

/// The metadata server's path of the default service account's access token.
const TOKEN_PATH: &str = "/computeMetadata/v1/instance/service-accounts/default/token";

/// Where a codec gets its bearer token.
#[derive(Debug)]
pub(crate) enum TokenSource {
    /// No token (the emulator).
    None,
    /// A token given once (`token_env`); never refreshed.
    Fixed(String),
    /// The metadata server at this host, refreshed before expiry.
    Metadata(MetadataToken),
}

impl TokenSource {
    /// The token to send now, fetching a fresh one when due.
    pub(crate) async fn bearer(&self) -> Result<Option<Arc<str>>, CamelError> {
        match self {
            TokenSource::None => Ok(None),
            TokenSource::Fixed(t) => Ok(Some(t.as_str().into())),
            TokenSource::Metadata(m) => m.token().await.map(Some),
        }
    }
}

#[derive(Debug)]
struct Cached {
    token: Arc<str>,
    refresh_at: Instant,
}

/// Tokens from a metadata server, cached until shortly before they expire.
#[derive(Debug)]
pub(crate) struct MetadataToken {
    pub(crate) host: String,
    http: reqwest::Client,
    /// Held across the fetch, so concurrent sends wait for one fetch instead of each
    /// making their own.
    cached: tokio::sync::Mutex<Option<Cached>>,
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    expires_in: u64,
}

/// When a token valid for `expires_in` from `now` should be replaced.
fn refresh_at(now: Instant, expires_in: Duration) -> Instant {
    now + expires_in.saturating_sub(REFRESH_BEFORE)
}

impl MetadataToken {
    pub(crate) fn new(host: &str) -> Self {
        MetadataToken {
            host: host.trim_end_matches('/').to_string(),
            http: reqwest::Client::new(),
            cached: tokio::sync::Mutex::new(None),
        }
    }

    async fn token(&self) -> Result<Arc<str>, CamelError> {
        let mut cached = self.cached.lock().await;
        if let Some(c) = cached.as_ref().filter(|c| Instant::now() < c.refresh_at) {
            return Ok(c.token.clone());
        }
        let asked = Instant::now();
        let answer = self.fetch().await?;
        let token: Arc<str> = answer.access_token.into();
        *cached = Some(Cached {
            token: token.clone(),
            refresh_at: refresh_at(asked, Duration::from_secs(answer.expires_in)),
        });
        Ok(token)
    }

    async fn fetch(&self) -> Result<TokenAnswer, CamelError> {
        let base = if self.host.starts_with("http") {
            self.host.clone()
        } else {
            format!("http://{}", self.host)
        };
        let context = "fetching a Pub/Sub token from the metadata server";
        let response = self
            .http
            .get(format!("{base}{TOKEN_PATH}"))
            .header("Metadata-Flavor", "Google")
            .send()
            .await
            .map_err(|e| CamelError::external(context, e))?;
        let status = response.status();
        if !status.is_success() {
            return Err(CamelError::processor(format!(
                "{context} at {base}: HTTP {status}"
            )));
        }
        response
            .json::<TokenAnswer>()
            .await
            .map_err(|e| CamelError::external(context, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_replaced_five_minutes_before_it_expires() {
        let now = Instant::now();
        assert_eq!(
            refresh_at(now, Duration::from_secs(3599)),
            now + Duration::from_secs(3299)
        );
        assert_eq!(refresh_at(now, Duration::from_secs(60)), now, "at once");
    }
}
