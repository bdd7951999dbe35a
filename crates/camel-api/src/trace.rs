//! Trace context: the W3C `traceparent`, `tracestate` and `baggage` headers an exchange
//! carries across routes and transports, and the hook a tracing backend installs to make
//! spans (ADR 0123).
//!
//! The framework never depends on a tracing backend. A process that exports traces
//! installs one [`Tracer`] ([`install`]); routes started afterwards wrap their pipeline
//! so each exchange gets a span. Without one, nothing on an exchange's path looks at
//! these headers: they travel as any other header.
//!
//! The context travels as message headers under the W3C names, so every producer that
//! copies headers onto its transport (HTTP, Kafka, NATS, RabbitMQ, SQS, Pub/Sub, the
//! outbox's stored headers) injects it, and every consumer that maps transport headers
//! back extracts it. A route's span replaces `traceparent` with its own context while
//! the exchange is in the route, and puts back what was there when it leaves.
//!
//! ```
//! use camel_api::trace::SpanContext;
//!
//! let parent = SpanContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
//! let parent = parent.expect("a valid traceparent");
//! assert!(parent.sampled);
//! assert_eq!(parent.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
//! assert_eq!(SpanContext::parse("00-not-a-trace"), None);
//! ```

use std::fmt;
use std::sync::OnceLock;

use crate::{Headers, Value};

/// The W3C header with the caller's trace id and span id.
pub const TRACEPARENT: &str = "traceparent";
/// The W3C header with vendor-specific trace data, passed along unread.
pub const TRACESTATE: &str = "tracestate";
/// The W3C header with application key-value pairs, passed along unread.
pub const BAGGAGE: &str = "baggage";

/// The longest `tracestate` kept (the W3C limit); a longer one is dropped.
pub const MAX_TRACESTATE: usize = 512;
/// The longest `baggage` kept (the W3C limit); a longer one is dropped.
pub const MAX_BAGGAGE: usize = 8192;
/// The longest `traceparent` looked at: a future version may append fields, but nothing
/// this long is a trace context.
const MAX_TRACEPARENT: usize = 256;

/// Where a span sits in a trace: its trace id, its own id, and whether it is sampled.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpanContext {
    /// The trace's 16-byte id (never all zero).
    pub trace_id: [u8; 16],
    /// The span's 8-byte id (never all zero).
    pub span_id: [u8; 8],
    /// The `sampled` flag: the caller records this trace.
    pub sampled: bool,
}

impl SpanContext {
    /// Reads a `traceparent` value; `None` for anything malformed (never an error: the
    /// value comes from outside). Version `00` must be exactly 55 characters; a later
    /// version is read by its first four fields, as the W3C asks.
    pub fn parse(value: &str) -> Option<Self> {
        let value = value.trim();
        if value.len() < 55 || value.len() > MAX_TRACEPARENT {
            return None;
        }
        let b = value.as_bytes();
        let version = hex_byte(&b[0..2])?;
        let longer_ok = version != 0 && b.get(55).is_none_or(|c| *c == b'-');
        if version == 0xff || (value.len() != 55 && !longer_ok) {
            return None;
        }
        if b[2] != b'-' || b[35] != b'-' || b[52] != b'-' {
            return None;
        }
        let mut trace_id = [0u8; 16];
        for (i, byte) in trace_id.iter_mut().enumerate() {
            *byte = hex_byte(&b[3 + 2 * i..5 + 2 * i])?;
        }
        let mut span_id = [0u8; 8];
        for (i, byte) in span_id.iter_mut().enumerate() {
            *byte = hex_byte(&b[36 + 2 * i..38 + 2 * i])?;
        }
        let flags = hex_byte(&b[53..55])?;
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        Some(SpanContext {
            trace_id,
            span_id,
            sampled: flags & 1 == 1,
        })
    }

    /// The `traceparent` value (version `00`) naming this span as the parent.
    pub fn traceparent(&self) -> String {
        let mut out = String::with_capacity(55);
        out.push_str("00-");
        push_hex(&mut out, &self.trace_id);
        out.push('-');
        push_hex(&mut out, &self.span_id);
        out.push_str(if self.sampled { "-01" } else { "-00" });
        out
    }

