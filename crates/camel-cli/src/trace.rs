//! The backlog tracer from the command line: `camel run --trace[=ROUTES]` and its
//! bounds, and `camel trace [ROUTE]`, which follows a running process's traced
//! exchanges over its admin API as Camel JBang's `camel trace` does (ADR 0132).

use std::process::ExitCode;
use std::time::Duration;

use camel_core::context::{
    TracerConfig, DEFAULT_BODY_MAX_BYTES, DEFAULT_CAPACITY, DEFAULT_MAX_BYTES, DEFAULT_MAX_STEPS,
};
use camel_core::CamelContext;
use serde_json::Value;

use crate::inspect::{duration, fail, Client, ClientArgs};

/// The most of one `GET …/trace` answer `camel trace` reads: the tracer holds at most
/// `--trace-max-bytes` (64 MiB by default), and JSON adds its quotes and escapes.
const MAX_TRACE_RESPONSE: usize = 256 * 1024 * 1024;

/// The tracer flags of `camel run`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct TraceRunArgs {
    /// Keep the last exchanges of every route (or of the ROUTES given, comma-separated)
    /// with each step's headers and body, for `camel trace` and GET /routes/{id}/trace.
    /// Off by default; POST /routes/{id}/trace/start turns it on while running.
    #[arg(long, value_name = "ROUTES", num_args = 0..=1, require_equals = true, default_missing_value = "*")]
    trace: Option<String>,
    /// Exchanges the tracer keeps per route (Camel's backlogSize).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CAPACITY, value_parser = at_least::<1>)]
    trace_capacity: usize,
    /// Bytes of a body or header value the tracer keeps (Camel's bodyMaxChars); the rest
    /// is cut.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_BODY_MAX_BYTES, value_parser = at_least::<1>)]
    trace_body_max: usize,
    /// Steps the tracer keeps per exchange; later ones are counted only.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STEPS, value_parser = at_least::<1>)]
    trace_max_steps: usize,
    /// Bytes the tracer holds at most, over every route.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BYTES, value_parser = at_least::<1024>)]
    trace_max_bytes: usize,
}

/// A whole number of at least `MIN`.
fn at_least<const MIN: usize>(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if n >= MIN => Ok(n),
        _ => Err(format!("`{text}` is not a whole number of at least {MIN}")),
    }
}

impl TraceRunArgs {
    /// Sets the tracer's bounds and, with `--trace`, turns it on, before any route is
    /// added (so the routes are compiled with their hooks).
    pub(crate) fn apply(&self, ctx: &CamelContext) {
        let tracer = ctx.tracer();
        tracer.configure(TracerConfig {
            capacity: self.trace_capacity,
            body_max_bytes: self.trace_body_max,
            max_steps: self.trace_max_steps,
            max_bytes: self.trace_max_bytes,
        });
        match self.trace.as_deref().map(str::trim) {
            None => {}
            Some("*" | "" | "all") => {
                tracer.enable(None);
            }
            Some(list) => {
                for id in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    tracer.enable(Some(id));
                }
            }
        }
    }
}

/// `camel trace [ROUTE]`.
#[derive(Debug, clap::Args)]
pub(crate) struct TraceArgs {
    /// Only this route's exchanges; every traced route's without it.
    route: Option<String>,
    #[command(flatten)]
    client: ClientArgs,
    /// Print what is kept now and exit, instead of following.
    #[arg(long)]
    no_follow: bool,
    /// Skip what is kept now: only exchanges that finish from now on.
    #[arg(long, conflicts_with = "no_follow")]
    since_now: bool,
    /// Turn the tracer on for ROUTE (every route without one) first (needs the token).
    #[arg(long)]
    start: bool,
    /// Exit after printing this many exchanges.
    #[arg(long, value_name = "N")]
    max_exchanges: Option<u64>,
    /// Seconds between two looks at the process.
    #[arg(long, value_name = "SECS", default_value_t = 0.5, value_parser = parse_interval)]
    interval: f64,
    /// Characters of a body shown per step (0: none); `-o json` always has it all.
    #[arg(long, value_name = "N", default_value_t = 300)]
    body_chars: usize,
    /// `text` for people, `json` for scripts (one exchange per line).
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Text)]
    output: Output,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Output {
    Text,
    Json,
}

fn parse_interval(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if (0.05..=3600.0).contains(&s) => Ok(s),
        _ => Err(format!(
            "`{text}` is not a number of seconds from 0.05 to 3600"
        )),
    }
}

