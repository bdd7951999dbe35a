//! What a consumer says about its source while it runs: a route can be started and yet
//! take nothing in, because its database or broker is unreachable. The consumer says so
//! here, the route controller reads it, and `/health` shows it.
//!
//! ```
//! use camel_api::ConsumerHealth;
//! let health = ConsumerHealth::default();
//! health.set_failing("database unreachable");
//! assert_eq!(health.failing().as_deref(), Some("database unreachable"));
//! health.set_healthy();
//! assert_eq!(health.failing(), None);
//! ```

use std::sync::{Arc, Mutex};

/// Healthy, or failing with a reason. Shared by a consumer and its route controller.
#[derive(Debug, Default)]
pub struct ConsumerHealth {
    /// `None` while healthy. Written rarely (on a change of state), read by `/health`.
    failing: Mutex<Option<Arc<str>>>,
}

impl ConsumerHealth {
    /// Marks the consumer as failing: it runs but cannot take anything in.
    pub fn set_failing(&self, reason: impl std::fmt::Display) {
        *self.lock() = Some(reason.to_string().into());
    }

    /// Marks the consumer as healthy again.
    pub fn set_healthy(&self) {
        *self.lock() = None;
    }

    /// The reason it is failing, or `None` while healthy.
    pub fn failing(&self) -> Option<Arc<str>> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Arc<str>>> {
        // The value is replaced whole, so a poisoned lock still holds a valid one.
        self.failing.lock().unwrap_or_else(|p| p.into_inner())
    }
}