    /// The trace id in lower-case hex (32 characters), as trace backends show it.
    pub fn trace_id_hex(&self) -> String {
        let mut out = String::with_capacity(32);
        push_hex(&mut out, &self.trace_id);
        out
    }

    /// The span id in lower-case hex (16 characters).
    pub fn span_id_hex(&self) -> String {
        let mut out = String::with_capacity(16);
        push_hex(&mut out, &self.span_id);
        out
    }
}

impl fmt::Debug for SpanContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.traceparent())
    }
}

fn hex_byte(two: &[u8]) -> Option<u8> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    Some(digit(two[0])? << 4 | digit(two[1])?)
}

fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0xf)] as char);
    }
}

/// The trace context an exchange arrived with, read from its headers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Incoming {
    /// The caller's span, when `traceparent` was valid.
    pub parent: Option<SpanContext>,
    /// The caller's `tracestate`, when `traceparent` was valid and it was within bounds.
    pub tracestate: Option<String>,
}

/// Reads the trace context of `headers` and leaves them holding only what may travel on:
/// the three W3C headers under their lower-case names, a malformed `traceparent` removed
/// (with its `tracestate`, which means nothing without it), an oversized `tracestate`
/// or `baggage` removed. Names are matched without regard to case (an HTTP consumer
/// writes `Traceparent`).
pub fn take_incoming(headers: &mut Headers) -> Incoming {
    let traceparent = take_text(headers, TRACEPARENT);
    let tracestate = take_text(headers, TRACESTATE);
    if let Some(baggage) = take_text(headers, BAGGAGE).filter(|b| b.len() <= MAX_BAGGAGE) {
        headers.insert(BAGGAGE, baggage);
    }
    let parent = traceparent.as_deref().and_then(SpanContext::parse);
    let tracestate = parent
        .and(tracestate)
        .filter(|s| s.len() <= MAX_TRACESTATE && s.bytes().all(|b| (0x20..0x7f).contains(&b)));
    if let Some(state) = &tracestate {
        headers.insert(TRACESTATE, state.clone());
    }
    if let Some(value) = traceparent.filter(|_| parent.is_some()) {
        headers.insert(TRACEPARENT, value);
    }
    Incoming { parent, tracestate }
}

/// Removes every spelling of `name`, returning the first textual value.
fn take_text(headers: &mut Headers, name: &str) -> Option<String> {
    let mut found = None;
    loop {
        let spelling = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(n, _)| n.to_string());
        let Some(spelling) = spelling else { break };
        let value = headers.remove(&spelling);
        if found.is_none() {
            // A broker's header may arrive as bytes.
            found = value
                .as_ref()
                .and_then(Value::as_utf8_text)
                .map(str::to_string);
        }
    }
    found
}

/// Sets `traceparent` to `span` (the context a producer called now injects), or removes
/// it when `span` is `None`.
pub fn set_current(headers: &mut Headers, span: Option<&SpanContext>) {
    match span {
        Some(span) => headers.insert(TRACEPARENT, span.traceparent()),
        None => {
            headers.remove(TRACEPARENT);
        }
    }
}

/// What the span describes, as OpenTelemetry's span kinds name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    /// A route fed by a request it answers (`platform-http`, `rest`).
    Server,
    /// A call to a remote service that answers (the `http` producer).
    Client,
    /// A message handed to a broker.
    Producer,
    /// A route fed by a broker or a queue.
    Consumer,
    /// Work inside the process (a `direct:` route, a step).
    Internal,
}

/// An attribute value.
#[derive(Clone, Copy, Debug)]
pub enum AttributeValue<'a> {
    /// Text.
    Str(&'a str),
    /// A flag.
    Bool(bool),
    /// A number.
    Int(i64),
}

/// What a backend needs to start a span.
#[derive(Debug)]
pub struct SpanStart<'a> {
    /// The span's name.
    pub name: &'a str,
    /// Its kind.
    pub kind: SpanKind,
    /// The parent span, with its `tracestate`; `None` starts a new trace.
    pub parent: Option<(SpanContext, Option<&'a str>)>,
    /// Spans this one is linked to without being their child (a `seda:` hop, a batch).
    pub links: &'a [SpanContext],
    /// Attributes known when the span starts.
    pub attributes: &'a [(&'static str, AttributeValue<'a>)],
}

