//! `aws2-s3://BUCKET`: Amazon S3 through aws-sdk-s3, at least once.
//!
//! - In `from`, a consumer of the bucket's objects: list, read, route, and only after
//!   the route succeeded delete the object (`deleteAfterRead`, Camel's default) or move
//!   it to `destinationBucket` (`moveAfterRead`). A failed route leaves the object, which
//!   is tried again after a pause; a killed process loses nothing. Objects above
//!   `spoolThreshold` are streamed to a file and handed over by path, so a big object
//!   keeps memory flat (ADR 0154).
//! - In `to`, a producer: `putObject` (multipart above `partSize` with
//!   `multiPartUpload=true`), and `operation=listObjects|getObject|deleteObject|copyObject`;
//!   with `streamingUploadMode=true`, consecutive bodies appended into objects, each
//!   exchange answered once its body is buffered, as Camel, or once its object is stored
//!   (`streamingUploadAck=stored`) ([`streaming`], ADRs 0173, 0176).
//!
//! Option names follow Camel's `aws2-s3` component in snake_case (camelCase is accepted);
//! credentials come from `accessKey`/`secretKey`, the profile named by
//! `profileCredentialsName` (with `useProfileCredentialsProvider=true`) or the AWS
//! default chain; `ignoreBody=true` hands over only the headers. The guide is
//! `docs/components.md` at the repository root; ADR 0153 says how the consumer settles.
//!
//! ```
//! use camel_api::Component;
//! assert_eq!(camel_s3::S3Component::new().scheme(), "aws2-s3");
//! ```

mod client;
mod component;
mod consumer;
pub mod headers;
mod options;
mod producer;
pub mod streaming;

pub use component::S3Component;
pub use consumer::S3Consumer;
pub use options::{
    Connection, ConsumerOptions, Operation, ProducerOptions, S3Credentials, S3Options,
    DEFAULT_PART_SIZE, DEFAULT_SPOOL_THRESHOLD,
};
pub use producer::S3Producer;
pub use streaming::config::{
    NamingStrategy, RestartingPolicy, StreamingOptions, DEFAULT_BATCH_MESSAGE_NUMBER,
    DEFAULT_BATCH_SIZE,
};

/// The `CopySource` of `key` in `bucket`: each path segment percent-encoded.
pub(crate) fn copy_source(bucket: &str, key: &str) -> String {
    let encoded: Vec<String> = key.split('/').map(camel_api::percent_encode).collect();
    format!("{bucket}/{}", encoded.join("/"))
}
