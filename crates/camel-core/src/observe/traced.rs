//! One span per exchange per route, when a tracer is installed (ADR 0123).
//!
//! [`RouteTrace::wrap`] looks for a [`camel_api::trace::Tracer`] when a route's pipeline
//! is stored (at add, start and swap). Without one the pipeline is returned as it is:
//! nothing is added on the exchange's path. With one, each exchange:
//!
//! 1. has its W3C headers read and cleaned ([`take_incoming`]): a valid `traceparent`
//!    becomes the span's parent (a link instead, for a `seda:` source, whose hop is
//!    asynchronous), anything malformed or oversized is dropped;
//! 2. runs with `traceparent` naming the route's span, so a producer injects it and a
//!    `direct:` route called from here becomes its child;
//! 3. runs inside a `tracing` span carrying `trace_id` and `span_id`, so log lines
//!    (`--log-format json`) can be joined to the trace;
//! 4. gets `traceparent` put back as it came in when it leaves the route, so a calling
//!    route's later producers inject the caller's span, not this ended one.

use std::sync::Arc;

use camel_api::trace::{
    self, AttributeValue, SpanContext, SpanKind, SpanOutcome, SpanStart, Tracer, TRACEPARENT,
};
use camel_api::{BoxProcessor, CamelError, Exchange, Process, ProcessorFuture, Value};

/// What a route's spans say about the route, made once when it is added.
#[derive(Clone, Debug)]
pub(crate) struct RouteTrace(Arc<RouteFacts>);

#[derive(Debug)]
struct RouteFacts {
    route_id: Arc<str>,
    /// The source URI without credentials (Camel's `camel.uri`).
    uri: String,
    scheme: String,
    /// Camel's `component` attribute: `camel-` and the scheme.
    component: String,
    kind: SpanKind,
    /// The caller's span is linked, not the parent: the source is an asynchronous hop.
    link: bool,
}

impl RouteTrace {
    pub(crate) fn new(route_id: &str, from_uri: &str) -> Self {
        let scheme = from_uri
            .split_once(':')
            .map_or(from_uri, |(scheme, _)| scheme)
            .to_ascii_lowercase();
        let kind = match scheme.as_str() {
            "platform-http" | "rest" | "http" | "https" | "netty-http" | "jetty" | "undertow" => {
                SpanKind::Server
            }
            "direct" | "timer" | "scheduler" | "quartz" | "cron" => SpanKind::Internal,
            _ => SpanKind::Consumer,
        };
        RouteTrace(Arc::new(RouteFacts {
            route_id: route_id.into(),
            uri: camel_api::redact_url(from_uri).to_string(),
            component: format!("camel-{scheme}"),
            link: scheme == "seda",
            scheme,
            kind,
        }))
    }

    /// `pipeline`, wrapped to make a span per exchange when a tracer is installed.
    pub(crate) fn wrap(&self, pipeline: BoxProcessor) -> BoxProcessor {
        match trace::tracer() {
            Some(tracer) => BoxProcessor::new(Traced {
                inner: pipeline,
                route: self.clone(),
                tracer,
            }),
            None => pipeline,
        }
    }
}

struct Traced {
    inner: BoxProcessor,
    route: RouteTrace,
    tracer: &'static dyn Tracer,
}

impl Process for Traced {
    fn process(&self, mut exchange: Exchange) -> ProcessorFuture {
        let facts = &*self.route.0;
        let headers = &mut exchange.message.headers;
        let incoming = trace::take_incoming(headers);
        let came_with = headers.get(TRACEPARENT).cloned();
        let exchange_id = exchange.id.to_string();
        let (parent, links) = match incoming.parent {
            Some(caller) if facts.link => (None, vec![caller]),
            Some(caller) => (Some((caller, incoming.tracestate.as_deref())), Vec::new()),
            None => (None, Vec::new()),
        };
        let span = self.tracer.start(SpanStart {
            name: &facts.route_id,
            kind: facts.kind,
            parent,
            links: &links,
            attributes: &[
                ("camel.route.id", AttributeValue::Str(&facts.route_id)),
                ("camel.exchange.id", AttributeValue::Str(&exchange_id)),
                ("camel.uri", AttributeValue::Str(&facts.uri)),
                ("component", AttributeValue::Str(&facts.component)),
                ("url.scheme", AttributeValue::Str(&facts.scheme)),
            ],
        });
        let current = span.context();
        trace::set_current(&mut exchange.message.headers, Some(&current));
        // At ERROR level so that a filter of `warn` or `error` still keeps the ids on
        // the events worth joining to a trace.
        let log_span = tracing::error_span!(
            "exchange",
            route_id = %facts.route_id,
            exchange_id = %exchange_id,
            trace_id = %current.trace_id_hex(),
            span_id = %current.span_id_hex(),
        );
        let entered = log_span.enter();
        let processed = self.inner.process(exchange);
        drop(entered);
        let ended = Ended { span, came_with };
        match processed {
            ProcessorFuture::Ready(Some(result)) => ProcessorFuture::ready(ended.finish(result)),
            ProcessorFuture::Ready(None) => {
                ended.span.end(SpanOutcome::Completed);
                ProcessorFuture::Ready(None)
            }
            ProcessorFuture::Pending(pending) => ProcessorFuture::boxed(async move {
                use tracing::Instrument;
                ended.finish(pending.instrument(log_span).await)
            }),
        }
    }
}

