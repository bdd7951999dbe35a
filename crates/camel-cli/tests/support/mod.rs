//! Running the `camel` binary from the tests.
#![allow(dead_code, unreachable_pub)]

pub mod admin_api;
pub mod otlp;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

fn command(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_camel"));
    cmd.args(args)
        .env("RUST_LOG", "info")
        // The token `--admin-addr` runs take (admin_api::TOKEN).
        .env("CAMEL_ADMIN_TOKEN", admin_api::TOKEN)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    cmd
}

/// Runs the binary from the workspace root to the end.
pub fn camel(args: &[&str]) -> Output {
    command(args).output().expect("the camel binary runs")
}

/// Its standard error.
/// The names of the files (not folders) in `dir`, sorted; empty when it does not exist.
pub fn file_names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter(|e| e.path().is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Its standard output and error.
pub fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(o))
}

/// Starts the binary; its log lines arrive on the receiver, in order.
pub fn spawn(args: &[&str]) -> (Child, Receiver<String>) {
    spawn_with_env(args, &[])
}

/// [`spawn`] with environment variables set for the process.
pub fn spawn_with_env(args: &[&str], env: &[(&str, &str)]) -> (Child, Receiver<String>) {
    let mut child = command(args)
        .envs(env.iter().copied())
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("the camel binary starts");
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// The next log line containing `needle` (at most 20 s away).
pub fn wait_line(rx: &Receiver<String>, needle: &str) -> String {
    loop {
        match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(line) if line.contains(needle) => return line,
            Ok(_) => {}
            Err(e) => panic!("no line with `{needle}`: {e}"),
        }
    }
}

/// The port in a `serving http://ADDR/path` log line of a `platform-http:` route.
pub fn serving_port(line: &str) -> u16 {
    line.split("serving http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|addr| addr.rsplit(':').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in `{line}`"))
}

/// Drops the tables of outbox `name` (default table name) on the PostgreSQL at `url`.
pub fn drop_outbox_tables(url: &str, name: &str) {
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    rt.block_on(async {
        let pool = sqlx::PgPool::connect(url).await.expect("connect");
        for suffix in ["", "_dead", "_meta"] {
            sqlx::query(&format!("DROP TABLE IF EXISTS camel_outbox_{name}{suffix}"))
                .execute(&pool)
                .await
                .expect("drop table");
        }
    });
}

/// Publishes `messages` in one transaction on the outbox's SQLite database.
pub async fn publish_sqlite(
    outbox: &camel_outbox::Outbox,
    messages: Vec<camel_outbox::NewMessage>,
) -> Vec<i64> {
    let camel_outbox::Datasource::Sqlite(pool) = outbox.datasource() else {
        panic!("a SQLite outbox")
    };
    let mut conn = pool.acquire().await.unwrap();
    let mut tx = sqlx::Connection::begin_with(&mut *conn, "BEGIN IMMEDIATE")
        .await
        .unwrap();
    let ids = outbox.publish_batch(&mut tx, messages).await.unwrap();
    tx.commit().await.unwrap();
    ids
}

/// Writes `body` to `dir/name`; returns the path as text.
pub fn write_file(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path.display().to_string()
}

/// Runs `args` until `--max-messages` is reached (60 s at most); returns the log.
pub fn run_until(args: &[&str], messages: &str) -> String {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--max-messages", messages, "--max-seconds", "60"]);
    let out = camel(&all);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("max-messages reached"), "{log}");
    log
}

/// Writes `yaml` to `route.camel.yaml` in a fresh folder; the folder lives as long as the
/// guard.
pub fn yaml_file(yaml: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("route.camel.yaml");
    std::fs::write(&path, yaml).unwrap();
    let path = path.display().to_string();
    (dir, path)
}

/// Runs `yaml` to `max` messages (60 s at most); returns its log.
pub fn run_yaml(yaml: &str, max: &str) -> String {
    let (_dir, path) = yaml_file(yaml);
    let out = camel(&["run", &path, "--max-messages", max, "--max-seconds", "60"]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("max-messages reached"), "{log}");
    log
}

/// `camel validate` on `yaml`: whether it passed, and everything it printed.
pub fn validate_yaml(yaml: &str) -> (bool, String) {
    let (_dir, path) = yaml_file(yaml);
    let out = camel(&["validate", &path]);
    (out.status.success(), text(&out))
}

/// Creates an SQS queue on moto at `endpoint` (unsigned Query API; moto tells services
/// apart by the credential scope of the signature).
pub fn create_sqs_queue(endpoint: &str, queue: &str) {
    let created = Command::new("curl")
        .args(["-s", "--max-time", "10", "-X", "POST", &format!("{endpoint}/")])
        .args(["-d", "Action=CreateQueue", "-d", &format!("QueueName={queue}")])
        .args([
            "-H",
            "Authorization: AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=0",
        ])
        .output()
        .expect("curl runs");
    assert!(
        String::from_utf8_lossy(&created.stdout).contains(queue),
        "moto created the queue: {created:?}"
    );
}

/// A child process killed when the test ends, passed or failed.
pub struct KillOnDrop(pub Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A name no other run of the test uses (`camel-cli-WHAT-PID-NANOS`): for buckets,
/// folders and topics on a shared service.
pub fn unique_name(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("camel-cli-{what}-{}-{nanos}", std::process::id())
}

/// `PID x MILLIS`: an id no other run of the test uses, to build names from (streams,
/// subjects and keys, where each service has its own rules for names).
pub fn run_id() -> String {
    format!(
        "{}x{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0)
    )
}

/// Polls `done` every `every` until it holds; fails the test naming `what` when `within`
/// has passed.
pub fn wait_until(what: &str, within: Duration, every: Duration, done: &dyn Fn() -> bool) {
    let deadline = std::time::Instant::now() + within;
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(every);
    }
}

/// Drops a CDC test's replication slot (ending whatever still streams from it), its
/// publication, its table and the `NAME_sink` table, on the PostgreSQL at `url`.
pub struct CdcCleanup {
    pub url: String,
    pub name: String,
}

impl Drop for CdcCleanup {
    fn drop(&mut self) {
        let n = &self.name;
        let psql = |sql: &str| {
            Command::new("psql")
                .args([self.url.as_str(), "-qtA", "-c", sql])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .unwrap_or_default()
        };
        for _ in 0..50 {
            psql(&format!("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '{n}' AND active_pid IS NOT NULL"));
            psql(&format!("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '{n}' AND NOT active"));
            if psql(&format!(
                "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '{n}'"
            )) == "0"
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        psql(&format!(
            "DROP PUBLICATION IF EXISTS {n}; DROP TABLE IF EXISTS {n}; DROP TABLE IF EXISTS {n}_sink"
        ));
    }
}
