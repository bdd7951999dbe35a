//! Scenario `ftp_consumer` (needs `CAMEL_TEST_FTP_ROOT` and `CAMEL_TEST_FTP_URL` and/or
//! `CAMEL_TEST_SFTP_URL` with `CAMEL_TEST_SFTP_KEY`, as `.ci/ftp-servers` exports them):
//! `from: ftp:` / `from: sftp:` with `delete=true` through a route that counts, against a
//! hand-written loop on the same client crates (suppaftp; russh + russh-sftp): one session,
//! list the folder once, then download and delete each file in name order. Each run reads a
//! folder of its own, filled beforehand on the local disk the server serves; the clock runs
//! from the first file handed over to the last.
//!
//! Count: `FTP_FILES` (default 500 files of 1 KiB).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use camel_bench::{count_from_env, median, per_second, result_line};
use russh::keys::PublicKeyOrCertificate;
use tokio::io::AsyncReadExt;

/// `scheme://user[:password]@host:port` in parts.
struct Server {
    user: String,
    password: String,
    host: String,
    port: u16,
}

fn parse(url: &str) -> Server {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let (info, address) = rest.rsplit_once('@').expect("user@host");
    let (user, password) = info.split_once(':').unwrap_or((info, ""));
    let (host, port) = address.rsplit_once(':').expect("host:port");
    Server {
        user: user.to_string(),
        password: password.to_string(),
        host: host.to_string(),
        port: port.parse().expect("a port"),
    }
}

/// A new folder under `root` holding `n` files of 1 KiB; its name.
fn filled_folder(root: &Path, n: u64) -> String {
    let name = camel_bench::unique_name("bench-ftp", '-');
    let dir = root.join(&name);
    std::fs::create_dir_all(&dir).expect("folder");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let body = vec![b'x'; 1024];
    for i in 0..n {
        std::fs::write(dir.join(format!("f{i:06}.txt")), &body).expect("file");
    }
    name
}

async fn raw_ftp(server: &Server, folder: &str, n: u64) -> Duration {
    let mut ftp = suppaftp::tokio::AsyncFtpStream::connect((server.host.as_str(), server.port))
        .await
        .expect("connected");
    ftp.login(server.user.as_str(), server.password.as_str())
        .await
        .expect("logged in");
    ftp.transfer_type(suppaftp::types::FileType::Binary)
        .await
        .expect("binary");
    let mut names: Vec<String> = ftp
        .list(Some(folder))
        .await
        .expect("LIST")
        .iter()
        .filter_map(|l| l.parse::<suppaftp::list::File>().ok())
        .filter(|f| f.is_file())
        .map(|f| f.name().to_string())
        .collect();
    names.sort();
    assert_eq!(names.len() as u64, n);
    let mut first = None;
    for name in names {
        let path = format!("{folder}/{name}");
        let mut stream = ftp.retr_as_stream(&path).await.expect("RETR");
        let mut body = Vec::new();
        stream.read_to_end(&mut body).await.expect("read");
        stream.finish().await.expect("transfer done");
        first.get_or_insert_with(Instant::now);
        ftp.rm(&path).await.expect("DELE");
    }
    let _ = ftp.quit().await;
    first.map(|f| f.elapsed()).unwrap_or_default()
}

struct AcceptAny;

impl russh::client::Handler for AcceptAny {
    type Error = russh::Error;

    // A loopback benchmark: the server is the one this run started.
    async fn check_server_key(
        &mut self,
        _key: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        Ok(true)
    }
}

