//! The running binary with its admin API, for tests that talk to it over HTTP.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

pub const LIMIT: Duration = Duration::from_secs(20);

/// The admin token of the binaries these tests start (in `CAMEL_ADMIN_TOKEN`).
pub const TOKEN: &str = "test-admin-token-0123456789";

/// The headers an operator's client sends: the token, and YAML as the body type.
pub fn admin_headers() -> reqwest::header::HeaderMap {
    let mut headers = reqwest::header::HeaderMap::new();
    let bearer = format!("Bearer {TOKEN}");
    headers.insert(reqwest::header::AUTHORIZATION, bearer.parse().unwrap());
    headers.insert(
        reqwest::header::CONTENT_TYPE,
        "application/yaml".parse().unwrap(),
    );
    headers
}

/// A client that sends [`admin_headers`] with every request (a request's own headers
/// win).
pub fn admin_client() -> reqwest::Client {
    admin_client_builder().build().unwrap()
}

/// [`admin_client`]'s builder, for a timeout.
pub fn admin_client_builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder().default_headers(admin_headers())
}

/// The running binary and the lines of its log.
pub struct Camel {
    pub child: Child,
    lines: mpsc::UnboundedReceiver<String>,
    seen: Vec<String>,
}

impl Camel {
    pub fn start(routes: &std::path::Path) -> Camel {
        Self::start_in(routes, Path::new("."))
    }

    /// Like `start`, with `dir` as the working directory (where `camel-data/` goes).
    pub fn start_in(routes: &std::path::Path, dir: &Path) -> Camel {
        Self::start_with(routes, dir, &[])
    }

    /// Like `start_in`, with more arguments for `camel run`.
    pub fn start_with(routes: &std::path::Path, dir: &Path, more: &[&str]) -> Camel {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_camel"));
        cmd.args([
            "run",
            routes.to_str().unwrap(),
            "--admin-addr",
            "127.0.0.1:0",
        ])
        .args(more)
        .env("CAMEL_ADMIN_TOKEN", TOKEN);
        Self::launch(cmd, dir)
    }

    /// `camel run ARGS` exactly as given: no admin address added, and no token unless
    /// the arguments name one.
    pub fn start_args(args: &[&str], dir: &Path) -> Camel {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_camel"));
        cmd.arg("run").args(args).env_remove("CAMEL_ADMIN_TOKEN");
        Self::launch(cmd, dir)
    }

    fn launch(mut cmd: Command, dir: &Path) -> Camel {
        let mut child = cmd
            .current_dir(dir)
            .env("RUST_LOG", "info")
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("the camel binary runs");
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Camel {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// The admin API's address, read from its log line.
    pub async fn base_url(&mut self) -> String {
        let line = self.wait_for("admin API listening").await;
        let addr = line
            .split("addr=")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .expect("the log names the address");
        format!("http://{addr}")
    }

    /// Every log line read so far, after taking those already written.
    pub fn log(&mut self) -> &[String] {
        while let Ok(line) = self.lines.try_recv() {
            self.seen.push(line);
        }
        &self.seen
    }

    /// Waits for a log line containing `needle`; returns it.
    pub async fn wait_for(&mut self, needle: &str) -> String {
        let deadline = tokio::time::Instant::now() + LIMIT;
        loop {
            match tokio::time::timeout_at(deadline, self.lines.recv()).await {
                Ok(Some(line)) => {
                    self.seen.push(line.clone());
                    if line.contains(needle) {
                        return line;
                    }
                }
                _ => panic!(
                    "no log line with `{needle}`; log so far:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }
}

impl Drop for Camel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub async fn send(req: reqwest::RequestBuilder) -> (u16, Value) {
    let resp = req.send().await.expect("the admin API answers");
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, body)
}
