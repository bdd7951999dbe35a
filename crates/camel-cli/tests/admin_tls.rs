//! The admin API over TLS (`--admin-tls-cert/--admin-tls-key`), through the binary: a
//! self-signed certificate made here, the API and console answered over HTTPS with the
//! usual checks, plain HTTP refused, and every file mistake a startup error that names
//! the flag and the file.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::admin_api::{Camel, TOKEN};

/// A self-signed certificate for 127.0.0.1 and localhost: (certificate PEM, key PEM).
fn self_signed() -> (String, String) {
    let made = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into(), "localhost".into()])
        .expect("a self-signed certificate");
    (made.cert.pem(), made.key_pair.serialize_pem())
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn routes(dir: &Path) -> PathBuf {
    write(
        dir,
        "routes.yaml",
        "- route:\n    id: ticks\n    from: {uri: 'timer:ticks', parameters: {period: 3600000, delay: 3600000}}\n    steps:\n      - log: tick\n",
    )
}

/// `camel run` that must refuse to start: its exit status and standard error. Killed
/// (and the test failed) if it is still running after 20 s.
fn refused_start(args: &[&str]) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_camel"))
        .arg("run")
        .args(args)
        .env_remove("CAMEL_ADMIN_TOKEN")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            return (status.code().unwrap_or(-1), err);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("camel run {args:?} started instead of refusing");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test]
async fn the_api_and_the_console_answer_over_https_with_their_checks() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = self_signed();
    let cert_file = write(dir.path(), "admin.crt", &cert);
    let key_file = write(dir.path(), "admin.key", &key);
    let mut camel = Camel::start_with(
        &routes(dir.path()),
        dir.path(),
        &[
            "--admin-tls-cert",
            cert_file.to_str().unwrap(),
            "--admin-tls-key",
            key_file.to_str().unwrap(),
        ],
    );
    let line = camel.wait_for("admin API listening").await;
    assert!(
        line.contains("scheme=\"https\"") || line.contains("scheme=https"),
        "{line}"
    );
    let addr = line
        .split("addr=")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .expect("the log names the address");
    let base = format!("https://{addr}");
    let trusting = reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(cert.as_bytes()).unwrap())
        .build()
        .unwrap();
    // With the token: the routes.
    let resp = trusting
        .get(format!("{base}/routes"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("an HTTPS answer");
    assert_eq!(resp.status(), 200);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body[0]["id"], "ticks", "{body}");
    // Without it: refused as over HTTP; the console page loads with its headers.
    let resp = trusting.get(format!("{base}/routes")).send().await.unwrap();
    assert_eq!(resp.status(), 401);
    let page = trusting
        .get(format!("{base}/console"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    // A foreign Host is refused over TLS too.
    let resp = trusting
        .get(format!("{base}/routes"))
        .bearer_auth(TOKEN)
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 421);
    // A client that does not trust the certificate gets no answer, and neither does
    // plain HTTP on the TLS port.
    let untrusting = reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .build()
        .unwrap();
    assert!(untrusting
        .get(format!("{base}/health"))
        .send()
        .await
        .is_err());
    let plain = base.replace("https://", "http://");
    let over_http = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
        .get(format!("{plain}/health"))
        .send()
        .await;
    assert!(
        over_http.is_err() || !over_http.as_ref().unwrap().status().is_success(),
        "plain HTTP was answered: {over_http:?}"
    );
    // The API still answers after those failed handshakes.
    let resp = trusting.get(format!("{base}/health")).send().await.unwrap();
    assert_eq!(resp.status(), 200);
}

#[test]
fn a_missing_unreadable_or_wrong_tls_file_stops_the_start_and_says_which() {
    let dir = tempfile::tempdir().unwrap();
    let file = routes(dir.path());
    let file = file.to_str().unwrap();
    let (cert, key) = self_signed();
    let (_, other_key) = self_signed();
    let cert_file = write(dir.path(), "admin.crt", &cert);
    let key_file = write(dir.path(), "admin.key", &key);
    let other_key_file = write(dir.path(), "other.key", &other_key);
    let junk = write(dir.path(), "junk.pem", "not a certificate\n");
    let missing = dir.path().join("missing.pem");
    let (c, k, o, j, m) = (
        cert_file.to_str().unwrap(),
        key_file.to_str().unwrap(),
        other_key_file.to_str().unwrap(),
        junk.to_str().unwrap(),
        missing.to_str().unwrap(),
    );
    let start = |cert: &str, key: &str| {
        refused_start(&[
            file,
            "--admin-addr",
            "127.0.0.1:0",
            "--admin-tls-cert",
            cert,
            "--admin-tls-key",
            key,
        ])
    };
    let (code, err) = start(m, k);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(&format!("--admin-tls-cert {m}: ")), "{err}");
    assert!(err.to_lowercase().contains("no such file"), "{err}");
    let (code, err) = start(c, m);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(&format!("--admin-tls-key {m}: ")), "{err}");
    let (code, err) = start(j, k);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!("--admin-tls-cert {j}: no certificate in the file")),
        "{err}"
    );
    let (code, err) = start(c, j);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!("--admin-tls-key {j}: no private key in the file")),
        "{err}"
    );
    // The certificate as the key, and a key that is not the certificate's.
    let (code, err) = start(c, c);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--admin-tls-key"), "{err}");
    let (code, err) = start(c, o);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!("--admin-tls-cert {c} with --admin-tls-key {o}: ")),
        "{err}"
    );
    // One of the two alone is a usage error.
    let (code, err) = refused_start(&[file, "--admin-addr", "127.0.0.1:0", "--admin-tls-cert", c]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--admin-tls-key"), "{err}");
    assert!(!err.contains(&key), "the key is never printed: {err}");
}
