//! `log:NAME` — log each exchange passing by, through `tracing`, and pass it on unchanged.
//!
//! The line reads like Camel's: `Exchange[Headers: {id=7}, BodyType: Text, Body: hello]`,
//! with the logger name as the structured field `logger` (and `exchange_id` beside it).
//! Nothing is formatted when the level is disabled, so a `log` step at `debug` costs one
//! level check in production. A log endpoint only produces: `from: log:…` is an error.
//!
//! # URI options
//!
//! | Option | Default | Meaning |
//! |---|---|---|
//! | `level` | `INFO` | `TRACE`, `DEBUG`, `INFO`, `WARN`, `ERROR` or `OFF`. |
//! | `show_all` | `false` | Show everything below. |
//! | `show_body` | `true` | Show the body. |
//! | `show_body_type` | `true` | Show the body's kind (`Empty`, `Bytes`, `Text`, `Json`). |
//! | `show_headers` | `false` | Show the headers. |
//! | `show_properties` | `false` | Show the exchange properties. |
//! | `show_exchange_id` | `false` | Show the exchange id. |
//! | `show_exchange_pattern` | `false` | Show `InOnly` / `InOut`. |
//! | `skip_body_line_separator` | `true` | Print a multi-line body on one line. |
//! | `max_chars` | `10000` | Cut the body after this many characters; `0` never cuts. |
//! | `multiline` | `false` | Each part (`Id: …`, `Headers: …`, `Body: …`) on a line of its own, as Camel lays it out. |
//! | `show_streams`, `show_cached_streams`, `show_files`, `show_future` | | Accepted without effect: Camel's switches for Java stream, file and future bodies, which a body here never is (it is always shown). |
//!
//! ```
//! use camel_api::{Component, EndpointUri, Exchange};
//! use camel_components::{BareContext, LogComponent};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let uri = EndpointUri::parse("log:orders?level=debug&showHeaders=true").unwrap();
//! let endpoint = LogComponent.endpoint(uri, &BareContext).unwrap();
//! let out = endpoint.producer().unwrap().process(Exchange::new("hi")).await.unwrap();
//! assert_eq!(out.message.body.as_text().as_deref(), Some("hi"));
//! # }
//! ```

use std::fmt::Write as _;
use std::sync::Arc;

use camel_api::{
    Body, BoxProcessor, CamelError, Component, ComponentContext, Endpoint, EndpointUri, Exchange,
    Headers,
};
use tracing::Level;

const OPTIONS: &[&str] = &[
    "level",
    "show_all",
    "show_body",
    "show_body_type",
    "show_headers",
    "show_properties",
    "show_exchange_id",
    "show_exchange_pattern",
    "skip_body_line_separator",
    "max_chars",
    "multiline",
    "log_mask",
    "show_streams",
    "show_cached_streams",
    "show_files",
    "show_future",
];
const DEFAULT_MAX_CHARS: usize = 10_000;

/// The `log` component. Stateless.
#[derive(Clone, Copy, Debug, Default)]
pub struct LogComponent;

/// What a log line shows.
#[derive(Clone, Debug)]
struct Format {
    body: bool,
    body_type: bool,
    headers: bool,
    properties: bool,
    exchange_id: bool,
    pattern: bool,
    one_line: bool,
    /// 0 = no limit.
    max_chars: usize,
    /// Each part on a line of its own.
    multiline: bool,
    /// Camel's `logMask`: values of secret-looking keys are masked.
    log_mask: bool,
}

impl Component for LogComponent {
    fn scheme(&self) -> &str {
        "log"
    }

    fn endpoint(
        &self,
        mut uri: EndpointUri,
        _ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let logger: Arc<str> = crate::endpoint_name(&uri, "log:orders")?.into();
        let p = &mut uri.parameters;
        let level =
            match p.take_choice("level", &["trace", "debug", "info", "warn", "error", "off"])? {
                Some("trace") => Some(Level::TRACE),
                Some("debug") => Some(Level::DEBUG),
                Some("warn") => Some(Level::WARN),
                Some("error") => Some(Level::ERROR),
                Some("off") => None,
                _ => Some(Level::INFO),
            };
        let all = p.take_bool("show_all")?.unwrap_or(false);
        let mut flag = |name: &str, default: bool| -> Result<bool, CamelError> {
            Ok(all || p.take_bool(name)?.unwrap_or(default))
        };
        let format = Format {
            body: flag("show_body", true)?,
            body_type: flag("show_body_type", true)?,
            headers: flag("show_headers", false)?,
            properties: flag("show_properties", false)?,
            exchange_id: flag("show_exchange_id", false)?,
            pattern: flag("show_exchange_pattern", false)?,
            one_line: p.take_bool("skip_body_line_separator")?.unwrap_or(true),
            max_chars: p.take::<usize>("max_chars")?.unwrap_or(DEFAULT_MAX_CHARS),
            multiline: p.take_bool("multiline")?.unwrap_or(false),
            log_mask: p.take_bool("log_mask")?.unwrap_or(false),
        };
        // Camel's switches for Java stream, file and future bodies: no body here is one.
        for ignored in [
            "show_streams",
            "show_cached_streams",
            "show_files",
            "show_future",
        ] {
            p.take_bool(ignored)?;
        }
        let raw = uri.raw();
        uri.parameters.finish(OPTIONS)?;
        Ok(Arc::new(LogEndpoint {
            uri: raw,
            logger,
            level,
            format: Arc::new(format),
        }))
    }
}

