//! The producer's own failures, carried as the source of a [`CamelError::External`]
//! (`camel_api::CamelError`) so a Rust error handler can downcast and match them.

/// Why the `http:` producer refused a call or its answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpProducerError {
    /// The response body is larger than the endpoint's `max_response_size`; reading stopped
    /// at the limit (or before any byte, when the server declared the length).
    #[error("the response body is larger than max_response_size ({limit} bytes)")]
    ResponseTooLarge {
        /// The endpoint's `max_response_size`.
        limit: usize,
    },
    /// `CamelHttpPath` has a `.` or `..` segment (also percent-encoded), which would take
    /// the call out of the endpoint's base path.
    #[error(
        "CamelHttpPath {path:?} has a `.` or `..` segment; it would leave the endpoint's path"
    )]
    PathLeavesBase {
        /// The header's value.
        path: String,
    },
}
