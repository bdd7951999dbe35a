//! The bridge from the framework's span hook to the OpenTelemetry SDK.

use std::borrow::Cow;

use camel_api::trace::{self, ActiveSpan, AttributeValue, SpanOutcome, SpanStart};
use opentelemetry::trace::{
    Link, Span as _, SpanContext, SpanId, SpanKind, Status, TraceContextExt, TraceFlags, TraceId,
    TraceState, Tracer as _,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::{SdkTracer, Span};

/// Makes SDK spans for the routes.
pub(crate) struct OtelTracer {
    tracer: SdkTracer,
    step_spans: bool,
}

impl OtelTracer {
    pub(crate) fn new(tracer: SdkTracer, step_spans: bool) -> Self {
        OtelTracer { tracer, step_spans }
    }
}

impl std::fmt::Debug for OtelTracer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtelTracer")
            .field("step_spans", &self.step_spans)
            .finish_non_exhaustive()
    }
}

fn remote(context: &trace::SpanContext, state: Option<&str>) -> SpanContext {
    let flags = if context.sampled {
        TraceFlags::SAMPLED
    } else {
        TraceFlags::default()
    };
    // A `tracestate` the SDK does not accept is dropped, as a malformed one must be.
    let state = state
        .and_then(|s| s.parse::<TraceState>().ok())
        .unwrap_or_default();
    SpanContext::new(
        TraceId::from_bytes(context.trace_id),
        SpanId::from_bytes(context.span_id),
        flags,
        true,
        state,
    )
}

fn kind(kind: trace::SpanKind) -> SpanKind {
    match kind {
        trace::SpanKind::Server => SpanKind::Server,
        trace::SpanKind::Client => SpanKind::Client,
        trace::SpanKind::Producer => SpanKind::Producer,
        trace::SpanKind::Consumer => SpanKind::Consumer,
        trace::SpanKind::Internal => SpanKind::Internal,
    }
}

fn attribute(key: &'static str, value: AttributeValue<'_>) -> KeyValue {
    match value {
        AttributeValue::Str(s) => KeyValue::new(key, s.to_string()),
        AttributeValue::Bool(b) => KeyValue::new(key, b),
        AttributeValue::Int(i) => KeyValue::new(key, i),
    }
}

impl trace::Tracer for OtelTracer {
    fn start(&self, span: SpanStart<'_>) -> Box<dyn ActiveSpan> {
        let parent = match span.parent {
            Some((caller, state)) => {
                Context::new().with_remote_span_context(remote(&caller, state))
            }
            None => Context::new(),
        };
        let builder = self
            .tracer
            .span_builder(Cow::Owned(span.name.to_string()))
            .with_kind(kind(span.kind))
            .with_attributes(span.attributes.iter().map(|(k, v)| attribute(k, *v)))
            .with_links(
                span.links
                    .iter()
                    .map(|l| Link::with_context(remote(l, None)))
                    .collect(),
            );
        Box::new(OtelSpan(self.tracer.build_with_context(builder, &parent)))
    }

    fn step_spans(&self) -> bool {
        self.step_spans
    }
}

struct OtelSpan(Span);

impl std::fmt::Debug for OtelSpan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("OtelSpan").field(&self.context()).finish()
    }
}

impl ActiveSpan for OtelSpan {
    fn context(&self) -> trace::SpanContext {
        let c = self.0.span_context();
        trace::SpanContext {
            trace_id: c.trace_id().to_bytes(),
            span_id: c.span_id().to_bytes(),
            sampled: c.is_sampled(),
        }
    }

    fn end(mut self: Box<Self>, outcome: SpanOutcome<'_>) {
        let span = &mut self.0;
        match outcome {
            SpanOutcome::Completed => {
                span.set_attribute(KeyValue::new("camel.outcome", "completed"))
            }
            SpanOutcome::Stopped => span.set_attribute(KeyValue::new("camel.outcome", "stopped")),
            SpanOutcome::Failed { kind, message } => {
                span.set_attribute(KeyValue::new("camel.outcome", "failed"));
                span.set_attribute(KeyValue::new("error", true));
                span.set_attribute(KeyValue::new("error.type", kind.to_string()));
                span.set_attribute(KeyValue::new("exception.message", message.to_string()));
                span.set_status(Status::error(message.to_string()));
            }
        }
        span.end();
    }
}
