//! The streaming upload options (Camel's `streamingUploadMode` and its companions), read
//! from the URI beside the other producer options.

use std::time::Duration;

use camel_api::{CamelError, Parameters};

/// Parameters of the streaming upload mode.
pub(crate) const STREAMING_PARAMETERS: &[&str] = &[
    "streaming_upload_mode",
    "batch_message_number",
    "batch_size",
    "streaming_upload_timeout",
    "naming_strategy",
    "restarting_policy",
    "streaming_upload_ack",
];

/// Camel's default number of messages in one object.
pub const DEFAULT_BATCH_MESSAGE_NUMBER: usize = 10;
/// Camel's default size, in bytes, at which an object is completed.
pub const DEFAULT_BATCH_SIZE: usize = 1_000_000;

/// How successive objects of a streaming upload are named from `keyName`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NamingStrategy {
    /// `keyName` itself, then `name-1.ext`, `name-2.ext`, … (Camel's default).
    Progressive,
    /// `name-<random UUID>.ext` for every object.
    Random,
}

/// Where the numbering of `progressive` names starts when the producer starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestartingPolicy {
    /// From `keyName` again, replacing what an earlier run wrote (Camel's default).
    Override,
    /// After the highest number already in the bucket for this `keyName`.
    LastPart,
}

/// When an exchange of a streaming upload is answered (ours; ADR 0176).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamingAck {
    /// Once its body is in the open object, as Camel does: a source that waits for each
    /// exchange (a timer, a Kafka partition) still fills objects, and a crash loses the
    /// open object's messages. The default.
    Buffered,
    /// Once the object holding its body is stored: nothing acknowledged is lost, and a
    /// failed store fails every exchange of the object; only sources that send many
    /// exchanges at once fill objects.
    Stored,
}

/// The options of `streamingUploadMode=true`.
#[derive(Clone, Debug)]
pub struct StreamingOptions {
    /// The key the object names are made from.
    pub key_name: String,
    /// An object is completed once it holds this many messages.
    pub batch_message_number: usize,
    /// An object is completed once it holds at least this many bytes. Also the bound of
    /// the producer's buffer (plus the one body that crossed it).
    pub batch_size: usize,
    /// An object is completed this long after its first message, however small it is.
    pub timeout: Option<Duration>,
    /// How objects are named.
    pub naming: NamingStrategy,
    /// Where `progressive` numbering starts.
    pub restarting: RestartingPolicy,
    /// When an exchange is answered.
    pub ack: StreamingAck,
}

/// Reads the streaming options; `None` unless `streamingUploadMode=true`.
///
/// `key_name` is the endpoint's `keyName`, which the mode needs (the `CamelAwsS3Key`
/// header is not read: one object gathers many exchanges, so its name cannot follow each).
pub(crate) fn take_streaming(
    p: &mut Parameters,
    key_name: Option<&str>,
    other_operation: bool,
    invalid: &dyn Fn(String) -> CamelError,
) -> Result<Option<StreamingOptions>, CamelError> {
    let on = p.take_bool("streaming_upload_mode")?.unwrap_or(false);
    let batch_message_number = p.take::<usize>("batch_message_number")?;
    let batch_size = p.take::<usize>("batch_size")?;
    let timeout = p.take_duration("streaming_upload_timeout")?;
    let naming = match p.take_choice("naming_strategy", &["progressive", "random"])? {
        Some("random") => NamingStrategy::Random,
        _ => NamingStrategy::Progressive,
    };
    let restarting = match p.take_choice("restarting_policy", &["override", "last_part"])? {
        Some("last_part") => RestartingPolicy::LastPart,
        _ => RestartingPolicy::Override,
    };
    let ack = match p.take_choice("streaming_upload_ack", &["buffered", "stored"])? {
        Some("stored") => StreamingAck::Stored,
        _ => StreamingAck::Buffered,
    };
    if !on {
        return Ok(None);
    }
    let Some(key_name) = key_name.filter(|k| !k.is_empty()) else {
        return Err(invalid(
            "streamingUploadMode=true needs keyName: the objects are named from it (the CamelAwsS3Key header is not read in this mode)".into(),
        ));
    };
    if other_operation {
        return Err(invalid(
            "streamingUploadMode=true uploads; it cannot be combined with operation".into(),
        ));
    }
    let batch_message_number = batch_message_number.unwrap_or(DEFAULT_BATCH_MESSAGE_NUMBER);
    if batch_message_number == 0 {
        return Err(invalid("batchMessageNumber must be at least 1".into()));
    }
    let batch_size = batch_size.unwrap_or(DEFAULT_BATCH_SIZE);
    if batch_size == 0 {
        return Err(invalid("batchSize must be at least 1 byte".into()));
    }
    if restarting == RestartingPolicy::LastPart && naming == NamingStrategy::Random {
        // As in Camel: random names never meet an earlier run's, so there is nothing to
        // resume; said once here rather than refused, since the catalog Kamelet passes
        // lastPart by default whatever the naming.
        tracing::info!(
            key_name,
            "restartingPolicy=lastPart matters only with namingStrategy=progressive"
        );
    }
    Ok(Some(StreamingOptions {
        key_name: key_name.to_string(),
        batch_message_number,
        batch_size,
        timeout: timeout.filter(|t| !t.is_zero()),
        naming,
        restarting,
        ack,
    }))
}

