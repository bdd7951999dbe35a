//! What a compiled route reports to while it runs: the backlog tracer's hooks, the route
//! and step spans, and the metrics timers.
//!
//! Below both the compiler, which wraps each step with them, and the context, which
//! configures and reads them; neither of the two is used from here.

pub(crate) mod backlog;
pub mod metrics;
pub(crate) mod traced;
