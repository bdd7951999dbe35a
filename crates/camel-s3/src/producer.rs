//! `to: aws2-s3://BUCKET`: upload the body (in parts above `part_size` with
//! `multi_part_upload`), or list, get, delete or copy objects (`operation`).
//!
//! The key is the `CamelAwsS3Key` header, else `key_name`. A body the `file` consumer
//! handed over lazily, or an object the S3 consumer spooled (empty body,
//! `CamelFileAbsolutePath`), is uploaded from its file, one part at a time, so a big
//! file goes from disk to S3 in bounded memory.

use std::path::PathBuf;
use std::sync::Arc;

use aws_sdk_s3::error::SdkError;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart, StorageClass};
use bytes::Bytes;
use camel_api::{Body, BoxProcessor, CamelError, Exchange};
use tokio::io::AsyncReadExt;

use crate::client::{describe, S3Client};
use crate::headers;
use crate::options::{Operation, ProducerOptions};
use crate::streaming::StreamingUpload;

/// The producer of one endpoint.
#[derive(Debug, Clone)]
pub struct S3Producer {
    bucket: String,
    client: Arc<S3Client>,
    options: ProducerOptions,
    /// With `streamingUploadMode=true`: every exchange goes to it.
    streaming: Option<Arc<StreamingUpload>>,
}

/// What a `putObject` uploads.
enum Payload {
    Memory(Bytes),
    File(PathBuf, u64),
}

impl Payload {
    fn of(exchange: &Exchange) -> Result<Payload, CamelError> {
        Ok(match &exchange.message.body {
            Body::Empty => match headers::text(exchange, headers::FILE_ABSOLUTE_PATH) {
                Some(path) => {
                    let size = std::fs::metadata(&path)
                        .map_err(|e| {
                            CamelError::external(format!("reading the file `{path}` to upload"), e)
                        })?
                        .len();
                    Payload::File(PathBuf::from(path), size)
                }
                None => Payload::Memory(Bytes::new()),
            },
            Body::Bytes(b) => Payload::Memory(b.clone()),
            Body::Text(t) => Payload::Memory(Bytes::copy_from_slice(t.as_bytes())),
            Body::Json(j) => Payload::Memory(Bytes::from(j.to_string())),
        })
    }

    fn len(&self) -> u64 {
        match self {
            Payload::Memory(b) => b.len() as u64,
            Payload::File(_, n) => *n,
        }
    }

    /// The whole payload in memory (a streaming upload appends it to its object).
    async fn into_bytes(self) -> Result<Bytes, CamelError> {
        match self {
            Payload::Memory(b) => Ok(b),
            Payload::File(path, _) => tokio::fs::read(&path).await.map(Bytes::from).map_err(|e| {
                CamelError::external(format!("reading `{}` to upload", path.display()), e)
            }),
        }
    }
}

impl S3Producer {
    pub(crate) fn new(bucket: String, client: Arc<S3Client>, options: ProducerOptions) -> Self {
        let streaming_options = options.streaming.clone();
        let mut producer = S3Producer {
            bucket,
            client,
            options,
            streaming: None,
        };
        producer.streaming =
            streaming_options.map(|s| Arc::new(StreamingUpload::new(s, producer.clone())));
        producer
    }

    /// The streaming upload, which the route stops (storing its open object).
    pub(crate) fn streaming(&self) -> Option<Arc<StreamingUpload>> {
        self.streaming.clone()
    }

    pub(crate) fn bucket(&self) -> &str {
        &self.bucket
    }

    pub(crate) fn client(&self) -> &S3Client {
        &self.client
    }

    /// The producer as a route step.
    pub fn processor(self: Arc<Self>) -> BoxProcessor {
        BoxProcessor::from_fn(move |exchange| {
            let this = self.clone();
            async move { this.produce(exchange).await }
        })
        .named("aws2-s3")
    }

