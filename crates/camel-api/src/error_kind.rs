//! Error kinds: the names an `on_exception` or `do_catch` list matches against a
//! [`CamelError`] (ADR 0052).
//!
//! Camel matches Java exception classes by their type hierarchy. We have no classes, so
//! every error has a kind name, a few Java-style names it also answers to (its
//! "ancestors"), and `Exception`/`Throwable` match everything. A listed name is compared by
//! its last dotted segment, so `java.io.IOException` and `IOException` are the same.
//!
//! The closest match wins: an exact kind (distance 0) beats an ancestor (distance 1, 2, …)
//! beats the catch-all (`Exception`, `Throwable`); among equals, the first declared wins.
//!
//! ```
//! use camel_api::{error_kind::distance, CamelError};
//! let e = CamelError::user("java.lang.IllegalArgumentException", "bad");
//! assert_eq!(e.kind_name(), "IllegalArgumentException");
//! assert_eq!(distance(&e, "IllegalArgumentException"), Some(0));
//! assert_eq!(distance(&e, "java.lang.RuntimeException"), Some(1));
//! assert!(distance(&e, "java.lang.Exception").unwrap() > 1);
//! assert_eq!(distance(&e, "java.io.IOException"), None);
//! ```

use crate::CamelError;

/// The distance of the catch-all names (`Exception`, `Throwable`): farther than any
/// ancestor.
pub const CATCH_ALL: usize = 100;

/// Header: true once an exchange was redelivered.
pub const REDELIVERED: &str = "CamelRedelivered";
/// Header: how many redeliveries were made so far.
pub const REDELIVERY_COUNTER: &str = "CamelRedeliveryCounter";
/// Header: the most redeliveries the policy allows (−1: forever).
pub const REDELIVERY_MAX_COUNTER: &str = "CamelRedeliveryMaxCounter";
/// Property: the message of the error an error handler took off the exchange.
pub const EXCEPTION_CAUGHT: &str = "CamelExceptionCaught";
/// Property: the kind name of that error.
pub const EXCEPTION_KIND: &str = "CamelExceptionKind";
/// Property: the path of the step that failed.
pub const FAILURE_ENDPOINT: &str = "CamelFailureEndpoint";
/// Property: the id of the route where the exchange failed.
pub const FAILURE_ROUTE_ID: &str = "CamelFailureRouteId";
/// Property: whether the error handler handled the failure.
pub const ERROR_HANDLER_HANDLED: &str = "CamelErrorHandlerHandled";
/// Property: `true` on an exchange whose message its broker had delivered before
/// (RabbitMQ's `redelivered` flag, an SQS receive count above 1, a JetStream delivery
/// count above 1), as Camel's consumers set it; counted in
/// `camel_exchanges_external_redeliveries_total`.
pub const EXTERNAL_REDELIVERED: &str = "CamelExternalRedelivered";

/// The last dotted segment of a (Java) class name.
pub fn simple_name(name: &str) -> &str {
    let name = name.trim();
    name.rsplit('.').next().unwrap_or(name)
}

/// The kind name of `e`.
pub(crate) fn kind_name(e: &CamelError) -> &str {
    names(e).0
}