#[cfg(test)]
mod tests {
    use camel_api::EndpointUri;

    use super::*;
    use crate::options::S3Options;

    fn parse(uri: &str) -> Result<S3Options, CamelError> {
        S3Options::from_uri(EndpointUri::parse(uri).expect("a URI"))
    }

    /// What the catalog's `aws-s3-streaming-upload-sink` Kamelet passes, its defaults
    /// filled in and an optional one (`streamingUploadTimeout`) set.
    #[test]
    fn reads_the_catalog_streaming_upload_kamelet_options() {
        let o = parse(
            "aws2-s3:my-bucket?autoCreateBucket=false&region=eu-west-1\
             &streamingUploadMode=true&restartingPolicy=lastPart&batchMessageNumber=10\
             &batchSize=1000000&namingStrategy=progressive&keyName=events/out.txt\
             &streamingUploadTimeout=5000&useDefaultCredentialsProvider=false\
             &useProfileCredentialsProvider=false&useSessionCredentials=false\
             &overrideEndpoint=false&forcePathStyle=false",
        )
        .expect("the Kamelet's options");
        let s = o.producer.streaming.expect("streaming upload mode");
        assert_eq!(s.key_name, "events/out.txt");
        assert_eq!((s.batch_message_number, s.batch_size), (10, 1_000_000));
        assert_eq!(s.timeout, Some(Duration::from_millis(5000)));
        assert_eq!(s.naming, NamingStrategy::Progressive);
        assert_eq!(s.restarting, RestartingPolicy::LastPart);
        assert_eq!(s.ack, StreamingAck::Buffered, "Camel's answer by default");
    }

    #[test]
    fn snake_case_and_defaults() {
        let o = parse("aws2-s3:b?streaming_upload_mode=true&key_name=k&naming_strategy=random&restarting_policy=override&streaming_upload_timeout=0")
            .expect("snake_case names");
        let s = o.producer.streaming.expect("streaming upload mode");
        assert_eq!(s.naming, NamingStrategy::Random);
        assert_eq!(s.restarting, RestartingPolicy::Override);
        assert_eq!(s.timeout, None, "0 turns the timeout off, as in Camel");
        let d = parse("aws2-s3:b?streamingUploadMode=true&keyName=k")
            .expect("defaults")
            .producer
            .streaming
            .expect("streaming upload mode");
        assert_eq!(
            (d.batch_message_number, d.batch_size, d.timeout),
            (DEFAULT_BATCH_MESSAGE_NUMBER, DEFAULT_BATCH_SIZE, None)
        );
        assert_eq!(d.naming, NamingStrategy::Progressive);
        assert_eq!(d.restarting, RestartingPolicy::Override);
        let stored =
            parse("aws2-s3:b?streamingUploadMode=true&keyName=k&streamingUploadAck=stored")
                .expect("camelCase")
                .producer
                .streaming
                .expect("streaming upload mode");
        assert_eq!(stored.ack, StreamingAck::Stored);
        assert!(parse("aws2-s3:b?keyName=k&batchSize=5")
            .expect("ignored without the mode")
            .producer
            .streaming
            .is_none());
    }

    #[test]
    fn refuses_what_cannot_work() {
        for (uri, why) in [
            ("aws2-s3:b?streamingUploadMode=true", "needs keyName"),
            (
                "aws2-s3:b?streamingUploadMode=true&keyName=k&operation=getObject",
                "cannot be combined with operation",
            ),
            (
                "aws2-s3:b?streamingUploadMode=true&keyName=k&batchMessageNumber=0",
                "at least 1",
            ),
            (
                "aws2-s3:b?streamingUploadMode=true&keyName=k&batchSize=0",
                "at least 1 byte",
            ),
            (
                "aws2-s3:b?streamingUploadMode=true&keyName=k&namingStrategy=timestamp",
                "progressive, random",
            ),
            (
                "aws2-s3:b?streamingUploadMode=true&keyName=k&restartingPolicy=first",
                "override, last_part",
            ),
            (
                "aws2-s3:b?streamingUploadMode=true&keyName=k&streamingUploadAck=later",
                "buffered, stored",
            ),
        ] {
            let e = parse(uri).expect_err(uri).to_string();
            assert!(e.contains(why), "{uri}: {e}");
        }
    }
}
