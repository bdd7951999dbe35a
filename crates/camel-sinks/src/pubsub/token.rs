//! Where the bearer token of a Google publish comes from.
//!
//! A token expires (Google's last an hour), after which every publish would fail with 401
//! and pause its ordering key. So a [`RefreshingToken`] asks its origin again a few
//! minutes before the token it holds expires: Application Default Credentials (the
//! default), a credentials file (`service_account_key`), or the metadata server.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use camel_api::CamelError;
use serde::Deserialize;
use tokio::sync::OnceCell;
use tokio::time::Instant;

use super::credentials::{unix_now, AdcEnvironment, Credentials, PUBSUB_SCOPE};

/// A token is replaced this long before Google says it expires: a request that starts
/// with it must still carry a valid token when it arrives.
const REFRESH_BEFORE: Duration = Duration::from_secs(300);

/// The metadata server's path of the default service account's access token.
const TOKEN_PATH: &str = "/computeMetadata/v1/instance/service-accounts/default/token";

/// How long one token request may take.
const TOKEN_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Where a codec gets its bearer token.
#[derive(Debug)]
pub(crate) enum TokenSource {
    /// No token (the emulator).
    None,
    /// A token given once (`token_env`); never refreshed.
    Fixed(String),
    /// Tokens fetched from an origin, refreshed before they expire.
    Refreshing(Box<RefreshingToken>),
}

impl TokenSource {
    /// Tokens from `origin`, refreshed before they expire.
    pub(crate) fn refreshing(origin: TokenOrigin) -> Self {
        TokenSource::Refreshing(Box::new(RefreshingToken::new(origin)))
    }

    /// The token to send now, fetching a fresh one when due.
    pub(crate) async fn bearer(&self) -> Result<Option<Arc<str>>, CamelError> {
        match self {
            TokenSource::None => Ok(None),
            TokenSource::Fixed(t) => Ok(Some(t.as_str().into())),
            TokenSource::Refreshing(r) => r.token().await.map(Some),
        }
    }
}

/// Where refreshed tokens come from; the credentials are read at the first publish, so
/// building a route (or `camel validate`) needs none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TokenOrigin {
    /// Application Default Credentials, looked up in these places.
    Adc(AdcEnvironment),
    /// A credentials file (`service_account_key`).
    File(PathBuf),
    /// The metadata server at this host.
    Metadata(String),
}

impl TokenOrigin {
    /// A label for the batch identity (no secret in it).
    pub(crate) fn label(&self) -> String {
        match self {
            TokenOrigin::Adc(env) => format!(
                "adc:{}:{}:{}",
                env.credentials_file
                    .as_deref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                env.well_known_file
                    .as_deref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                env.metadata_host
            ),
            TokenOrigin::File(path) => format!("file:{}", path.display()),
            TokenOrigin::Metadata(host) => format!("metadata:{host}"),
        }
    }

    fn resolve(&self) -> Result<Credentials, CamelError> {
        match self {
            TokenOrigin::Adc(env) => env.resolve(),
            TokenOrigin::File(path) => Credentials::from_file(path),
            TokenOrigin::Metadata(host) => Ok(Credentials::Metadata { host: host.clone() }),
        }
    }
}

#[derive(Debug)]
struct Cached {
    token: Arc<str>,
    refresh_at: Instant,
}

/// Tokens from one origin, cached until shortly before they expire.
#[derive(Debug)]
pub(crate) struct RefreshingToken {
    pub(crate) origin: TokenOrigin,
    /// The origin's credentials, read once (a file that fails to read is read again at
    /// the next publish).
    credentials: OnceCell<Credentials>,
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

impl RefreshingToken {
    pub(crate) fn new(origin: TokenOrigin) -> Self {
        RefreshingToken {
            origin,
            credentials: OnceCell::new(),
            http: reqwest::Client::builder()
                .timeout(TOKEN_REQUEST_TIMEOUT)
                .build()
                .unwrap_or_default(),
            cached: tokio::sync::Mutex::new(None),
        }
    }

    async fn token(&self) -> Result<Arc<str>, CamelError> {
        let mut cached = self.cached.lock().await;
        if let Some(c) = cached.as_ref().filter(|c| Instant::now() < c.refresh_at) {
            return Ok(c.token.clone());
        }
        let asked = Instant::now();
        let credentials = self
            .credentials
            .get_or_try_init(|| async { self.origin.resolve() })
            .await?;
        let answer = match credentials {
            Credentials::Metadata { host } => self.fetch_from_metadata(host).await,
            Credentials::ServiceAccount(account) => {
                let assertion = account.assertion(PUBSUB_SCOPE, unix_now())?;
                let form = [
                    ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
                    ("assertion", assertion.as_str()),
                ];
                self.fetch_from_token_uri(&account.token_uri, &form, "a service-account token")
                    .await
            }
            Credentials::AuthorizedUser(user) => {
                let form = [
                    ("grant_type", "refresh_token"),
                    ("client_id", user.client_id.as_str()),
                    ("client_secret", user.client_secret.as_str()),
                    ("refresh_token", user.refresh_token.as_str()),
                ];
                self.fetch_from_token_uri(&user.token_uri, &form, "a user's token")
                    .await
            }
        }?;
        let token: Arc<str> = answer.access_token.into();
        *cached = Some(Cached {
            token: token.clone(),
            refresh_at: refresh_at(asked, Duration::from_secs(answer.expires_in)),
        });
        Ok(token)
    }

    async fn fetch_from_metadata(&self, host: &str) -> Result<TokenAnswer, CamelError> {
        let base = if host.starts_with("http") {
            host.trim_end_matches('/').to_string()
        } else {
            format!("http://{host}")
        };
        let context = match &self.origin {
            TokenOrigin::Adc(_) => format!(
                "fetching a Pub/Sub token from the metadata server at {base} (the last place Application Default Credentials look: GOOGLE_APPLICATION_CREDENTIALS is not set and gcloud's application_default_credentials.json does not exist)"
            ),
            _ => format!("fetching a Pub/Sub token from the metadata server at {base}"),
        };
        let response = self
            .http
            .get(format!("{base}{TOKEN_PATH}"))
            .header("Metadata-Flavor", "Google")
            .send()
            .await
            .map_err(|e| CamelError::external(context.clone(), e))?;
        read_answer(response, &context).await
    }

    async fn fetch_from_token_uri(
        &self,
        uri: &str,
        form: &[(&str, &str)],
        what: &str,
    ) -> Result<TokenAnswer, CamelError> {
        let context = format!("fetching {what} for Pub/Sub from {uri}");
        let response = self
            .http
            .post(uri)
            .form(form)
            .send()
            .await
            .map_err(|e| CamelError::external(context.clone(), e))?;
        read_answer(response, &context).await
    }
}

/// The token in a successful answer; an error naming the status otherwise (the body of
/// an OAuth error says which grant was refused, never a secret).
async fn read_answer(
    response: reqwest::Response,
    context: &str,
) -> Result<TokenAnswer, CamelError> {
    let status = response.status();
    if !status.is_success() {
        let body = response.text().await.unwrap_or_default();
        let detail: String = body.chars().take(200).collect();
        return Err(CamelError::processor(format!(
            "{context}: HTTP {status} {detail}"
        )));
    }
    response
        .json::<TokenAnswer>()
        .await
        .map_err(|e| CamelError::external(context.to_string(), e))
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
