//! The console's operations reads and repairs on the real binary: the outboxes
//! (`GET /outboxes`: counts, partition owners, dead messages; `POST
//! /outboxes/{name}/retry-dead` and `/discard`), the batching sinks (`GET /sinks`: queue,
//! in flight, refusals), and the vendored Mermaid renderer the route page loads.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::admin_api::{admin_client, send, Camel, TOKEN};

const LIMIT: Duration = Duration::from_secs(30);

fn json_client() -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {TOKEN}").parse().unwrap(),
    );
    headers.insert(
        reqwest::header::CONTENT_TYPE,
        "application/json".parse().unwrap(),
    );
    reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .unwrap()
}

/// Three messages published to outbox `name` and a relay that refuses each once, so
/// all three die (`max_attempts: 1`), on `datasource` (the embedded SQLite when empty).
fn failing_outbox(name: &str, datasource: &str) -> String {
    let ds = if datasource.is_empty() {
        String::new()
    } else {
        format!(", datasource: '{datasource}'")
    };
    format!(
        r#"- route:
    id: publish
    from: {{uri: 'timer:orders', parameters: {{period: 10, repeat_count: 3}}}}
    steps:
      - set_header: {{name: order_id, simple: 'order-${{header.CamelTimerCounter}}'}}
      - to: {{uri: 'outbox:{name}', parameters: {{group_key: '${{header.order_id}}', partitions: 2, max_attempts: 1{ds}}}}}
- route:
    id: relay
    from: {{uri: 'outbox:{name}', parameters: {{partitions: 2, max_attempts: 1{ds}}}}}
    steps:
      - throw_exception: {{exception_type: java.lang.IllegalStateException, message: 'the destination refuses it'}}
"#
    )
}

