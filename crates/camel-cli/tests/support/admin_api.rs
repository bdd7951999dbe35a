//! The running binary with its admin API, for tests that talk to it over HTTP.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

pub const LIMIT: Duration = Duration::from_secs(20);

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
        let mut child = Command::new(env!("CARGO_BIN_EXE_camel"))
            .args([
                "run",
                routes.to_str().unwrap(),
                "--admin-addr",
                "127.0.0.1:0",
            ])
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
