//! The endpoint options, read from the URI with Camel's `aws2-s3` names in snake_case
//! (camelCase is accepted).

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use camel_api::aws::{take_connection, AwsConnection};
use camel_api::{percent_decode, CamelError, EndpointUri, Parameters};

use crate::streaming::config::{take_streaming, StreamingOptions, STREAMING_PARAMETERS};

/// Parameters of the connection, for consumers and producers alike.
const CONNECTION_PARAMETERS: &[&str] = &[
    "region",
    "override_endpoint",
    "uri_endpoint_override",
    "force_path_style",
    "access_key",
    "secret_key",
    "session_token",
    "use_default_credentials_provider",
    "use_profile_credentials_provider",
    "profile_credentials_name",
    "use_session_credentials",
    "auto_create_bucket",
];

/// Parameters of a consumer (`from`).
const CONSUMER_PARAMETERS: &[&str] = &[
    "prefix",
    "delimiter",
    "delete_after_read",
    "move_after_read",
    "destination_bucket",
    "destination_bucket_prefix",
    "destination_bucket_suffix",
    "max_messages_per_poll",
    "include_body",
    "ignore_body",
    "include_folders",
    "delay",
    "initial_delay",
    "concurrent_consumers",
    "spool_threshold",
    "spool_directory",
];

/// Parameters of a producer (`to`).
const PRODUCER_PARAMETERS: &[&str] = &[
    "key_name",
    "operation",
    "multi_part_upload",
    "part_size",
    "storage_class",
];

/// Camel's default part size for a multipart upload: 25 MiB.
pub const DEFAULT_PART_SIZE: u64 = 25 * 1024 * 1024;
/// S3's smallest part (all but the last).
const MIN_PART_SIZE: u64 = 5 * 1024 * 1024;
/// Objects above this size are spooled to a file rather than held in memory: 8 MiB.
pub const DEFAULT_SPOOL_THRESHOLD: u64 = 8 * 1024 * 1024;

/// Static credentials, never shown (the type every AWS component shares).
pub type S3Credentials = camel_api::aws::AwsCredentials;

/// Where and as whom to reach S3.
#[derive(Clone, Debug)]
pub struct Connection {
    /// The region (the URI's, else `AWS_REGION`, else `us-east-1`).
    pub region: String,
    /// An endpoint other than AWS's (moto, MinIO, LocalStack).
    pub endpoint: Option<String>,
    /// Path-style addressing (`http://host/bucket/key`), which emulators need.
    pub force_path_style: bool,
    /// Static credentials; `None`: the AWS default chain.
    pub credentials: Option<S3Credentials>,
    /// Create the bucket when it does not exist.
    pub auto_create_bucket: bool,
    /// The profile of the shared AWS config files to take credentials and settings from
    /// (Camel's `useProfileCredentialsProvider` with `profileCredentialsName`); `None`:
    /// the default chain's profile (`AWS_PROFILE`, else `default`).
    pub profile: Option<String>,
}

/// What a producer does with an exchange (Camel's `operation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// Upload the body (no `operation` given).
    PutObject,
    /// The bucket's objects (under `CamelAwsS3Prefix`), as a JSON array.
    ListObjects,
    /// The object's content as the body.
    GetObject,
    /// Delete the object.
    DeleteObject,
    /// Copy the object to `CamelAwsS3BucketDestinationName`/`CamelAwsS3DestinationKey`.
    CopyObject,
}

/// A consumer's options.
#[derive(Clone, Debug)]
pub struct ConsumerOptions {
    /// Only keys starting with this.
    pub prefix: Option<String>,
    /// Group keys by this (keys containing it after the prefix are not listed).
    pub delimiter: Option<String>,
    /// Delete the object after the route succeeded (Camel's default: true).
    pub delete_after_read: bool,
    /// Move the object to `destination_bucket` after the route succeeded.
    pub move_after_read: bool,
    /// Where moved objects go.
    pub destination_bucket: Option<String>,
    /// Prepended to a moved object's key.
    pub destination_bucket_prefix: String,
    /// Appended to a moved object's key.
    pub destination_bucket_suffix: String,
    /// Objects per poll.
    pub max_messages_per_poll: i32,
    /// Read the object's content into the body (else only the headers are set). Camel's
    /// `ignoreBody=true` turns it off whatever `includeBody` says.
    pub include_body: bool,
    /// Also hand over keys ending in `/` (folder markers).
    pub include_folders: bool,
    /// Time between the end of one poll and the next.
    pub delay: Duration,
    /// Time before the first poll.
    pub initial_delay: Duration,
    /// Objects routed at once.
    pub concurrent_consumers: usize,
    /// Objects larger than this are written to a file and handed over by path.
    pub spool_threshold: u64,
    /// Where spooled objects go (the system's temporary folder when `None`).
    pub spool_directory: Option<PathBuf>,
}

