//! Scenario `pipeline`: `direct:start` → N steps → end, against a hand-written loop doing
//! the same header and body work on the same `Exchange` type.
//!
//! Steps alternate: `set_header` copying header `in` into `h` (a simple expression reading a
//! header), then `transform` building a new text body from it (`msg ${header.h}`).
//!
//! ```text
//! cargo run --release -p camel-bench --bin pipeline
//! ```
//! Case `error_handler`: the 10-step route with a dead letter channel and no failures,
//! against the same route without one (ADR 0052: the happy path should cost almost
//! nothing). `PIPELINE_ONLY=error_handler` runs it alone.
//!
//! `PIPELINE_EXCHANGES` changes the number of exchanges per case (default 200,000);
//! `PIPELINE_ONLY=10x1` runs one case (steps x callers) and `PIPELINE_SIDE=ours|baseline`
//! one side of it — for instruction counts under callgrind, which do not depend on load
//! (`crates/camel-bench/scripts/callgrind-pipeline.sh` runs both sides and prints them).
//!
//! `PIPELINE_OTEL_ENDPOINT=http://127.0.0.1:4318` installs the OTLP exporter first (one
//! span per exchange, step spans off), to measure what tracing costs when it is on.
//!
//! `PIPELINE_TRACER=armed` compiles the route with the backlog tracer's hooks and leaves
//! the tracer off for it (the cost of `POST /routes/{id}/trace/stop` after a start);
//! `PIPELINE_TRACER=on` traces every exchange (ADR 0132). Unset, the tracer is absent.
//!
//! `PIPELINE_METRICS=route` installs a Prometheus recorder and times each exchange (what
//! `camel run --metrics-addr` does); `PIPELINE_METRICS=steps` times each step too
//! (`--step-metrics`, Camel's message history). Unset, no recorder is installed.
//!
//! `PIPELINE_CONSOLE=N` (with `PIPELINE_METRICS`) measures what N open web consoles cost
//! the route: each case also runs with N tasks doing, once a second, the work of one
//! console live stream on the server (render the Prometheus text, read it back by line,
//! read every route's status and uptime), and prints `console_per_s` and
//! `console_ratio` (with / without, the without figure the mean of a run before and a
//! run after, all in this process). The admin server runs them on the same runtime as the
//! routes, as here; 8 is the most streams it serves at once.

use std::time::{Duration, Instant};

use camel_api::{Body, BoxProcessor, CamelError, Exchange};
use camel_bench::{count_from_env, peak_rss_kb, per_second, result_line, Latencies};
use camel_core::builder::{simple, RouteBuilder};
use camel_core::CamelContext;

fn route(steps: usize) -> camel_core::RouteDefinition {
    route_from(RouteBuilder::from("direct:start").id("bench"), steps)
}

fn route_from(mut b: RouteBuilder, steps: usize) -> camel_core::RouteDefinition {
    for i in 0..steps {
        b = if i % 2 == 0 {
            b.set_header("h", simple("${header.in}"))
        } else {
            b.transform(simple("msg ${header.h}"))
        };
    }
    b.build()
}

/// The same work, written by hand.
async fn baseline(mut ex: Exchange, steps: usize) -> Result<Exchange, CamelError> {
    for i in 0..steps {
        if i % 2 == 0 {
            let v = ex.message.headers.get("in").cloned().unwrap_or_default();
            ex.message.headers.insert("h", v);
        } else {
            let h = ex.message.headers.get("h").cloned().unwrap_or_default();
            let mut s = String::with_capacity(4 + 16);
            s.push_str("msg ");
            s.push_str(&h.to_string());
            ex.message.body = Body::Text(s.into());
        }
    }
    Ok(ex)
}

fn input() -> Exchange {
    Exchange::new("payload").with_header("in", "value")
}

/// Runs `total` exchanges through `call` from `callers` spawned tasks.
async fn drive<F, Fut>(total: u64, callers: u64, call: F) -> (Duration, Latencies)
where
    F: Fn(Exchange) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Exchange, CamelError>> + Send,
{
    let per_caller = total / callers;
    let start = Instant::now();
    let tasks: Vec<_> = (0..callers)
        .map(|_| {
            let call = call.clone();
            tokio::spawn(async move {
                let mut lat = Latencies::with_capacity(per_caller as usize);
                for _ in 0..per_caller {
                    let t = Instant::now();
                    let out = call(input()).await;
                    lat.record(t.elapsed());
                    if let Err(e) = out {
                        panic!("exchange failed: {e}");
                    }
                }
                lat
            })
        })
        .collect();
    let mut all = Latencies::with_capacity(total as usize);
    for t in tasks {
        match t.await {
            Ok(l) => all.extend(l),
            Err(e) => panic!("caller task failed: {e}"),
        }
    }
    (start.elapsed(), all)
}

