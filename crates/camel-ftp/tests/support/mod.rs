//! The servers `.ci/ftp-servers` starts (vsftpd for FTP and FTPS, sshd for SFTP), read
//! from the environment, and helpers to run a consumer or a producer against them.
//!
//! The three servers share one local folder as their root (`CAMEL_TEST_FTP_ROOT`), so a
//! test puts its input files and counts its output there directly.

#![allow(dead_code, unreachable_pub)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use camel_api::test_support::service_from_env;
use camel_api::{
    BoxExpression, BoxPredicate, BoxProcessor, CamelError, Component, ComponentContext,
    ConsumerContext, Endpoint, EndpointUri, Exchange,
};
use camel_ftp::{FtpComponent, Protocol};
use tokio::sync::Notify;

/// Compiles `simple` expressions (what `move` and `fileName` need); nothing else.
pub struct SimpleOnly;

impl ComponentContext for SimpleOnly {
    fn expression(&self, _language: &str, text: &str) -> Result<BoxExpression, CamelError> {
        camel_language::simple(text).map_err(|e| CamelError::processor(e.to_string()))
    }
    fn predicate(&self, language: &str, _text: &str) -> Result<BoxPredicate, CamelError> {
        Err(CamelError::processor(format!("no {language} here")))
    }
    fn producer(&self, uri: &str) -> Result<BoxProcessor, CamelError> {
        Err(CamelError::processor(format!("no producer for {uri} here")))
    }
    fn resource(&self, _name: &str) -> Option<Arc<dyn std::any::Any + Send + Sync>> {
        None
    }
    fn route_id(&self) -> Option<&str> {
        Some("ftp-test")
    }
}

/// One server to test against.
#[derive(Clone, Debug)]
pub struct Server {
    pub protocol: Protocol,
    /// `scheme://user[:password]@host:port`.
    base: String,
    /// Options every URI of this server needs (keys, trust store).
    auth: String,
    /// The server's root as a local folder.
    pub root: PathBuf,
}

impl Server {
    /// The URI of `dir` with `options` (`&`-separated, may be empty).
    pub fn uri(&self, dir: &str, options: &str) -> String {
        let mut all = self.auth.clone();
        if !options.is_empty() {
            if !all.is_empty() {
                all.push('&');
            }
            all.push_str(options);
        }
        if all.is_empty() {
            format!("{}/{dir}", self.base)
        } else {
            format!("{}/{dir}?{all}", self.base)
        }
    }

    /// A new empty folder under the root that the server's user may write to; its name.
    pub fn folder(&self, what: &str) -> String {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let name = format!(
            "{}-{what}-{}-{nanos}",
            self.protocol.scheme(),
            std::process::id()
        );
        let path = self.root.join(&name);
        std::fs::create_dir_all(&path).unwrap();
        open_up(&path);
        name
    }

    /// The same server with other options every URI needs (in place of keys and trust
    /// store): a client set up differently against the same port.
    pub fn with_auth(&self, auth: &str) -> Server {
        Server {
            auth: auth.to_string(),
            ..self.clone()
        }
    }

    /// The options every URI of this server carries.
    pub fn auth(&self) -> &str {
        &self.auth
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// Writes a file as the server's user could read and remove it.
    pub fn put(&self, relative: &str, body: &[u8]) {
        let path = self.root.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
            open_up(parent);
        }
        std::fs::write(&path, body).unwrap();
    }

    /// The names of the files in `relative` (not recursive), sorted.
    pub fn files(&self, relative: &str) -> Vec<String> {
        let mut out: Vec<String> = std::fs::read_dir(self.root.join(relative))
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        out.sort();
        out
    }

    pub fn endpoint(&self, uri: &str) -> Arc<dyn Endpoint> {
        FtpComponent::new(self.protocol)
            .endpoint(EndpointUri::parse(uri).unwrap(), &SimpleOnly)
            .unwrap()
    }

    /// Starts the consumer of `uri` into `pipeline`.
    pub fn start(
        &self,
        uri: &str,
        pipeline: BoxProcessor,
    ) -> (ConsumerContext, tokio::task::JoinHandle<()>) {
        let consumer = self.endpoint(uri).consumer().unwrap();
        let ctx = ConsumerContext::for_pipeline("ftp-test", pipeline);
        let run_ctx = ctx.clone();
        let handle = tokio::spawn(async move { consumer.run(run_ctx).await.unwrap() });
        (ctx, handle)
    }
}

fn open_up(path: &Path) {
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777));
}

fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_test_writer()
        .with_env_filter(
            std::env::var("RUST_LOG").unwrap_or_else(|_| "camel_ftp=debug".to_string()),
        )
        .try_init();
}

/// The servers whose variables are set (under `CI=true`, all of them must be).
pub fn servers() -> Vec<Server> {
    init_tracing();
    let mut out = Vec::new();
    let Some(root) = service_from_env("CAMEL_TEST_FTP_ROOT") else {
        return out;
    };
    let root = PathBuf::from(root);
    if let Some(base) = service_from_env("CAMEL_TEST_FTP_URL") {
        out.push(Server {
            protocol: Protocol::Ftp,
            base,
            auth: String::new(),
            root: root.clone(),
        });
    }
    if let (Some(base), Some(ca)) = (
        service_from_env("CAMEL_TEST_FTPS_URL"),
        service_from_env("CAMEL_TEST_FTPS_CA"),
    ) {
        out.push(Server {
            protocol: Protocol::Ftps,
            base,
            auth: format!("trustStoreFile={ca}"),
            root: root.clone(),
        });
    }
    if let (Some(base), Some(key), Some(known)) = (
        service_from_env("CAMEL_TEST_SFTP_URL"),
        service_from_env("CAMEL_TEST_SFTP_KEY"),
        service_from_env("CAMEL_TEST_SFTP_KNOWN_HOSTS"),
    ) {
        out.push(Server {
            protocol: Protocol::Sftp,
            base,
            auth: format!("privateKeyFile={key}&knownHostsFile={known}"),
            root,
        });
    }
    out
}

