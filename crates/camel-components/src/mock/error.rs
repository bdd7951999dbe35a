//! Why a mock endpoint's expectations were not met, with what was expected and what came.

/// A failed [`MockEndpoint::assert_is_satisfied`](super::MockEndpoint::assert_is_satisfied).
///
/// Messages are numbered from 1 in the order they arrived.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MockAssertionError {
    /// The number of messages is wrong.
    #[error("mock:{endpoint}: expected {expected} message(s), received {received}; bodies received: [{bodies}]")]
    MessageCount {
        /// The endpoint's name.
        endpoint: String,
        /// Messages expected.
        expected: usize,
        /// Messages received.
        received: usize,
        /// The bodies received, quoted, for the report.
        bodies: String,
    },
    /// Fewer messages than the minimum arrived.
    #[error("mock:{endpoint}: expected at least {expected} message(s), received {received}")]
    MinimumMessageCount {
        /// The endpoint's name.
        endpoint: String,
        /// The minimum expected.
        expected: usize,
        /// Messages received.
        received: usize,
    },
    /// A message's body differs from the expected one.
    #[error("mock:{endpoint}: message {index}: expected body {expected}, received {received}")]
    Body {
        /// The endpoint's name.
        endpoint: String,
        /// The message, counted from 1.
        index: usize,
        /// The body expected, quoted.
        expected: String,
        /// The body received, quoted, or `<missing>` when the message never came.
        received: String,
    },
    /// A message lacks a header or carries another value.
    #[error("mock:{endpoint}: message {index}: expected header `{name}` = {expected}, received {received}")]
    Header {
        /// The endpoint's name.
        endpoint: String,
        /// The message, counted from 1 (0 when no message came at all).
        index: usize,
        /// The header.
        name: String,
        /// The value expected, quoted.
        expected: String,
        /// The value received, quoted, or `<no such header>`.
        received: String,
    },
}
