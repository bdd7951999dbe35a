//! `stream:in`: prompt, read a line, send it, wait `delay`, repeat until the input ends.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use camel_api::{Body, CamelError, Consumer, ConsumerContext, Exchange};

use super::input::{Input, Line, MAX_LINE_BYTES};
use super::{Output, ReadOptions, STREAM_COMPLETE, STREAM_INDEX};

pub(super) struct StreamConsumer {
    pub(super) uri: Arc<str>,
    pub(super) input: Arc<Input>,
    /// Where the prompt goes (standard output, as in Camel).
    pub(super) prompt_out: Output,
    pub(super) options: ReadOptions,
}

impl std::fmt::Debug for StreamConsumer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamConsumer")
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}

/// How sending one exchange ended.
enum Sent {
    Ok,
    Stopped,
}

impl StreamConsumer {
    async fn send(&self, ctx: &ConsumerContext, body: Body, index: u64, complete: bool) -> Sent {
        let exchange = Exchange::new(body)
            .with_header(STREAM_INDEX, index)
            .with_header(STREAM_COMPLETE, complete);
        match ctx.send(exchange).await {
            Ok(_) => Sent::Ok,
            Err(CamelError::Stopping(_)) => Sent::Stopped,
            Err(error) => {
                tracing::warn!(uri = %self.uri, index, %error, "stream:in exchange failed");
                Sent::Ok
            }
        }
    }

    fn prompt(&self, text: &str) {
        let written = self
            .prompt_out
            .lock()
            .map(|mut out| out.write_all(text.as_bytes()).and_then(|()| out.flush()));
        if let Ok(Err(error)) = written {
            tracing::warn!(uri = %self.uri, %error, "stream:in cannot write its prompt");
        }
    }
}

/// Sleeps `wait`; false when the route stopped first.
async fn pause(ctx: &ConsumerContext, wait: Duration) -> bool {
    if wait.is_zero() {
        return !ctx.is_cancelled();
    }
    tokio::select! {
        biased;
        () = ctx.cancelled() => false,
        () = tokio::time::sleep(wait) => true,
    }
}

fn body(line: Vec<u8>) -> Body {
    match String::from_utf8(line) {
        Ok(text) => Body::from(text),
        Err(e) => Body::from(e.into_bytes()),
    }
}

#[async_trait]
impl Consumer for StreamConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let o = &self.options;
        let mut index = 0u64;
        let mut group: Vec<Vec<u8>> = Vec::new();
        let mut first = true;
        loop {
            if let Some(prompt) = &o.prompt {
                let wait = if first {
                    o.initial_prompt_delay
                } else {
                    o.prompt_delay
                };
                if !pause(&ctx, wait).await {
                    return Ok(());
                }
                self.prompt(prompt);
            }
            first = false;
            let line = tokio::select! {
                biased;
                () = ctx.cancelled() => return Ok(()),
                line = self.input.next() => line,
            };
            let sent = match line {
                Line::Text(text) if o.group_lines == 0 => {
                    self.send(&ctx, body(text), index, true).await
                }
                Line::Text(text) => {
                    group.push(text);
                    if group.len() < o.group_lines {
                        continue;
                    }
                    let lines = std::mem::take(&mut group).join(&b'\n');
                    self.send(&ctx, body(lines), index, false).await
                }
                Line::TooLong(length) => {
                    tracing::warn!(uri = %self.uri, length, limit = MAX_LINE_BYTES,
                        "stream:in dropped a line longer than the limit");
                    continue;
                }
                Line::End | Line::Failed(_) => {
                    if let Line::Failed(error) = &line {
                        tracing::warn!(uri = %self.uri, %error, "stream:in cannot read on");
                    }
                    if !group.is_empty() {
                        let lines = std::mem::take(&mut group).join(&b'\n');
                        self.send(&ctx, body(lines), index, true).await;
                    }
                    return Ok(());
                }
            };
            index += 1;
            if matches!(sent, Sent::Stopped) || !pause(&ctx, o.delay).await {
                return Ok(());
            }
        }
    }
}
