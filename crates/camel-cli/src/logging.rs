//! The log set-up of the `camel` binary: `RUST_LOG` as usual, except that the
//! third-party client crates stay at INFO unless `RUST_LOG` names them.
//!
//! Why: at DEBUG and TRACE those crates print what we cannot redact — the AWS SDK prints
//! the access key id and the endpoint with its user information, sqlx prints statements,
//! HTTP clients print requests. `RUST_LOG=trace` is what a user reaches for while
//! debugging a route, and it must not put a credential in a log (ADR 0042). Someone who
//! needs the SDK's own trace names it (`RUST_LOG=trace,aws_smithy_runtime=trace`) and so
//! asks for it knowingly.

use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;

/// Target prefixes of the crates capped at INFO (a tracing target starts with the crate
/// name, `-` written `_`).
pub(crate) const CAPPED: &[&str] = &[
    "aws_",
    "hyper",
    "h2",
    "sqlx",
    "async_nats",
    "reqwest",
    "rustls",
    "tonic",
    "tower",
];

/// How log events are written on stderr.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LogFormat {
    /// One human-readable line per event, coloured on a terminal.
    #[default]
    Text,
    /// One JSON object per line: `timestamp`, `level`, `target`, the event's fields
    /// (`message` among them) and the span the event happened in, for log collectors.
    Json,
}

/// Installs the global subscriber: `RUST_LOG` (default `info`) with the cap, on stderr,
/// in the given format.
pub(crate) fn init(format: LogFormat) {
    let rust_log = std::env::var("RUST_LOG").unwrap_or_default();
    let filter = EnvFilter::try_new(&rust_log).unwrap_or_else(|_| EnvFilter::new("info"));
    let filter = if rust_log.trim().is_empty() {
        EnvFilter::new("info")
    } else {
        filter
    };
    let text = (format == LogFormat::Text).then(|| {
        tracing_subscriber::fmt::layer()
            .with_writer(|| OneLine(std::io::stderr()))
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
    });
    // JSON escapes line breaks itself; the one-line writer still guards the separators a
    // terminal would act on if someone tails the file.
    let json = (format == LogFormat::Json).then(|| {
        tracing_subscriber::fmt::layer()
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .with_writer(|| OneLine(std::io::stderr()))
    });
    tracing_subscriber::registry()
        .with(filter)
        .with(cap(&rust_log))
        .with(text)
        .with(json)
        .init();
}

/// A writer that keeps each log event on one line. Messages and fields often carry
/// request data (a path, a header, a body): a raw newline in one would let its sender
/// write a whole log line of their choosing. The fmt layer hands over each event in one
/// write, ending in its own newline; every other `\n` or `\r` is written escaped.
struct OneLine<W>(W);

impl<W: std::io::Write> std::io::Write for OneLine<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write_all(&one_line(buf))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// `buf` with the line breaks inside it escaped, and the characters that move or reorder
/// what a terminal shows (Unicode line and paragraph separators, bidirectional controls);
/// a final `\n` stays.
fn one_line(buf: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let (body, end) = match buf.split_last() {
        Some((b'\n', body)) => (body, &b"\n"[..]),
        _ => (buf, &b""[..]),
    };
    // 0xE2 leads the UTF-8 form of every character escaped below but the two breaks.
    if !body.iter().any(|b| matches!(b, b'\n' | b'\r' | 0xE2)) {
        return std::borrow::Cow::Borrowed(buf);
    }
    let text = String::from_utf8_lossy(body);
    let mut out = String::with_capacity(buf.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => {
                out.push_str(&format!("\\u{{{:04X}}}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    let mut out = out.into_bytes();
    out.extend_from_slice(end);
    std::borrow::Cow::Owned(out)
}

/// The cap for a `RUST_LOG` value: every capped crate at INFO, except the targets the
/// value names itself, which the `EnvFilter` alone then decides.
fn cap(rust_log: &str) -> Targets {
    let mut targets = Targets::new().with_default(LevelFilter::TRACE);
    for prefix in CAPPED {
        targets = targets.with_target(*prefix, LevelFilter::INFO);
    }
    for named in named_targets(rust_log) {
        if CAPPED.iter().any(|p| named.starts_with(p)) {
            targets = targets.with_target(named, LevelFilter::TRACE);
        }
    }
    targets
}

/// The targets `RUST_LOG` names (`a=debug,b[span]=trace,warn` → `a`, `b`).
fn named_targets(rust_log: &str) -> impl Iterator<Item = &str> {
    rust_log.split(',').filter_map(|directive| {
        let (target, _) = directive.split_once('=')?;
        let target = target.split('[').next().unwrap_or_default().trim();
        (!target.is_empty()).then_some(target)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing::Level;

    #[test]
    fn an_event_stays_on_one_line() {
        assert_eq!(
            &*one_line(b"INFO route: a\nINFO forged\r\n"),
            b"INFO route: a\\nINFO forged\\r\n"
        );
        assert_eq!(&*one_line(b"plain line\n"), b"plain line\n");
        assert_eq!(&*one_line(b"no end\nx"), b"no end\\nx");
        assert_eq!(&*one_line(b""), b"");
        assert_eq!(
            &*one_line("a\u{2028}b\u{202E}c \u{2014}\n".as_bytes()),
            "a\\u{2028}b\\u{202E}c \u{2014}\n".as_bytes()
        );
    }

    fn enabled(rust_log: &str, target: &str, level: Level) -> bool {
        cap(rust_log).would_enable(target, &level)
    }

    #[test]
    fn third_party_crates_are_capped_at_info() {
        assert!(!enabled(
            "trace",
            "aws_smithy_runtime::client",
            Level::TRACE
        ));
        assert!(!enabled("trace", "aws_sigv4::http_request", Level::DEBUG));
        assert!(!enabled("debug", "sqlx::query", Level::DEBUG));
        assert!(enabled("trace", "sqlx::postgres::notice", Level::INFO));
        assert!(enabled("trace", "camel_sinks::batcher", Level::TRACE));
    }

    #[test]
    fn a_crate_named_in_rust_log_is_not_capped() {
        let log = "trace,aws_smithy_runtime=trace";
        assert!(enabled(log, "aws_smithy_runtime::client", Level::TRACE));
        assert!(!enabled(log, "aws_sigv4::http_request", Level::TRACE));
        assert_eq!(
            named_targets("a=debug,b[x]=trace,warn").collect::<Vec<_>>(),
            ["a", "b"]
        );
    }
}
