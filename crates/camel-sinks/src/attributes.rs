//! Which exchange headers travel as message attributes.
//!
//! Destinations cap attributes (SQS: 10) and a route's headers are mostly internal, so
//! a sink carries only the headers its `headers` parameter lists, and the W3C trace
//! context (`traceparent`, `tracestate`, `baggage`) whenever the exchange has one, so the
//! consumer at the other end continues the caller's trace (ADR 0123).

use std::sync::Arc;

use camel_api::trace::{BAGGAGE, TRACEPARENT, TRACESTATE};
use camel_api::{CamelError, Exchange, Parameters};

/// The W3C headers every sink carries, in the order they are added.
const TRACE_CONTEXT: [&str; 3] = [TRACEPARENT, TRACESTATE, BAGGAGE];

/// True for an attribute [`HeaderSelection::select`] added as trace context.
pub(crate) fn is_trace_context(name: &str) -> bool {
    TRACE_CONTEXT.contains(&name)
}

/// The headers a sink copies into message attributes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeaderSelection {
    names: Vec<Arc<str>>,
}

impl HeaderSelection {
    /// Takes the `headers` parameter: comma-separated header names.
    pub fn take_parameter(params: &mut Parameters) -> Result<Self, CamelError> {
        let names = params
            .take_str("headers")
            .map(|list| {
                list.split(',')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(Arc::from)
                    .collect()
            })
            .unwrap_or_default();
        Ok(HeaderSelection { names })
    }

    /// A selection of the given names.
    pub fn of(names: &[&str]) -> Self {
        HeaderSelection {
            names: names.iter().map(|n| Arc::from(*n)).collect(),
        }
    }

    /// Number of selected headers.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when no header is selected.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The selected headers present on `exchange`, as text, then the trace context
    /// headers present and not selected (always last, so a destination that caps
    /// attributes can drop them first: see [`is_trace_context`]).
    pub fn select(&self, exchange: &Exchange) -> Vec<(Arc<str>, Arc<str>)> {
        let mut out: Vec<(Arc<str>, Arc<str>)> = self
            .names
            .iter()
            .filter_map(|n| {
                exchange
                    .header(n)
                    .filter(|v| !v.is_null())
                    .map(|v| (n.clone(), Arc::from(v.to_string())))
            })
            .collect();
        for name in TRACE_CONTEXT {
            if self.names.iter().any(|n| n.as_ref() == name) {
                continue;
            }
            if let Some(v) = exchange.header(name).filter(|v| !v.is_null()) {
                out.push((Arc::from(name), Arc::from(v.to_string())));
            }
        }
        out
    }

    /// The selected names.
    #[cfg(feature = "sns")]
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(|n| n.as_ref())
    }

    /// The selected names, for a batch identity.
    pub fn joined(&self) -> String {
        self.names.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use camel_api::EndpointUri;

    #[test]
    fn selects_listed_headers_present_on_the_exchange() {
        let mut uri = EndpointUri::parse("x:y?headers=a, b,c").unwrap();
        let sel = HeaderSelection::take_parameter(&mut uri.parameters).unwrap();
        assert_eq!(sel.len(), 3);
        let ex = Exchange::new("x")
            .with_header("a", 1)
            .with_header("c", "z")
            .with_header("d", "no");
        assert_eq!(
            sel.select(&ex),
            vec![
                (Arc::from("a"), Arc::from("1")),
                (Arc::from("c"), Arc::from("z"))
            ]
        );
    }

    #[test]
    fn the_trace_context_travels_listed_or_not_after_the_listed_headers() {
        let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let ex = Exchange::new("x")
            .with_header("a", 1)
            .with_header(TRACEPARENT, tp)
            .with_header(BAGGAGE, "k=v");
        let none = HeaderSelection::default().select(&ex);
        assert_eq!(
            none,
            vec![
                (Arc::from(TRACEPARENT), Arc::from(tp)),
                (Arc::from(BAGGAGE), Arc::from("k=v"))
            ]
        );
        // Listed: once, in the listed place.
        let listed = HeaderSelection::of(&[BAGGAGE, "a"]).select(&ex);
        let names: Vec<&str> = listed.iter().map(|(n, _)| n.as_ref()).collect();
        assert_eq!(names, [BAGGAGE, "a", TRACEPARENT]);
        assert!(is_trace_context(TRACEPARENT) && !is_trace_context("a"));
    }
}
