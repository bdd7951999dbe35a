//! `/health/live` and `/health/ready` of `camel run --admin-addr`: ready is 503 (with the
//! reason) while a `sql:` consumer's PostgreSQL is unreachable and 200 once it answers.
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
    let upstream = pg
        .split('@')
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .expect("the URL names a host and port")
        .to_string();
    // A port nothing listens on yet: the proxy opens it later.
    let port = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
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
    let down = until(&bare, &format!("{base}/health/ready"), 503).await;
    assert_eq!(down["status"], "DOWN", "{down}");
    let check = &down["checks"][0];
    assert_eq!(check["name"], "route:poll", "{down}");
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
    let (code, details) = send(http.get(format!("{base}/health/ready?details"))).await;
    assert_eq!(code, 200);
    let names: Vec<&str> = details["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["context", "route:poll"], "{details}");
    let _ = camel.child.kill();
    forwarding.abort();
}
