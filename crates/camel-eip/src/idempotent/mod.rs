//! The Idempotent Consumer EIP: `steps` run once per message id; a duplicate is skipped
//! (or, with `skip_duplicate: false`, run with `CamelDuplicateMessage = true`).
//!
//! With `completion_eager: false` (Camel's default) the id is completed — confirmed, or
//! forgotten when the exchange failed — when the route is done with the exchange, through
//! its [`unit of work`](crate::unit_of_work); without an open unit (the processor used on
//! its own, as below) it completes when the steps return, as with `completion_eager: true`.
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use camel_api::{BoxProcessor, CamelError, Exchange, Expression, Value};
//! use camel_eip::idempotent::{IdempotentConsumer, IdempotentOptions, MemoryIdempotentRepository};
//!
//! #[derive(Debug)]
//! struct Id;
//! impl Expression for Id {
//!     fn evaluate(&self, ex: &Exchange) -> Result<Value, CamelError> {
//!         Ok(ex.header("id").cloned().unwrap_or_default())
//!     }
//! }
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), CamelError> {
//! let runs = Arc::new(AtomicUsize::new(0));
//! let counter = runs.clone();
//! let steps = BoxProcessor::sync(move |ex: Exchange| {
//!     counter.fetch_add(1, Ordering::SeqCst);
//!     Ok(ex)
//! });
//! let repo = Arc::new(MemoryIdempotentRepository::new(100));
//! let step = IdempotentConsumer::new(Arc::new(Id), repo, steps, IdempotentOptions::default());
//! for id in ["a", "b", "a"] {
//!     step.process(Exchange::new("x").with_header("id", id)).await?;
//! }
//! assert_eq!(runs.load(Ordering::SeqCst), 2);
//! # Ok(()) }
//! ```

mod repository;

use std::sync::Arc;

use camel_api::{
    BoxExpression, BoxProcessor, CamelError, Exchange, Process, ProcessorFuture, Value,
};
use tracing::warn;

pub use repository::{
    IdempotentRepository, MemoryIdempotentRepository, SharedIdempotentRepository,
};

/// The property set to `true` on a duplicate (when it is not skipped).
pub const DUPLICATE_MESSAGE: &str = "CamelDuplicateMessage";

/// Options of an idempotent consumer (Camel's defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdempotentOptions {
    /// Record the id before the steps run, so a concurrent duplicate is caught.
    pub eager: bool,
    /// Skip the steps for a duplicate.
    pub skip_duplicate: bool,
    /// Forget the id when the steps fail.
    pub remove_on_failure: bool,
    /// Complete (confirm the id, or forget it after a failure) when the steps return;
    /// `false` (Camel's default) completes when the route is done with the exchange, so a
    /// failure after the block also forgets the id (see [`crate::unit_of_work`]).
    pub completion_eager: bool,
}

impl Default for IdempotentOptions {
    fn default() -> Self {
        IdempotentOptions {
            eager: true,
            skip_duplicate: true,
            remove_on_failure: true,
            completion_eager: false,
        }
    }
}

impl From<&crate::config::IdempotentConsumer> for IdempotentOptions {
    fn from(c: &crate::config::IdempotentConsumer) -> Self {
        let d = IdempotentOptions::default();
        IdempotentOptions {
            eager: c.eager.unwrap_or(d.eager),
            skip_duplicate: c.skip_duplicate.unwrap_or(d.skip_duplicate),
            remove_on_failure: c.remove_on_failure.unwrap_or(d.remove_on_failure),
            completion_eager: c.completion_eager,
        }
    }
}

#[derive(Debug)]
struct Inner {
    id: BoxExpression,
    repository: SharedIdempotentRepository,
    steps: BoxProcessor,
    options: IdempotentOptions,
}

/// An idempotent consumer over `steps`.
#[derive(Clone, Debug)]
pub struct IdempotentConsumer(Arc<Inner>);

impl IdempotentConsumer {
    /// Runs `steps` once per value of `id`, remembered in `repository`.
    pub fn new(
        id: BoxExpression,
        repository: SharedIdempotentRepository,
        steps: BoxProcessor,
        options: IdempotentOptions,
    ) -> Self {
        IdempotentConsumer(Arc::new(Inner {
            id,
            repository,
            steps,
            options,
        }))
    }

    /// Handles one exchange.
    pub async fn process(&self, ex: Exchange) -> Result<Exchange, CamelError> {
        self.0.clone().run(ex).await
    }

    /// As a route processor.
    pub fn into_processor(self) -> BoxProcessor {
        BoxProcessor::new(self)
    }
}

impl Process for IdempotentConsumer {
    fn process(&self, exchange: Exchange) -> ProcessorFuture {
        ProcessorFuture::boxed(self.0.clone().run(exchange))
    }
}

impl Inner {
    async fn run(self: Arc<Self>, mut ex: Exchange) -> Result<Exchange, CamelError> {
        let id = match self.id.evaluate(&ex)? {
            Value::Null => None,
            v => v
                .as_str()
                .map(str::to_string)
                .or_else(|| Some(v.to_json().to_string())),
        }
        .filter(|id| !id.is_empty())
        .ok_or_else(|| {
            CamelError::user(
                "NoMessageIdException",
                "idempotent_consumer: the message id expression gave no value",
            )
        })?;
        let duplicate = if self.options.eager {
            !self.repository.add(&id).await?
        } else {
            self.repository.contains(&id).await?
        };
        if duplicate {
            ex.properties.insert(DUPLICATE_MESSAGE, true);
            if self.options.skip_duplicate {
                return Ok(ex);
            }
            return self.steps.process(ex).await;
        }
        match self.steps.process(ex).await {
            Ok(done) => {
                if !self.options.completion_eager {
                    let (this, deferred_id) = (self.clone(), id.clone());
                    let deferred = crate::unit_of_work::on_done(move |failed| {
                        Box::pin(async move {
                            if let Err(e) = this.complete(&deferred_id, failed).await {
                                warn!(error = %e, "idempotent_consumer: could not complete a message id at the end of its exchange");
                            }
                        })
                    });
                    if deferred.is_ok() {
                        return Ok(done);
                    }
                    // No unit of work here: complete at the end of the block.
                }
                self.complete(&id, false).await?;
                Ok(done)
            }
            Err(e) => {
                self.forget_failed(&id).await;
                Err(e)
            }
        }
    }

    /// Completes `id` once its exchange (or, with `completion_eager`, its block) is done:
    /// a success records and confirms it; a failure forgets it (`eager` and
    /// `remove_on_failure`).
    async fn complete(&self, id: &str, failed: bool) -> Result<(), CamelError> {
        if failed {
            self.forget_failed(id).await;
            return Ok(());
        }
        if !self.options.eager {
            self.repository.add(id).await?;
        }
        self.repository.confirm(id).await
    }

    async fn forget_failed(&self, id: &str) {
        if self.options.eager && self.options.remove_on_failure {
            if let Err(r) = self.repository.remove(id).await {
                warn!(error = %r, "idempotent_consumer: could not forget a failed message id; a redelivery will be seen as a duplicate");
            }
        }
    }
}
