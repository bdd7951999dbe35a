//! TLS for the export (`https://` endpoints): whom the exporter trusts and, for a
//! collector that asks, the certificate it shows (the standard
//! `OTEL_EXPORTER_OTLP_CERTIFICATE`, `…_CLIENT_CERTIFICATE` and `…_CLIENT_KEY` files).
//!
//! Both transports use rustls with *ring*, as the rest of the workspace does. Without a CA
//! file the system's trusted roots are used; with one, only that file's certificates are
//! trusted (a private collector's CA is not meant to vouch for the public internet, nor
//! the public roots for the private collector).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use opentelemetry_otlp::tonic_types::transport::{Certificate, ClientTlsConfig, Identity};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::OtelError;

/// The files of an `https://` export; all optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OtlpTls {
    /// PEM certificates to trust instead of the system's roots
    /// (`OTEL_EXPORTER_OTLP_CERTIFICATE`).
    pub ca_file: Option<PathBuf>,
    /// The PEM certificate chain shown to a collector that asks for one
    /// (`OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE`); needs `client_key_file`.
    pub client_cert_file: Option<PathBuf>,
    /// The PEM private key of that certificate (`OTEL_EXPORTER_OTLP_CLIENT_KEY`).
    pub client_key_file: Option<PathBuf>,
}

impl OtlpTls {
    /// True when no file is named.
    pub fn is_empty(&self) -> bool {
        self == &OtlpTls::default()
    }

    /// The client certificate and key, both or neither.
    fn client_pair(&self) -> Result<Option<(&Path, &Path)>, OtelError> {
        match (&self.client_cert_file, &self.client_key_file) {
            (Some(cert), Some(key)) => Ok(Some((cert, key))),
            (None, None) => Ok(None),
            (Some(_), None) => Err(OtelError::Config(
                "a client certificate (OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE) needs its key (OTEL_EXPORTER_OTLP_CLIENT_KEY)".into(),
            )),
            (None, Some(_)) => Err(OtelError::Config(
                "a client key (OTEL_EXPORTER_OTLP_CLIENT_KEY) needs its certificate (OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE)".into(),
            )),
        }
    }
}

fn read(path: &Path, what: &str) -> Result<Vec<u8>, OtelError> {
    std::fs::read(path)
        .map_err(|e| OtelError::Config(format!("cannot read the {what} `{}`: {e}", path.display())))
}

/// The file's PEM text and the certificates in it (at least one).
fn certificates(
    path: &Path,
    what: &str,
) -> Result<(Vec<u8>, Vec<CertificateDer<'static>>), OtelError> {
    let pem = read(path, what)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            OtelError::Config(format!("the {what} `{}` is not PEM: {e}", path.display()))
        })?;
    if certs.is_empty() {
        return Err(OtelError::Config(format!(
            "the {what} `{}` holds no PEM certificate",
            path.display()
        )));
    }
    Ok((pem, certs))
}

/// The file's PEM text and the private key in it.
fn private_key(path: &Path) -> Result<(Vec<u8>, PrivateKeyDer<'static>), OtelError> {
    let pem = read(path, "client key")?;
    let key = PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
        OtelError::Config(format!(
            "the client key `{}` holds no PEM private key: {e}",
            path.display()
        ))
    })?;
    Ok((pem, key))
}

/// The rustls configuration of the OTLP/HTTP client.
pub(crate) fn http_config(tls: &OtlpTls) -> Result<rustls::ClientConfig, OtelError> {
    let mut roots = rustls::RootCertStore::empty();
    match &tls.ca_file {
        Some(ca) => {
            for cert in certificates(ca, "CA certificate")?.1 {
                roots.add(cert).map_err(|e| {
                    OtelError::Config(format!("the CA certificate `{}`: {e}", ca.display()))
                })?;
            }
        }
        None => {
            // A root the platform lists but rustls cannot parse is skipped, as tonic does.
            let native = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(native.certs);
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| OtelError::Config(format!("TLS: {e}")))?
        .with_root_certificates(roots);
    match tls.client_pair()? {
        Some((cert, key)) => builder
            .with_client_auth_cert(
                certificates(cert, "client certificate")?.1,
                private_key(key)?.1,
            )
            .map_err(|e| OtelError::Config(format!("the client certificate and key: {e}"))),
        None => Ok(builder.with_no_client_auth()),
    }
}

/// The tonic TLS configuration of the OTLP/gRPC channel.
pub(crate) fn grpc_config(tls: &OtlpTls) -> Result<ClientTlsConfig, OtelError> {
    let mut config = ClientTlsConfig::new();
    config = match &tls.ca_file {
        // Parsed here so that a bad file is named at startup, not at the first export.
        Some(ca) => {
            config.ca_certificate(Certificate::from_pem(certificates(ca, "CA certificate")?.0))
        }
        None => config.with_native_roots(),
    };
    if let Some((cert, key)) = tls.client_pair()? {
        config = config.identity(Identity::from_pem(
            certificates(cert, "client certificate")?.0,
            private_key(key)?.0,
        ));
    }
    Ok(config)
}
