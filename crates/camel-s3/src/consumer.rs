//! `from: aws2-s3://BUCKET`: list, get, route, then delete or move, at least once.
//!
//! Each poll lists up to `max_messages_per_poll` objects (ListObjectsV2, under `prefix`),
//! reads each one and runs it through the route, at most `concurrent_consumers` at once.
//! Only after an object's route succeeded is it deleted (`delete_after_read`, Camel's
//! default) or copied to `destination_bucket` and then deleted (`move_after_read`). A
//! failed route leaves the object where it is; the consumer then skips that key for a
//! while (1 s, doubling to 60 s while it keeps failing) so one bad object is not fetched
//! in a tight loop while the others wait. A process killed mid-route leaves its objects in
//! the bucket, and the next run reads them again: nothing is lost, and an object whose
//! route had finished but whose delete had not is delivered twice.
//!
//! An object larger than `spool_threshold` never sits in memory: it is streamed to a file
//! in `spool_directory` and handed over as the `file` consumer's lazy body does (empty
//! body, `CamelFileAbsolutePath`), so a `split` with `streaming: true` reads it in pieces
//! (ADR 0154). The file is removed when the exchange is done.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_s3::types::Object;
use camel_api::{Body, CamelError, Consumer, ConsumerContext, Exchange};
use futures::stream::{self, StreamExt};
use tempfile::NamedTempFile;
use tokio::io::AsyncWriteExt;
use tokio::time::Instant;

use crate::client::{describe, is_no_such_key, S3Client};
use crate::headers;
use crate::options::ConsumerOptions;

/// First pause before a failed key is read again; doubled per failure up to the maximum.
const FIRST_RETRY: Duration = Duration::from_secs(1);
const MAX_RETRY: Duration = Duration::from_secs(60);

/// The consumer of one bucket.
#[derive(Debug)]
pub struct S3Consumer {
    bucket: String,
    client: Arc<S3Client>,
    options: Arc<ConsumerOptions>,
}

/// A key whose route failed: skipped until `at` unless the object changed.
#[derive(Debug)]
struct Failed {
    e_tag: Option<String>,
    at: Instant,
    wait: Duration,
}

/// How one object's turn ended.
enum Outcome {
    /// Routed and settled (deleted, moved, or left as asked).
    Done,
    /// The route failed: left in the bucket.
    Failed(Option<String>),
    /// Gone before it was read (another consumer took it).
    Gone,
}

impl S3Consumer {
    pub(crate) fn new(bucket: String, client: Arc<S3Client>, options: ConsumerOptions) -> Self {
        S3Consumer {
            bucket,
            client,
            options: Arc::new(options),
        }
    }

    /// Objects to read now: listed from the start when they leave the bucket after
    /// success, else from where the last poll stopped (starting over at the end).
    async fn list(
        &self,
        failed: &HashMap<String, Failed>,
        resume: &mut Option<String>,
    ) -> Result<Vec<Object>, CamelError> {
        let o = &self.options;
        let client = self.client.get().await;
        let consumes = o.delete_after_read || o.move_after_read;
        let want = usize::try_from(o.max_messages_per_poll).unwrap_or(10);
        let now = Instant::now();
        let mut token = if consumes { None } else { resume.take() };
        let mut out = Vec::new();
        loop {
            // Ask for enough to fill the poll even if every failed key is among them.
            let page = i32::try_from(want + failed.len()).unwrap_or(1000).min(1000);
            let answer = client
                .list_objects_v2()
                .bucket(&self.bucket)
                .set_prefix(o.prefix.clone())
                .set_delimiter(o.delimiter.clone())
                .max_keys(page)
                .set_continuation_token(token.take())
                .send()
                .await
                .map_err(|e| describe(&format!("listing S3 bucket `{}`", self.bucket), e))?;
            for object in answer.contents.unwrap_or_default() {
                let Some(key) = object.key.as_deref() else {
                    continue;
                };
                if !o.include_folders && key.ends_with('/') {
                    continue;
                }
                if let Some(f) = failed.get(key) {
                    if f.at > now && f.e_tag == object.e_tag {
                        continue;
                    }
                }
                out.push(object);
                if out.len() == want {
                    break;
                }
            }
            token = answer.next_continuation_token;
            if out.len() >= want || token.is_none() {
                break;
            }
        }
        if !consumes {
            *resume = token;
        }
        Ok(out)
    }

