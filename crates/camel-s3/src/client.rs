//! The S3 client of an endpoint, made on first use: building an endpoint (`camel
//! validate`) needs no credentials, and the AWS default chain (environment, profile, SSO,
//! web identity, container and instance metadata) is asked only when a request is signed.

use std::fmt;

use aws_config::BehaviorVersion;
use aws_sdk_s3::config::{Credentials, Region};
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
use camel_api::CamelError;
use tokio::sync::OnceCell;

use crate::options::Connection;

/// One endpoint's client, shared by its consumer and producer.
#[derive(Debug)]
pub(crate) struct S3Client {
    connection: Connection,
    client: OnceCell<aws_sdk_s3::Client>,
}

impl S3Client {
    pub(crate) fn new(connection: Connection) -> Self {
        S3Client {
            connection,
            client: OnceCell::new(),
        }
    }

    /// The client, built the first time.
    pub(crate) async fn get(&self) -> &aws_sdk_s3::Client {
        self.client.get_or_init(|| build(&self.connection)).await
    }

    /// Creates `bucket` when the endpoint says `autoCreateBucket` and it is missing.
    pub(crate) async fn ensure_bucket(&self, bucket: &str) -> Result<(), CamelError> {
        if !self.connection.auto_create_bucket {
            return Ok(());
        }
        let client = self.get().await;
        if client.head_bucket().bucket(bucket).send().await.is_ok() {
            return Ok(());
        }
        let mut create = client.create_bucket().bucket(bucket);
        if self.connection.region != "us-east-1" {
            create = create.create_bucket_configuration(
                aws_sdk_s3::types::CreateBucketConfiguration::builder()
                    .location_constraint(self.connection.region.as_str().into())
                    .build(),
            );
        }
        match create.send().await {
            Ok(_) => Ok(()),
            // Another process created it meanwhile.
            Err(SdkError::ServiceError(e))
                if matches!(
                    e.err().code(),
                    Some("BucketAlreadyOwnedByYou" | "BucketAlreadyExists")
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(describe(&format!("creating S3 bucket `{bucket}`"), e)),
        }
    }
}

async fn build(c: &Connection) -> aws_sdk_s3::Client {
    let mut loader =
        aws_config::defaults(BehaviorVersion::latest()).region(Region::new(c.region.clone()));
    if let Some(profile) = &c.profile {
        loader = loader.profile_name(profile);
    }
    if let Some(s) = &c.credentials {
        loader = loader.credentials_provider(Credentials::new(
            s.access_key_id.clone(),
            s.secret_access_key.clone(),
            s.session_token.clone(),
            None,
            "camel-s3",
        ));
    }
    let shared = loader.load().await;
    let mut config =
        aws_sdk_s3::config::Builder::from(&shared).force_path_style(c.force_path_style);
    if let Some(endpoint) = &c.endpoint {
        config = config.endpoint_url(endpoint);
    }
    aws_sdk_s3::Client::from_conf(config.build())
}

/// A located error from an S3 call: what was being done, the service's code and message.
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

/// True for the answer S3 gives when a key does not exist (any more).
pub(crate) fn is_no_such_key<E, R>(e: &SdkError<E, R>) -> bool
where
    E: ProvideErrorMetadata,
{
    match e {
        SdkError::ServiceError(s) => matches!(s.err().code(), Some("NoSuchKey" | "NotFound")),
        _ => false,
    }
}
