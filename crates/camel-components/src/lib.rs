//! The built-in components: `direct`, `seda`, `timer`, `once`, `scheduler`, `cron`,
//! `quartz`, `log`, `file`, `file-watch`, `stream`, `mock`.
//!
//! Each component is a [`camel_api::Component`] registered in the context by its scheme.
//! [`all`] returns one instance of each, ready to register; tests that assert on `mock:`
//! endpoints build their own [`MockComponent`], keep a clone, and register it with
//! [`all_with_mock`].
//!
//! The URI options of every component are listed in its module and in
//! `docs/components.md`, under Apache Camel's names (snake_case canonical, camelCase
//! accepted).

use std::sync::Arc;

use camel_api::{CamelError, Component, EndpointUri};

mod bare_context;
pub mod direct;
pub mod file;
pub mod file_watch;
pub mod log;
mod log_mask;
pub mod mock;
pub mod once;
pub mod schedule;
pub mod scheduler;
pub mod seda;
pub mod stream;
pub mod timer;

pub use bare_context::BareContext;
pub use direct::DirectComponent;
pub use file::{FileComponent, FileError};
pub use file_watch::FileWatchComponent;
pub use log::LogComponent;
pub use mock::{MockAssertionError, MockComponent, MockEndpoint};
pub use once::OnceComponent;
pub use schedule::{CronComponent, QuartzComponent};
pub use scheduler::SchedulerComponent;
pub use seda::SedaComponent;
pub use stream::StreamComponent;
pub use timer::TimerComponent;

#[cfg(test)]
mod testing;

/// One instance of every built-in component, with a fresh [`MockComponent`].
pub fn all() -> Vec<Arc<dyn Component>> {
    all_with_mock(&MockComponent::new())
}

/// One instance of every built-in component, with `mock` served by (a clone of) the
/// given [`MockComponent`], so a test can keep its handle and read the endpoints.
///
/// ```
/// use camel_components::{all_with_mock, MockComponent};
///
/// let mock = MockComponent::new();
/// let components = all_with_mock(&mock);
/// let schemes: Vec<&str> = components.iter().map(|c| c.scheme()).collect();
/// assert_eq!(schemes, ["direct", "seda", "timer", "once", "scheduler", "cron", "quartz", "log", "file", "file-watch", "stream", "mock"]);
/// ```
pub fn all_with_mock(mock: &MockComponent) -> Vec<Arc<dyn Component>> {
    vec![
        Arc::new(DirectComponent::new()),
        Arc::new(SedaComponent::new()),
        Arc::new(TimerComponent),
        Arc::new(OnceComponent),
        Arc::new(SchedulerComponent),
        Arc::new(CronComponent::new()),
        Arc::new(QuartzComponent::new()),
        Arc::new(LogComponent),
        Arc::new(FileComponent),
        Arc::new(FileWatchComponent),
        Arc::new(StreamComponent::new()),
        Arc::new(mock.clone()),
    ]
}

/// The name in `scheme:NAME`, refusing an empty one with an example of the right form.
pub(crate) fn endpoint_name(uri: &EndpointUri, example: &str) -> Result<String, CamelError> {
    match uri.path() {
        "" => Err(CamelError::invalid_uri(
            uri.raw(),
            format!("this endpoint needs a name, as in `{example}`"),
        )),
        name => Ok(name.to_string()),
    }
}
