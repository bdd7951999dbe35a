//! What the AWS sinks (`sqs:`, `aws2-sns:`) share: static credentials, the default
//! credentials chain built on first use, the connection parameters, and located errors.

use std::fmt;

use aws_config::default_provider::credentials::DefaultCredentialsChain;
use aws_credential_types::provider::{future, ProvideCredentials};
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use aws_smithy_runtime_api::client::result::SdkError;
use aws_smithy_types::error::metadata::ProvideErrorMetadata;
pub use camel_api::aws::AwsCredentials;
use camel_api::aws::{take_connection, AwsConnection};
use camel_api::{CamelError, Parameters};
use sha2::{Digest, Sha256};
use tokio::sync::OnceCell;

use crate::codec::{EntryResult, Receipt, SendOutcome};

/// The default chain (environment, profile, SSO, web identity, ECS, IMDS), built on first
/// use (so building an endpoint — `camel validate` — needs no credentials); the SDK
/// caches the credentials it returns and refreshes them before they expire.
#[derive(Debug, Default)]
pub(crate) struct DefaultChain(OnceCell<DefaultCredentialsChain>);

impl ProvideCredentials for DefaultChain {
    fn provide_credentials<'a>(&'a self) -> future::ProvideCredentials<'a>
    where
        Self: 'a,
    {
        future::ProvideCredentials::new(async move {
            let chain = self
                .0
                .get_or_init(|| DefaultCredentialsChain::builder().build())
                .await;
            chain.provide_credentials().await
        })
    }
}

/// Region, endpoint and static credentials (none: the AWS default chain). The endpoint is
/// `endpoint`, or Camel's `uri_endpoint_override` with `override_endpoint` (the rule
/// every AWS component shares, [`take_connection`]).
pub(crate) fn connection(
    raw: &str,
    params: &mut Parameters,
) -> Result<(String, Option<String>, Option<AwsCredentials>), CamelError> {
    let AwsConnection {
        region,
        endpoint: camel_endpoint,
        credentials,
    } = take_connection(raw, params)?;
    let endpoint = params.take_str("endpoint").or(camel_endpoint);
    Ok((region, endpoint, credentials))
}

/// A located error: what was being done, then the service's code and message.
pub(crate) fn describe<E, R>(context: &str, e: SdkError<E, R>) -> CamelError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: fmt::Debug + Send + Sync + 'static,
{
    let detail = match &e {
        SdkError::ServiceError(s) => format!(
            "{}: {}",
            s.err().code().unwrap_or("error"),
            s.err().message().unwrap_or("")
        ),
        other => other.to_string(),
    };
    CamelError::processor(format!("{context}: {detail}"))
}

/// `MessageGroupId` (SQS and SNS FIFO) is 1 to 128 characters.
const MAX_GROUP_ID: usize = 128;
/// `MessageDeduplicationId` is at most 128 characters.
const MAX_DEDUP_ID: usize = 128;

/// Refuses a `MessageGroupId` the service would refuse (1–128 ASCII letters, digits and
/// punctuation), before it is queued: in a batch it would be a whole-request error.
pub(crate) fn check_group_id(service: &str, group: &str) -> Result<(), CamelError> {
    let length = group.chars().count();
    if length > MAX_GROUP_ID {
        return Err(CamelError::processor(format!(
            "{service} MessageGroupId `{}…` is {length} characters; at most {MAX_GROUP_ID} are allowed (check `group_key`)",
            group.chars().take(16).collect::<String>()
        )));
    }
    if let Some(bad) = group
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || c.is_ascii_punctuation()))
    {
        return Err(CamelError::processor(format!(
            "{service} MessageGroupId `{group}` contains {bad:?}; only ASCII letters, digits and punctuation are allowed (check `group_key`)"
        )));
    }
    Ok(())
}

/// A deduplication id the service accepts: the key itself when short and plain enough,
/// else its SHA-256 digest in hex.
pub(crate) fn dedup_id(key: &str) -> String {
    let fits = key.len() <= MAX_DEDUP_ID
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c.is_ascii_punctuation());
    if fits {
        key.to_string()
    } else {
        Sha256::digest(key.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// A batch request's error as the batcher takes it: a 4xx that `entry_caused` says an
/// entry may have caused is refused (bisected); anything else fails the request whole.
pub(crate) fn batch_error<E>(
    operation: &str,
    e: SdkError<E, HttpResponse>,
    entry_caused: fn(&str) -> bool,
) -> SendOutcome
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let (status, code) = match &e {
        SdkError::ServiceError(s) => (
            s.raw().status().as_u16(),
            s.err().code().unwrap_or("").to_string(),
        ),
        _ => return SendOutcome::Failed(describe(operation, e)),
    };
    if (400..500).contains(&status) && entry_caused(&code) {
        SendOutcome::Refused(describe(operation, e))
    } else {
        SendOutcome::Failed(describe(operation, e))
    }
}

/// One `Failed[]` item of a batch answer.
pub(crate) struct BatchFailure {
    pub(crate) id: String,
    pub(crate) code: String,
    pub(crate) sender_fault: bool,
    pub(crate) message: Option<String>,
}

/// Maps a batch answer back to its `n` entries by id (the entry's index): each success
/// with its receipt, each failure with the service's code; an entry the answer does not
/// name fails.
pub(crate) fn map_batch_answer(
    service: &str,
    n: usize,
    successes: impl IntoIterator<Item = (String, Receipt)>,
    failures: impl IntoIterator<Item = BatchFailure>,
) -> Vec<EntryResult> {
    let mut results: Vec<Option<EntryResult>> = vec![None; n];
    for (id, receipt) in successes {
        if let Some(slot) = id.parse::<usize>().ok().and_then(|i| results.get_mut(i)) {
            *slot = Some(Ok(receipt));
        }
    }
    for f in failures {
        if let Some(slot) = f.id.parse::<usize>().ok().and_then(|i| results.get_mut(i)) {
            let fault = if f.sender_fault {
                "sender fault"
            } else {
                "service fault"
            };
            let detail = f.message.map(|m| format!(": {m}")).unwrap_or_default();
            *slot = Some(Err(CamelError::processor(format!(
                "{service} refused the message: {} ({fault}){detail}",
                f.code
            ))));
        }
    }
    results
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|| {
                Err(CamelError::processor(format!(
                    "{service} gave no result for the message"
                )))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint_of(uri: &str) -> Result<Option<String>, CamelError> {
        let mut parsed = camel_api::EndpointUri::parse(uri)?;
        connection(uri, &mut parsed.parameters).map(|(_, endpoint, _)| endpoint)
    }

    #[test]
    fn an_endpoint_override_counts_only_with_its_flag() {
        let set = "aws2-sqs:q?overrideEndpoint=true&uriEndpointOverride=http://127.0.0.1:5000";
        assert_eq!(
            endpoint_of(set).ok().flatten().as_deref(),
            Some("http://127.0.0.1:5000")
        );
        // As Camel's examples write it: the override is ignored without the flag.
        let ignored = "aws2-sqs:q?overrideEndpoint=false&uriEndpointOverride=none";
        assert_eq!(endpoint_of(ignored).ok(), Some(None));
        let missing = endpoint_of("aws2-sqs:q?overrideEndpoint=true").err();
        assert!(
            missing.is_some_and(|e| e.to_string().contains("needs uriEndpointOverride")),
            "overrideEndpoint=true alone is refused"
        );
    }
}
