//! A batching sink's per-destination series leave `/metrics` once its batcher has stopped
//! and `--sink-metrics-expiry` has passed; route series stay (adr/0041).

mod support;

use std::time::{Duration, Instant};

use support::{spawn, wait_line, KillOnDrop};

fn free_addr() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .expect("its address")
        .port();
    format!("127.0.0.1:{port}")
}

/// Scrapes `/metrics` until `done` holds for its text or 30 s have passed; the series
/// age on the exporter's own clock, so there is nothing to wait on but the text itself.
fn scrape_until(addr: &str, done: impl Fn(&str) -> bool) -> String {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let started = Instant::now();
    loop {
        let text = rt.block_on(async {
            match reqwest::get(format!("http://{addr}/metrics")).await {
                Ok(r) => r.text().await.unwrap_or_default(),
                Err(_) => String::new(),
            }
        });
        if done(&text) || started.elapsed() > Duration::from_secs(30) {
            return text;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn sink_series_expire_after_the_batcher_stops_and_route_series_stay() {
    let Some(nats) = camel_api::test_support::service_from_env("CAMEL_TEST_NATS_URL") else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("routes.yaml");
    std::fs::write(
        &file,
        format!(
            r#"
- route:
    id: expiry
    from:
      uri: "timer:tick?period=10&repeatCount=3"
      steps:
        - to: "nats:camel.test.expiry?jetstream=false&idle_timeout=300ms&linger_ms=1&servers={nats}"
        - log: "sent ${{exchangeId}}"
"#
        ),
    )
    .expect("write the routes");
    let addr = free_addr();
    let (child, rx) = spawn(&[
        "run",
        file.to_str().expect("a UTF-8 path"),
        "--metrics-addr",
        &addr,
        "--sink-metrics-expiry",
        "1",
    ]);
    // Killed however the test ends: a failed assertion must not leave the run behind.
    let _child = KillOnDrop(child);
    wait_line(&rx, "sent ");
    let sink = "camel_sink_batch_flush_entries_count{sink=\"nats:camel.test.expiry";
    let route = "camel_exchanges_total{routeId=\"expiry\"} 3";
    // Route counts reach the exporter up to a second late (adr/0047), by which time the
    // sink's series may have expired already: look for each on its own.
    let seen = scrape_until(&addr, |t| t.contains(sink));
    assert!(
        seen.contains(sink),
        "the sink's series never appeared: {seen}"
    );
    let after = scrape_until(&addr, |t| !t.contains(sink) && t.contains(route));
    assert!(
        !after.contains(sink),
        "the sink's series did not expire: {after}"
    );
    assert!(
        after.contains(route),
        "the route's series went too: {after}"
    );
    assert!(after.contains("camel_sink_batchers 0"), "{after}");
}
