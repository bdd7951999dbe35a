//! The outbox relay through the binary when its database misbehaves (hardening round 3,
//! items 9 and 10): a second relay on one SQLite file however it is reached, `/health`
//! while PostgreSQL refuses connections or goes away under a running relay, and a stop
//! while a connection attempt is pending.

mod support;

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use camel_outbox::{Datasource, NewMessage, Outbox, OutboxConfig};
use serde_json::Value;
use support::admin_api::{send, Camel, LIMIT};
use support::text;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

fn write_routes(dir: &Path, yaml: &str) -> std::path::PathBuf {
    let path = dir.join("routes.yaml");
    std::fs::write(&path, yaml).unwrap();
    path
}

/// Polls `GET /health` until `cond` holds on (code, body) or `limit` passes; returns
/// the body and how long it took.
async fn health_within(
    base: &str,
    limit: Duration,
    what: &str,
    cond: impl Fn(u16, &Value) -> bool,
) -> (Value, Duration) {
    let http = reqwest::Client::new();
    let started = Instant::now();
    loop {
        let (code, body) = send(http.get(format!("{base}/health"))).await;
        if cond(code, &body) {
            return (body, started.elapsed());
        }
        assert!(
            started.elapsed() < limit,
            "{what} within {limit:?}: last /health {code} {body}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `url` with its host and port replaced by 127.0.0.1:`port`.
fn via_port(url: &str, port: u16) -> String {
    let at = url.find('@').map_or("postgres://".len(), |i| i + 1);
    let slash = url[at..].find('/').map_or(url.len(), |i| at + i);
    format!("{}127.0.0.1:{port}{}", &url[..at], &url[slash..])
}

/// The PostgreSQL server's address in `url` (a loopback test server).
fn upstream(url: &str) -> SocketAddr {
    let at = url.find('@').map_or("postgres://".len(), |i| i + 1);
    let slash = url[at..].find('/').map_or(url.len(), |i| at + i);
    let host_port = &url[at..slash];
    let host_port = if host_port.contains(':') {
        host_port.to_string()
    } else {
        format!("{host_port}:5432")
    };
    let host_port = host_port.replace("localhost", "127.0.0.1");
    host_port.parse().expect("a loopback address")
}

/// A TCP proxy in front of PostgreSQL that a test can stop (every connection closed, the
/// port refusing) and start again on the same port: PostgreSQL going away and coming back
/// without stopping the shared server.
struct Proxy {
    port: u16,
    upstream: SocketAddr,
    tasks: Option<JoinSet<()>>,
}

impl Proxy {
    async fn start(upstream: SocketAddr) -> Proxy {
        let mut proxy = Proxy {
            port: 0,
            upstream,
            tasks: None,
        };
        proxy.listen().await;
        proxy
    }

    async fn listen(&mut self) {
        let listener = TcpListener::bind(("127.0.0.1", self.port)).await.unwrap();
        self.port = listener.local_addr().unwrap().port();
        let upstream = self.upstream;
        let mut tasks = JoinSet::new();
        tasks.spawn(async move {
            let mut conns = JoinSet::new();
            while let Ok((mut client, _)) = listener.accept().await {
                conns.spawn(async move {
                    if let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
        });
        self.tasks = Some(tasks);
    }

    /// Closes the port and every connection through it (the tasks are aborted).
    async fn stop(&mut self) {
        if let Some(mut tasks) = self.tasks.take() {
            tasks.shutdown().await;
        }
    }
}

/// A port where nothing listens.
async fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    l.local_addr().unwrap().port()
}

#[tokio::test]
async fn a_relay_whose_database_refuses_connections_is_down_at_once() {
    let port = closed_port().await;
    let dir = tempfile::tempdir().unwrap();
    let routes = write_routes(
        dir.path(),
        &format!(
            "- route:\n    id: relay\n    from:\n      uri: outbox:refused\n      parameters: {{datasource: 'postgres://postgres@127.0.0.1:{port}/test'}}\n      steps:\n        - log: \"relayed ${{body}}\"\n"
        ),
    );
    let mut camel = Camel::start_in(&routes, dir.path());
    let base = camel.base_url().await;
    // The pool alone would report after its 30 s connect timeout.
    let (down, took) = health_within(&base, Duration::from_secs(5), "DOWN", |code, b| {
        code == 503 && b["failing"][0]["id"] == "relay"
    })
    .await;
    let reason = down["failing"][0]["reason"].to_string();
    assert!(
        reason.contains(&port.to_string()),
        "names the database: {reason}"
    );
    assert!(
        reason.to_lowercase().contains("refused"),
        "says why: {reason}"
    );
    eprintln!("DOWN after {took:?}");
}

#[tokio::test]
async fn health_follows_postgres_going_away_under_a_running_relay_and_coming_back() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let mut proxy = Proxy::start(upstream(&url)).await;
    let name = format!("hard_{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    let routes = write_routes(
        dir.path(),
        &format!(
            "- route:\n    id: relay\n    from:\n      uri: outbox:{name}\n      parameters: {{datasource: '{}', poll_interval: 50ms, takeover_interval: 100ms}}\n      steps:\n        - log: \"relayed ${{body}}\"\n",
            via_port(&url, proxy.port)
        ),
    );
    let mut camel = Camel::start_in(&routes, dir.path());
    let base = camel.base_url().await;
    camel.wait_for("outbox partition owned").await;
    health_within(&base, LIMIT, "UP", |code, _| code == 200).await;
    let direct = Datasource::connect(&url).unwrap();
    let outbox = Outbox::open_with_stored_partitions(direct.clone(), OutboxConfig::new(&name))
        .await
        .unwrap();
    let publish = |body: &'static str| {
        let outbox = outbox.clone();
        let direct = direct.clone();
        async move {
            let Datasource::Postgres(pool) = &direct else {
                unreachable!()
            };
            let mut tx = pool.begin().await.unwrap();
            outbox
                .publish(&mut tx, NewMessage::text(body))
                .await
                .unwrap();
            tx.commit().await.unwrap();
        }
    };
    publish("one").await;
    camel.wait_for("relayed one").await;

    proxy.stop().await;
    let (_, took) = health_within(&base, Duration::from_secs(5), "DOWN", |code, b| {
        code == 503 && b["failing"][0]["id"] == "relay"
    })
    .await;
    eprintln!("DOWN {took:?} after the database went away");

    proxy.listen().await;
    let (_, took) = health_within(&base, LIMIT, "UP again", |code, _| code == 200).await;
    eprintln!("UP {took:?} after the database came back");
    publish("two").await;
    camel.wait_for("relayed two").await;
    drop(camel);
    let Datasource::Postgres(pool) = &direct else {
        unreachable!()
    };
    for t in ["", "_dead", "_meta"] {
        let _ = sqlx::query(&format!("DROP TABLE IF EXISTS camel_outbox_{name}{t}"))
            .execute(pool)
            .await;
    }
}

#[tokio::test]
async fn a_stop_during_a_pending_connect_ends_at_once_and_says_so() {
    // Accepts connections and never answers: a connection attempt that hangs.
    let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = silent.local_addr().unwrap().port();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            open.push(socket);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let routes = write_routes(
        dir.path(),
        &format!(
            "- route:\n    id: relay\n    from:\n      uri: outbox:silent\n      parameters: {{datasource: 'postgres://postgres@127.0.0.1:{port}/test?connect_timeout=60'}}\n      steps:\n        - log: \"relayed ${{body}}\"\n"
        ),
    );
    let mut camel = Camel::start_in(&routes, dir.path());
    let base = camel.base_url().await;
    // A database that does not answer is reported while the attempt goes on.
    health_within(&base, Duration::from_secs(5), "DOWN", |code, b| {
        code == 503 && b["failing"][0]["id"] == "relay"
    })
    .await;
    let pid = camel.child.id().to_string();
    let stopped = Instant::now();
    assert!(std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let status = loop {
        if let Some(status) = camel.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            stopped.elapsed() < Duration::from_secs(5),
            "still running 5 s after SIGTERM; log:\n{}",
            camel.log().join("\n")
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    eprintln!("exited {:?} after SIGTERM", stopped.elapsed());
    camel
        .wait_for("stopped while waiting for the outbox database")
        .await;
    // Nothing was taken in, so nothing was lost: the CLI's status for a complete stop.
    assert_eq!(status.code(), Some(0), "{}", camel.log().join("\n"));
    held.abort();
}

/// A second `camel run` relaying the same SQLite outbox, reached through `datasource`.
fn second_relay(dir: &Path, datasource: &str) -> std::process::Output {
    let routes = dir.join("second.yaml");
    std::fs::write(
        &routes,
        format!(
            "- route:\n    id: relay\n    from:\n      uri: outbox:orders\n      parameters: {{datasource: '{datasource}'}}\n      steps:\n        - log: \"second relayed ${{body}}\"\n"
        ),
    )
    .unwrap();
    std::process::Command::new(env!("CARGO_BIN_EXE_camel"))
        .args(["run", routes.to_str().unwrap(), "--max-seconds", "5"])
        .current_dir(dir)
        .output()
        .unwrap()
}

#[cfg(unix)]
#[tokio::test]
async fn a_second_sqlite_relay_through_a_symlink_or_after_a_lock_file_was_deleted_refuses() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    let routes = write_routes(
        dir.path(),
        "- route:\n    id: relay\n    from:\n      uri: outbox:orders\n      parameters: {datasource: 'sqlite:data/outbox.db'}\n      steps:\n        - log: \"relayed ${body}\"\n",
    );
    let mut first = Camel::start_in(&routes, dir.path());
    first.wait_for("route started").await;
    std::os::unix::fs::symlink(
        dir.path().join("data/outbox.db"),
        dir.path().join("link.db"),
    )
    .unwrap();
    let through_link = second_relay(dir.path(), "sqlite:link.db");
    let out = text(&through_link);
    assert!(!through_link.status.success(), "{out}");
    assert!(out.contains("another relay is already running"), "{out}");
    // Whatever lies beside the database (an earlier version's lock file) can go.
    for entry in std::fs::read_dir(dir.path().join("data")).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().ends_with(".relay-lock") {
            std::fs::remove_file(path).unwrap();
        }
    }
    let after_delete = second_relay(dir.path(), "sqlite:data/outbox.db");
    let out = text(&after_delete);
    assert!(!after_delete.status.success(), "{out}");
    assert!(out.contains("another relay is already running"), "{out}");
    // The first relay still runs, alone.
    assert!(first.child.try_wait().unwrap().is_none());
}