/// How the work a span covers ended.
#[derive(Clone, Copy, Debug)]
pub enum SpanOutcome<'a> {
    /// It completed.
    Completed,
    /// A step stopped the exchange (a control signal, not a failure).
    Stopped,
    /// It failed with an error of `kind` ([`crate::CamelError::kind_name`]).
    Failed {
        /// The error's kind name.
        kind: &'a str,
        /// The error's message.
        message: &'a str,
    },
}

/// A span that has started; ending it (or dropping it) records it.
pub trait ActiveSpan: Send + fmt::Debug {
    /// Where this span sits: what a producer injects while it is current.
    fn context(&self) -> SpanContext;
    /// Ends the span with `outcome`.
    fn end(self: Box<Self>, outcome: SpanOutcome<'_>);
}

/// A tracing backend: makes the spans routes and components ask for.
pub trait Tracer: Send + Sync + fmt::Debug {
    /// Starts a span.
    fn start(&self, span: SpanStart<'_>) -> Box<dyn ActiveSpan>;
    /// True when every step of a route gets a span of its own, besides the route's.
    fn step_spans(&self) -> bool {
        false
    }
}

static TRACER: OnceLock<Box<dyn Tracer>> = OnceLock::new();

/// Installs the process's tracer, for routes started afterwards; `false` (and `tracer`
/// dropped) when one is installed already.
pub fn install(tracer: Box<dyn Tracer>) -> bool {
    TRACER.set(tracer).is_ok()
}

/// The installed tracer, if any.
#[inline]
pub fn tracer() -> Option<&'static dyn Tracer> {
    TRACER.get().map(|t| &**t)
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_traceparent_round_trips() {
        let parsed = SpanContext::parse(VALID).unwrap();
        assert_eq!(parsed.traceparent(), VALID);
        assert_eq!(parsed.span_id_hex(), "00f067aa0ba902b7");
        let unsampled = SpanContext::parse(&VALID.replace("-01", "-00")).unwrap();
        assert!(!unsampled.sampled);
    }

    #[test]
    fn malformed_traceparents_are_ignored() {
        for bad in [
            "",
            "garbage",
            &VALID.to_uppercase(),
            &VALID.replace("00f067aa0ba902b7", "0000000000000000"),
            &VALID.replace("4bf92f3577b34da6a3ce929d0e0e4736", &"0".repeat(32)),
            &format!("ff{}", &VALID[2..]),
            &format!("{VALID}-extra"),
            &VALID.replace('-', "_"),
            &"0".repeat(10_000),
        ] {
            assert_eq!(SpanContext::parse(bad), None, "{bad}");
        }
        // A later version may carry more fields after a dash.
        assert!(SpanContext::parse(&format!("01{}-more", &VALID[2..])).is_some());
    }

    #[test]
    fn incoming_headers_are_normalised_and_bounded() {
        let mut h = Headers::new();
        h.insert("Traceparent", VALID);
        h.insert("Tracestate", "vendor=1");
        h.insert("Baggage", "x".repeat(MAX_BAGGAGE + 1));
        let got = take_incoming(&mut h);
        assert_eq!(got.parent, SpanContext::parse(VALID));
        assert_eq!(got.tracestate.as_deref(), Some("vendor=1"));
        assert_eq!(h.get(TRACEPARENT).and_then(Value::as_str), Some(VALID));
        assert!(h.get("Traceparent").is_none());
        assert!(h.get(BAGGAGE).is_none(), "oversized baggage is dropped");

        let mut h = Headers::new();
        h.insert("traceparent", "00-broken");
        h.insert("tracestate", "vendor=1");
        h.insert("baggage", "k=v");
        assert_eq!(take_incoming(&mut h), Incoming::default());
        assert!(h.get(TRACEPARENT).is_none() && h.get(TRACESTATE).is_none());
        assert_eq!(h.get(BAGGAGE).and_then(Value::as_str), Some("k=v"));
    }
}