#[derive(Debug)]
struct LogEndpoint {
    uri: Arc<str>,
    logger: Arc<str>,
    /// `None` = `OFF`.
    level: Option<Level>,
    format: Arc<Format>,
}

/// Emits at a level chosen at run time: tracing's callsites are static, so each level
/// needs its own call. The line is only built when the level is enabled.
macro_rules! emit {
    ($level:expr, $logger:expr, $exchange:expr, $format:expr) => {
        if tracing::enabled!($level) {
            let line = $format.line($exchange);
            tracing::event!($level, logger = %$logger, exchange_id = %$exchange.id, "{line}");
        }
    };
}

impl Endpoint for LogEndpoint {
    fn uri(&self) -> &str {
        &self.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        let logger = self.logger.clone();
        let format = self.format.clone();
        let Some(level) = self.level else {
            return Ok(BoxProcessor::identity());
        };
        Ok(BoxProcessor::sync(move |exchange: Exchange| {
            match level {
                Level::TRACE => emit!(Level::TRACE, logger, &exchange, format),
                Level::DEBUG => emit!(Level::DEBUG, logger, &exchange, format),
                Level::INFO => emit!(Level::INFO, logger, &exchange, format),
                Level::WARN => emit!(Level::WARN, logger, &exchange, format),
                _ => emit!(Level::ERROR, logger, &exchange, format),
            }
            Ok(exchange)
        })
        .named("log"))
    }
}

impl Format {
    /// `Exchange[Id: …, ExchangePattern: …, Properties: {…}, Headers: {…}, BodyType: …, Body: …]`.
    fn line(&self, exchange: &Exchange) -> String {
        let line = self.unmasked_line(exchange);
        if self.log_mask {
            crate::log_mask::mask(&line)
        } else {
            line
        }
    }

    fn unmasked_line(&self, exchange: &Exchange) -> String {
        let mut parts: Vec<String> = Vec::new();
        if self.exchange_id {
            parts.push(format!("Id: {}", exchange.id));
        }
        if self.pattern {
            parts.push(format!("ExchangePattern: {:?}", exchange.pattern));
        }
        if self.properties {
            parts.push(format!("Properties: {}", map(&exchange.properties)));
        }
        if self.headers {
            parts.push(format!("Headers: {}", map(&exchange.message.headers)));
        }
        let body = &exchange.message.body;
        if self.body_type {
            parts.push(format!("BodyType: {}", body_type(body)));
        }
        if self.body {
            parts.push(format!("Body: {}", self.body_text(body)));
        }
        if self.multiline {
            // Camel's layout: the opening bracket, each part indented on its own line,
            // the closing bracket alone.
            let mut line = String::from("Exchange[\n");
            for part in &parts {
                let _ = writeln!(line, "  {part}");
            }
            line.push(']');
            return line;
        }
        format!("Exchange[{}]", parts.join(", "))
    }

    fn body_text(&self, body: &Body) -> String {
        let mut text = match body {
            Body::Empty => "[Body is null]".to_string(),
            Body::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            other => other.as_text().unwrap_or_default().into_owned(),
        };
        if self.one_line && text.contains(['\n', '\r']) {
            text = text.replace("\r\n", " ").replace(['\n', '\r'], " ");
        }
        if self.max_chars > 0 {
            if let Some((cut, _)) = text.char_indices().nth(self.max_chars) {
                text.truncate(cut);
                text.push_str("... [Body clipped after ");
                let _ = write!(text, "{} chars]", self.max_chars);
            }
        }
        text
    }
}

fn body_type(body: &Body) -> &'static str {
    match body {
        Body::Empty => "Empty",
        Body::Bytes(_) => "Bytes",
        Body::Text(_) => "Text",
        Body::Json(_) => "Json",
    }
}

fn map(values: &Headers) -> String {
    let entries: Vec<String> = values.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{{{}}}", entries.join(", "))
}

#[cfg(test)]
mod tests;
