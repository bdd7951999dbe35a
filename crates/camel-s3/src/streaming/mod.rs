//! `to: aws2-s3:BUCKET?streamingUploadMode=true&keyName=…`: consecutive exchanges' bodies
//! appended into one object, as Camel's streaming upload does, with a stronger promise on
//! request.
//!
//! An object is complete at `batchMessageNumber` messages, at `batchSize` bytes, or
//! `streamingUploadTimeout` after its first message, whichever comes first. Its name comes
//! from `keyName` (`namingStrategy`, `restartingPolicy`: see [`naming`]).
//!
//! By default an exchange completes once its body is in the open object, as in Camel, so
//! a source that waits for each exchange still fills objects (ADR 0176). With
//! `streamingUploadAck=stored` **an exchange completes only once the object holding its
//! body is stored**, so an acknowledged message is in S3 whatever happens to the process
//! afterwards, and if storing fails, every exchange of that object fails with the error.
//! One task ([`actor`]) owns the open object; exchanges send it their body and wait for
//! its answer. Its buffer holds at most `batchSize` bytes
//! plus the body that crossed it, and at most [`QUEUE`] bodies wait to be appended, so a
//! caller waits (backpressure) rather than memory growing. When the context stops, the
//! open object is stored at once and each later body on its own (the component is told,
//! before the routes drain); when the route's steps are shut down, queued bodies are
//! appended and the open object is stored before the shutdown returns.
//!
//! ```
//! use camel_api::{Component, EndpointUri};
//! # struct Nothing;
//! # impl camel_api::ComponentContext for Nothing {
//! #     fn expression(&self, _: &str, _: &str) -> Result<camel_api::BoxExpression, camel_api::CamelError> { unreachable!() }
//! #     fn predicate(&self, _: &str, _: &str) -> Result<camel_api::BoxPredicate, camel_api::CamelError> { unreachable!() }
//! #     fn producer(&self, _: &str) -> Result<camel_api::BoxProcessor, camel_api::CamelError> { unreachable!() }
//! #     fn resource(&self, _: &str) -> Option<std::sync::Arc<dyn std::any::Any + Send + Sync>> { None }
//! #     fn route_id(&self) -> Option<&str> { None }
//! # }
//! let uri = "aws2-s3:logs?streamingUploadMode=true&keyName=app/events.jsonl&batchMessageNumber=100";
//! let endpoint = camel_s3::S3Component::new()
//!     .endpoint(EndpointUri::parse(uri).unwrap(), &Nothing)
//!     .unwrap();
//! // The open object is stored when the route stops: the endpoint has a lifecycle.
//! assert!(endpoint.lifecycle().is_some());
//! ```

mod actor;
mod batch;
pub(crate) mod config;
pub(crate) mod naming;

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use bytes::Bytes;
use camel_api::{CamelError, ShutdownReason, StepLifecycle};
use tokio::sync::{mpsc, oneshot, Notify};
use tokio::task::JoinHandle;

pub(crate) use actor::Stored;
use actor::{Append, Uploader};
use config::StreamingOptions;
use naming::KeyPattern;

use crate::producer::S3Producer;

/// Bodies waiting to be appended while the task stores an object; a caller beyond them
/// waits for room.
pub const QUEUE: usize = 16;

/// One endpoint's streaming upload: starts its task on the first exchange, stops it with
/// the route.
#[derive(Debug)]
pub(crate) struct StreamingUpload {
    name: String,
    options: StreamingOptions,
    producer: S3Producer,
    state: Mutex<State>,
}

#[derive(Debug)]
enum State {
    /// No task yet: the first exchange starts one.
    Idle,
    Running(Running),
    /// The route stopped: exchanges are refused until it starts again.
    Stopped,
}

#[derive(Debug)]
struct Running {
    appends: mpsc::Sender<Append>,
    stop: oneshot::Sender<()>,
    /// Told when the context stops: from then on each object is stored at once.
    closing: Arc<Notify>,
    task: JoinHandle<()>,
}

impl StreamingUpload {
    /// `producer` stores the objects (a plain producer of the same endpoint).
    pub(crate) fn new(options: StreamingOptions, producer: S3Producer) -> Self {
        StreamingUpload {
            name: format!(
                "aws2-s3 streaming upload to {}/{}",
                producer.bucket(),
                options.key_name
            ),
            options,
            producer,
            state: Mutex::new(State::Idle),
        }
    }

    /// The context is stopping: the open object is stored now, and every body after it
    /// as soon as it arrives, so no exchange waits for a count or a timeout that the stop
    /// would outlast. (A task started later waits again: the context was started anew.)
    pub(crate) fn store_without_waiting(&self) {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let State::Running(running) = &*state {
            running.closing.notify_one();
        }
    }

    /// Appends `body` and waits until it is in the open object (`None`), or until the
    /// object holding it is stored (`streamingUploadAck=stored`).
    pub(crate) async fn append(&self, body: Bytes) -> Result<Option<Stored>, CamelError> {
        let appends = self.sender()?;
        let (reply, answer) = oneshot::channel();
        appends
            .send(Append { body, reply })
            .await
            .map_err(|_| self.stopped())?;
        answer.await.map_err(|_| self.stopped())?
    }

    fn sender(&self) -> Result<mpsc::Sender<Append>, CamelError> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match &*state {
            State::Running(running) => Ok(running.appends.clone()),
            State::Stopped => Err(self.stopped()),
            State::Idle => {
                let (appends, receiver) = mpsc::channel(QUEUE);
                let (stop, stopped) = oneshot::channel();
                let uploader = Uploader {
                    producer: self.producer.clone(),
                    options: self.options.clone(),
                    pattern: KeyPattern::new(&self.options.key_name),
                    next_number: None,
                };
                let closing = Arc::new(Notify::new());
                let task = tokio::spawn(uploader.run(receiver, stopped, closing.clone()));
                *state = State::Running(Running {
                    appends: appends.clone(),
                    stop,
                    closing,
                    task,
                });
                Ok(appends)
            }
        }
    }

    fn stopped(&self) -> CamelError {
        CamelError::processor(format!(
            "{}: stopped (the route is stopping); the message was not stored",
            self.name
        ))
    }
}

#[async_trait]
impl StepLifecycle for StreamingUpload {
    fn name(&self) -> &str {
        &self.name
    }

    async fn start(&self) -> Result<(), CamelError> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if matches!(*state, State::Stopped) {
            *state = State::Idle;
        }
        Ok(())
    }

    /// The route is stopping: its in-flight exchanges may be waiting for this object.
    fn intake_closed(&self) {
        self.store_without_waiting();
    }

    /// Stores the open object (and whatever was queued) before returning.
    async fn shutdown(&self, _reason: ShutdownReason) -> Result<(), CamelError> {
        let previous = std::mem::replace(
            &mut *self.state.lock().unwrap_or_else(PoisonError::into_inner),
            State::Stopped,
        );
        if let State::Running(running) = previous {
            // The task may have ended already; then there is nothing to tell it.
            let _ = running.stop.send(());
            drop(running.appends);
            running.task.await.map_err(|e| {
                CamelError::processor(format!("{}: its task failed: {e}", self.name))
            })?;
        }
        Ok(())
    }
}
