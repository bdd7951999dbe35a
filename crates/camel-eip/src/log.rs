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

/// The `log` step: evaluates `message` and logs it.
pub fn log(message: BoxExpression, level: LogLevel, logger: &str) -> BoxProcessor {
    let logger: Arc<str> = logger.into();
    BoxProcessor::sync(move |ex: Exchange| {
        let text = message.evaluate(&ex)?;
        emit(level, &logger, &ex, &text.to_string());
        Ok(ex)
    })
    .named("log")
}