fn main() {
    // `PIPELINE_OTEL_ENDPOINT=http://127.0.0.1:4318`: the OTLP exporter on (step spans
    // off), to measure what a route span per exchange costs. Installed before the runtime:
    // the exporter's client is a blocking one.
    let export = std::env::var("PIPELINE_OTEL_ENDPOINT")
        .ok()
        .map(|endpoint| {
            camel_otel::install(camel_otel::OtlpConfig::new(&endpoint, "pipeline-bench"))
                .expect("the OTLP exporter starts")
        });
    let recorder = match std::env::var("PIPELINE_METRICS").as_deref() {
        Ok(level @ ("route" | "steps")) => {
            // The buckets of the `camel` binary's duration histograms.
            let handle = metrics_exporter_prometheus::PrometheusBuilder::new()
                .set_buckets(camel_core::context::metrics::DURATION_BUCKETS)
                .expect("the buckets are not empty")
                .install_recorder()
                .expect("the Prometheus recorder installs");
            camel_core::context::metrics::set_exchange_timing(true);
            camel_core::context::metrics::set_step_timing(level == "steps");
            Some(handle)
        }
        Ok(other) => panic!("PIPELINE_METRICS is route or steps, not {other}"),
        Err(_) => None,
    };
    let consoles = count_from_env("PIPELINE_CONSOLE", 0);
    assert!(
        consoles == 0 || recorder.is_some(),
        "PIPELINE_CONSOLE needs PIPELINE_METRICS (the console renders the metrics)"
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        let total = count_from_env("PIPELINE_EXCHANGES", 200_000);
        let only = std::env::var("PIPELINE_ONLY").ok();
        let side = std::env::var("PIPELINE_SIDE").unwrap_or_default();
        for steps in [1usize, 10] {
            let ctx = CamelContext::new();
            match std::env::var("PIPELINE_TRACER").as_deref() {
                Ok("armed") => {
                    ctx.tracer().enable(Some("bench"));
                    ctx.tracer().disable(Some("bench"));
                }
                Ok("on") => {
                    ctx.tracer().enable(Some("bench"));
                }
                _ => {}
            }
            ctx.add_routes(vec![route(steps)])
                .await
                .expect("the bench route compiles");
            ctx.start().await.expect("the bench route starts");
            let producer: BoxProcessor = ctx.producer("direct:start").expect("a direct producer");
            for callers in [1u64, 64] {
                if only
                    .as_ref()
                    .is_some_and(|o| *o != format!("{steps}x{callers}"))
                {
                    continue;
                }
                if side == "ours" || side == "baseline" {
                    let p = producer.clone();
                    let (t, _) = if side == "ours" {
                        drive(total, callers, move |ex| p.process(ex)).await
                    } else {
                        drive(total, callers, move |ex| baseline(ex, steps)).await
                    };
                    println!("{side}: {total} exchanges in {t:?}");
                    continue;
                }
                // Warm up both paths.
                let p = producer.clone();
                drive(total / 10, callers, move |ex| p.process(ex)).await;
                drive(total / 10, callers, move |ex| baseline(ex, steps)).await;

                let (base_time, _) = drive(total, callers, move |ex| baseline(ex, steps)).await;
                let p = producer.clone();
                let (ours_time, mut lat) = drive(total, callers, move |ex| p.process(ex)).await;
                let ours = per_second(total, ours_time);
                let base = per_second(total, base_time);
                let mut fields = vec![
                    ("steps", steps.to_string()),
                    ("callers", callers.to_string()),
                    ("ours_per_s", format!("{ours:.0}")),
                    ("baseline_per_s", format!("{base:.0}")),
                    ("ratio", format!("{:.2}", ours / base)),
                    ("p50_us", format!("{:.2}", lat.percentile_us(50.0))),
                    ("p99_us", format!("{:.2}", lat.percentile_us(99.0))),
                ];
                if let (Some(handle), true) = (&recorder, consoles > 0) {
                    let load = ConsoleLoad::start(consoles, handle.clone(), ctx.clone());
                    let p = producer.clone();
                    let (with_time, _) = drive(total, callers, move |ex| p.process(ex)).await;
                    load.stop().await;
                    let p = producer.clone();
                    let (after_time, _) = drive(total, callers, move |ex| p.process(ex)).await;
                    let with = per_second(total, with_time);
                    let without = (ours + per_second(total, after_time)) / 2.0;
                    fields.push(("console_streams", consoles.to_string()));
                    fields.push(("console_per_s", format!("{with:.0}")));
                    fields.push(("console_ratio", format!("{:.3}", with / without)));
                }
                fields.push(("rss_kb", peak_rss_kb().to_string()));
                result_line("pipeline", &fields);
            }
            ctx.stop().await;
        }
        if only.as_deref().is_none_or(|o| o == "error_handler") {
            error_handler_case(total, &side).await;
        }
    });
    if let Some(export) = export {
        export.shutdown();
    }
}

