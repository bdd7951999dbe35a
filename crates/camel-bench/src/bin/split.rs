//! Scenario `split`: a file of N lines (default 1,000,000, ~100 bytes each) split with
//! `split: {tokenize: "\n", streaming: true}` from a lazily handed-over file
//! (`CamelFileAbsolutePath`, empty body), each line through one counting step, against a
//! hand-written loop reading the same file with a buffered reader and sending each line,
//! as a copy of the same exchange, through the same step.
//!
//! ```text
//! cargo run --release -p camel-bench --bin split
//! ```
//! `SPLIT_LINES` changes the number of lines (e.g. 10,000,000 for a ~1 GB file); the file
//! is written to the temporary folder and deleted at the end. The peak RSS is printed:
//! streaming keeps it flat whatever the file's size.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use camel_api::{Body, BoxProcessor, CamelError, Exchange};
use camel_bench::{count_from_env, median, peak_rss_kb, per_second, result_line};
use camel_core::builder::{RouteBuilder, Split, Tokenize};
use camel_core::CamelContext;
use tokio::io::AsyncBufReadExt;

fn counting_step(count: Arc<AtomicU64>) -> BoxProcessor {
    BoxProcessor::sync(move |ex: Exchange| {
        if !ex.message.body.is_empty() {
            count.fetch_add(1, Ordering::Relaxed);
        }
        Ok(ex)
    })
}

/// The same work by hand: read lines, copy the exchange, call the step.
async fn baseline(path: &std::path::Path, step: &BoxProcessor) -> Result<(), CamelError> {
    let parent = Exchange::new(Body::Empty).with_header("source", "bench");
    let file = tokio::fs::File::open(path).await?;
    let mut lines = tokio::io::BufReader::with_capacity(64 * 1024, file).lines();
    while let Some(line) = lines.next_line().await? {
        let mut part = parent.clone();
        part.message.body = Body::from(line);
        step.process(part).await?;
    }
    Ok(())
}

fn write_file(path: &std::path::Path, lines: u64) {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).expect("a temp file"));
    let filler = "x".repeat(88);
    for i in 0..lines {
        writeln!(file, "{i:010} {filler}").expect("the temp file is written");
    }
    file.flush().expect("the temp file is written");
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let lines = count_from_env("SPLIT_LINES", 1_000_000);
    let path = std::env::temp_dir().join(format!("camel-bench-split-{}.txt", std::process::id()));
    write_file(&path, lines);
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    runtime.block_on(async {
        let count = Arc::new(AtomicU64::new(0));
        let step = counting_step(count.clone());
        let route = RouteBuilder::from("direct:start")
            .id("split")
            .split(
                Split::tokenize(Tokenize::token("\n")).streaming(true),
                |b| b.process_with(step.clone()),
            )
            .build();
        let ctx = CamelContext::new();
        ctx.add_routes(vec![route])
            .await
            .expect("the bench route compiles");
        ctx.start().await.expect("the bench route starts");
        let producer = ctx.producer("direct:start").expect("a direct producer");
        let input = || {
            Exchange::new(Body::Empty)
                .with_header("source", "bench")
                .with_header("CamelFileAbsolutePath", path.to_string_lossy().into_owned())
        };
        let mut ours_rates = Vec::new();
        let mut base_rates = Vec::new();
        for round in 0..3 {
            count.store(0, Ordering::Relaxed);
            let t = Instant::now();
            baseline(&path, &step)
                .await
                .expect("the baseline reads the file");
            let base_time = t.elapsed();
            assert_eq!(count.load(Ordering::Relaxed), lines);
            count.store(0, Ordering::Relaxed);
            let t = Instant::now();
            producer.process(input()).await.expect("the split runs");
            let ours_time = t.elapsed();
            assert_eq!(
                count.load(Ordering::Relaxed),
                lines,
                "every line was a part"
            );
            if round > 0 || lines < 100_000 {
                ours_rates.push(per_second(lines, ours_time));
                base_rates.push(per_second(lines, base_time));
            }
        }
        ctx.stop().await;
        let ours = median(ours_rates);
        let base = median(base_rates);
        result_line(
            "split",
            &[
                ("lines", lines.to_string()),
                ("file_mb", format!("{:.0}", bytes as f64 / 1e6)),
                ("ours_lines_per_s", format!("{ours:.0}")),
                ("baseline_lines_per_s", format!("{base:.0}")),
                ("ratio", format!("{:.2}", ours / base)),
                ("peak_rss_kb", peak_rss_kb().to_string()),
            ],
        );
    });
    let _ = std::fs::remove_file(&path);
}
