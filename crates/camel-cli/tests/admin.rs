//! The admin HTTP API of `camel run --admin-addr`, on the real binary: health, metrics,
//! and route control including a hot swap from a YAML body.

mod support;

use std::process::Command;

use support::admin_api::{admin_client, admin_client_builder, send, Camel, LIMIT};

fn route(id: &str, message: &str) -> String {
    format!(
        "- route:\n    id: {id}\n    from:\n      uri: timer:{id}\n      parameters: {{period: 50}}\n      steps:\n        - log: \"{message} ${{header.CamelTimerCounter}}\"\n"
    )
}

#[tokio::test]
async fn health_metrics_and_route_control_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, route("ticks", "first tick")).unwrap();
    let mut camel = Camel::start(&file);
    let base = camel.base_url().await;
    let http = admin_client();
    camel.wait_for("first tick").await;

    let (code, health) = send(http.get(format!("{base}/health"))).await;
    assert_eq!(code, 200);
    assert_eq!(health["status"], "UP");
    assert_eq!(health["routes"]["started"], 1);
    assert_eq!(health["exchanges"]["failed"], 0);
    // The tick's log line comes before its exchange is counted: ask until it is.
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let (_, health) = send(http.get(format!("{base}/health"))).await;
        if health["exchanges"]["completed"].as_u64() >= Some(1) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{health}");
    }

    let (code, list) = send(http.get(format!("{base}/routes"))).await;
    assert_eq!(code, 200);
    assert_eq!(list[0]["id"], "ticks");
    assert_eq!(list[0]["status"], "Started");
    assert_eq!(list[0]["from"], "timer:ticks");

    let (code, metrics) = send(http.get(format!("{base}/metrics"))).await;
    assert_eq!(code, 200);
    let metrics = metrics.as_str().unwrap_or_default().to_string();
    assert!(
        metrics.contains("camel_exchanges_total{routeId=\"ticks\"}"),
        "{metrics}"
    );

    let (code, r) = send(http.post(format!("{base}/routes/ticks/suspend"))).await;
    assert_eq!((code, r["status"].clone()), (200, "Suspended".into()));
    let (_, health) = send(http.get(format!("{base}/health"))).await;
    assert_eq!(health["routes"]["suspended"], 1);

    // Hot swap from a YAML body: the route keeps its state (suspended) until resumed, then
    // runs the new steps.
    let (code, r) = send(
        http.put(format!("{base}/routes/ticks"))
            .body(route("ticks", "swapped tick")),
    )
    .await;
    assert_eq!(code, 200, "{r}");
    assert_eq!(r["swapped"], true);
    assert_eq!(r["status"], "Suspended");
    let (code, _) = send(http.post(format!("{base}/routes/ticks/resume"))).await;
    assert_eq!(code, 200);
    camel.wait_for("swapped tick").await;

    // Bad input changes nothing and says where and why.
    let (code, r) = send(
        http.put(format!("{base}/routes/ticks"))
            .body("- route:\n    from: {uri: timer:x\n"),
    )
    .await;
    assert_eq!(code, 400);
    assert!(
        r["errors"][0]
            .as_str()
            .unwrap_or_default()
            .contains("PUT /routes/ticks:"),
        "{r}"
    );
    let (code, r) = send(
        http.put(format!("{base}/routes/ticks"))
            .body(route("other", "x")),
    )
    .await;
    assert_eq!(code, 400, "{r}");
    let (code, r) = send(
        http.put(format!("{base}/routes/ticks"))
            .body("- route:\n    id: ticks\n    from: {uri: 'nosuch:x'}\n"),
    )
    .await;
    assert!(code == 400, "{code} {r}");
    let (_, one) = send(http.get(format!("{base}/routes/ticks"))).await;
    assert_eq!(one["status"], "Started", "the running route is unchanged");
    assert_eq!(
        one["definition"]["steps"][0]["log"],
        "swapped tick ${header.CamelTimerCounter}"
    );

    // A new id adds and starts a route; DELETE removes it.
    let (code, r) = send(
        http.put(format!("{base}/routes/second"))
            .body(route("second", "second route")),
    )
    .await;
    assert_eq!(code, 201, "{r}");
    camel.wait_for("second route").await;
    let (_, list) = send(http.get(format!("{base}/routes"))).await;
    assert_eq!(list.as_array().map(Vec::len), Some(2));
    let (code, r) = send(http.delete(format!("{base}/routes/second"))).await;
    assert_eq!((code, r["removed"].clone()), (200, true.into()));
    let (code, _) = send(http.get(format!("{base}/routes/second"))).await;
    assert_eq!(code, 404);

    let (code, _) = send(http.post(format!("{base}/routes/ticks/explode"))).await;
    assert_eq!(code, 404);

    // Definitions are shown without credentials.
    let secret_route = "- route:\n    id: sec\n    from: {uri: 'timer:sec', parameters: {period: 3600000, delay: 3600000}}\n    steps:\n      - to:\n          uri: 'sqs:http://127.0.0.1:9/000000000000/q'\n          parameters: {region: us-east-1, endpoint: 'http://u:pw1@127.0.0.1:9', access_key: AKIA1, secret_key: hunter2}\n      - to:\n          uri: 'outbox:sec'\n          parameters: {datasource: 'postgres://app:hunter3@127.0.0.1:1/db'}\n";
    let (code, r) = send(http.put(format!("{base}/routes/sec")).body(secret_route)).await;
    assert_eq!(code, 201, "{r}");
    let (code, shown) = send(http.get(format!("{base}/routes/sec"))).await;
    assert_eq!(code, 200);
    let shown = shown.to_string();
    for secret in ["hunter2", "hunter3", "pw1", "AKIA1"] {
        assert!(!shown.contains(secret), "`{secret}` shown: {shown}");
    }
    assert!(shown.contains("postgres://***@127.0.0.1:1/db"), "{shown}");

    // Hostile or oversized bodies are refused without harm.
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let prev = format!("*a{}", i - 1);
        bomb.push_str(&format!("a{i}: &a{i} [{}]\n", vec![prev; 10].join(", ")));
    }
    let (code, r) = send(http.put(format!("{base}/routes/bomb")).body(bomb)).await;
    assert_eq!(code, 400, "{r}");
    // The server may answer 413 before reading the whole body and close the connection;
    // the client then sees either the 413 or the reset.
    let big = http
        .put(format!("{base}/routes/big"))
        .body("#".repeat(300 * 1024))
        .send()
        .await;
    if let Ok(resp) = big {
        assert_eq!(resp.status().as_u16(), 413);
    }
    let (code, _) = send(http.get(format!("{base}/routes/big"))).await;
    assert_eq!(code, 404, "nothing was added");
    let (code, r) = send(http.post(format!("{base}/routes/ticks/stop"))).await;
    assert_eq!((code, r["status"].clone()), (200, "Stopped".into()));
    camel.wait_for("route stopped route_id=ticks").await;
    let (code, r) = send(http.post(format!("{base}/routes/ticks/start"))).await;
    assert_eq!((code, r["status"].clone()), (200, "Started".into()));
    // Log lines arrive in order: a tick after this line ran after the restart.
    camel.wait_for("route started route_id=ticks").await;
    camel.wait_for("swapped tick").await;
}