/// `camel trace`.
pub(crate) async fn run(args: TraceArgs) -> ExitCode {
    let client = match Client::new(&args.client) {
        Ok(c) => c.with_max_response(MAX_TRACE_RESPONSE),
        Err(e) => return fail(e),
    };
    let base = match &args.route {
        Some(id) => format!("/routes/{}/trace", camel_api::percent_encode(id)),
        None => "/trace".to_string(),
    };
    if args.start {
        if let Err(e) = client
            .json(reqwest::Method::POST, &format!("{base}/start"), &[])
            .await
        {
            return fail(e);
        }
    }
    let mut after = 0u64;
    let mut printed = 0u64;
    let mut first = true;
    let mut warned_off = false;
    loop {
        let answer = match client
            .json(reqwest::Method::GET, &format!("{base}?since={after}"), &[])
            .await
        {
            Ok((_, v)) => v,
            Err(e) => return fail(e),
        };
        let skip = first && args.since_now;
        first = false;
        if !answer["enabled"].as_bool().unwrap_or(false) && !warned_off {
            warned_off = true;
            let what = args.route.as_deref().unwrap_or("any route");
            eprintln!(
                "note: the tracer is off for {what}: run with --trace, or `camel trace --start`"
            );
        }
        let exchanges = answer["exchanges"].as_array().cloned().unwrap_or_default();
        for ex in &exchanges {
            after = after.max(ex["seq"].as_u64().unwrap_or(0));
            if skip {
                continue;
            }
            match args.output {
                Output::Json => println!("{ex}"),
                Output::Text => print!("{}", exchange_text(ex, args.body_chars)),
            }
            printed += 1;
            if args.max_exchanges.is_some_and(|max| printed >= max) {
                return ExitCode::SUCCESS;
            }
        }
        if skip {
            after = after.max(answer["last_seq"].as_u64().unwrap_or(0));
        }
        // A page may have been cut to bound the answer: ask again at once.
        if answer["more"].as_bool().unwrap_or(false) {
            continue;
        }
        if args.no_follow {
            return ExitCode::SUCCESS;
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs_f64(args.interval)) => {}
            _ = tokio::signal::ctrl_c() => return ExitCode::SUCCESS,
        }
    }
}

/// Text without control characters (a body's newlines become `⏎`), cut to `max`
/// characters.
fn shown(text: &str, max: usize) -> String {
    let mut out: String = text
        .chars()
        .take(max)
        .map(|c| match c {
            '\n' => '⏎',
            c if c.is_control() => '?',
            c => c,
        })
        .collect();
    if text.chars().count() > max {
        out.push('…');
    }
    out
}

fn micros(v: &Value) -> String {
    duration(v.as_f64().map(|us| us / 1e6))
}

