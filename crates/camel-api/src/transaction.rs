//! Transactions shared by the steps of a `transacted` step.
//!
//! A component that owns a database (the outbox) offers a [`TransactionManager`] through
//! [`Component::transaction_manager`](crate::Component::transaction_manager). The
//! `transacted` step begins a [`Transaction`], runs its nested steps inside [`scope`], and
//! commits when they succeed or rolls back when one fails. A producer that can take part
//! looks at [`current`]: when the transaction is on its own database (same
//! [`Transaction::key`]) it writes through it instead of committing on its own.
//!
//! The transaction belongs to the task running the exchange, as a transaction belongs to
//! a thread in Camel: work the nested steps hand to other tasks is outside it unless that
//! step carries the scope over (see [`scope`]).

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

use crate::CamelError;

/// One open database transaction.
pub trait Transaction: Any + Send + Sync + fmt::Debug {
    /// Which database it is on; producers join only a transaction with their own key.
    fn key(&self) -> &str;

    /// Commits (after the nested steps succeeded).
    fn commit(self: Arc<Self>) -> BoxFuture<'static, Result<(), CamelError>>;

    /// Rolls back (after a nested step failed).
    fn rollback(self: Arc<Self>) -> BoxFuture<'static, Result<(), CamelError>>;

    /// For producers to reach their own transaction type.
    fn as_any(&self) -> &dyn Any;
}

/// Begins transactions on one database.
pub trait TransactionManager: Send + Sync + fmt::Debug {
    /// The key of the database (see [`Transaction::key`]).
    fn key(&self) -> &str;

    /// Begins a transaction.
    fn begin(&self) -> BoxFuture<'static, Result<Arc<dyn Transaction>, CamelError>>;
}

tokio::task_local! {
    static CURRENT: Arc<dyn Transaction>;
}

/// Runs `f` with `transaction` as the [`current`] one.
pub async fn scope<F: Future>(transaction: Arc<dyn Transaction>, f: F) -> F::Output {
    CURRENT.scope(transaction, f).await
}

/// The transaction of the `transacted` step this code runs in, if any.
pub fn current() -> Option<Arc<dyn Transaction>> {
    CURRENT.try_with(Arc::clone).ok()
}