/// A producer's options.
#[derive(Clone, Debug)]
pub struct ProducerOptions {
    /// The key when the exchange has no `CamelAwsS3Key` header.
    pub key_name: Option<String>,
    /// What the producer does.
    pub operation: Operation,
    /// Upload bodies larger than `part_size` in parts.
    pub multi_part_upload: bool,
    /// Part size of a multipart upload, in bytes.
    pub part_size: u64,
    /// Storage class of uploaded objects.
    pub storage_class: Option<String>,
    /// `streamingUploadMode=true`: exchanges' bodies appended into objects.
    pub streaming: Option<StreamingOptions>,
}

/// An `aws2-s3:` endpoint's options.
#[derive(Clone)]
pub struct S3Options {
    /// The URI as written (shown only redacted).
    pub uri: String,
    /// The bucket (a name, or an ARN's last part).
    pub bucket: String,
    /// How to reach S3.
    pub connection: Connection,
    /// Options of `from`.
    pub consumer: ConsumerOptions,
    /// Options of `to`.
    pub producer: ProducerOptions,
}

impl fmt::Debug for S3Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The URI as written may carry the secret key.
        f.debug_struct("S3Options")
            .field("uri", &camel_api::redact_url(&self.uri))
            .field("bucket", &self.bucket)
            .field("connection", &self.connection)
            .field("consumer", &self.consumer)
            .field("producer", &self.producer)
            .finish()
    }
}

impl S3Options {
    /// Reads the options of `aws2-s3://BUCKET?…`, rejecting unknown parameters.
    pub fn from_uri(mut uri: EndpointUri) -> Result<Self, CamelError> {
        let raw = uri.as_str().to_string();
        let invalid = |why: String| CamelError::invalid_uri(raw.clone(), why);
        let path = percent_decode(uri.path().trim().trim_start_matches("//"));
        // `arn:aws:s3:::bucket` names the bucket by its ARN.
        let bucket = path.rsplit(':').next().unwrap_or("").trim_end_matches('/');
        if bucket.is_empty() {
            return Err(invalid(
                "the URI needs a bucket, as in aws2-s3://my-bucket".into(),
            ));
        }
        let bucket = bucket.to_string();
        let p = &mut uri.parameters;
        let connection = take_s3_connection(p, &raw)?;
        let consumer = take_consumer(p, &invalid)?;
        let producer = take_producer(p, &invalid)?;
        let known: Vec<&str> = CONNECTION_PARAMETERS
            .iter()
            .chain(CONSUMER_PARAMETERS)
            .chain(PRODUCER_PARAMETERS)
            .chain(STREAMING_PARAMETERS)
            .copied()
            .collect();
        uri.parameters.finish(&known)?;
        Ok(S3Options {
            uri: raw,
            bucket,
            connection,
            consumer,
            producer,
        })
    }
}

fn take_s3_connection(p: &mut Parameters, raw: &str) -> Result<Connection, CamelError> {
    // Region, endpoint override and keys are read as by every AWS component; the rest
    // are S3's own.
    let AwsConnection {
        region,
        endpoint,
        credentials,
    } = take_connection(raw, p)?;
    let force_path_style = p.take_bool("force_path_style")?.unwrap_or(false);
    // Accepted for Camel's sake: without static keys the default chain is used anyway,
    // and that chain reads the shared profile files too.
    p.take_bool("use_default_credentials_provider")?;
    p.take_bool("use_session_credentials")?;
    let use_profile = p
        .take_bool("use_profile_credentials_provider")?
        .unwrap_or(false);
    // Camel reads the profile name only with the flag; so does this.
    let profile = p
        .take_str("profile_credentials_name")
        .filter(|_| use_profile);
    let auto_create_bucket = p.take_bool("auto_create_bucket")?.unwrap_or(false);
    Ok(Connection {
        region,
        endpoint,
        force_path_style,
        credentials,
        auto_create_bucket,
        profile,
    })
}