/// Sends one exchange with `body` (and `CamelFileName` when given) to the producer of
/// `uri`.
pub async fn send(
    server: &Server,
    uri: &str,
    body: &str,
    name: Option<&str>,
) -> Result<Exchange, CamelError> {
    let producer = server.endpoint(uri).producer().unwrap();
    let mut ex = Exchange::new(body);
    if let Some(name) = name {
        ex = ex.with_header("CamelFileName", name);
    }
    producer.process(ex).await
}

/// What a test route saw: (file name, body) per exchange, in arrival order.
#[derive(Default)]
pub struct Seen {
    pub exchanges: Mutex<Vec<(String, Vec<u8>)>>,
    notify: Notify,
}

impl Seen {
    pub fn record(&self, ex: &Exchange) -> String {
        let name = ex
            .header("CamelFileName")
            .map(|v| v.to_string())
            .unwrap_or_default();
        let body = match &ex.message.body {
            camel_api::Body::Bytes(b) => b.to_vec(),
            other => other.as_text().unwrap_or_default().as_bytes().to_vec(),
        };
        self.exchanges.lock().unwrap().push((name.clone(), body));
        self.notify.notify_waiters();
        name
    }

    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .exchanges
            .lock()
            .unwrap()
            .iter()
            .map(|(n, _)| n.clone())
            .collect();
        names.sort();
        names
    }

    pub fn count(&self, name: &str) -> usize {
        self.exchanges
            .lock()
            .unwrap()
            .iter()
            .filter(|(n, _)| n == name)
            .count()
    }

    /// Waits (up to 30 s) until `done` holds.
    pub async fn until(&self, what: &str, done: impl Fn(&Seen) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let notified = self.notify.notified();
            if done(self) {
                return;
            }
            // Woken by each exchange, and every 100 ms for conditions on the server.
            let _ = tokio::time::timeout(Duration::from_millis(100), notified).await;
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for {what}; seen {:?}",
                self.names()
            );
        }
    }
}

/// A route that records each exchange in `seen`, and fails those whose file name ends
/// with `fail` (when not empty).
pub fn recording(seen: &Arc<Seen>, fail: &'static str) -> BoxProcessor {
    let s = seen.clone();
    BoxProcessor::from_fn(move |ex: Exchange| {
        let s = s.clone();
        async move {
            let name = s.record(&ex);
            if !fail.is_empty() && name.ends_with(fail) {
                return Err(CamelError::processor("refused by the test route"));
            }
            Ok(ex)
        }
    })
}

/// Polls `check` every 50 ms for up to 30 s.
pub async fn eventually(what: &str, check: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !check() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The implicit FTPS server (vsftpd with `implicit_ssl=YES`, TLS from the first byte),
/// its URIs carrying `isImplicit=true` and the test CA; `None` (skipped) without its
/// variables.
pub fn implicit_ftps() -> Option<Server> {
    init_tracing();
    let root = service_from_env("CAMEL_TEST_FTP_ROOT")?;
    let base = service_from_env("CAMEL_TEST_FTPS_IMPLICIT_URL")?;
    let ca = service_from_env("CAMEL_TEST_FTPS_CA")?;
    Some(Server {
        protocol: Protocol::Ftps,
        base,
        auth: format!("trustStoreFile={ca}&isImplicit=true"),
        root: PathBuf::from(root),
    })
}

/// The SFTP server with the keys encrypted by a test passphrase that its
/// `authorized_keys` admits.
#[derive(Clone, Debug)]
pub struct EncryptedKeys {
    /// The SFTP server, its URIs carrying the known hosts file alone (no key).
    pub server: Server,
    /// An ed25519 key in OpenSSH's format (`ssh-keygen -N`).
    pub openssh: String,
    /// An ECDSA key in PKCS#8 PEM (`BEGIN ENCRYPTED PRIVATE KEY`).
    pub pem: String,
    pub passphrase: String,
}

/// The encrypted keys and their server; `None` (skipped) without their variables.
pub fn encrypted_keys() -> Option<EncryptedKeys> {
    init_tracing();
    let root = service_from_env("CAMEL_TEST_FTP_ROOT")?;
    let base = service_from_env("CAMEL_TEST_SFTP_URL")?;
    let known = service_from_env("CAMEL_TEST_SFTP_KNOWN_HOSTS")?;
    Some(EncryptedKeys {
        server: Server {
            protocol: Protocol::Sftp,
            base,
            auth: format!("knownHostsFile={known}"),
            root: PathBuf::from(root),
        },
        openssh: service_from_env("CAMEL_TEST_SFTP_ENCRYPTED_KEY")?,
        pem: service_from_env("CAMEL_TEST_SFTP_ENCRYPTED_PEM_KEY")?,
        passphrase: service_from_env("CAMEL_TEST_SFTP_KEY_PASSPHRASE")?,
    })
}