    /// Reads one object, runs it through the route and settles it.
    async fn take(&self, ctx: &ConsumerContext, object: Object, retried: bool) -> Outcome {
        let key = object.key.clone().unwrap_or_default();
        let e_tag = object.e_tag.clone();
        let (mut exchange, spool) = match self.read(&object).await {
            Ok(Some(read)) => read,
            Ok(None) => return Outcome::Gone,
            Err(e) => {
                tracing::warn!(bucket = %self.bucket, key = %key, error = %e,
                    "reading the S3 object failed; it stays in the bucket");
                ctx.health().set_failing(&e);
                return Outcome::Failed(e_tag);
            }
        };
        if retried {
            exchange
                .properties
                .insert(camel_api::error_kind::EXTERNAL_REDELIVERED, true);
        }
        let result = ctx.send(exchange).await;
        // The spooled copy is removed whatever the outcome: a retry reads the object again.
        drop(spool);
        match result {
            Ok(_) => {
                self.settle(&key).await;
                Outcome::Done
            }
            Err(error) => {
                tracing::debug!(bucket = %self.bucket, key = %key, %error,
                    "route failed; the S3 object stays in the bucket");
                Outcome::Failed(e_tag)
            }
        }
    }

    /// The exchange of `object` (and its spool file, if it was spooled); `None` when the
    /// object is gone.
    async fn read(
        &self,
        object: &Object,
    ) -> Result<Option<(Exchange, Option<NamedTempFile>)>, CamelError> {
        let key = object.key.as_deref().unwrap_or_default();
        let mut exchange = Exchange::new(Body::Empty);
        let h = &mut exchange.message.headers;
        h.insert(headers::KEY, key);
        h.insert(headers::BUCKET_NAME, self.bucket.as_str());
        if let Some(e_tag) = &object.e_tag {
            h.insert(headers::E_TAG, e_tag.as_str());
        }
        if let Some(size) = object.size {
            h.insert(headers::CONTENT_LENGTH, size);
        }
        if let Some(t) = &object.last_modified {
            h.insert(headers::LAST_MODIFIED, headers::epoch_millis(t));
        }
        if let Some(class) = &object.storage_class {
            h.insert(headers::STORAGE_CLASS, class.as_str());
        }
        if !self.options.include_body {
            return Ok(Some((exchange, None)));
        }
        let got = self
            .client
            .get()
            .await
            .get_object()
            .bucket(&self.bucket)
            .key(key)
            .send()
            .await;
        let mut got = match got {
            Ok(got) => got,
            Err(e) if is_no_such_key(&e) => return Ok(None),
            Err(e) => return Err(describe(&format!("reading S3 object `{key}`"), e)),
        };
        headers::set_from_get(&mut exchange, &got);
        let size = got
            .content_length()
            .and_then(|n| u64::try_from(n).ok())
            .unwrap_or(0);
        if size <= self.options.spool_threshold {
            let bytes = got
                .body
                .collect()
                .await
                .map_err(|e| CamelError::external(format!("reading S3 object `{key}`"), e))?
                .into_bytes();
            exchange.message.body = Body::Bytes(bytes);
            return Ok(Some((exchange, None)));
        }
        let spool = self.spool_file().map_err(|e| {
            CamelError::external(format!("spooling S3 object `{key}` to a file"), e)
        })?;
        let mut file = tokio::fs::File::from_std(spool.reopen().map_err(|e| {
            CamelError::external(format!("spooling S3 object `{key}` to a file"), e)
        })?);
        let mut written: u64 = 0;
        while let Some(chunk) = got.body.next().await {
            let chunk =
                chunk.map_err(|e| CamelError::external(format!("reading S3 object `{key}`"), e))?;
            file.write_all(&chunk).await.map_err(|e| {
                CamelError::external(format!("spooling S3 object `{key}` to a file"), e)
            })?;
            written += chunk.len() as u64;
        }
        file.flush().await.map_err(|e| {
            CamelError::external(format!("spooling S3 object `{key}` to a file"), e)
        })?;
        let h = &mut exchange.message.headers;
        h.insert(
            headers::FILE_ABSOLUTE_PATH,
            spool.path().to_string_lossy().into_owned(),
        );
        h.insert(headers::FILE_LENGTH, written);
        Ok(Some((exchange, Some(spool))))
    }

