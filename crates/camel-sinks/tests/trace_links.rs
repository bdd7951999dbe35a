//! With a tracer installed, one batch request is one producer span linked to the span of
//! every caller whose entry it carries, and each entry carries its own caller's
//! `traceparent` to the destination. Its own test binary: the tracer is process-wide.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use camel_api::trace::{self, ActiveSpan, SpanContext, SpanKind, SpanOutcome, SpanStart, Tracer};
use camel_api::Exchange;
use camel_sinks::memory::MemoryCodec;
use camel_sinks::{BatchConfig, BatcherRegistry, SinkOptions, SinkProducer};

#[derive(Debug, Clone)]
struct Started {
    name: String,
    kind: SpanKind,
    links: Vec<SpanContext>,
    count: Option<i64>,
}

#[derive(Debug, Default)]
struct Recording {
    started: Mutex<Vec<Started>>,
    ended: Mutex<Vec<String>>,
    next: AtomicU8,
}

#[derive(Debug)]
struct Span {
    context: SpanContext,
    name: String,
    recording: &'static Recording,
}

impl ActiveSpan for Span {
    fn context(&self) -> SpanContext {
        self.context
    }
    fn end(self: Box<Self>, outcome: SpanOutcome<'_>) {
        let outcome = match outcome {
            SpanOutcome::Completed => "completed".to_string(),
            SpanOutcome::Stopped => "stopped".to_string(),
            SpanOutcome::Failed { kind, .. } => format!("failed {kind}"),
        };
        self.recording
            .ended
            .lock()
            .unwrap()
            .push(format!("{} {outcome}", self.name));
    }
}

#[derive(Debug)]
struct RecordingTracer(&'static Recording);

impl Tracer for RecordingTracer {
    fn start(&self, span: SpanStart<'_>) -> Box<dyn ActiveSpan> {
        let count = span.attributes.iter().find_map(|(k, v)| match v {
            trace::AttributeValue::Int(n) if *k == "messaging.batch.message_count" => Some(*n),
            _ => None,
        });
        self.0.started.lock().unwrap().push(Started {
            name: span.name.to_string(),
            kind: span.kind,
            links: span.links.to_vec(),
            count,
        });
        let n = self.0.next.fetch_add(1, Ordering::Relaxed) + 1;
        Box::new(Span {
            context: SpanContext {
                trace_id: [0xee; 16],
                span_id: [n; 8],
                sampled: true,
            },
            name: span.name.to_string(),
            recording: self.0,
        })
    }
}

fn caller(n: u8) -> SpanContext {
    SpanContext {
        trace_id: [n; 16],
        span_id: [n + 0x10; 8],
        sampled: true,
    }
}

#[tokio::test(start_paused = true)]
async fn one_request_span_links_its_three_callers() {
    let recording: &'static Recording = Box::leak(Box::default());
    assert!(trace::install(Box::new(RecordingTracer(recording))));
    let codec = MemoryCodec::new("orders");
    let log = codec.log();
    let config = BatchConfig {
        max_entries: Some(3),
        // Only the third entry can send the batch: a short batch would wait an hour.
        linger: Duration::from_secs(3600),
        ..BatchConfig::default()
    };
    let sink = SinkProducer::new(
        codec,
        config,
        SinkOptions::default(),
        BatcherRegistry::new(),
    );
    let callers = [caller(1), caller(2), caller(3)];
    let deliveries = callers.iter().map(|c| {
        let ex = Exchange::new("order").with_header(trace::TRACEPARENT, c.traceparent());
        let sink = &sink;
        async move { sink.deliver(&ex).await }
    });
    for result in futures::future::join_all(deliveries).await {
        result.expect("delivered");
    }
    assert_eq!(log.request_count(), 1, "one request for the three callers");
    let carried: Vec<String> = log
        .accepted()
        .iter()
        .map(|e| {
            e.attributes
                .iter()
                .find(|(n, _)| n.as_ref() == trace::TRACEPARENT)
                .map(|(_, v)| v.to_string())
                .expect("each entry carries a traceparent")
        })
        .collect();
    let mut want: Vec<String> = callers.iter().map(SpanContext::traceparent).collect();
    let mut got = carried.clone();
    want.sort();
    got.sort();
    assert_eq!(got, want, "each entry carries its own caller's context");

    let started = recording.started.lock().unwrap().clone();
    assert_eq!(started.len(), 1, "{started:#?}");
    let request = &started[0];
    assert_eq!(request.name, "memory send");
    assert_eq!(request.kind, SpanKind::Producer);
    assert_eq!(request.count, Some(3));
    let mut linked = request.links.clone();
    linked.sort_by_key(|c| c.span_id);
    assert_eq!(linked, callers.to_vec(), "linked to the three callers");
    assert_eq!(
        *recording.ended.lock().unwrap(),
        vec!["memory send completed".to_string()]
    );
}