/// `step` wrapped to make a span of its own per exchange when the installed tracer asks
/// for step spans (issue 26; `camel run --otel-step-spans`); otherwise `step` as it is.
/// The span is a child of the span `traceparent` names when the step runs (the route's,
/// or the enclosing step's), named after the step's id, with Camel's `camel.step.id` and
/// the step's kind as `camel.step.kind`; while the step runs `traceparent` names it, so a
/// producer inside the step injects the step's span.
pub(crate) fn wrap_step_span(
    step: BoxProcessor,
    route_id: &str,
    id: &str,
    kind: &str,
) -> BoxProcessor {
    match trace::tracer() {
        Some(tracer) if tracer.step_spans() => BoxProcessor::new(StepSpan {
            inner: step,
            tracer,
            route_id: route_id.into(),
            id: id.into(),
            kind: kind.into(),
        })
        .named("step-span"),
        _ => step,
    }
}

struct StepSpan {
    inner: BoxProcessor,
    tracer: &'static dyn Tracer,
    route_id: Arc<str>,
    id: Arc<str>,
    kind: Arc<str>,
}

impl Process for StepSpan {
    fn process(&self, mut exchange: Exchange) -> ProcessorFuture {
        let came_with = exchange.message.headers.get(TRACEPARENT).cloned();
        // No context (a step removed the headers): the step runs without a span.
        let Some(parent) = came_with
            .as_ref()
            .and_then(|v| v.as_str())
            .and_then(SpanContext::parse)
        else {
            return self.inner.process(exchange);
        };
        let span = self.tracer.start(SpanStart {
            name: &self.id,
            kind: SpanKind::Internal,
            parent: Some((parent, None)),
            links: &[],
            attributes: &[
                ("camel.route.id", AttributeValue::Str(&self.route_id)),
                ("camel.step.id", AttributeValue::Str(&self.id)),
                ("camel.step.kind", AttributeValue::Str(&self.kind)),
            ],
        });
        trace::set_current(&mut exchange.message.headers, Some(&span.context()));
        let ended = Ended { span, came_with };
        match self.inner.process(exchange) {
            ProcessorFuture::Ready(Some(result)) => ProcessorFuture::ready(ended.finish(result)),
            ProcessorFuture::Ready(None) => {
                ended.span.end(SpanOutcome::Completed);
                ProcessorFuture::Ready(None)
            }
            ProcessorFuture::Pending(pending) => {
                ProcessorFuture::boxed(async move { ended.finish(pending.await) })
            }
        }
    }
}

/// What is left to do when the route is done with the exchange.
struct Ended {
    span: Box<dyn trace::ActiveSpan>,
    /// `traceparent` as the exchange came in with it (after cleaning).
    came_with: Option<Value>,
}

impl Ended {
    fn finish(self, result: Result<Exchange, CamelError>) -> Result<Exchange, CamelError> {
        match &result {
            Ok(ex) if ex.is_stopped() => self.span.end(SpanOutcome::Stopped),
            Ok(_) => self.span.end(SpanOutcome::Completed),
            Err(e) => self.span.end(SpanOutcome::Failed {
                kind: e.kind_name(),
                message: &e.to_string(),
            }),
        }
        result.map(|mut ex| {
            match self.came_with {
                Some(value) => ex.message.headers.insert(TRACEPARENT, value),
                None => trace::set_current(&mut ex.message.headers, None::<&SpanContext>),
            }
            ex
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_source_decides_kind_and_link() {
        let http = RouteTrace::new("r", "platform-http:/orders?user=a&password=secret");
        assert_eq!(http.0.kind, SpanKind::Server);
        assert!(!http.0.uri.contains("secret"), "{}", http.0.uri);
        assert_eq!(http.0.component, "camel-platform-http");
        let seda = RouteTrace::new("r", "seda:work");
        assert!(seda.0.link);
        assert_eq!(seda.0.kind, SpanKind::Consumer);
        assert_eq!(RouteTrace::new("r", "direct:a").0.kind, SpanKind::Internal);
    }
}