    fn spool_file(&self) -> std::io::Result<NamedTempFile> {
        let builder = tempfile::Builder::new()
            .prefix(".camel-s3-")
            .suffix(".spool")
            .to_owned();
        match &self.options.spool_directory {
            Some(dir) => builder.tempfile_in(dir),
            None => builder.tempfile(),
        }
    }

    /// After success: move or delete as the endpoint says. A failure here means the
    /// object is read again later (a duplicate), never that it is lost.
    async fn settle(&self, key: &str) {
        let o = &self.options;
        let client = self.client.get().await;
        if o.move_after_read {
            let Some(to_bucket) = &o.destination_bucket else {
                return;
            };
            let to_key = format!(
                "{}{key}{}",
                o.destination_bucket_prefix, o.destination_bucket_suffix
            );
            let copied = client
                .copy_object()
                .copy_source(crate::copy_source(&self.bucket, key))
                .bucket(to_bucket)
                .key(&to_key)
                .send()
                .await;
            if let Err(e) = copied {
                tracing::warn!(bucket = %self.bucket, key = %key, error = %describe("moving the object", e),
                    "the S3 object was not moved; it will be read again");
                return;
            }
        } else if !o.delete_after_read {
            return;
        }
        let deleted = client
            .delete_object()
            .bucket(&self.bucket)
            .key(key)
            .send()
            .await;
        if let Err(e) = deleted {
            tracing::warn!(bucket = %self.bucket, key = %key, error = %describe("deleting the object", e),
                "the S3 object was not deleted; it will be read again");
        }
    }
}

#[async_trait]
impl Consumer for S3Consumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let o = self.options.clone();
        tokio::select! {
            _ = ctx.cancelled() => return Ok(()),
            _ = tokio::time::sleep(o.initial_delay) => {}
        }
        let mut backoff = Duration::from_millis(200);
        let mut failed: HashMap<String, Failed> = HashMap::new();
        let mut resume = None;
        let mut bucket_ready = false;
        let consumes = o.delete_after_read || o.move_after_read;
        while !ctx.is_cancelled() {
            // A key failed long ago and not seen since (deleted by someone else) is
            // forgotten, so the map stays as small as the set of failing objects.
            let now = Instant::now();
            failed.retain(|_, f| f.at + MAX_RETRY > now);
            let listed = async {
                if !bucket_ready {
                    self.client.ensure_bucket(&self.bucket).await?;
                    bucket_ready = true;
                }
                self.list(&failed, &mut resume).await
            }
            .await;
            let objects = match listed {
                Ok(objects) => {
                    ctx.health().set_healthy();
                    backoff = Duration::from_millis(200);
                    objects
                }
                Err(e) => {
                    tracing::warn!(bucket = %self.bucket, error = %e, retry_in = ?backoff,
                        "S3 consumer cannot list its bucket; retrying");
                    ctx.health().set_failing(&e);
                    tokio::select! {
                        _ = ctx.cancelled() => return Ok(()),
                        _ = tokio::time::sleep(backoff) => {}
                    }
                    backoff = (backoff * 2).min(Duration::from_secs(30));
                    continue;
                }
            };
            // More is waiting when a consuming poll came back full, or when a
            // non-consuming one has pages left: poll again at once (Camel's greedy).
            let more = if consumes {
                objects.len() == usize::try_from(o.max_messages_per_poll).unwrap_or(10)
            } else {
                resume.is_some()
            };
            let runs = objects.into_iter().map(|object| {
                let key = object.key.clone().unwrap_or_default();
                let retried = failed.contains_key(&key);
                let ctx = &ctx;
                let this = &self;
                async move { (key, this.take(ctx, object, retried).await) }
            });
            let outcomes: Vec<(String, Outcome)> = stream::iter(runs)
                .buffer_unordered(o.concurrent_consumers)
                .collect()
                .await;
            for (key, outcome) in outcomes {
                match outcome {
                    Outcome::Done | Outcome::Gone => {
                        failed.remove(&key);
                    }
                    Outcome::Failed(e_tag) => {
                        let wait = failed
                            .get(&key)
                            .map(|f| (f.wait * 2).min(MAX_RETRY))
                            .unwrap_or(FIRST_RETRY);
                        failed.insert(
                            key,
                            Failed {
                                e_tag,
                                at: Instant::now() + wait,
                                wait,
                            },
                        );
                    }
                }
            }
            if !more {
                tokio::select! {
                    _ = ctx.cancelled() => return Ok(()),
                    _ = tokio::time::sleep(o.delay) => {}
                }
            }
        }
        Ok(())
    }
}
