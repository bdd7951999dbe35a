//! The split as a tower layer: the inner service is what each part goes through.

use tower::Layer;

use super::service::{Split, SplitOptions};

/// Wraps a service in a [`Split`]: every part of an exchange is one call of the service.
#[derive(Debug, Clone)]
pub struct SplitLayer {
    options: SplitOptions,
}

impl SplitLayer {
    /// A split configured by `options`.
    pub fn new(options: SplitOptions) -> Self {
        SplitLayer { options }
    }
}

impl<S> Layer<S> for SplitLayer {
    type Service = Split<S>;

    fn layer(&self, inner: S) -> Split<S> {
        Split::new(self.options.clone(), inner)
    }
}
