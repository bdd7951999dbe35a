//! The `log` step: logs a message built from an expression, through `tracing`.

use std::sync::Arc;

use camel_api::{BoxExpression, BoxProcessor, Exchange};

/// Log levels of the `log` step and the `log:` component.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogLevel {
    /// trace
    Trace,
    /// debug
    Debug,
    /// info (default)
    #[default]
    Info,
    /// warn
    Warn,
    /// error
    Error,
}

impl LogLevel {
    /// Parses `trace`, `debug`, `info`, `warn`/`warning`, `error` (any case).
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.to_ascii_lowercase().as_str() {
            "trace" => LogLevel::Trace,
            "debug" => LogLevel::Debug,
            "info" => LogLevel::Info,
            "warn" | "warning" => LogLevel::Warn,
            "error" => LogLevel::Error,
            _ => return None,
        })
    }
}

/// Emits `message` at `level` with the logger name and exchange id as fields.
pub fn emit(level: LogLevel, logger: &str, exchange: &Exchange, message: &str) {
    let id = exchange.id;
    match level {
        LogLevel::Trace => tracing::trace!(logger, exchange_id = %id, "{message}"),
        LogLevel::Debug => tracing::debug!(logger, exchange_id = %id, "{message}"),
        LogLevel::Info => tracing::info!(logger, exchange_id = %id, "{message}"),
        LogLevel::Warn => tracing::warn!(logger, exchange_id = %id, "{message}"),
        LogLevel::Error => tracing::error!(logger, exchange_id = %id, "{message}"),
    }
}

/// Emits `message` like [`emit`], with Camel's log `marker` as a field for filtering.
pub fn emit_marked(
    level: LogLevel,
    logger: &str,
    marker: &str,
    exchange: &Exchange,
    message: &str,
) {
    let id = exchange.id;
    match level {
        LogLevel::Trace => tracing::trace!(logger, marker, exchange_id = %id, "{message}"),
        LogLevel::Debug => tracing::debug!(logger, marker, exchange_id = %id, "{message}"),
        LogLevel::Info => tracing::info!(logger, marker, exchange_id = %id, "{message}"),
        LogLevel::Warn => tracing::warn!(logger, marker, exchange_id = %id, "{message}"),
        LogLevel::Error => tracing::error!(logger, marker, exchange_id = %id, "{message}"),
    }
}

/// The `log` step: evaluates `message` and logs it.
pub fn log(message: BoxExpression, level: LogLevel, logger: &str) -> BoxProcessor {
    log_marked(message, level, logger, None)
}

/// The `log` step with an optional `marker` field.
pub fn log_marked(
    message: BoxExpression,
    level: LogLevel,
    logger: &str,
    marker: Option<&str>,
) -> BoxProcessor {
    let logger: Arc<str> = logger.into();
    let marker: Option<Arc<str>> = marker.map(Into::into);
    BoxProcessor::sync(move |ex: Exchange| {
        let text = message.evaluate(&ex)?.to_string();
        match &marker {
            None => emit(level, &logger, &ex, &text),
            Some(m) => emit_marked(level, &logger, m, &ex, &text),
        }
        Ok(ex)
    })
    .named("log")
}
