//! One supervised request: send, map the answer back, bisect a refusal.
//!
//! Runs in its own task so a slow, hung or panicking codec never blocks the batcher
//! loop; the batcher learns the outcome (or the panic) from the task's join.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use camel_api::CamelError;

use super::error::SinkError;
use crate::codec::{BatchCodec, Entry, EntryResult, SendOutcome};

/// What one batch cost and how each entry fared.
#[derive(Debug)]
pub(crate) struct Report {
    /// One result per entry, in batch order.
    pub(crate) results: Vec<EntryResult>,
    /// Requests made, the first included.
    pub(crate) requests: u64,
    /// Extra requests made to isolate refused entries.
    pub(crate) bisections: u64,
}

/// Sends `entries` as one request; when the destination refuses the whole request and
/// the codec allows it, sends each half again (first half first, so a group's entries
/// keep their order) until the refused entry stands alone.
pub(crate) async fn drive<C: BatchCodec>(
    codec: Arc<C>,
    entries: Vec<Entry>,
    timeout: Duration,
    sink: Arc<str>,
) -> Report {
    let mut results: Vec<Option<EntryResult>> = vec![None; entries.len()];
    // Ranges still to send, last = next; the whole batch first.
    let mut pending: Vec<Range<usize>> = Vec::with_capacity(8);
    pending.push(0..entries.len());
    let bisect = codec.bisect_refused();
    let strict = codec.strict_group_order();
    // Groups with a failed entry so far (strict order only).
    let mut failed: Vec<Arc<str>> = Vec::new();
    let mut requests = 0u64;
    while let Some(range) = pending.pop() {
        if !failed.is_empty() {
            if let Some(runs) = withhold(&entries, range.clone(), &failed, &mut results, &sink) {
                pending.extend(runs.into_iter().rev());
                continue;
            }
        }
        requests += 1;
        let slice = &entries[range.clone()];
        let span = camel_api::trace::tracer().map(|t| request_span(t, codec.name(), &sink, slice));
        let outcome = match tokio::time::timeout(timeout, codec.send_batch(slice)).await {
            Ok(outcome) => outcome,
            Err(_) => SendOutcome::Failed(
                SinkError::SendTimedOut {
                    sink: sink.to_string(),
                    timeout,
                }
                .into(),
            ),
        };
        if let Some(span) = span {
            end_request_span(span, &outcome);
        }
        match outcome {
            SendOutcome::Answered(answers) if answers.len() == range.len() => {
                for (slot, answer) in results[range.clone()].iter_mut().zip(answers) {
                    *slot = Some(answer);
                }
                if strict {
                    order_first(
                        &entries[range.clone()],
                        &mut results[range],
                        &mut failed,
                        &sink,
                    );
                }
            }
            SendOutcome::Answered(answers) => {
                let e: CamelError = SinkError::ResultCountMismatch {
                    sink: sink.to_string(),
                    expected: range.len(),
                    got: answers.len(),
                }
                .into();
                fill(&mut results[range.clone()], &e);
                if strict {
                    note_failed(&entries[range], &mut failed);
                }
            }
            SendOutcome::Refused(_) if bisect && range.len() > 1 => {
                let mid = range.start + range.len() / 2;
                pending.push(mid..range.end);
                pending.push(range.start..mid);
            }
            SendOutcome::Refused(e) | SendOutcome::Failed(e) => {
                fill(&mut results[range.clone()], &e);
                if strict {
                    note_failed(&entries[range], &mut failed);
                }
            }
        }
    }
    Report {
        results: results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(CamelError::processor("entry left without result"))))
            .collect(),
        requests,
        bisections: requests - 1,
    }
}