fn take_consumer(
    p: &mut Parameters,
    invalid: &dyn Fn(String) -> CamelError,
) -> Result<ConsumerOptions, CamelError> {
    let move_after_read = p.take_bool("move_after_read")?.unwrap_or(false);
    let destination_bucket = p.take_str("destination_bucket");
    if move_after_read && destination_bucket.is_none() {
        return Err(invalid("moveAfterRead=true needs destinationBucket".into()));
    }
    let max_messages_per_poll = p.take::<i32>("max_messages_per_poll")?.unwrap_or(10);
    if !(1..=1000).contains(&max_messages_per_poll) {
        return Err(invalid(
            "maxMessagesPerPoll must be 1 to 1000 (one ListObjectsV2 page)".into(),
        ));
    }
    let concurrent_consumers = p.take::<usize>("concurrent_consumers")?.unwrap_or(1);
    if concurrent_consumers == 0 {
        return Err(invalid("concurrentConsumers must be at least 1".into()));
    }
    Ok(ConsumerOptions {
        prefix: p.take_str("prefix"),
        delimiter: p.take_str("delimiter"),
        delete_after_read: p.take_bool("delete_after_read")?.unwrap_or(true),
        move_after_read,
        destination_bucket,
        destination_bucket_prefix: p.take_str("destination_bucket_prefix").unwrap_or_default(),
        destination_bucket_suffix: p.take_str("destination_bucket_suffix").unwrap_or_default(),
        max_messages_per_poll,
        // `ignoreBody=true` wins over `includeBody` (Camel's rule).
        include_body: p.take_bool("include_body")?.unwrap_or(true)
            && !p.take_bool("ignore_body")?.unwrap_or(false),
        include_folders: p.take_bool("include_folders")?.unwrap_or(true),
        delay: p
            .take_duration("delay")?
            .unwrap_or(Duration::from_millis(500)),
        initial_delay: p
            .take_duration("initial_delay")?
            .unwrap_or(Duration::from_millis(1000)),
        concurrent_consumers,
        spool_threshold: p
            .take::<u64>("spool_threshold")?
            .unwrap_or(DEFAULT_SPOOL_THRESHOLD),
        spool_directory: p.take_str("spool_directory").map(PathBuf::from),
    })
}