#[test]
fn admin_and_metrics_addresses_are_exclusive() {
    let out = Command::new(env!("CARGO_BIN_EXE_camel"))
        .args([
            "run",
            "examples/hello/routes.yaml",
            "--admin-addr",
            "127.0.0.1:0",
            "--metrics-addr",
            "127.0.0.1:0",
        ])
        .current_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--metrics-addr"), "{err}");
}

/// `GET /routes` with a client that gives up after 100 ms: the listing must answer 200
/// within that, whatever other operations run.
async fn prompt_listing(quick: &reqwest::Client, base: &str) -> serde_json::Value {
    let (code, list) = send(quick.get(format!("{base}/routes"))).await;
    assert_eq!(code, 200, "{list}");
    list
}

fn listed<'a>(list: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    list.as_array()
        .and_then(|routes| routes.iter().find(|r| r["id"] == id))
        .unwrap_or_else(|| panic!("`{id}` is not listed: {list}"))
}

/// A stop that drains a long exchange (10 s) holds only its own route: the listing and
/// /health answer within 100 ms each time, and another route is swapped, stopped and
/// started meanwhile. A client that gives up on the stop does not cut it off halfway.
#[tokio::test]
async fn a_long_stop_of_one_route_blocks_neither_reads_nor_other_routes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    // One exchange, half a second after the start (the admin line is logged first), in
    // flight for 10 s: it waits for a `direct:` consumer that never comes.
    std::fs::write(
        &file,
        format!(
            "- route:\n    id: slow\n    from:\n      uri: timer:slow\n      parameters: {{delay: 500, repeat_count: 1}}\n      steps:\n        - log: 'slow exchange started'\n        - to: {{uri: 'direct:nobody', parameters: {{timeout: 10000}}}}\n{}",
            route("other", "other tick")
        ),
    )
    .unwrap();
    let mut camel = Camel::start(&file);
    let base = camel.base_url().await;
    camel.wait_for("slow exchange started").await;
    let quick = admin_client_builder()
        .timeout(std::time::Duration::from_millis(100))
        .build()
        .unwrap();
    // The changes may take their time, but not the drain's 10 s.
    let changes = admin_client_builder()
        .timeout(std::time::Duration::from_secs(5))
        .build()
        .unwrap();
    prompt_listing(&quick, &base).await; // connects before the clock matters

    // The client gives up long before the stop's drain ends.
    let impatient = admin_client_builder()
        .timeout(std::time::Duration::from_millis(300))
        .build()
        .unwrap();
    let gave_up = impatient
        .post(format!("{base}/routes/slow/stop"))
        .send()
        .await;
    assert!(
        gave_up.is_err(),
        "the stop answered within 300 ms: {gave_up:?}"
    );

    let list = prompt_listing(&quick, &base).await;
    assert_eq!(listed(&list, "slow")["operation"], "stopping", "{list}");
    assert_eq!(listed(&list, "slow")["status"], "Started", "{list}");
    let (code, health) = send(quick.get(format!("{base}/health"))).await;
    assert_eq!(code, 200, "{health}");
    assert_eq!(health["routes"]["started"], 2, "{health}");
    let (code, one) = send(quick.get(format!("{base}/routes/slow"))).await;
    assert_eq!((code, one["operation"].clone()), (200, "stopping".into()));

    let (code, r) = send(
        changes
            .put(format!("{base}/routes/other"))
            .body(route("other", "swapped tick")),
    )
    .await;
    assert_eq!((code, r["swapped"].clone()), (200, true.into()), "{r}");
    camel.wait_for("swapped tick").await;
    prompt_listing(&quick, &base).await;

    let (code, r) = send(changes.post(format!("{base}/routes/other/stop"))).await;
    assert_eq!((code, r["status"].clone()), (200, "Stopped".into()), "{r}");
    let list = prompt_listing(&quick, &base).await;
    assert_eq!(listed(&list, "other")["status"], "Stopped", "{list}");

    let (code, r) = send(changes.post(format!("{base}/routes/other/start"))).await;
    assert_eq!((code, r["status"].clone()), (200, "Started".into()), "{r}");
    let list = prompt_listing(&quick, &base).await;
    assert_eq!(listed(&list, "other")["status"], "Started", "{list}");
    // All of it inside the drain: the stop of `slow` still runs.
    assert_eq!(listed(&list, "slow")["operation"], "stopping", "{list}");

    // The stop still runs to its end.
    camel.wait_for("route stopped route_id=slow").await;
    let http = admin_client();
    let (code, one) = send(http.get(format!("{base}/routes/slow"))).await;
    assert_eq!(code, 200);
    assert_eq!(one["status"], "Stopped");
    assert!(one.get("operation").is_none(), "{one}");
}

