//! Claim check: park a message and take it back later, leaving the route free to carry
//! something smaller in between (Camel's `claimCheck`).
//!
//! - `Set` stores the exchange's message (body and headers) under a key (a `simple`
//!   template), replacing what was there; `Get` merges it back and keeps it;
//!   `GetAndRemove` merges it back and forgets it. Keys are shared by every route of the
//!   context, so one route can check in what another checks out.
//! - `Push` and `Pop` use a stack of the exchange's own (Camel keeps its repository on
//!   the exchange): `Pop` merges back the last message pushed by the same exchange.
//! - `filter` chooses what is merged back (see [`MergeFilter`]); by default the stored
//!   body replaces the body and the stored headers are set over the current ones.
//!
//! Getting a key that holds nothing leaves the exchange as it is (as in Camel). The store
//! is in memory and bounded ([`DEFAULT_CLAIM_CAPACITY`] claims): a `Set` or `Push` that
//! would pass the bound fails the exchange with `CamelError::Overloaded` rather than
//! growing without limit (ADR 0062).
//!
//! ```
//! use std::sync::Arc;
//! use camel_api::{Body, Exchange};
//! use camel_eip::claim_check::{ClaimCheck, ClaimCheckStore, MergeFilter};
//! use camel_eip::config::ClaimCheckOperation as Op;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let store = Arc::new(ClaimCheckStore::default());
//! let key = Some(camel_language::constant("order-1"));
//! let set = ClaimCheck::new(Op::Set, key.clone(), MergeFilter::default(), store.clone());
//! let get = ClaimCheck::new(Op::GetAndRemove, key, MergeFilter::default(), store.clone());
//! let ex = set.into_processor().process(Exchange::new("big payload")).await.unwrap();
//! let mut ex = ex;
//! ex.message.body = Body::from("small");
//! let out = get.into_processor().process(ex).await.unwrap();
//! assert_eq!(out.message.body, Body::from("big payload"));
//! assert_eq!(store.len(), 0);
//! # }
//! ```

mod filter;
mod store;

use std::sync::Arc;

use camel_api::{BoxExpression, BoxProcessor, CamelError, Exchange, Process, ProcessorFuture};

pub use filter::MergeFilter;
pub use store::{ClaimCheckStore, DEFAULT_CLAIM_CAPACITY};

use crate::config::ClaimCheckOperation;
use crate::layer::StepLayer;

/// The claim check step.
#[derive(Clone, Debug)]
pub struct ClaimCheck {
    operation: ClaimCheckOperation,
    key: Option<BoxExpression>,
    filter: Arc<MergeFilter>,
    store: Arc<ClaimCheckStore>,
}

impl ClaimCheck {
    /// A claim check doing `operation` with the key `key` evaluates to (`Set`, `Get` and
    /// `GetAndRemove` need one; without it they use the exchange id).
    pub fn new(
        operation: ClaimCheckOperation,
        key: Option<BoxExpression>,
        filter: MergeFilter,
        store: Arc<ClaimCheckStore>,
    ) -> Self {
        ClaimCheck {
            operation,
            key,
            filter: Arc::new(filter),
            store,
        }
    }

    /// The step as a route processor.
    pub fn into_processor(self) -> BoxProcessor {
        BoxProcessor::new(self).named("claim_check")
    }

    /// The step as a tower layer.
    pub fn layer(self) -> StepLayer {
        StepLayer::new(self.into_processor())
    }

    fn key(&self, ex: &Exchange) -> Result<String, CamelError> {
        match &self.key {
            Some(key) => Ok(key.evaluate(ex)?.to_string()),
            None => Ok(ex.id.to_string()),
        }
    }

    fn apply(&self, mut ex: Exchange) -> Result<Exchange, CamelError> {
        let claimed = match self.operation {
            ClaimCheckOperation::Set => {
                self.store.set(self.key(&ex)?, ex.message.clone())?;
                None
            }
            ClaimCheckOperation::Get => self.store.get(&self.key(&ex)?),
            ClaimCheckOperation::GetAndRemove => self.store.take(&self.key(&ex)?),
            ClaimCheckOperation::Push => {
                self.store.push(ex.id, ex.message.clone())?;
                None
            }
            ClaimCheckOperation::Pop => self.store.pop(ex.id),
        };
        if let Some(message) = claimed {
            self.filter.merge(&mut ex.message, message);
        }
        Ok(ex)
    }
}

impl Process for ClaimCheck {
    fn process(&self, exchange: Exchange) -> ProcessorFuture {
        ProcessorFuture::ready(self.apply(exchange))
    }
}
