//! What can go wrong talking to a lease store.

use std::sync::Arc;

/// A failure of a lease store or of the cluster configuration.
///
/// Messages never carry a URL's credentials: connection strings are shown redacted.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// The store could not be reached or refused a request; the election retries.
    #[error("{backend} lease store: {message}")]
    Store {
        /// `postgres`, `redis` or `nats`.
        backend: &'static str,
        /// What happened, without credentials.
        message: Arc<str>,
    },
    /// The cluster configuration is wrong (a property, a URI); `at` names where.
    #[error("{at}: {message}")]
    Config {
        /// The property or URI that is wrong.
        at: String,
        /// Why.
        message: String,
    },
}

impl ClusterError {
    pub(crate) fn store(backend: &'static str, error: impl std::fmt::Display) -> Self {
        // Driver errors may echo the connection string; keep only a redacted form.
        let text = redact_text(&error.to_string());
        ClusterError::Store {
            backend,
            message: text.into(),
        }
    }

    pub(crate) fn config(at: impl Into<String>, message: impl Into<String>) -> Self {
        ClusterError::Config {
            at: at.into(),
            message: message.into(),
        }
    }
}

/// `text` with the credentials of every URL in it hidden.
pub(crate) fn redact_text(text: &str) -> String {
    text.split(' ')
        .map(|word| {
            if word.contains("://") {
                camel_api::redact_url(word)
            } else {
                word.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
