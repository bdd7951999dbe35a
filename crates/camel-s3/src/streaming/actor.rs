//! The task that owns the open object: it appends bodies in arrival order, stores the
//! object when it is complete, and answers every waiter of that object with the outcome.

use bytes::Bytes;
use camel_api::CamelError;
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot, Notify};
use tokio::time::{sleep_until, Instant};

use crate::client::describe;
use crate::producer::S3Producer;
use crate::streaming::batch::{Limits, OpenObject};
use crate::streaming::config::{NamingStrategy, RestartingPolicy, StreamingAck, StreamingOptions};
use crate::streaming::naming::KeyPattern;

/// Where an exchange's body was stored.
#[derive(Clone, Debug)]
pub(crate) struct Stored {
    /// The object's key.
    pub(crate) key: String,
    /// Its ETag.
    pub(crate) e_tag: Option<String>,
    /// Its version (versioned buckets).
    pub(crate) version_id: Option<String>,
}

/// The answer an exchange waits for: where its body was stored, or `None` once it is in
/// the open object (`streamingUploadAck=buffered`).
pub(crate) type Reply = oneshot::Sender<Result<Option<Stored>, CamelError>>;

/// One exchange's body, to append to the open object.
#[derive(Debug)]
pub(crate) struct Append {
    pub(crate) body: Bytes,
    pub(crate) reply: Reply,
}

/// The uploader's state; only its task touches it.
#[derive(Debug)]
pub(crate) struct Uploader {
    pub(crate) producer: S3Producer,
    pub(crate) options: StreamingOptions,
    pub(crate) pattern: KeyPattern,
    /// The number of the next `progressive` object; `None` until the first object is
    /// named (with `lastPart`, found by listing the bucket then).
    pub(crate) next_number: Option<u64>,
}

impl Uploader {
    fn limits(&self) -> Limits {
        Limits {
            messages: self.options.batch_message_number,
            bytes: self.options.batch_size,
            timeout: self.options.timeout,
        }
    }

    /// Runs until `stop` fires (or its sender is dropped) or every sender of `appends` is
    /// gone; then takes what was already queued and stores the open object, so no waiter
    /// is left without an answer.
    pub(crate) async fn run(
        mut self,
        mut appends: mpsc::Receiver<Append>,
        mut stop: oneshot::Receiver<()>,
        closing: Arc<Notify>,
    ) {
        let mut limits = self.limits();
        // A waiter per message; `None` for one answered when it was buffered.
        let mut open: Option<OpenObject<Option<Reply>>> = None;
        loop {
            let deadline = open.as_ref().and_then(OpenObject::deadline);
            tokio::select! {
                biased;
                _ = &mut stop => break,
                () = closing.notified() => {
                    // Every object is complete at its first message from now on.
                    limits.messages = 1;
                    if let Some(object) = open.take() {
                        self.store(object).await;
                    }
                }
                () = sleep_until(deadline.unwrap_or_else(Instant::now)), if deadline.is_some() => {
                    if let Some(object) = open.take() {
                        self.store(object).await;
                    }
                }
                append = appends.recv() => match append {
                    Some(append) => self.append(&mut open, append, &limits).await,
                    None => break,
                },
            }
        }
        appends.close();
        while let Some(append) = appends.recv().await {
            self.append(&mut open, append, &limits).await;
        }
        if let Some(object) = open.take() {
            self.store(object).await;
        }
    }

    async fn append(
        &mut self,
        open: &mut Option<OpenObject<Option<Reply>>>,
        append: Append,
        limits: &Limits,
    ) {
        let waiter = match self.options.ack {
            StreamingAck::Stored => Some(append.reply),
            StreamingAck::Buffered => {
                // A caller gone needs no answer.
                let _ = append.reply.send(Ok(None));
                None
            }
        };
        match open {
            Some(object) => object.append(&append.body, waiter),
            None => {
                *open = Some(OpenObject::first(
                    &append.body,
                    waiter,
                    limits,
                    Instant::now(),
                ))
            }
        }
        if open.as_ref().is_some_and(|o| o.is_complete(limits)) {
            if let Some(object) = open.take() {
                self.store(object).await;
            }
        }
    }

    /// Stores the object and tells each of its exchanges how that went.
    async fn store(&mut self, object: OpenObject<Option<Reply>>) {
        let (data, waiters) = object.close();
        let messages = waiters.len();
        let outcome = self.write(data).await.map(Some).map_err(|e| {
            let fate = match self.options.ack {
                StreamingAck::Stored => "so each of them fails",
                StreamingAck::Buffered => "and they were acknowledged when buffered: they are lost (streamingUploadAck=stored fails them instead)",
            };
            CamelError::processor(format!(
                "aws2-s3 streaming upload to bucket `{}`: the object of {messages} messages was not stored, {fate}: {}",
                self.producer.bucket(),
                e.message()
            ))
        });
        if let Err(error) = &outcome {
            tracing::warn!(bucket = %self.producer.bucket(), messages, %error, "streaming upload failed");
        }
        for waiter in waiters.into_iter().flatten() {
            // A waiter gone (its exchange was dropped) needs no answer.
            let _ = waiter.send(outcome.clone());
        }
    }

    async fn write(&mut self, data: Bytes) -> Result<Stored, CamelError> {
        let key = match self.options.naming {
            NamingStrategy::Random => self.pattern.name(NamingStrategy::Random, 0),
            NamingStrategy::Progressive => {
                let number = match self.next_number {
                    Some(n) => n,
                    None => self.first_number().await?,
                };
                // Counted even if the store fails: a number is never given twice, so an
                // object whose answer was lost (stored after all) is not replaced.
                self.next_number = Some(number + 1);
                self.pattern.name(NamingStrategy::Progressive, number)
            }
        };
        let (e_tag, version_id) = self.producer.store_object(&key, data).await?;
        Ok(Stored {
            key,
            e_tag,
            version_id,
        })
    }

    /// Where `progressive` numbering starts: 0 with `override`; with `lastPart`, after
    /// the highest number of this key already in the bucket.
    async fn first_number(&self) -> Result<u64, CamelError> {
        if self.options.restarting == RestartingPolicy::Override {
            return Ok(0);
        }
        let bucket = self.producer.bucket();
        let client = self.producer.client().get().await;
        let mut pages = client
            .list_objects_v2()
            .bucket(bucket)
            .prefix(self.pattern.stem())
            .into_paginator()
            .send();
        let mut keys = Vec::new();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| {
                describe(
                    &format!(
                        "listing `{}` in S3 bucket `{bucket}` to resume the numbering (restartingPolicy=lastPart)",
                        self.pattern.stem()
                    ),
                    e,
                )
            })?;
            keys.extend(
                page.contents
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|o| o.key),
            );
        }
        Ok(self.pattern.resume_after(keys.iter().map(String::as_str)))
    }
}