/// Polls `GET /outboxes` until the outbox `name` satisfies `done`; returns it.
async fn outbox_until(base: &str, name: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let (code, all) = send(admin_client().get(format!("{base}/outboxes"))).await;
        assert_eq!(code, 200, "{all}");
        let found = all
            .as_array()
            .and_then(|a| a.iter().find(|o| o["name"] == name))
            .cloned();
        match found {
            Some(o) if done(&o) => return o,
            other if tokio::time::Instant::now() > deadline => {
                panic!("outbox `{name}` never got there: {other:?}")
            }
            _ => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// The sum of `camel_outbox_dead_total` for `name` in `/metrics`.
async fn dead_total(base: &str, name: &str) -> f64 {
    let (_, text) = send(admin_client().get(format!("{base}/metrics"))).await;
    let label = format!("outbox=\"{name}\"");
    text.as_str()
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("camel_outbox_dead_total{") && l.contains(&label))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// The outbox page's reads and repairs against one database; `remote_owners`: the
/// database names the session holding each partition (PostgreSQL).
async fn outbox_page(name: &str, datasource: &str, remote_owners: bool) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, failing_outbox(name, datasource)).unwrap();
    let mut camel = Camel::start_in(&file, dir.path());
    let base = camel.base_url().await;
    let o = outbox_until(&base, name, |o| {
        o["dead"] == 3
            && o["partitions"]
                .as_array()
                .is_some_and(|p| p.iter().all(|p| p["this_process"] == true))
    })
    .await;
    assert_eq!(o["pending"], 0, "{o}");
    let partitions = o["partitions"].as_array().unwrap();
    assert_eq!(partitions.len(), 2, "{o}");
    for (i, p) in partitions.iter().enumerate() {
        assert_eq!(p["partition"], i, "{o}");
        let session = p["session"].as_str();
        if remote_owners {
            assert!(session.is_some_and(|s| s.starts_with("pid ")), "{o}");
        } else {
            assert_eq!(p["session"], Value::Null, "{o}");
        }
    }
    let dead = o["dead_messages"].as_array().unwrap();
    assert_eq!(dead.len(), 3, "{o}");
    assert!(
        dead.iter().all(|d| d["attempts"] == 1
            && d["last_error"]
                .as_str()
                .is_some_and(|e| e.contains("the destination refuses it"))
            && d["group_key"]
                .as_str()
                .is_some_and(|g| g.starts_with("order-"))),
        "{o}"
    );
    let first = dead[0]["id"].as_i64().unwrap();

    // Repairs are changes: the token, a JSON body, and no foreign Origin.
    let retry = format!("{base}/outboxes/{name}/retry-dead");
    let one = json!({"ids": [first]}).to_string();
    let refusals = [
        (
            reqwest::Client::new()
                .post(&retry)
                .header("content-type", "application/json"),
            401,
        ),
        (
            json_client()
                .post(&retry)
                .header("content-type", "text/plain"),
            415,
        ),
        (
            json_client()
                .post(&retry)
                .header("origin", "http://evil.example"),
            403,
        ),
    ];
    for (request, expected) in refusals {
        let resp = request.body(one.clone()).send().await.unwrap();
        assert_eq!(resp.status(), expected);
    }
    let (code, v) = send(json_client().post(&retry).body("{}")).await;
    assert_eq!(code, 400, "{v}");
    let (code, v) = send(json_client().post(&retry).body(r#"{"ids":[1],"all":true}"#)).await;
    assert_eq!(code, 400, "{v}");

    // Revived, the message is relayed again (and dies again: one more dead).
    let before = dead_total(&base, name).await;
    let (code, v) = send(
        json_client()
            .post(&retry)
            .body(json!({"ids": [first]}).to_string()),
    )
    .await;
    assert_eq!((code, &v["revived"]), (200, &json!(1)), "{v}");
    let deadline = tokio::time::Instant::now() + LIMIT;
    while dead_total(&base, name).await < before + 1.0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the revived message was not relayed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    outbox_until(&base, name, |o| o["dead"] == 3).await;

    // Discarded, it is gone for good.
    let discard = format!("{base}/outboxes/{name}/discard");
    let (code, v) = send(
        json_client()
            .post(&discard)
            .body(json!({"id": first}).to_string()),
    )
    .await;
    assert_eq!((code, &v["discarded"]), (200, &json!(true)), "{v}");
    let o = outbox_until(&base, name, |o| o["dead"] == 2).await;
    assert!(
        o["dead_messages"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["id"] != first),
        "{o}"
    );
    let (code, v) = send(
        json_client()
            .post(&discard)
            .body(json!({"id": first}).to_string()),
    )
    .await;
    assert_eq!((code, &v["discarded"]), (200, &json!(false)), "{v}");

    // Every dead message at once.
    let (code, v) = send(json_client().post(&retry).body(r#"{"all":true}"#)).await;
    assert_eq!((code, &v["revived"]), (200, &json!(2)), "{v}");

    let (code, _) = send(
        json_client()
            .post(format!("{base}/outboxes/nope/discard"))
            .body(r#"{"id":1}"#),
    )
    .await;
    assert_eq!(code, 404);
    let (code, _) = send(
        json_client()
            .post(format!("{base}/outboxes/{name}/explode"))
            .body("{}"),
    )
    .await;
    assert_eq!(code, 404);
    // Reads need the token once one is configured.
    let resp = reqwest::Client::new()
        .get(format!("{base}/outboxes"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
}

#[tokio::test]
async fn the_outbox_page_shows_counts_owners_and_dead_messages_and_repairs_them_on_sqlite() {
    outbox_page("orders", "", false).await;
}

#[tokio::test]
async fn on_postgres_the_outbox_page_names_the_session_holding_each_partition() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let name = format!("console_{}", std::process::id());
    outbox_page(&name, &url, true).await;
    let drop = (url.clone(), name.clone());
    tokio::task::spawn_blocking(move || support::drop_outbox_tables(&drop.0, &drop.1))
        .await
        .unwrap();
}

#[tokio::test]
async fn the_sinks_page_shows_a_destinations_queue_and_its_refusals() {
    let Some(nats) = camel_api::test_support::service_from_env("CAMEL_TEST_NATS_URL") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    let subject = format!("camel.console.sinks{}", std::process::id());
    // Eight parts at once to a sink that holds one entry for 3 s: one waits in the
    // queue, the others are refused at once.
    std::fs::write(
        &file,
        format!(
            r#"- route:
    id: burst
    from: {{uri: 'timer:burst', parameters: {{period: 10, repeat_count: 1}}}}
    steps:
      - set_body: {{constant: "a\nb\nc\nd\ne\nf\ng\nh"}}
      - split:
          parallel_processing: true
          steps:
            - to: "nats:{subject}?jetstream=false&linger_ms=3000&queue_max=1&servers={nats}"
"#
        ),
    )
    .unwrap();
    let mut camel = Camel::start_in(&file, dir.path());
    let base = camel.base_url().await;
    let deadline = tokio::time::Instant::now() + LIMIT;
    let mut saw_queued = false;
    let row = loop {
        let (code, all) = send(admin_client().get(format!("{base}/sinks"))).await;
        assert_eq!(code, 200, "{all}");
        let row = all
            .as_array()
            .and_then(|a| {
                a.iter().find(|s| {
                    s["sink"]
                        .as_str()
                        .is_some_and(|s| s.starts_with(&format!("nats:{subject}")))
                })
            })
            .cloned();
        if let Some(r) = &row {
            saw_queued |= r["live"] == true && r["queued"] == 1;
            if saw_queued && r["refused"].as_u64().is_some_and(|n| n >= 1) {
                break r.clone();
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never saw the queue and refusals: {row:?}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    assert!(
        row["refused_by_reason"]["entries"]
            .as_u64()
            .is_some_and(|n| n >= 1),
        "{row}"
    );
    assert!(row["requests_in_flight"].as_u64().is_some(), "{row}");
    assert!(
        !row["sink"].as_str().unwrap().contains(&nats),
        "no server URL in a label: {row}"
    );
}

#[tokio::test]
async fn the_vendored_mermaid_loads_without_the_token_compressed_as_stored() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, "- route:\n    id: t\n    from: {uri: 'timer:t', parameters: {period: 3600000}}\n    steps:\n      - log: t\n").unwrap();
    let mut camel = Camel::start_in(&file, dir.path());
    let base = camel.base_url().await;
    let url = format!("{base}/console/vendor/mermaid-12.3.0.min.js");
    let stored = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/console/vendor/mermaid.min.js.gz"
    ))
    .unwrap();
    let gz = reqwest::Client::new()
        .get(&url)
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(gz.status(), 200);
    assert_eq!(gz.headers()["content-encoding"], "gzip");
    assert!(gz.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/javascript"));
    assert!(gz.headers().contains_key("content-security-policy"));
    assert_eq!(gz.bytes().await.unwrap().as_ref(), stored.as_slice());
    // A client that takes no gzip gets the script itself.
    let plain = reqwest::Client::new().get(&url).send().await.unwrap();
    assert_eq!(plain.status(), 200);
    assert!(plain.headers().get("content-encoding").is_none());
    let text = plain.text().await.unwrap();
    assert!(
        text.len() > stored.len() * 2 && text.contains("mermaid"),
        "{}",
        text.len()
    );
    let ops = reqwest::Client::new()
        .get(format!("{base}/console/ops.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(ops.status(), 200);
}