    async fn produce(&self, mut exchange: Exchange) -> Result<Exchange, CamelError> {
        if let Some(streaming) = &self.streaming {
            self.client.ensure_bucket(&self.bucket).await?;
            let body = Payload::of(&exchange)?.into_bytes().await?;
            let Some(stored) = streaming.append(body).await? else {
                // Buffered: the object's key is given when it is stored.
                return Ok(exchange);
            };
            let h = &mut exchange.message.headers;
            h.insert(headers::KEY, stored.key);
            if let Some(e_tag) = stored.e_tag {
                h.insert(headers::E_TAG, e_tag);
            }
            if let Some(v) = stored.version_id {
                h.insert(headers::VERSION_ID, v);
            }
            return Ok(exchange);
        }
        let operation = match headers::text(&exchange, headers::OPERATION) {
            Some(name) => parse_operation(&name)?,
            None => self.options.operation,
        };
        self.client.ensure_bucket(&self.bucket).await?;
        match operation {
            Operation::PutObject => self.put(&mut exchange).await?,
            Operation::GetObject => self.get(&mut exchange).await?,
            Operation::ListObjects => self.list(&mut exchange).await?,
            Operation::DeleteObject => {
                let key = self.key(&exchange)?;
                self.client
                    .get()
                    .await
                    .delete_object()
                    .bucket(&self.bucket)
                    .key(&key)
                    .send()
                    .await
                    .map_err(|e| describe(&format!("deleting S3 object `{key}`"), e))?;
            }
            Operation::CopyObject => self.copy(&mut exchange).await?,
        }
        Ok(exchange)
    }

    fn key(&self, exchange: &Exchange) -> Result<String, CamelError> {
        headers::text(exchange, headers::KEY)
            .or_else(|| self.options.key_name.clone())
            .ok_or_else(|| {
                CamelError::processor(format!(
                    "aws2-s3: no key: set the `{}` header or the endpoint's keyName",
                    headers::KEY
                ))
            })
    }

    async fn put(&self, exchange: &mut Exchange) -> Result<(), CamelError> {
        let key = self.key(exchange)?;
        let payload = Payload::of(exchange)?;
        let content_type = headers::text(exchange, headers::CONTENT_TYPE);
        let storage_class = self
            .options
            .storage_class
            .as_deref()
            .map(StorageClass::from);
        let (e_tag, version) =
            if self.options.multi_part_upload && payload.len() > self.options.part_size {
                self.put_in_parts(&key, payload, content_type, storage_class)
                    .await?
            } else {
                let body = match payload {
                    Payload::Memory(b) => ByteStream::from(b),
                    Payload::File(path, _) => ByteStream::from_path(&path).await.map_err(|e| {
                        CamelError::external(format!("reading `{}` to upload", path.display()), e)
                    })?,
                };
                self.put_whole(&key, body, content_type, storage_class)
                    .await?
            };
        let h = &mut exchange.message.headers;
        if let Some(e_tag) = e_tag {
            h.insert(headers::E_TAG, e_tag);
        }
        if let Some(v) = version {
            h.insert(headers::VERSION_ID, v);
        }
        Ok(())
    }

    /// Stores one object of a streaming upload: in parts when it is larger than
    /// `part_size`, else in one request.
    pub(crate) async fn store_object(
        &self,
        key: &str,
        data: Bytes,
    ) -> Result<(Option<String>, Option<String>), CamelError> {
        let storage_class = self
            .options
            .storage_class
            .as_deref()
            .map(StorageClass::from);
        if data.len() as u64 > self.options.part_size {
            self.put_in_parts(key, Payload::Memory(data), None, storage_class)
                .await
        } else {
            self.put_whole(key, ByteStream::from(data), None, storage_class)
                .await
        }
    }

    async fn put_whole(
        &self,
        key: &str,
        body: ByteStream,
        content_type: Option<String>,
        storage_class: Option<StorageClass>,
    ) -> Result<(Option<String>, Option<String>), CamelError> {
        let out = self
            .client
            .get()
            .await
            .put_object()
            .bucket(&self.bucket)
            .key(key)
            .body(body)
            .set_content_type(content_type)
            .set_storage_class(storage_class)
            .send()
            .await
            .map_err(|e| describe(&format!("writing S3 object `{key}`"), e))?;
        Ok((out.e_tag, out.version_id))
    }

    /// A multipart upload, one part in memory at a time; aborted when a part fails so
    /// no orphaned parts are billed.
    async fn put_in_parts(
        &self,
        key: &str,
        payload: Payload,
        content_type: Option<String>,
        storage_class: Option<StorageClass>,
    ) -> Result<(Option<String>, Option<String>), CamelError> {
        let client = self.client.get().await;
        let started = client
            .create_multipart_upload()
            .bucket(&self.bucket)
            .key(key)
            .set_content_type(content_type)
            .set_storage_class(storage_class)
            .send()
            .await
            .map_err(|e| describe(&format!("starting the upload of S3 object `{key}`"), e))?;
        let upload_id = started.upload_id.unwrap_or_default();
        let uploaded = self.upload_parts(key, &upload_id, payload).await;
        let completed = match uploaded {
            Ok(parts) => self.complete(key, &upload_id, parts).await,
            Err(e) => Err(e),
        };
        match completed {
            Ok(done) => Ok(done),
            Err(e) => {
                let aborted = client
                    .abort_multipart_upload()
                    .bucket(&self.bucket)
                    .key(key)
                    .upload_id(&upload_id)
                    .send()
                    .await;
                if let Err(abort) = aborted {
                    tracing::warn!(bucket = %self.bucket, key = %key,
                        error = %describe("aborting the upload", abort),
                        "the failed multipart upload's parts stay until a lifecycle rule removes them");
                }
                Err(e)
            }
        }
    }

