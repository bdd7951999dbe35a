//! `stream:in`, `stream:out`, `stream:err` — the process's standard streams as endpoints
//! (Camel's camel-stream).
//!
//! `to: stream:out` writes the body to standard output, `stream:err` to standard error,
//! each followed by a line break (unless `append_new_line=false`); an empty body writes
//! nothing. `from: stream:in` reads standard input and sends one exchange per line (the
//! line without its break; text when it is UTF-8, else bytes), with the headers
//! `CamelStreamIndex` (0 for the first exchange) and `CamelStreamComplete`. As in Camel,
//! standard input is not read ahead, so `CamelStreamComplete` is `true` on every line;
//! with `group_lines` it is `true` only on the group sent at the end of the input. At
//! the end of the input the consumer is done; the route stays up until it is stopped.
//!
//! A line longer than [`MAX_LINE_BYTES`] is dropped with a warning, not held: what a
//! stream sends cannot make the process hold more than a few such lines. Only UTF-8 is
//! read and written. Camel's other kinds (`stream:file`, `stream:http`, `stream:header`)
//! and `scan_stream` (reading on past the end, like `tail -f`) are not supported yet.
//!
//! # URI options
//!
//! | Option | Default | Meaning |
//! |---|---|---|
//! | `delay` | `0` (ms) | `in`: wait this long after each exchange; `out`/`err`: before each write. |
//! | `append_new_line` | `true` | `out`/`err`: write a line break after the body. |
//! | `prompt_message` | none | `in`: text written to standard output before each line is read. |
//! | `prompt_delay` | `0` (ms) | `in`: wait before each prompt. |
//! | `initial_prompt_delay` | `2000` (ms) | `in`: wait before the first prompt (instead of `prompt_delay`). |
//! | `group_lines` | `0` | `in`: send this many lines as one exchange, joined by `\n`; `0` sends each line. |
//! | `encoding` | `UTF-8` | Only UTF-8 is accepted. |
//! | `read_line` | `true` | Only line mode is supported. |
//!
//! ```
//! use camel_api::{Component, EndpointUri, Exchange};
//! use camel_components::{BareContext, StreamComponent};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let uri = EndpointUri::parse("stream:out").unwrap();
//! let endpoint = StreamComponent::new().endpoint(uri, &BareContext).unwrap();
//! let out = endpoint.producer().unwrap().process(Exchange::new("hello")).await.unwrap();
//! assert_eq!(out.message.body.as_text().as_deref(), Some("hello"));
//! # }
//! ```

mod consumer;
mod input;
mod producer;

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use camel_api::{
    BoxProcessor, CamelError, Component, ComponentContext, Consumer, Endpoint, EndpointUri,
};

use input::Input;
pub use input::MAX_LINE_BYTES;

/// Header with the index of the exchange, 0 for the first.
pub const STREAM_INDEX: &str = "CamelStreamIndex";
/// Header saying whether the exchange holds the last of the stream.
pub const STREAM_COMPLETE: &str = "CamelStreamComplete";

const OPTIONS: &[&str] = &[
    "delay",
    "append_new_line",
    "prompt_message",
    "prompt_delay",
    "initial_prompt_delay",
    "group_lines",
    "encoding",
    "read_line",
];
const DEFAULT_INITIAL_PROMPT_DELAY: Duration = Duration::from_millis(2000);
/// Camel's options that belong to kinds or modes not supported here.
const REFUSED: &[(&str, &str)] = &[
    (
        "scan_stream",
        "reading on past the end of the input (`scan_stream`)",
    ),
    (
        "scan_stream_delay",
        "reading on past the end of the input (`scan_stream_delay`)",
    ),
    ("retry", "reopening a stream (`retry`)"),
    ("file_watcher", "watching a stream's file (`file_watcher`)"),
    ("file_name", "`stream:file`"),
    ("http_url", "`stream:http`"),
    ("http_headers", "`stream:http`"),
    (
        "group_strategy",
        "a custom group strategy (`group_strategy`)",
    ),
];

/// A place bodies are written to.
pub(super) type Output = Arc<Mutex<Box<dyn Write + Send>>>;

/// The `stream` component: standard input, output and error (or, for tests and embedding,
/// streams of the caller's choosing).
#[derive(Clone)]
pub struct StreamComponent {
    input: Arc<Input>,
    out: Output,
    err: Output,
}

impl std::fmt::Debug for StreamComponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamComponent").finish_non_exhaustive()
    }
}

impl StreamComponent {
    /// On the process's standard streams.
    pub fn new() -> Self {
        StreamComponent {
            input: Input::stdin(),
            out: Arc::new(Mutex::new(Box::new(std::io::stdout()))),
            err: Arc::new(Mutex::new(Box::new(std::io::stderr()))),
        }
    }