/// The span of one request when a tracer is installed: a producer span of a trace of its
/// own, linked to the span of every caller whose entry it carries (their `traceparent`
/// attribute), as OpenTelemetry models a batch publish. Each entry still carries its own
/// caller's context to the destination, so a consumer continues the caller's trace.
fn request_span(
    tracer: &dyn camel_api::trace::Tracer,
    system: &str,
    sink: &str,
    entries: &[Entry],
) -> Box<dyn camel_api::trace::ActiveSpan> {
    use camel_api::trace::{AttributeValue, SpanContext, SpanKind, SpanStart, TRACEPARENT};
    let links: Vec<SpanContext> = entries
        .iter()
        .filter_map(|e| {
            e.attributes
                .iter()
                .find(|(n, _)| n.as_ref() == TRACEPARENT)
                .and_then(|(_, v)| SpanContext::parse(v))
        })
        .collect();
    let name = format!("{system} send");
    // OpenTelemetry's names for the systems; a codec of its own keeps its short name.
    let messaging_system = match system {
        "sqs" => "aws_sqs",
        "pubsub" => "gcp_pubsub",
        other => other,
    };
    tracer.start(SpanStart {
        name: &name,
        kind: SpanKind::Producer,
        parent: None,
        links: &links,
        attributes: &[
            ("messaging.system", AttributeValue::Str(messaging_system)),
            ("messaging.operation.type", AttributeValue::Str("send")),
            (
                "messaging.batch.message_count",
                AttributeValue::Int(i64::try_from(entries.len()).unwrap_or(i64::MAX)),
            ),
            ("camel.sink", AttributeValue::Str(sink)),
        ],
    })
}

/// Ends a request's span: failed when the whole request failed or was refused; an
/// answered request is complete (each entry's own result goes to its caller).
fn end_request_span(span: Box<dyn camel_api::trace::ActiveSpan>, outcome: &SendOutcome) {
    use camel_api::trace::SpanOutcome;
    match outcome {
        SendOutcome::Answered(_) => span.end(SpanOutcome::Completed),
        SendOutcome::Refused(e) | SendOutcome::Failed(e) => span.end(SpanOutcome::Failed {
            kind: e.kind_name(),
            message: &e.to_string(),
        }),
    }
}

/// Strict order: an entry answered with success after a failed entry of its group (in
/// this request or an earlier one of the batch) fails too, and its group is noted.
fn order_first(
    entries: &[Entry],
    results: &mut [Option<EntryResult>],
    failed: &mut Vec<Arc<str>>,
    sink: &str,
) {
    for (entry, slot) in entries.iter().zip(results) {
        let Some(group) = &entry.group else {
            continue;
        };
        let group_failed = failed.contains(group);
        match slot {
            Some(Err(_)) if !group_failed => failed.push(group.clone()),
            Some(Ok(_)) if group_failed => {
                *slot = Some(Err(SinkError::EarlierEntryFailed {
                    sink: sink.to_string(),
                    group: group.to_string(),
                    sent: true,
                }
                .into()));
            }
            _ => {}
        }
    }
}

/// Strict order: notes the groups of entries that all failed.
fn note_failed(entries: &[Entry], failed: &mut Vec<Arc<str>>) {
    for group in entries.iter().filter_map(|e| e.group.as_ref()) {
        if !failed.contains(group) {
            failed.push(group.clone());
        }
    }
}

/// Strict order: fails, unsent, the entries of `range` whose group already failed and
/// returns the runs of the others still to send, in order; `None` when the range has no
/// such entry (send it as it is).
fn withhold(
    entries: &[Entry],
    range: Range<usize>,
    failed: &[Arc<str>],
    results: &mut [Option<EntryResult>],
    sink: &str,
) -> Option<Vec<Range<usize>>> {
    let of_failed_group = |i: usize| {
        entries[i]
            .group
            .as_ref()
            .is_some_and(|g| failed.contains(g))
    };
    if !range.clone().any(of_failed_group) {
        return None;
    }
    let mut runs = Vec::new();
    let mut start = range.start;
    for i in range.clone() {
        if of_failed_group(i) {
            if start < i {
                runs.push(start..i);
            }
            start = i + 1;
            let group = entries[i].group.as_deref().unwrap_or_default().to_string();
            results[i] = Some(Err(SinkError::EarlierEntryFailed {
                sink: sink.to_string(),
                group,
                sent: false,
            }
            .into()));
        }
    }
    if start < range.end {
        runs.push(start..range.end);
    }
    Some(runs)
}

fn fill(slots: &mut [Option<EntryResult>], e: &CamelError) {
    for slot in slots {
        *slot = Some(Err(e.clone()));
    }
}