    /// Completes the upload. An answer of 200 that does not read as the result (moto
    /// names its root element differently) is checked with `HeadObject`: the upload
    /// counts as done when the object is there with the multipart ETag of that many parts.
    async fn complete(
        &self,
        key: &str,
        upload_id: &str,
        parts: Vec<CompletedPart>,
    ) -> Result<(Option<String>, Option<String>), CamelError> {
        let client = self.client.get().await;
        let count = parts.len();
        let answer = client
            .complete_multipart_upload()
            .bucket(&self.bucket)
            .key(key)
            .upload_id(upload_id)
            .multipart_upload(
                CompletedMultipartUpload::builder()
                    .set_parts(Some(parts))
                    .build(),
            )
            .send()
            .await;
        let error = match answer {
            Ok(out) => return Ok((out.e_tag, out.version_id)),
            Err(SdkError::ServiceError(e)) if e.raw().status().as_u16() == 200 => {
                SdkError::ServiceError(e)
            }
            Err(e) => {
                return Err(describe(
                    &format!("completing the upload of S3 object `{key}`"),
                    e,
                ))
            }
        };
        let suffix = format!("-{count}\"");
        match client
            .head_object()
            .bucket(&self.bucket)
            .key(key)
            .send()
            .await
        {
            Ok(head) if head.e_tag().is_some_and(|t| t.ends_with(&suffix)) => {
                Ok((head.e_tag, head.version_id))
            }
            _ => Err(describe(
                &format!("completing the upload of S3 object `{key}`"),
                error,
            )),
        }
    }

    async fn upload_parts(
        &self,
        key: &str,
        upload_id: &str,
        payload: Payload,
    ) -> Result<Vec<CompletedPart>, CamelError> {
        let client = self.client.get().await;
        let part_size = usize::try_from(self.options.part_size).unwrap_or(usize::MAX);
        let mut parts = Vec::new();
        let mut source = PartSource::new(payload).await?;
        let mut number = 1;
        while let Some(chunk) = source.next(part_size).await? {
            let out = client
                .upload_part()
                .bucket(&self.bucket)
                .key(key)
                .upload_id(upload_id)
                .part_number(number)
                .body(ByteStream::from(chunk))
                .send()
                .await
                .map_err(|e| describe(&format!("uploading part {number} of `{key}`"), e))?;
            parts.push(
                // The SDK checksums each part (CRC32 by default); completing the upload
                // names the same checksums.
                CompletedPart::builder()
                    .part_number(number)
                    .set_e_tag(out.e_tag)
                    .set_checksum_crc32(out.checksum_crc32)
                    .set_checksum_crc32_c(out.checksum_crc32_c)
                    .set_checksum_crc64_nvme(out.checksum_crc64_nvme)
                    .set_checksum_sha1(out.checksum_sha1)
                    .set_checksum_sha256(out.checksum_sha256)
                    .build(),
            );
            number += 1;
        }
        Ok(parts)
    }

    async fn get(&self, exchange: &mut Exchange) -> Result<(), CamelError> {
        let key = self.key(exchange)?;
        let out = self
            .client
            .get()
            .await
            .get_object()
            .bucket(&self.bucket)
            .key(&key)
            .send()
            .await
            .map_err(|e| describe(&format!("reading S3 object `{key}`"), e))?;
        let h = &mut exchange.message.headers;
        h.insert(headers::KEY, key.as_str());
        h.insert(headers::BUCKET_NAME, self.bucket.as_str());
        headers::set_from_get(exchange, &out);
        let bytes = out
            .body
            .collect()
            .await
            .map_err(|e| CamelError::external(format!("reading S3 object `{key}`"), e))?
            .into_bytes();
        exchange.message.body = Body::Bytes(bytes);
        Ok(())
    }