/// The kind name, the other names at distance 0, and the ancestors in order.
fn names(e: &CamelError) -> (&str, &'static [&'static str], &'static [&'static str]) {
    const RUNTIME: &[&str] = &["RuntimeException"];
    match e {
        CamelError::User { kind, .. } => (kind, &[], RUNTIME),
        CamelError::Processor(_) => ("ProcessorException", &["Processor"], RUNTIME),
        CamelError::Expression(_) => ("ExpressionEvaluationException", &["Expression"], RUNTIME),
        CamelError::Conversion { .. } => ("TypeConversionException", &["Conversion"], RUNTIME),
        CamelError::UnknownComponent { .. } => {
            ("NoSuchEndpointException", &["UnknownComponent"], RUNTIME)
        }
        CamelError::InvalidUri { .. } => {
            ("ResolveEndpointFailedException", &["InvalidUri"], RUNTIME)
        }
        CamelError::NoConsumer { .. } => (
            "DirectConsumerNotAvailableException",
            &["NoConsumer"],
            RUNTIME,
        ),
        CamelError::RetryAfter { .. } => (
            "RetryAfterException",
            &["RetryAfter"],
            &["RejectedExecutionException", "RuntimeException"],
        ),
        CamelError::Timeout(_) => ("TimeoutException", &["Timeout"], &[]),
        CamelError::Overloaded(_) => ("RejectedExecutionException", &["Overloaded"], RUNTIME),
        CamelError::Stopping(_) => (
            "StoppingException",
            &["Stopping"],
            &["RejectedExecutionException", "RuntimeException"],
        ),
        CamelError::Io(_) => ("IOException", &["Io"], &[]),
        CamelError::Validation { .. } => (
            "PredicateValidationException",
            &["Validation"],
            &["ValidationException", "CamelExchangeException"],
        ),
        CamelError::External { .. } => ("ExternalException", &["External"], &[]),
        #[allow(unreachable_patterns)]
        _ => ("Exception", &[], &[]),
    }
}

/// How far `name` (a kind or Java class name) is from `e`: `Some(0)` for its own kind,
/// `Some(n)` for its n-th ancestor, [`CATCH_ALL`] for `Exception`/`Throwable`, `None`
/// when it does not match.
pub fn distance(e: &CamelError, name: &str) -> Option<usize> {
    let name = simple_name(name);
    let (kind, same, ancestors) = names(e);
    if kind == name || same.contains(&name) {
        return Some(0);
    }
    if let Some(i) = ancestors.iter().position(|a| *a == name) {
        return Some(i + 1);
    }
    matches!(name, "Exception" | "Throwable").then_some(CATCH_ALL)
}

/// The closest of several `exception` lists to `e`: the index of the winning list (the
/// first declared among equals) and its distance.
pub fn closest<'a, I, L>(e: &CamelError, lists: I) -> Option<usize>
where
    I: IntoIterator<Item = L>,
    L: IntoIterator<Item = &'a str>,
{
    let mut best: Option<(usize, usize)> = None;
    for (i, list) in lists.into_iter().enumerate() {
        let d = list.into_iter().filter_map(|n| distance(e, n)).min();
        if let Some(d) = d {
            if best.is_none_or(|(_, b)| d < b) {
                best = Some((i, d));
            }
        }
    }
    best.map(|(i, _)| i)
}

/// The error and its sources, one per line: what `${exception.stacktrace}` shows in
/// place of a Java stack trace.
pub fn chain(error: &CamelError) -> String {
    let mut out = format!("{}: {error}", error.kind_name());
    let mut source = std::error::Error::source(error);
    while let Some(s) = source {
        out.push_str(&format!("\ncaused by: {s}"));
        source = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_names_match_by_last_segment() {
        let io = CamelError::from(std::io::Error::other("disk"));
        assert_eq!(distance(&io, "java.io.IOException"), Some(0));
        assert_eq!(distance(&io, "Io"), Some(0));
        assert_eq!(distance(&io, "java.lang.Throwable"), Some(CATCH_ALL));
        assert_eq!(distance(&io, "RuntimeException"), None);
    }

    #[test]
    fn closest_list_wins_first_among_equals() {
        let e = CamelError::user("IllegalArgumentException", "x");
        let lists: Vec<Vec<&str>> = vec![
            vec!["java.lang.Exception"],
            vec!["RuntimeException"],
            vec!["IOException", "IllegalArgumentException"],
            vec!["IllegalArgumentException"],
        ];
        assert_eq!(
            closest(&e, lists.iter().map(|l| l.iter().copied())),
            Some(2)
        );
        let none: Vec<Vec<&str>> = vec![vec!["IOException"]];
        assert_eq!(closest(&e, none.iter().map(|l| l.iter().copied())), None);
    }

    #[test]
    fn retry_after_is_a_rejection() {
        let e = CamelError::RetryAfter {
            ms: 5,
            reason: crate::RetryReason::Bytes,
        };
        assert_eq!(distance(&e, "RejectedExecutionException"), Some(1));
        assert_eq!(e.kind_name(), "RetryAfterException");
    }
}