async fn raw_sftp(server: &Server, key: &Path, folder: &str, n: u64) -> Duration {
    let mut ssh = russh::client::connect(
        Arc::new(russh::client::Config::default()),
        (server.host.as_str(), server.port),
        AcceptAny,
    )
    .await
    .expect("connected");
    let key = russh::keys::load_secret_key(key, None).expect("key");
    let hash = ssh.best_supported_rsa_hash().await.expect("hash").flatten();
    let auth = ssh
        .authenticate_publickey(
            server.user.as_str(),
            russh::keys::PrivateKeyWithHashAlg::new(Arc::new(key), hash),
        )
        .await
        .expect("auth");
    assert!(auth.success());
    let channel = ssh.channel_open_session().await.expect("channel");
    channel.request_subsystem(true, "sftp").await.expect("sftp");
    let sftp = russh_sftp::client::SftpSession::new(channel.into_stream())
        .await
        .expect("sftp session");
    let mut names: Vec<String> = sftp
        .read_dir(folder)
        .await
        .expect("readdir")
        .map(|e| e.file_name())
        .filter(|n| n != "." && n != "..")
        .collect();
    names.sort();
    assert_eq!(names.len() as u64, n);
    let mut first = None;
    for name in names {
        let path = format!("{folder}/{name}");
        let mut file = sftp.open(&path).await.expect("open");
        let mut body = Vec::new();
        file.read_to_end(&mut body).await.expect("read");
        let _ = file.close().await;
        first.get_or_insert_with(Instant::now);
        sftp.remove_file(&path).await.expect("remove");
    }
    let _ = sftp.close().await;
    first.map(|f| f.elapsed()).unwrap_or_default()
}

async fn route(protocol: camel_ftp::Protocol, uri: &str, n: u64) -> Duration {
    let yaml = format!(
        r#"
- route:
    id: consume
    from:
      uri: "{uri}"
      steps:
        - process: {{ ref: work }}
"#
    );
    camel_bench::time_consumer_route(Arc::new(camel_ftp::FtpComponent::new(protocol)), &yaml, n)
        .await
}

#[tokio::main]
async fn main() {
    let Ok(root) = std::env::var("CAMEL_TEST_FTP_ROOT") else {
        eprintln!("skipped: CAMEL_TEST_FTP_ROOT is not set");
        return;
    };
    let root = PathBuf::from(root);
    let n = count_from_env("FTP_FILES", 500);
    if let Ok(url) = std::env::var("CAMEL_TEST_FTP_URL") {
        let server = parse(&url);
        let (mut raw, mut ours) = (Vec::new(), Vec::new());
        for _ in 0..2 {
            let folder = filled_folder(&root, n);
            raw.push(per_second(n, raw_ftp(&server, &folder, n).await));
            let folder = filled_folder(&root, n);
            let uri = format!("{url}/{folder}?delete=true&initialDelay=0&delay=10");
            ours.push(per_second(
                n,
                route(camel_ftp::Protocol::Ftp, &uri, n).await,
            ));
        }
        report("ftp_consumer", n, median(raw), median(ours));
    }
    if let (Ok(url), Ok(key)) = (
        std::env::var("CAMEL_TEST_SFTP_URL"),
        std::env::var("CAMEL_TEST_SFTP_KEY"),
    ) {
        let server = parse(&url);
        let (mut raw, mut ours) = (Vec::new(), Vec::new());
        for _ in 0..2 {
            let folder = filled_folder(&root, n);
            raw.push(per_second(
                n,
                raw_sftp(&server, Path::new(&key), &folder, n).await,
            ));
            let folder = filled_folder(&root, n);
            let uri =
                format!("{url}/{folder}?privateKeyFile={key}&delete=true&initialDelay=0&delay=10");
            ours.push(per_second(
                n,
                route(camel_ftp::Protocol::Sftp, &uri, n).await,
            ));
        }
        report("sftp_consumer", n, median(raw), median(ours));
    }
}

fn report(scenario: &str, n: u64, raw: f64, ours: f64) {
    result_line(
        scenario,
        &[
            ("files", n.to_string()),
            ("raw_per_s", format!("{raw:.0}")),
            ("route_per_s", format!("{ours:.0}")),
            ("ratio", format!("{:.2}", ours / raw)),
        ],
    );
}