fn take_producer(
    p: &mut Parameters,
    invalid: &dyn Fn(String) -> CamelError,
) -> Result<ProducerOptions, CamelError> {
    let operation = match p.take_choice(
        "operation",
        &["list_objects", "get_object", "delete_object", "copy_object"],
    )? {
        None => Operation::PutObject,
        Some("list_objects") => Operation::ListObjects,
        Some("get_object") => Operation::GetObject,
        Some("delete_object") => Operation::DeleteObject,
        Some(_) => Operation::CopyObject,
    };
    let part_size = p.take::<u64>("part_size")?.unwrap_or(DEFAULT_PART_SIZE);
    if part_size < MIN_PART_SIZE {
        return Err(invalid(format!(
            "partSize must be at least {MIN_PART_SIZE} bytes (5 MiB, an S3 limit)"
        )));
    }
    let key_name = p.take_str("key_name");
    let streaming = take_streaming(
        p,
        key_name.as_deref(),
        operation != Operation::PutObject,
        invalid,
    )?;
    Ok(ProducerOptions {
        key_name,
        operation,
        multi_part_upload: p.take_bool("multi_part_upload")?.unwrap_or(false),
        part_size,
        storage_class: p.take_str("storage_class"),
        streaming,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(uri: &str) -> Result<S3Options, CamelError> {
        S3Options::from_uri(EndpointUri::parse(uri).unwrap())
    }

    #[test]
    fn reads_camel_names_and_defaults() {
        let o = parse("aws2-s3://inbox?prefix=in/&deleteAfterRead=false&maxMessagesPerPoll=5&overrideEndpoint=true&uriEndpointOverride=http://127.0.0.1:5000&forcePathStyle=true&region=eu-west-1").unwrap();
        assert_eq!(o.bucket, "inbox");
        assert_eq!(o.consumer.prefix.as_deref(), Some("in/"));
        assert!(!o.consumer.delete_after_read);
        assert_eq!(o.consumer.max_messages_per_poll, 5);
        assert_eq!(
            o.connection.endpoint.as_deref(),
            Some("http://127.0.0.1:5000")
        );
        assert!(o.connection.force_path_style);
        assert_eq!(o.connection.region, "eu-west-1");
        let d = parse("aws2-s3:inbox").unwrap();
        assert!(d.consumer.delete_after_read && d.consumer.include_body);
        assert_eq!(d.producer.operation, Operation::PutObject);
        assert_eq!(d.producer.part_size, DEFAULT_PART_SIZE);
        assert_eq!(
            parse("aws2-s3://arn:aws:s3:::archive").unwrap().bucket,
            "archive"
        );
    }

    #[test]
    fn refuses_what_cannot_work() {
        for (uri, why) in [
            ("aws2-s3://", "needs a bucket"),
            ("aws2-s3://b?moveAfterRead=true", "destinationBucket"),
            ("aws2-s3://b?accessKey=a", "go together"),
            ("aws2-s3://b?overrideEndpoint=true", "uriEndpointOverride"),
            ("aws2-s3://b?partSize=1000", "5 MiB"),
            ("aws2-s3://b?operation=deleteBucket", "expected one of"),
            ("aws2-s3://b?deleteAfterRaed=false", "deleteAfterRead"),
        ] {
            let e = parse(uri).unwrap_err().to_string();
            assert!(e.contains(why), "{uri}: {e}");
        }
    }

    #[test]
    fn an_endpoint_override_without_its_flag_is_ignored_as_in_camel() {
        let o = parse("aws2-s3:b?overrideEndpoint=false&uriEndpointOverride=none").unwrap();
        assert_eq!(o.connection.endpoint, None);
    }

    #[test]
    fn ignore_body_wins_over_include_body() {
        assert!(
            !parse("aws2-s3:b?ignoreBody=true")
                .unwrap()
                .consumer
                .include_body
        );
        assert!(
            !parse("aws2-s3:b?includeBody=true&ignoreBody=true")
                .unwrap()
                .consumer
                .include_body
        );
        assert!(
            parse("aws2-s3:b?ignoreBody=false")
                .unwrap()
                .consumer
                .include_body
        );
    }

    #[test]
    fn profile_name_counts_only_with_the_profile_flag() {
        let named =
            parse("aws2-s3:b?useProfileCredentialsProvider=true&profileCredentialsName=dev");
        assert_eq!(named.unwrap().connection.profile.as_deref(), Some("dev"));
        let unflagged = parse("aws2-s3:b?profileCredentialsName=dev").unwrap();
        assert_eq!(unflagged.connection.profile, None);
    }

    /// The options the catalog's `aws-s3-source` Kamelet passes with its defaults (its
    /// optional ones left out, as an unset `{{?name}}` removes them).
    #[test]
    fn reads_the_catalog_source_kamelet_options() {
        let o = parse(
            "aws2-s3:my-bucket?autoCreateBucket=false&region=eu-west-1&ignoreBody=false\
             &deleteAfterRead=true&moveAfterRead=false&useDefaultCredentialsProvider=false\
             &useProfileCredentialsProvider=false&useSessionCredentials=false\
             &overrideEndpoint=false&forcePathStyle=false&delay=500&maxMessagesPerPoll=10",
        )
        .unwrap();
        assert!(o.consumer.include_body && o.consumer.delete_after_read);
        assert_eq!(o.connection.profile, None);
    }

    #[test]
    fn credentials_are_never_shown() {
        let o = parse("aws2-s3://b?accessKey=AKIA1&secretKey=hush").unwrap();
        let shown = format!("{o:?}");
        assert!(
            !shown.contains("hush") && !shown.contains("AKIA1"),
            "{shown}"
        );
    }
}