/// The 10-step route with and without a dead letter channel, one caller.
/// `side` `ours` runs only the route with the dead letter channel, `baseline` only the one
/// without (for callgrind).
async fn error_handler_case(total: u64, side: &str) {
    let ctx = CamelContext::new();
    let plain = route(10);
    let handled = route_from(
        RouteBuilder::from("direct:handled")
            .id("handled")
            .dead_letter_channel("log:dead", Default::default()),
        10,
    );
    ctx.add_routes(vec![plain, handled])
        .await
        .expect("the bench routes compile");
    ctx.start().await.expect("the bench routes start");
    let without = ctx.producer("direct:start").expect("a direct producer");
    let with = ctx.producer("direct:handled").expect("a direct producer");
    if side == "ours" || side == "baseline" {
        let p = if side == "ours" { with } else { without };
        let (t, _) = drive(total, 1, move |ex| p.process(ex)).await;
        println!("error_handler {side}: {total} exchanges in {t:?}");
        ctx.stop().await;
        return;
    }
    let (a, b) = (without.clone(), with.clone());
    drive(total / 10, 1, move |ex| a.process(ex)).await;
    drive(total / 10, 1, move |ex| b.process(ex)).await;
    let (t_without, _) = drive(total, 1, move |ex| without.process(ex)).await;
    let (t_with, mut lat) = drive(total, 1, move |ex| with.process(ex)).await;
    let ours = per_second(total, t_with);
    let base = per_second(total, t_without);
    result_line(
        "pipeline_error_handler",
        &[
            ("steps", "10".into()),
            ("callers", "1".into()),
            ("with_dead_letter_per_s", format!("{ours:.0}")),
            ("without_per_s", format!("{base:.0}")),
            ("ratio", format!("{:.3}", ours / base)),
            ("p50_us", format!("{:.2}", lat.percentile_us(50.0))),
        ],
    );
    ctx.stop().await;
}

/// What `PIPELINE_CONSOLE` streams do: once a second each, the work of one console live
/// stream on the admin server (the `camel` binary's `console::rows`).
struct ConsoleLoad {
    stop: tokio::sync::watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<u64>>,
}

impl ConsoleLoad {
    fn start(
        streams: u64,
        metrics: metrics_exporter_prometheus::PrometheusHandle,
        ctx: CamelContext,
    ) -> Self {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let tasks = (0..streams)
            .map(|_| {
                let (metrics, ctx, mut stopped) = (metrics.clone(), ctx.clone(), stopped.clone());
                tokio::spawn(async move {
                    let mut tick = tokio::time::interval(Duration::from_secs(1));
                    let mut sent = 0u64;
                    loop {
                        tokio::select! {
                            _ = tick.tick() => {}
                            _ = stopped.changed() => return sent,
                        }
                        let text = metrics.render();
                        let samples = text.lines().filter(|l| l.contains("routeId=")).count();
                        let mut rows = Vec::new();
                        for id in ctx.route_controller().route_ids().await {
                            let status = ctx.route_controller().status(&id).await.ok();
                            let uptime = ctx.route_controller().uptime(&id).await.ok().flatten();
                            rows.push(serde_json::json!({
                                "id": id,
                                "status": format!("{status:?}"),
                                "uptime": uptime.map(|u| u.as_secs_f64()),
                                "samples": samples,
                            }));
                        }
                        sent += serde_json::Value::Array(rows).to_string().len() as u64;
                    }
                })
            })
            .collect();
        ConsoleLoad { stop, tasks }
    }

    async fn stop(self) {
        let _ = self.stop.send(true);
        for t in self.tasks {
            let _ = t.await;
        }
    }
}