/// A body within the size limit whose key paths would take gigabytes to remember: 100
/// nested 1,200-byte keys above 12,000 values.
fn deep_path_document() -> String {
    let mut doc = String::new();
    for d in 0..100 {
        doc.push_str(&format!("{{{}{d}: ", "k".repeat(1_200)));
    }
    let leaves: Vec<String> = (0..12_000).map(|i| format!("l{i}: 1")).collect();
    doc.push_str(&format!("{{{}}}", leaves.join(", ")));
    doc.push_str(&"}".repeat(100));
    assert!(
        doc.len() < 256 * 1024,
        "within the body limit: {}",
        doc.len()
    );
    doc
}

#[tokio::test]
async fn deep_key_paths_are_refused_while_the_api_keeps_answering() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(
        &file,
        "- route:\n    id: ticks\n    from: {uri: 'timer:t', parameters: {period: 10}}\n    steps:\n      - log: tick\n",
    )
    .unwrap();
    let mut camel = Camel::start(&file);
    let base = camel.base_url().await;
    let http = admin_client();
    let body = deep_path_document();
    let put = |name: &str| {
        http.put(format!("{base}/routes/{name}"))
            .body(body.clone())
            .send()
    };
    let (a, b, health) = tokio::join!(
        put("deep1"),
        put("deep2"),
        http.get(format!("{base}/health")).send()
    );
    assert_eq!(health.unwrap().status().as_u16(), 200);
    for answer in [a, b] {
        let answer = answer.unwrap();
        assert_eq!(answer.status().as_u16(), 400);
        let text = answer.text().await.unwrap();
        assert!(text.contains("key paths"), "{text}");
    }
    let (code, _) = send(http.get(format!("{base}/routes/deep1"))).await;
    assert_eq!(code, 404, "nothing was added");
    camel.wait_for("tick").await;
}

