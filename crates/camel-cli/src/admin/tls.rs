//! The admin API over TLS (`--admin-tls-cert PATH --admin-tls-key PATH`, rustls on ring):
//! the certificate chain and key are read from PEM files when `camel run` starts, so a
//! missing, unreadable or wrong file stops it before any route starts (ADR 0151).
//!
//! The accept loop is the plain one's ([`super::accept`]) with a handshake in front:
//! the same connection limit (a connection beyond it is closed, since a 503 in clear text
//! means nothing to a TLS client), and the header timeout also bounds the handshake, so
//! a client that connects and says nothing holds a connection no longer than over HTTP.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::Router;
use camel_http::ConnectionBounds;
use hyper_util::rt::{TokioIo, TokioTimer};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

use super::guard::LocalAddr;

/// Why the TLS files cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum TlsError {
    #[error("{flag} {}: {source}", path.display())]
    Read {
        flag: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--admin-tls-cert {}: no certificate in the file (expected PEM, `-----BEGIN CERTIFICATE-----`)", path.display())]
    NoCertificate { path: PathBuf },
    #[error("--admin-tls-cert {}: not a PEM certificate: {why}", path.display())]
    BadCertificate { path: PathBuf, why: String },
    #[error("--admin-tls-key {}: no private key in the file (expected PEM: PKCS#8, PKCS#1 or SEC1)", path.display())]
    NoKey { path: PathBuf },
    #[error("--admin-tls-key {}: not a PEM private key: {why}", path.display())]
    BadKey { path: PathBuf, why: String },
    #[error("--admin-tls-cert {} with --admin-tls-key {}: {why}", cert.display(), key.display())]
    Refused {
        cert: PathBuf,
        key: PathBuf,
        why: rustls::Error,
    },
}

fn read(flag: &'static str, path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        flag,
        path: path.to_path_buf(),
        source,
    })
}

/// The server configuration of the PEM files `cert` (the chain, leaf first) and `key`.
/// The key is checked against the certificate.
pub(crate) fn server_config(
    cert: &Path,
    key: &Path,
) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let cert_pem = read("--admin-tls-cert", cert)?;
    let chain = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::BadCertificate {
            path: cert.to_path_buf(),
            why: e.to_string(),
        })?;
    if chain.is_empty() {
        return Err(TlsError::NoCertificate {
            path: cert.to_path_buf(),
        });
    }
    let key_pem = read("--admin-tls-key", key)?;
    let private = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| match e {
        rustls_pki_types::pem::Error::NoItemsFound => TlsError::NoKey {
            path: key.to_path_buf(),
        },
        other => TlsError::BadKey {
            path: key.to_path_buf(),
            why: other.to_string(),
        },
    })?;
    let refused = |why| TlsError::Refused {
        cert: cert.to_path_buf(),
        key: key.to_path_buf(),
        why,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(refused)?
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .map_err(refused)?;
    // The API speaks HTTP/1.1 only.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Serves `app` over TLS on `listener` until `stop` fires, then lets each connection
/// finish the request it is answering and returns once all are closed.
pub(crate) async fn run(
    listener: TcpListener,
    app: Router,
    bounds: ConnectionBounds,
    stop: CancellationToken,
    tls: Arc<rustls::ServerConfig>,
) {
    let acceptor = tokio_rustls::TlsAcceptor::from(tls);
    let permits = Arc::new(Semaphore::new(bounds.max_connections));
    let connections = TaskTracker::new();
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!(error = %e, "admin API (TLS): accepting a connection failed");
                tokio::select! {
                    _ = stop.cancelled() => break,
                    _ = tokio::time::sleep(Duration::from_millis(50)) => continue,
                }
            }
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            tracing::debug!(
                limit = bounds.max_connections,
                "admin API (TLS): connection limit reached, closing a connection"
            );
            continue;
        };
        let session = Session {
            acceptor: acceptor.clone(),
            app: app.clone(),
            timeout: bounds.header_read_timeout,
            stop: stop.clone(),
        };
        connections.spawn(session.serve(stream, permit));
    }
    connections.close();
    connections.wait().await;
}

/// What one TLS connection needs.
struct Session {
    acceptor: tokio_rustls::TlsAcceptor,
    app: Router,
    /// Bounds the handshake, each request's headers, and idle time between requests.
    timeout: Duration,
    stop: CancellationToken,
}

impl Session {
    async fn serve(self, stream: TcpStream, _permit: OwnedSemaphorePermit) {
        let _ = stream.set_nodelay(true);
        let Ok(local) = stream.local_addr() else {
            return;
        };
        let handshake = tokio::select! {
            _ = self.stop.cancelled() => return,
            done = tokio::time::timeout(self.timeout, self.acceptor.accept(stream)) => done,
        };
        let stream = match handshake {
            Ok(Ok(stream)) => stream,
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "admin API (TLS): handshake failed");
                return;
            }
            Err(_) => return,
        };
        let app = self.app;
        let service = hyper::service::service_fn(move |mut req: hyper::Request<_>| {
            req.extensions_mut().insert(LocalAddr(local));
            let app = app.clone();
            async move { app.oneshot(req.map(Body::new)).await }
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(self.timeout);
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        tokio::pin!(connection);
        let ended = tokio::select! {
            ended = connection.as_mut() => ended,
            _ = self.stop.cancelled() => {
                connection.as_mut().graceful_shutdown();
                connection.as_mut().await
            }
        };
        if let Err(e) = ended {
            tracing::debug!(error = %e, "admin API (TLS): connection ended with an error");
        }
    }
}