    /// `stream:in` reads `input`, `stream:out` writes to `out`, `stream:err` to `err`.
    pub fn with_streams(
        input: impl Read + Send + 'static,
        out: impl Write + Send + 'static,
        err: impl Write + Send + 'static,
    ) -> Self {
        StreamComponent {
            input: Input::new(Box::new(input)),
            out: Arc::new(Mutex::new(Box::new(out))),
            err: Arc::new(Mutex::new(Box::new(err))),
        }
    }
}

impl Default for StreamComponent {
    fn default() -> Self {
        Self::new()
    }
}

/// What a stream endpoint reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    In,
    Out,
    Err,
}

/// The consumer's options.
#[derive(Clone, Debug)]
struct ReadOptions {
    delay: Duration,
    prompt: Option<Arc<str>>,
    prompt_delay: Duration,
    initial_prompt_delay: Duration,
    /// 0 = one exchange per line.
    group_lines: usize,
}

impl Component for StreamComponent {
    fn scheme(&self) -> &str {
        "stream"
    }

    fn endpoint(
        &self,
        mut uri: EndpointUri,
        _ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let raw = uri.raw();
        let bad = |reason: String| CamelError::invalid_uri(raw.clone(), reason);
        // `uri: stream` with `kind` in `parameters`, as Kaoto writes it.
        let path = match uri.path() {
            "" => uri.parameters.take_str("kind").unwrap_or_default(),
            path => path.to_string(),
        };
        let kind = match path.as_str() {
            "in" => Kind::In,
            "out" => Kind::Out,
            "err" => Kind::Err,
            "file" | "http" | "header" => {
                return Err(bad(format!(
                    "`stream:{path}` is a Camel stream kind that camel-rs does not support yet \
                     (use `stream:in`, `stream:out` or `stream:err`; `file:` reads and writes files)"
                )))
            }
            "" => return Err(bad("this endpoint needs a kind: `stream:in`, `stream:out` or `stream:err`".into())),
            other => return Err(bad(format!("unknown stream kind `{other}`: use `in`, `out` or `err`"))),
        };
        let p = &mut uri.parameters;
        for (option, what) in REFUSED {
            if p.contains(option) {
                return Err(bad(format!(
                    "{what} is a Camel stream feature that camel-rs does not support yet"
                )));
            }
        }
        if let Some(encoding) = p.take_str("encoding") {
            let name = encoding.to_ascii_lowercase().replace(['-', '_'], "");
            if name != "utf8" {
                return Err(bad(format!(
                    "parameter `encoding` = `{encoding}`: only UTF-8 is supported"
                )));
            }
        }
        if p.take_bool("read_line")? == Some(false) {
            return Err(bad(
                "reading the whole stream as one body (`read_line=false`) is not supported yet"
                    .into(),
            ));
        }
        let delay = p.take_duration("delay")?.unwrap_or(Duration::ZERO);
        let append_new_line = p.take_bool("append_new_line")?.unwrap_or(true);
        let read = ReadOptions {
            delay,
            prompt: p.take_str("prompt_message").map(Into::into),
            prompt_delay: p.take_duration("prompt_delay")?.unwrap_or(Duration::ZERO),
            initial_prompt_delay: p
                .take_duration("initial_prompt_delay")?
                .unwrap_or(DEFAULT_INITIAL_PROMPT_DELAY),
            group_lines: p.take::<usize>("group_lines")?.unwrap_or(0),
        };
        uri.parameters.finish(OPTIONS)?;
        Ok(Arc::new(StreamEndpoint {
            uri: raw,
            kind,
            read,
            write: producer::WriteOptions {
                delay,
                append_new_line,
            },
            streams: self.clone(),
        }))
    }
}

#[derive(Debug)]
struct StreamEndpoint {
    uri: Arc<str>,
    kind: Kind,
    read: ReadOptions,
    write: producer::WriteOptions,
    streams: StreamComponent,
}

impl Endpoint for StreamEndpoint {
    fn uri(&self) -> &str {
        &self.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        let out = match self.kind {
            Kind::Out => self.streams.out.clone(),
            Kind::Err => self.streams.err.clone(),
            Kind::In => {
                return Err(CamelError::invalid_uri(
                    self.uri.clone(),
                    "`stream:in` can only start a route (`from`); write with `stream:out` or `stream:err`",
                ))
            }
        };
        Ok(producer::producer(out, self.write.clone()))
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        if self.kind != Kind::In {
            return Err(CamelError::invalid_uri(
                self.uri.clone(),
                "only `stream:in` can start a route (`from`)",
            ));
        }
        Ok(Box::new(consumer::StreamConsumer {
            uri: self.uri.clone(),
            input: self.streams.input.clone(),
            prompt_out: self.streams.out.clone(),
            options: self.read.clone(),
        }))
    }
}

#[cfg(test)]
mod tests;
