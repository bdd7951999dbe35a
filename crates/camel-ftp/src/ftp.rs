//! FTP and FTPS, explicit and implicit, through suppaftp (tokio; rustls on ring for TLS).
//!
//! Explicit FTPS greets in plain text and turns to TLS on `AUTH TLS`; implicit FTPS
//! (`isImplicit=true`) speaks TLS from the first byte. Either way the data connections
//! are protected too (`PBSZ 0`, `PROT P`), and the server's certificate is checked
//! against `trustStoreFile` or the system's certificates (ADR 0169).

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use suppaftp::list::File as Listed;
use suppaftp::tokio::{
    AsyncFtpStream, AsyncRustlsConnector, AsyncRustlsFtpStream, ImplAsyncFtpStream, TokioTlsStream,
};
use suppaftp::types::FileType;
use suppaftp::{FtpError, Mode, Status};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use crate::options::Connection;
use crate::remote::{Entry, EntryKind, RemoteError, RemoteResult};
use crate::Protocol;

/// A logged-in FTP or FTPS session.
pub(crate) enum FtpSession {
    Plain(AsyncFtpStream),
    Tls(AsyncRustlsFtpStream),
}

macro_rules! each {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            FtpSession::Plain($s) => $e,
            FtpSession::Tls($s) => $e,
        }
    };
}

fn error(context: impl std::fmt::Display, e: FtpError) -> RemoteError {
    let not_found =
        matches!(&e, FtpError::UnexpectedResponse(r) if r.status == Status::FileUnavailable);
    let refused = matches!(&e, FtpError::UnexpectedResponse(_));
    RemoteError::new(context, e)
        .refused(refused)
        .not_found(not_found)
}

impl FtpSession {
    pub(crate) async fn open(c: &Connection) -> RemoteResult<FtpSession> {
        let address = (c.host.as_str(), c.port);
        let where_ = format!("{}://{}:{}", c.protocol.scheme(), c.host, c.port);
        let user = c.username.as_deref().unwrap_or("anonymous");
        let password = c.password.as_deref().unwrap_or("");
        let session = match c.protocol {
            Protocol::Ftps if c.is_implicit => {
                let connector = tls_connector(c)?;
                let mut stream =
                    AsyncRustlsFtpStream::connect_secure_implicit(address, connector, &c.host)
                        .await
                        .map_err(|e| implicit_error(&where_, e))?;
                protect_data(&mut stream, &where_).await?;
                prepare(&mut stream, c, user, password, &where_).await?;
                FtpSession::Tls(stream)
            }
            Protocol::Ftps => {
                let connector = tls_connector(c)?;
                let stream = AsyncRustlsFtpStream::connect(address)
                    .await
                    .map_err(|e| error(format!("connecting to {where_}"), e))?;
                let mut stream = stream
                    .into_secure(connector, &c.host)
                    .await
                    .map_err(|e| error(format!("starting TLS with {where_}"), e))?;
                prepare(&mut stream, c, user, password, &where_).await?;
                FtpSession::Tls(stream)
            }
            _ => {
                let mut stream = AsyncFtpStream::connect(address)
                    .await
                    .map_err(|e| error(format!("connecting to {where_}"), e))?;
                prepare(&mut stream, c, user, password, &where_).await?;
                FtpSession::Plain(stream)
            }
        };
        Ok(session)
    }

    pub(crate) async fn list(&mut self, dir: &str) -> RemoteResult<Vec<Entry>> {
        let target = if dir.is_empty() { None } else { Some(dir) };
        let lines = each!(self, s => s.list(target).await)
            .map_err(|e| error(format!("listing `{dir}`"), e))?;
        Ok(lines.iter().filter_map(|line| parse_line(line)).collect())
    }

    pub(crate) async fn download(
        &mut self,
        path: &str,
        sink: &mut (dyn AsyncWrite + Unpin + Send),
    ) -> RemoteResult<u64> {
        each!(self, s => {
            let mut stream = s
                .retr_as_stream(path)
                .await
                .map_err(|e| error(format!("downloading `{path}`"), e))?;
            let copied = tokio::io::copy(&mut stream, sink).await;
            // Finished either way, so the control connection reads the transfer's reply.
            let finished = stream.finish().await;
            let n = copied.map_err(|e| RemoteError::new(format!("downloading `{path}`"), e))?;
            finished.map_err(|e| error(format!("downloading `{path}`"), e))?;
            Ok(n)
        })
    }

    pub(crate) async fn upload(
        &mut self,
        path: &str,
        source: &mut (dyn AsyncRead + Unpin + Send),
        append: bool,
    ) -> RemoteResult<u64> {
        each!(self, s => {
            let what = format!("uploading `{path}`");
            let opened = if append {
                s.append_with_stream(path).await
            } else {
                s.put_with_stream(path).await
            };
            let mut stream = opened.map_err(|e| error(&what, e))?;
            let copied = tokio::io::copy(source, &mut stream).await;
            let flushed = stream.flush().await;
            let finished = stream.finish().await;
            let n = copied.map_err(|e| RemoteError::new(&what, e))?;
            flushed.map_err(|e| RemoteError::new(&what, e))?;
            finished.map_err(|e| error(&what, e))?;
            Ok(n)
        })
    }

