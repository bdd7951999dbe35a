//! How an AWS endpoint (`aws2-s3:`, `aws2-sqs:`, `aws2-sns:`) is reached: the region, the
//! endpoint override and static credentials, read from its URI with Camel's names.
//!
//! The rule lives here, in the crate every component shares, so that the S3 component and
//! the AWS sinks read a connection the same way without depending on each other or on the
//! AWS SDK. Each component takes its own extras (S3's `force_path_style`, the sinks'
//! `endpoint`) from the same parameters.
//!
//! ```
//! use camel_api::aws::take_connection;
//! use camel_api::EndpointUri;
//!
//! let raw = "aws2-s3:b?region=eu-west-1&overrideEndpoint=true&uriEndpointOverride=http://127.0.0.1:5000";
//! let mut uri = EndpointUri::parse(raw).unwrap();
//! let connection = take_connection(raw, &mut uri.parameters).unwrap();
//! assert_eq!(connection.region, "eu-west-1");
//! assert_eq!(connection.endpoint.as_deref(), Some("http://127.0.0.1:5000"));
//! assert!(connection.credentials.is_none());
//! ```

use std::fmt;

use crate::{CamelError, Parameters};

/// Static AWS credentials, never shown.
#[derive(Clone)]
pub struct AwsCredentials {
    /// Access key id.
    pub access_key_id: String,
    /// Secret access key.
    pub secret_access_key: String,
    /// Session token, for temporary credentials.
    pub session_token: Option<String>,
}

impl fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AwsCredentials(..)")
    }
}

impl AwsCredentials {
    /// Reads `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`.
    pub fn from_env() -> Option<Self> {
        let get = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Some(AwsCredentials {
            access_key_id: get("AWS_ACCESS_KEY_ID")?,
            secret_access_key: get("AWS_SECRET_ACCESS_KEY")?,
            session_token: get("AWS_SESSION_TOKEN"),
        })
    }
}

/// The part of an AWS endpoint's options every AWS component reads alike.
#[derive(Clone, Debug)]
pub struct AwsConnection {
    /// The URI's `region`, else `AWS_REGION`, else `AWS_DEFAULT_REGION`, else `us-east-1`.
    pub region: String,
    /// Camel's `uriEndpointOverride`, counted only with `overrideEndpoint=true`.
    pub endpoint: Option<String>,
    /// `accessKey` + `secretKey` (+ `sessionToken`); `None`: the AWS default chain.
    pub credentials: Option<AwsCredentials>,
}

/// Takes `region`, `override_endpoint`, `uri_endpoint_override`, `access_key`,
/// `secret_key` and `session_token` from `params`; `raw` is the URI as written, for
/// errors and the log (shown redacted).
pub fn take_connection(raw: &str, params: &mut Parameters) -> Result<AwsConnection, CamelError> {
    let region = params
        .take_str("region")
        .or_else(|| std::env::var("AWS_REGION").ok())
        .or_else(|| std::env::var("AWS_DEFAULT_REGION").ok())
        .unwrap_or_else(|| "us-east-1".to_string());
    let override_endpoint = params.take_bool("override_endpoint")?.unwrap_or(false);
    let endpoint = match (override_endpoint, params.take_str("uri_endpoint_override")) {
        (true, Some(endpoint)) => Some(endpoint),
        (true, None) => {
            return Err(CamelError::invalid_uri(
                raw.to_string(),
                "overrideEndpoint=true needs uriEndpointOverride (as in http://127.0.0.1:5000)",
            ))
        }
        // Camel reads the override only with the flag, and files rely on it: Camel's
        // examples write `uriEndpointOverride: "{{aws.uriEndpointOverride:none}}"` with
        // `overrideEndpoint` false. Ignored as in Camel, with a word in the log.
        (false, Some(ignored)) => {
            tracing::warn!(
                uri = %crate::redact_url(raw),
                uri_endpoint_override = %ignored,
                "uriEndpointOverride is ignored without overrideEndpoint=true, as in Camel"
            );
            None
        }
        (false, None) => None,
    };
    let credentials = match (params.take_str("access_key"), params.take_str("secret_key")) {
        (Some(access_key_id), Some(secret_access_key)) => Some(AwsCredentials {
            access_key_id,
            secret_access_key,
            session_token: params.take_str("session_token"),
        }),
        (None, None) => None,
        _ => {
            return Err(CamelError::invalid_uri(
                raw.to_string(),
                "accessKey and secretKey go together",
            ))
        }
    };
    Ok(AwsConnection {
        region,
        endpoint,
        credentials,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EndpointUri;

    fn connection_of(raw: &str) -> Result<AwsConnection, CamelError> {
        let mut uri = EndpointUri::parse(raw)?;
        take_connection(raw, &mut uri.parameters)
    }

    #[test]
    fn an_endpoint_override_counts_only_with_its_flag() {
        let set = connection_of("aws2-s3:b?overrideEndpoint=true&uriEndpointOverride=http://h:1");
        assert_eq!(
            set.ok().and_then(|c| c.endpoint).as_deref(),
            Some("http://h:1")
        );
        let ignored = connection_of("aws2-s3:b?overrideEndpoint=false&uriEndpointOverride=none");
        assert_eq!(ignored.ok().map(|c| c.endpoint), Some(None));
        let missing = connection_of("aws2-s3:b?overrideEndpoint=true").err();
        assert!(missing.is_some_and(|e| e.to_string().contains("needs uriEndpointOverride")));
    }

    #[test]
    fn keys_go_in_pairs_and_are_never_shown() {
        let half = connection_of("aws2-s3:b?accessKey=a").err();
        assert!(half.is_some_and(|e| e.to_string().contains("go together")));
        let both = connection_of("aws2-s3:b?accessKey=AKIA1&secretKey=hush&sessionToken=t");
        let shown = format!("{:?}", both.ok().and_then(|c| c.credentials));
        assert!(
            shown.contains("AwsCredentials(..)") && !shown.contains("hush"),
            "{shown}"
        );
    }
}
