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
    let mut requests = 0u64;
    while let Some(range) = pending.pop() {
        requests += 1;
        let slice = &entries[range.clone()];
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
        match outcome {
            SendOutcome::Answered(answers) if answers.len() == range.len() => {
                for (slot, answer) in results[range].iter_mut().zip(answers) {
                    *slot = Some(answer);
                }
            }
            SendOutcome::Answered(answers) => {
                let e: CamelError = SinkError::ResultCountMismatch {
                    sink: sink.to_string(),
                    expected: range.len(),
                    got: answers.len(),
                }
                .into();
                fill(&mut results[range], &e);
            }
            SendOutcome::Refused(_) if bisect && range.len() > 1 => {
                let mid = range.start + range.len() / 2;
                pending.push(mid..range.end);
                pending.push(range.start..mid);
            }
            SendOutcome::Refused(e) | SendOutcome::Failed(e) => fill(&mut results[range], &e),
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

fn fill(slots: &mut [Option<EntryResult>], e: &CamelError) {
    for slot in slots {
        *slot = Some(Err(e.clone()));
    }
}
