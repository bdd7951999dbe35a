use std::fmt;
use std::sync::Arc;

use crate::redact::redact_url;

/// Why a bounded queue refused a delivery.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RetryReason {
    /// The queue holds its maximum number of entries.
    Entries,
    /// The queue holds its maximum number of bytes.
    Bytes,
    /// The sender's tenant holds its maximum number of entries.
    Tenant,
    /// Another bound, named by the component.
    Other,
}

impl fmt::Display for RetryReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RetryReason::Entries => "entries",
            RetryReason::Bytes => "bytes",
            RetryReason::Tenant => "tenant",
            RetryReason::Other => "other",
        })
    }
}

/// A failed expression parse or evaluation, with where it happened.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{language} expression `{expression}`: {message} (at column {column})")]
pub struct ExpressionError {
    /// The language (`simple`, `jsonpath`, …).
    pub language: String,
    /// The expression text.
    pub expression: String,
    /// 1-based column within the expression text where the problem is.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// The error of every processor, endpoint and route.
///
/// Cheap to clone, so one failure can be handed to many waiters.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CamelError {
    /// A processor failed; the message says why.
    #[error("{0}")]
    Processor(Arc<str>),
    /// An expression failed to parse or evaluate.
    #[error(transparent)]
    Expression(#[from] ExpressionError),
    /// A value could not be converted to the requested type.
    #[error("cannot convert to {target}: {reason}")]
    Conversion {
        /// The target type.
        target: &'static str,
        /// Why.
        reason: Arc<str>,
    },
    /// No component is registered for a URI scheme.
    #[error("no component for scheme `{scheme}` (in `{}`){}", redact_url(.uri), did_you_mean(.suggestion))]
    UnknownComponent {
        /// The full URI.
        uri: Arc<str>,
        /// The scheme.
        scheme: Arc<str>,
        /// The nearest registered scheme.
        suggestion: Option<Arc<str>>,
    },
    /// A URI or one of its parameters is invalid.
    #[error("invalid endpoint `{}`: {reason}", redact_url(.uri))]
    InvalidUri {
        /// The URI.
        uri: Arc<str>,
        /// Why.
        reason: Arc<str>,
    },
    /// A synchronous endpoint has no consumer attached.
    #[error("no consumer is attached to `{}`", redact_url(.uri))]
    NoConsumer {
        /// The URI.
        uri: Arc<str>,
    },
    /// A bounded queue refused the delivery; try again after `ms` milliseconds.
    #[error("refused, retry after {ms} ms ({reason} bound reached)")]
    RetryAfter {
        /// Suggested wait in milliseconds.
        ms: u64,
        /// Which bound refused.
        reason: RetryReason,
    },
    /// An operation exceeded its deadline.
    #[error("timed out: {0}")]
    Timeout(Arc<str>),
    /// A service at capacity refused the call at once instead of queueing it (load
    /// shedding); the caller may retry later.
    #[error("overloaded: {0}")]
    Overloaded(Arc<str>),
    /// The route or component is stopping and takes no more work.
    #[error("stopping: {0}")]
    Stopping(Arc<str>),
    /// An I/O failure.
    #[error("i/o: {0}")]
    Io(Arc<std::io::Error>),
    /// An HTTP call answered with a status outside the producer's success range
    /// (`throw_exception_on_failure`); an error handler can match the status.
    #[error("HTTP operation failed invoking {} with status {status}", redact_url(.uri))]
    HttpOperationFailed {
        /// The URI called (redacted when shown).
        uri: Arc<str>,
        /// The response status code.
        status: u16,
        /// The status line's reason phrase.
        status_text: Arc<str>,
        /// The response body as text (capped by the producer).
        body: Arc<str>,
    },
    /// A failure reported by an external system.
    #[error("{context}: {source}")]
    External {
        /// What was being done.
        context: Arc<str>,
        /// The cause.
        source: Arc<dyn std::error::Error + Send + Sync>,
    },

    /// A `validate` step's predicate did not hold (Camel's `PredicateValidationException`).
    #[error("validation failed for predicate `{predicate}`")]
    Validation {
        /// The predicate's text, as written in the route.
        predicate: Arc<str>,
    },

    // --- error handling (ADR 0052) ---
    /// A failure of a kind the route names itself: raised by a `throw_exception` step or
    /// a Rust processor ([`CamelError::user`]), matched by `on_exception`/`do_catch`.
    #[error("{kind}: {message}")]
    User {
        /// The kind name (`IllegalArgumentException`, `OrderRejected`); a Java class name
        /// is kept by its last segment.
        kind: Arc<str>,
        /// What went wrong.
        message: Arc<str>,
    },
}

fn did_you_mean(s: &Option<Arc<str>>) -> String {
    match s {
        Some(s) => format!("; did you mean `{s}`?"),
        None => String::new(),
    }
}

impl CamelError {
    /// A processor failure with a message.
    pub fn processor(message: impl fmt::Display) -> Self {
        CamelError::Processor(message.to_string().into())
    }

    /// A conversion failure.
    pub fn conversion(target: &'static str, reason: impl fmt::Display) -> Self {
        CamelError::Conversion {
            target,
            reason: reason.to_string().into(),
        }
    }

    /// An invalid URI or parameter.
    pub fn invalid_uri(uri: impl Into<Arc<str>>, reason: impl fmt::Display) -> Self {
        // Stored redacted, so neither Display nor Debug can show a credential.
        let uri: Arc<str> = uri.into();
        CamelError::InvalidUri {
            uri: redact_url(&uri).into(),
            reason: reason.to_string().into(),
        }
    }

    /// A failure of an external system.
    pub fn external(
        context: impl fmt::Display,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        CamelError::External {
            context: context.to_string().into(),
            source: Arc::new(source),
        }
    }
}

// --- error handling (ADR 0052) ---
impl CamelError {
    /// A failure of a kind the route can name in `on_exception`/`do_catch`. A Java class
    /// name (`java.lang.IllegalArgumentException`) is kept by its last segment.
    pub fn user(kind: impl AsRef<str>, message: impl fmt::Display) -> Self {
        CamelError::User {
            kind: crate::error_kind::simple_name(kind.as_ref()).into(),
            message: message.to_string().into(),
        }
    }

    /// The kind name of this error, as `exception:` lists match it.
    pub fn kind_name(&self) -> &str {
        crate::error_kind::kind_name(self)
    }

    /// The message of this error without its kind (Camel's `exception.message`).
    pub fn message(&self) -> String {
        match self {
            CamelError::User { message, .. } => message.to_string(),
            CamelError::Processor(m) => m.to_string(),
            other => other.to_string(),
        }
    }
}

impl From<std::io::Error> for CamelError {
    fn from(e: std::io::Error) -> Self {
        CamelError::Io(Arc::new(e))
    }
}