/// One exchange as `camel trace` prints it: a line for the exchange, then a line per
/// step with its time, id, kind, duration and body, and the headers that changed.
pub(crate) fn exchange_text(ex: &Value, body_chars: usize) -> String {
    let mut out = String::new();
    let outcome = ex["outcome"].as_str().unwrap_or("?");
    out.push_str(&format!(
        "{}  {}  {}  {}  {}\n",
        shown(ex["route_id"].as_str().unwrap_or("?"), 200),
        shown(ex["exchange_id"].as_str().unwrap_or("?"), 100),
        outcome,
        micros(&ex["duration_us"]),
        timestamp(ex["started_ms"].as_u64().unwrap_or(0)),
    ));
    if let Some(error) = ex["error"].as_str() {
        out.push_str(&format!("  error: {}\n", shown(error, 2000)));
    }
    let mut seen: Vec<(String, String)> = Vec::new();
    for step in ex["steps"].as_array().into_iter().flatten() {
        let depth = step["depth"].as_u64().unwrap_or(0) as usize;
        let indent = "  ".repeat(depth.min(10));
        let id = step["id"].as_str().unwrap_or("?");
        let kind = step["kind"].as_str().unwrap_or("?");
        let mut line = format!(
            "  {:>9}  {indent}{}",
            format!("+{}", micros(&step["at_us"])),
            shown(id, 200)
        );
        if kind != id && !id.ends_with(&format!(".{kind}")) {
            line.push_str(&format!(" ({})", shown(kind, 50)));
        }
        if let Some(uri) = step["uri"].as_str() {
            line.push_str(&format!("  {}", shown(uri, 300)));
        }
        if kind != "from" {
            line.push_str(&format!("  {}", micros(&step["duration_us"])));
        }
        match step["outcome"].as_str() {
            Some("failed") => line.push_str(&format!(
                "  FAILED: {}",
                shown(step["error"].as_str().unwrap_or(""), 2000)
            )),
            Some("stopped") => line.push_str("  stopped"),
            _ => {}
        }
        if step["omitted"].as_bool().unwrap_or(false) {
            line.push_str("  (body and headers not kept: the tracer is at its memory limit)");
        }
        out.push_str(&line);
        out.push('\n');
        let pad = format!("  {:>9}  {indent}  ", "");
        if let Some(headers) = step["headers"].as_array() {
            let now: Vec<(String, String)> = headers
                .iter()
                .filter_map(|h| Some((h[0].as_str()?.to_string(), h[1].as_str()?.to_string())))
                .collect();
            let changed: Vec<String> = now
                .iter()
                .filter(|h| !seen.contains(h))
                .map(|(k, v)| format!("{}={}", shown(k, 100), shown(v, 200)))
                .chain(
                    seen.iter()
                        .filter(|(k, _)| !now.iter().any(|(n, _)| n == k))
                        .map(|(k, _)| format!("-{}", shown(k, 100))),
                )
                .collect();
            if !changed.is_empty() {
                out.push_str(&format!("{pad}headers: {}\n", changed.join(", ")));
            }
            seen = now;
        }
        if body_chars > 0 {
            if let Some(body) = step["body"].as_object() {
                let kind = body.get("type").and_then(Value::as_str).unwrap_or("?");
                let size = body.get("size").and_then(Value::as_u64).unwrap_or(0);
                let text = match body.get("text").and_then(Value::as_str) {
                    Some(t) => shown(t, body_chars),
                    None if kind == "Empty" => String::new(),
                    None => format!("[binary, {size} bytes]"),
                };
                out.push_str(&format!("{pad}body ({kind}, {size} bytes): {text}\n"));
            }
        }
    }
    let dropped = ex["steps_dropped"].as_u64().unwrap_or(0);
    if dropped > 0 {
        out.push_str(&format!("  … {dropped} more steps not kept\n"));
    }
    out
}

/// Milliseconds since the epoch as `HH:MM:SS.mmm` UTC.
fn timestamp(ms: u64) -> String {
    let secs = ms / 1000;
    format!(
        "{:02}:{:02}:{:02}.{:03}Z",
        (secs / 3600) % 24,
        (secs / 60) % 60,
        secs % 60,
        ms % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exchange_prints_its_steps_and_changed_headers() {
        let ex = serde_json::json!({
            "seq": 1, "route_id": "orders", "exchange_id": "ID-1", "outcome": "completed",
            "duration_us": 1500, "started_ms": 3_723_004u64,
            "steps": [
                {"id": "from", "kind": "from", "depth": 0, "at_us": 0, "duration_us": 0,
                 "outcome": "completed", "uri": "direct:orders",
                 "headers": [["a", "1"]], "body": {"type": "Text", "size": 2, "text": "hi\n"}},
                {"id": "steps[0].set_header", "kind": "set_header", "depth": 0, "at_us": 10,
                 "duration_us": 3, "outcome": "completed",
                 "headers": [["b", "2"]], "body": {"type": "Bytes", "size": 9}},
                {"id": "x", "kind": "to", "depth": 1, "at_us": 20, "duration_us": 3,
                 "outcome": "failed", "error": "boom\u{1b}[31m"}
            ],
            "steps_dropped": 2
        });
        let text = exchange_text(&ex, 100);
        assert!(
            text.starts_with("orders  ID-1  completed  1.5ms  01:02:03.004Z\n"),
            "{text}"
        );
        assert!(text.contains("from  direct:orders"), "{text}");
        assert!(text.contains("headers: a=1\n"), "{text}");
        assert!(text.contains("headers: b=2, -a\n"), "{text}");
        assert!(text.contains("body (Text, 2 bytes): hi⏎\n"), "{text}");
        assert!(text.contains("[binary, 9 bytes]"), "{text}");
        assert!(text.contains("x (to)"), "{text}");
        assert!(
            text.contains("FAILED: boom?[31m"),
            "no escape reaches the terminal: {text}"
        );
        assert!(text.contains("2 more steps"), "{text}");
    }
}