    /// Every object under `CamelAwsS3Prefix` as a JSON array of `{key, size, eTag,
    /// lastModified}`.
    async fn list(&self, exchange: &mut Exchange) -> Result<(), CamelError> {
        let prefix = headers::text(exchange, headers::PREFIX);
        let client = self.client.get().await;
        let mut pages = client
            .list_objects_v2()
            .bucket(&self.bucket)
            .set_prefix(prefix)
            .into_paginator()
            .send();
        let mut out = Vec::new();
        while let Some(page) = pages.next().await {
            let page =
                page.map_err(|e| describe(&format!("listing S3 bucket `{}`", self.bucket), e))?;
            for o in page.contents.unwrap_or_default() {
                out.push(serde_json::json!({
                    "key": o.key,
                    "size": o.size,
                    "eTag": o.e_tag,
                    "lastModified": o.last_modified.as_ref().map(headers::epoch_millis),
                }));
            }
        }
        exchange.message.body = Body::Json(Arc::new(serde_json::Value::Array(out)));
        Ok(())
    }

    async fn copy(&self, exchange: &mut Exchange) -> Result<(), CamelError> {
        let key = self.key(exchange)?;
        let to_bucket =
            headers::text(exchange, headers::BUCKET_DESTINATION_NAME).ok_or_else(|| {
                CamelError::processor(format!(
                    "aws2-s3 copyObject needs the `{}` header",
                    headers::BUCKET_DESTINATION_NAME
                ))
            })?;
        let to_key = headers::text(exchange, headers::DESTINATION_KEY).unwrap_or(key.clone());
        let out = self
            .client
            .get()
            .await
            .copy_object()
            .copy_source(crate::copy_source(&self.bucket, &key))
            .bucket(&to_bucket)
            .key(&to_key)
            .send()
            .await
            .map_err(|e| describe(&format!("copying S3 object `{key}`"), e))?;
        if let Some(e_tag) = out.copy_object_result.and_then(|r| r.e_tag) {
            exchange.message.headers.insert(headers::E_TAG, e_tag);
        }
        Ok(())
    }
}

/// The parts of a payload, read one at a time.
enum PartSource {
    Memory(Bytes),
    File(tokio::fs::File),
}

impl PartSource {
    async fn new(payload: Payload) -> Result<Self, CamelError> {
        Ok(match payload {
            Payload::Memory(b) => PartSource::Memory(b),
            Payload::File(path, _) => {
                PartSource::File(tokio::fs::File::open(&path).await.map_err(|e| {
                    CamelError::external(format!("reading `{}` to upload", path.display()), e)
                })?)
            }
        })
    }

    /// The next part of at most `size` bytes; `None` at the end.
    async fn next(&mut self, size: usize) -> Result<Option<Bytes>, CamelError> {
        match self {
            PartSource::Memory(b) => {
                if b.is_empty() {
                    return Ok(None);
                }
                let n = size.min(b.len());
                Ok(Some(b.split_to(n)))
            }
            PartSource::File(f) => {
                let mut buf = Vec::with_capacity(size);
                let mut limited = f.take(size as u64);
                limited
                    .read_to_end(&mut buf)
                    .await
                    .map_err(|e| CamelError::external("reading the file to upload", e))?;
                Ok((!buf.is_empty()).then(|| Bytes::from(buf)))
            }
        }
    }
}

/// `listObjects`, `list_objects`, … as an [`Operation`].
fn parse_operation(name: &str) -> Result<Operation, CamelError> {
    let norm: String = name
        .chars()
        .filter(|c| *c != '_')
        .collect::<String>()
        .to_ascii_lowercase();
    Ok(match norm.as_str() {
        "putobject" => Operation::PutObject,
        "listobjects" => Operation::ListObjects,
        "getobject" => Operation::GetObject,
        "deleteobject" => Operation::DeleteObject,
        "copyobject" => Operation::CopyObject,
        _ => {
            return Err(CamelError::processor(format!(
                "aws2-s3: operation `{name}` is not supported (putObject, listObjects, getObject, deleteObject, copyObject)"
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_read_in_either_spelling() {
        assert_eq!(
            parse_operation("listObjects").unwrap(),
            Operation::ListObjects
        );
        assert_eq!(
            parse_operation("copy_object").unwrap(),
            Operation::CopyObject
        );
        assert!(parse_operation("deleteBucket")
            .unwrap_err()
            .to_string()
            .contains("not supported"));
    }

    #[tokio::test]
    async fn parts_of_memory_are_cut_at_the_part_size() {
        let mut source = PartSource::new(Payload::Memory(Bytes::from(vec![7u8; 25])))
            .await
            .unwrap();
        let mut sizes = Vec::new();
        while let Some(p) = source.next(10).await.unwrap() {
            sizes.push(p.len());
        }
        assert_eq!(sizes, [10, 10, 5]);
    }
}