    pub(crate) async fn exists(&mut self, path: &str) -> RemoteResult<bool> {
        match each!(self, s => s.size(path).await) {
            Ok(_) => Ok(true),
            Err(e) => {
                let e = error(format!("checking `{path}`"), e);
                if e.not_found {
                    Ok(false)
                } else {
                    Err(e)
                }
            }
        }
    }

    pub(crate) async fn remove(&mut self, path: &str) -> RemoteResult<()> {
        each!(self, s => s.rm(path).await).map_err(|e| error(format!("deleting `{path}`"), e))
    }

    pub(crate) async fn rename(&mut self, from: &str, to: &str) -> RemoteResult<()> {
        each!(self, s => s.rename(from, to).await)
            .map_err(|e| error(format!("renaming `{from}` to `{to}`"), e))
    }

    pub(crate) async fn create_folder(&mut self, dir: &str) -> RemoteResult<()> {
        each!(self, s => s.mkdir(dir).await)
            .map_err(|e| error(format!("creating folder `{dir}`"), e))
    }

    pub(crate) async fn close(self) {
        let _ = match self {
            FtpSession::Plain(mut s) => s.quit().await,
            FtpSession::Tls(mut s) => s.quit().await,
        };
    }
}

/// A failed implicit FTPS connect; a TLS failure says what else the port may be.
fn implicit_error(where_: &str, e: FtpError) -> RemoteError {
    match e {
        FtpError::SecureError(_) => error(
            format!(
                "starting implicit TLS with {where_} (a server that greets in plain text is \
                 plain FTP or explicit FTPS: leave isImplicit=false for it)"
            ),
            e,
        ),
        e => error(format!("connecting to {where_}"), e),
    }
}

/// Implicit FTPS: what `AUTH TLS` sets up in explicit mode, asked for in so many words so
/// that the data connections are encrypted too (RFC 4217: `PBSZ 0`, then `PROT P`).
async fn protect_data(stream: &mut AsyncRustlsFtpStream, where_: &str) -> RemoteResult<()> {
    for command in ["PBSZ 0", "PROT P"] {
        stream
            .custom_command(command, &[Status::CommandOk])
            .await
            .map_err(|e| error(format!("asking {where_} to encrypt data (`{command}`)"), e))?;
    }
    Ok(())
}

/// Logs in and sets the transfer type and data connection mode.
async fn prepare<T: TokioTlsStream + Send>(
    stream: &mut ImplAsyncFtpStream<T>,
    c: &Connection,
    user: &str,
    password: &str,
    where_: &str,
) -> RemoteResult<()> {
    stream
        .login(user, password)
        .await
        .map_err(|e| error(format!("logging in to {where_} as `{user}`"), e))?;
    let kind = if c.binary {
        FileType::Binary
    } else {
        FileType::Ascii(suppaftp::types::FormatControl::Default)
    };
    stream
        .transfer_type(kind)
        .await
        .map_err(|e| error(format!("setting the transfer type on {where_}"), e))?;
    if !c.passive_mode {
        stream.set_mode(Mode::Active);
    }
    Ok(())
}

/// The TLS client: the certificates of `trust_store_file` (PEM) when given, else the
/// system's.
fn tls_connector(c: &Connection) -> RemoteResult<AsyncRustlsConnector> {
    let mut roots = rustls::RootCertStore::empty();
    match &c.trust_store_file {
        Some(path) => {
            use rustls_pki_types::pem::PemObject;
            let what = format!("reading trust store `{}`", path.display());
            let certs = rustls_pki_types::CertificateDer::pem_file_iter(path)
                .map_err(|e| RemoteError::new(&what, e))?;
            for cert in certs {
                let cert = cert.map_err(|e| RemoteError::new(&what, e))?;
                roots.add(cert).map_err(|e| RemoteError::new(&what, e))?;
            }
        }
        None => {
            for cert in rustls_native_certs::load_native_certs().certs {
                // A system certificate rustls cannot read is one fewer to trust.
                let _ = roots.add(cert);
            }
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| RemoteError::new("setting up TLS", e))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(AsyncRustlsConnector::from(
        tokio_rustls::TlsConnector::from(Arc::new(config)),
    ))
}

/// One line of a `LIST` answer (Unix or DOS style); `None` for `.`/`..` and lines that
/// are not entries (`total 12`).
fn parse_line(line: &str) -> Option<Entry> {
    if line.starts_with("total ") {
        return None;
    }
    let listed: Listed = line.parse().ok()?;
    let name = listed.name().to_string();
    if name == "." || name == ".." || name.is_empty() {
        return None;
    }
    let kind = if listed.is_file() {
        EntryKind::File
    } else if listed.is_directory() {
        EntryKind::Folder
    } else {
        EntryKind::Other
    };
    let modified = listed
        .modified()
        .duration_since(UNIX_EPOCH)
        .ok()
        .map(|d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    Some(Entry {
        name,
        kind,
        size: listed.size() as u64,
        modified,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unix_listing_line_is_an_entry() {
        let e = parse_line("-rw-r--r--    1 0        0               3 Dec 04 22:56 x.txt")
            .expect("an entry");
        assert_eq!(e.name, "x.txt");
        assert_eq!(e.kind, EntryKind::File);
        assert_eq!(e.size, 3);
        let d = parse_line("drwxr-xr-x    2 1001     1001         4096 Dec 04 22:56 sub")
            .expect("a folder");
        assert_eq!(d.kind, EntryKind::Folder);
        assert!(parse_line("total 12").is_none());
    }
}
