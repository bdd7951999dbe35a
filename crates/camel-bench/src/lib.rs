//! Shared helpers of the benchmark binaries: latency percentiles, peak memory, and the
//! `RESULT` line every scenario prints.
//!
//! Each scenario lives in `src/bin/<scenario>.rs` and measures our code against a baseline
//! doing the same work in the same process and run, so the ratio is meaningful on a busy
//! or slow machine where absolute numbers are not.

use std::time::Duration;

/// Peak resident memory of this process in KiB (`VmHWM`), or 0 when unknown.
pub fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Latency samples in nanoseconds.
#[derive(Debug, Default)]
pub struct Latencies(Vec<u64>);

impl Latencies {
    /// Room for `n` samples.
    pub fn with_capacity(n: usize) -> Self {
        Latencies(Vec::with_capacity(n))
    }

    /// Records one sample.
    pub fn record(&mut self, d: Duration) {
        self.0.push(d.as_nanos() as u64);
    }

    /// Merges another set of samples.
    pub fn extend(&mut self, other: Latencies) {
        self.0.extend(other.0);
    }

    /// The `p`-th percentile (0..=100) in microseconds.
    pub fn percentile_us(&mut self, p: f64) -> f64 {
        if self.0.is_empty() {
            return 0.0;
        }
        self.0.sort_unstable();
        let idx = ((p / 100.0) * (self.0.len() - 1) as f64).round() as usize;
        self.0[idx.min(self.0.len() - 1)] as f64 / 1000.0
    }
}

/// A name no other run uses: `prefix`, the process id and the clock's nanoseconds, joined
/// by `separator` (topics, queues and streams of a bench run are made fresh each time).
pub fn unique_name(prefix: &str, separator: char) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{prefix}{separator}{}{separator}{nanos}",
        std::process::id()
    )
}

/// Throughput in items per second.
pub fn per_second(items: u64, elapsed: Duration) -> f64 {
    items as f64 / elapsed.as_secs_f64().max(1e-9)
}

/// The median of some measurements (0 when there are none).
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// Prints one `RESULT` line: `RESULT scenario=… key=value …`.
pub fn result_line(scenario: &str, fields: &[(&str, String)]) {
    let mut line = format!("RESULT scenario={scenario}");
    for (k, v) in fields {
        line.push_str(&format!(" {k}={v}"));
    }
    println!("{line}");
}

/// Reads a count from the environment (to shorten runs), with a default.
pub fn count_from_env(var: &str, default: u64) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The allocator the `camel` binary uses too, so the figures match what users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Runs the one route of `yaml` (whose step is `process: {ref: work}`) on a new context
/// with `component` until `work` has seen `n` exchanges, and returns the time from the
/// first exchange to the last: how the broker consumer benches time the route side, so a
/// consumer's start-up (connecting, joining a group) is not counted.
pub async fn time_consumer_route(
    component: std::sync::Arc<dyn camel_api::Component>,
    yaml: &str,
    n: u64,
) -> Duration {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    let count = Arc::new(AtomicU64::new(0));
    let first: Arc<Mutex<Option<Instant>>> = Arc::default();
    let done = Arc::new(tokio::sync::Notify::new());
    let work = {
        let (count, first, done) = (count.clone(), first.clone(), done.clone());
        camel_api::BoxProcessor::sync(move |ex: camel_api::Exchange| {
            let seen = count.fetch_add(1, Ordering::Relaxed) + 1;
            if seen == 1 {
                *first.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
            }
            if seen == n {
                done.notify_one();
            }
            Ok(ex)
        })
    };
    let ctx = camel_core::CamelContext::new();
    ctx.add_component(component);
    ctx.add_resource("work", Arc::new(work));
    ctx.add_routes(camel_core::yaml::load_str(yaml, "bench.yaml").expect("the bench route loads"))
        .await
        .expect("the bench route compiles");
    ctx.start().await.expect("the bench route starts");
    done.notified().await;
    let elapsed = first
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .map(|f| f.elapsed())
        .unwrap_or_default();
    ctx.stop().await;
    elapsed
}