fn timer_route(id: &str, word: &str) -> String {
    format!(
        "- route:\n    id: {id}\n    from: {{uri: 'timer:{id}', parameters: {{period: 3600000, delay: 3600000}}}}\n    steps:\n      - log: '{word}'\n"
    )
}

#[tokio::test]
async fn watch_applies_only_what_changed_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(
        &file,
        timer_route("a", "file-a") + &timer_route("b", "file-b"),
    )
    .unwrap();
    let mut camel = Camel::start_with(&file, std::path::Path::new("."), &["--watch"]);
    let base = camel.base_url().await;
    let http = admin_client();
    // The admin API swaps `a` and adds `c`.
    let put = |id: &str, word: &str| {
        http.put(format!("{base}/routes/{id}"))
            .body(timer_route(id, word))
    };
    assert_eq!(send(put("a", "admin-a")).await.0, 200);
    assert_eq!(send(put("c", "admin-c")).await.0, 201);
    // An edit of `b` alone.
    std::fs::write(
        &file,
        timer_route("a", "file-a") + &timer_route("b", "file-b2"),
    )
    .unwrap();
    camel.wait_for("routes reloaded").await;
    let get = |id: &str| http.get(format!("{base}/routes/{id}"));
    let (code, a) = send(get("a")).await;
    assert!(code == 200 && a.to_string().contains("admin-a"), "{a}");
    let (code, b) = send(get("b")).await;
    assert!(code == 200 && b.to_string().contains("file-b2"), "{b}");
    let (code, c) = send(get("c")).await;
    assert!(code == 200 && c.to_string().contains("admin-c"), "{c}");
    // An edit of `a` in the file wins over the admin's version; dropping `b` removes it.
    std::fs::write(&file, timer_route("a", "file-a2")).unwrap();
    camel.wait_for("routes reloaded").await;
    let (_, a) = send(get("a")).await;
    assert!(a.to_string().contains("file-a2"), "{a}");
    assert_eq!(send(get("b")).await.0, 404);
    assert_eq!(send(get("c")).await.0, 200, "the admin's route survives");
}

#[tokio::test]
async fn a_put_racing_deletes_adds_swaps_or_answers_409() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, timer_route("base", "base")).unwrap();
    let mut camel = Camel::start(&file);
    let base = camel.base_url().await;
    let http = admin_client();
    let mut puts = std::collections::BTreeMap::new();
    for _ in 0..40 {
        let put = http
            .put(format!("{base}/routes/x"))
            .body(timer_route("x", "x"))
            .send();
        let delete = http.delete(format!("{base}/routes/x")).send();
        let (put, delete) = tokio::join!(put, delete);
        *puts.entry(put.unwrap().status().as_u16()).or_insert(0) += 1;
        let delete = delete.unwrap().status().as_u16();
        assert!(
            matches!(delete, 200 | 404 | 409),
            "DELETE answered {delete}"
        );
    }
    assert!(
        puts.keys().all(|code| matches!(code, 200 | 201 | 409)),
        "PUT answers: {puts:?}"
    );
}

/// A publish that fails pauses its ordering key for the topic; the admin API lists the
/// key and resumes it.
#[tokio::test]
async fn pubsub_paused_ordering_keys_are_listed_and_resumed_over_http() {
    let Some(emulator) = camel_api::test_support::service_from_env("CAMEL_TEST_PUBSUB_EMULATOR")
    else {
        return;
    };
    // The topic does not exist in the emulator, so the publish fails (404) and pauses k.
    let topic = format!("t{}x{}", std::process::id(), line!());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    let yaml = format!(
        "- route:\n    id: publish\n    from:\n      uri: timer:publish\n      parameters: {{repeat_count: 1}}\n      steps:\n        - to:\n            uri: pubsub:projects/camel-admin/topics/{topic}\n            parameters: {{emulator_host: \"{emulator}\", group_key: k}}\n"
    );
    std::fs::write(&file, yaml).unwrap();
    let mut camel = Camel::start(&file);
    let base = camel.base_url().await;
    let http = admin_client();
    let paused = format!("{base}/sinks/pubsub/projects/camel-admin/topics/{topic}/paused");

    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let (code, body) = send(http.get(&paused)).await;
        assert_eq!(code, 200, "{body}");
        if body["paused"] == serde_json::json!(["k"]) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "k never paused: {body}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let (code, body) = send(http.post(format!("{paused}/k/resume"))).await;
    assert_eq!(code, 200);
    assert_eq!(body["resumed"], true, "{body}");
    let (_, body) = send(http.get(&paused)).await;
    assert_eq!(body["paused"], serde_json::json!([]), "{body}");
    let (_, body) = send(http.post(format!("{paused}/k/resume"))).await;
    assert_eq!(body["resumed"], false, "not paused any more: {body}");
}
