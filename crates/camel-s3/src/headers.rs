//! The `CamelAwsS3*` headers, as Camel names them.

use aws_sdk_s3::operation::get_object::GetObjectOutput;
use aws_sdk_s3::primitives::DateTime;
use camel_api::Exchange;

/// The object's key (consumer: set; producer: the key to write, read or delete).
pub const KEY: &str = "CamelAwsS3Key";
/// The bucket.
pub const BUCKET_NAME: &str = "CamelAwsS3BucketName";
/// The object's ETag.
pub const E_TAG: &str = "CamelAwsS3ETag";
/// The object's size in bytes.
pub const CONTENT_LENGTH: &str = "CamelAwsS3ContentLength";
/// The object's content type (consumer: set; producer: the uploaded object's).
pub const CONTENT_TYPE: &str = "CamelAwsS3ContentType";
/// Last modification, in milliseconds since the Unix epoch.
pub const LAST_MODIFIED: &str = "CamelAwsS3LastModified";
/// The object's version id (versioned buckets).
pub const VERSION_ID: &str = "CamelAwsS3VersionId";
/// The object's storage class.
pub const STORAGE_CLASS: &str = "CamelAwsS3StorageClass";
/// Producer: overrides the endpoint's `operation`.
pub const OPERATION: &str = "CamelAwsS3Operation";
/// Producer (`listObjects`): only keys starting with this.
pub const PREFIX: &str = "CamelAwsS3Prefix";
/// Producer (`copyObject`): the bucket to copy to.
pub const BUCKET_DESTINATION_NAME: &str = "CamelAwsS3BucketDestinationName";
/// Producer (`copyObject`): the key to copy to.
pub const DESTINATION_KEY: &str = "CamelAwsS3DestinationKey";
/// Consumer: a spooled object's file (the `file` consumer's header, so a streaming
/// `split` reads it in pieces).
pub const FILE_ABSOLUTE_PATH: &str = "CamelFileAbsolutePath";
/// Consumer: a spooled object's size, as the `file` consumer names it.
pub const FILE_LENGTH: &str = "CamelFileLength";

/// Milliseconds since the Unix epoch.
pub(crate) fn epoch_millis(t: &DateTime) -> i64 {
    t.to_millis().unwrap_or(0)
}

/// A header's value as text, if it is set and not empty.
pub(crate) fn text(exchange: &Exchange, name: &str) -> Option<String> {
    exchange
        .header(name)
        .filter(|v| !v.is_null())
        .map(|v| v.to_string())
        .filter(|s| !s.is_empty())
}

/// Sets what a `GetObject` answer tells: content type, version, ETag, size.
pub(crate) fn set_from_get(exchange: &mut Exchange, got: &GetObjectOutput) {
    let h = &mut exchange.message.headers;
    if let Some(t) = got.content_type() {
        h.insert(CONTENT_TYPE, t);
    }
    if let Some(v) = got.version_id() {
        h.insert(VERSION_ID, v);
    }
    if let Some(e_tag) = got.e_tag() {
        h.insert(E_TAG, e_tag);
    }
    if let Some(n) = got.content_length() {
        h.insert(CONTENT_LENGTH, n);
    }
}
