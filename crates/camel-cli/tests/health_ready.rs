//! `/health/live` and `/health/ready` of `camel run --admin-addr`: ready is 503 (with the
//! reason) while a `sql:` consumer's PostgreSQL is unreachable and 200 once it answers;
//! the same for a database only a `to: sql:` step uses (no consumer to notice it; the check names the database without its user or password).
//! The database sits behind a TCP proxy the test opens and closes; the probes need no
//! token, their `?details` does.

mod support;

use support::admin_api::{admin_client, send, Camel, LIMIT};
use tokio::net::{TcpListener, TcpStream};

/// Forwards every connection on `listener` to PostgreSQL until the task is aborted.
async fn proxy(listener: TcpListener, to: String) {
    loop {
        let Ok((mut inbound, _)) = listener.accept().await else {
            return;
        };
        let to = to.clone();
        tokio::spawn(async move {
            if let Ok(mut outbound) = TcpStream::connect(&to).await {
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            }
        });
    }
}

/// PostgreSQL's `host:port` from its URL, and a port nothing listens on yet (the proxy
/// opens it later).
async fn upstream_and_free_port(pg: &str) -> (String, u16) {
    let upstream = pg
        .split('@')
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .expect("the URL names a host and port")
        .to_string();
    let port = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    (upstream, port)
}

/// Asks `url` until it answers `code`; returns the body.
async fn until(http: &reqwest::Client, url: &str, code: u16) -> serde_json::Value {
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let (got, body) = send(http.get(url)).await;
        if got == code {
            return body;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{url}: still {got}, not {code}: {body}"
        );
        // A probe's pace, not a wait for the result: the loop ends on the answer.
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_follows_the_database() {
    let Some(pg) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let (upstream, port) = upstream_and_free_port(&pg).await;
    let url = format!("postgres://postgres@127.0.0.1:{port}/test?connect_timeout=1");
    let routes = format!(
        "- route:\n    id: poll\n    from:\n      uri: 'sql:select 1 as one'\n      parameters: {{datasource: '{url}', delay: 100ms, initial_delay: 0s}}\n      steps:\n        - log: polled\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, routes).unwrap();
    let mut camel = Camel::start(&file);
    let base = camel.base_url().await;
    let http = admin_client();
    let bare = reqwest::Client::new();

    let (code, live) = send(bare.get(format!("{base}/health/live"))).await;
    assert_eq!((code, live["status"].as_str()), (200, Some("UP")));

    // Down: 503, and the body says which check and why, without a token.
    // The database's ping may tell first; the consumer's own check follows at its poll.
    let deadline = tokio::time::Instant::now() + LIMIT;
    let (down, check) = loop {
        let down = until(&bare, &format!("{base}/health/ready"), 503).await;
        let route = down["checks"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["name"] == "route:poll"))
            .cloned();
        if let Some(check) = route {
            break (down, check);
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the route's check is down: {down}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(down["status"], "DOWN", "{down}");
    assert!(
        check["message"]
            .as_str()
            .unwrap_or_default()
            .contains("consumer is failing"),
        "{down}"
    );
    // Per-check detail needs the token.
    let (code, _) = send(bare.get(format!("{base}/health/ready?details"))).await;
    assert_eq!(code, 401);
    let (code, details) = send(http.get(format!("{base}/health?details"))).await;
    assert_eq!(code, 503, "{details}");
    assert_eq!(details["ready"], "DOWN", "{details}");
    assert_eq!(details["checks"][0]["name"], "context", "{details}");

    // The database comes back: ready within a poll.
    let listener = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
    let forwarding = tokio::spawn(proxy(listener, upstream));
    let up = until(&bare, &format!("{base}/health/ready"), 200).await;
    assert_eq!(up["status"], "UP", "{up}");
    // The consumer made its pool at its first poll; the database's check shows from the
    // probe's next round (every 5 s).
    let deadline = tokio::time::Instant::now() + LIMIT;
    let details = loop {
        let (code, details) = send(http.get(format!("{base}/health/ready?details"))).await;
        assert_eq!(code, 200, "{details}");
        if details["checks"].as_array().is_some_and(|c| c.len() == 3) {
            break details;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no database check: {details}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let names: Vec<&str> = details["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!((names[0], names[2]), ("context", "route:poll"), "{details}");
    assert!(
        names[1].starts_with(&format!("datasource:postgres://***@127.0.0.1:{port}/test")),
        "the consumer's database is probed too: {details}"
    );
    let _ = camel.child.kill();
    forwarding.abort();
}

/// A database used only by a `to: sql:` step (a timer that fires once an hour): no
/// consumer polls it, so readiness pings it. 503 naming the database (without its
/// password) while the proxy is closed, 200 once it forwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_follows_a_database_only_a_producer_uses() {
    let Some(pg) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let (upstream, port) = upstream_and_free_port(&pg).await;
    let url = format!("postgres://postgres:s3cret@127.0.0.1:{port}/test?connect_timeout=1");
    let routes = format!(
        "- route:\n    id: hourly\n    from:\n      uri: 'timer:hourly?period=3600000&delay=3600000'\n      steps:\n        - to:\n            uri: 'sql:select 1 as one'\n            parameters: {{datasource: '{url}'}}\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, routes).unwrap();
    let mut camel = Camel::start(&file);
    let base = camel.base_url().await;
    let bare = reqwest::Client::new();

    let down = until(&bare, &format!("{base}/health/ready"), 503).await;
    let checks = down["checks"].as_array().cloned().unwrap_or_default();
    assert_eq!(checks.len(), 1, "only the database is down: {down}");
    let name = checks[0]["name"].as_str().unwrap_or_default();
    assert!(
        name.starts_with(&format!("datasource:postgres://***@127.0.0.1:{port}/test")),
        "{down}"
    );
    assert!(!down.to_string().contains("s3cret"), "{down}");
    assert!(
        checks[0]["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("the database does not answer"),
        "{down}"
    );

    let listener = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
    let forwarding = tokio::spawn(proxy(listener, upstream));
    let up = until(&bare, &format!("{base}/health/ready"), 200).await;
    assert_eq!(up["status"], "UP", "{up}");
    let _ = camel.child.kill();
    forwarding.abort();
}
