//! OpenTelemetry export for camel-rs: the [`camel_api::trace::Tracer`] that turns each
//! exchange's route span into an OpenTelemetry span and sends it over OTLP (HTTP with
//! protobuf bodies, or gRPC) to a collector, Jaeger or Tempo (ADR 0123).
//!
//! Nothing here runs until [`install`] is called; the `camel` binary calls it for
//! `--otel-endpoint` or the standard `OTEL_EXPORTER_OTLP_*` variables. Spans are batched
//! and sent by a background thread, so a slow collector never holds an exchange; when
//! the batch queue is full, spans are dropped (and counted by the SDK), not waited for.
//!
//! ```no_run
//! use camel_otel::{install, OtlpConfig};
//!
//! let config = OtlpConfig::new("http://127.0.0.1:4318", "orders");
//! let export = install(config).expect("the exporter starts");
//! // … start a CamelContext and its routes; each exchange is a span …
//! export.shutdown(); // sends what is still queued
//! ```

mod grpc;
mod tls;
mod tracer;

pub use tls::OtlpTls;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;

/// Why the exporter could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtelError {
    /// The endpoint or protocol is not usable.
    #[error("OpenTelemetry export: {0}")]
    Config(String),
    /// The OTLP exporter could not be built.
    #[error("OpenTelemetry export: cannot build the OTLP exporter: {0}")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
    /// A tracer was installed already in this process.
    #[error("OpenTelemetry export: a tracer is installed already")]
    AlreadyInstalled,
}

/// How spans travel to the collector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OtlpProtocol {
    /// OTLP/HTTP with protobuf bodies (`http/protobuf`, port 4318), the default.
    #[default]
    HttpProtobuf,
    /// OTLP/gRPC (`grpc`, port 4317).
    Grpc,
}

/// Where and how spans are sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtlpConfig {
    /// The full URL spans are posted to (`…/v1/traces`); for gRPC the collector's
    /// address (`http://host:4317`).
    pub traces_url: String,
    /// The transport.
    pub protocol: OtlpProtocol,
    /// The `service.name` resource attribute.
    pub service_name: String,
    /// Whether every step gets a span of its own besides the route's.
    pub step_spans: bool,
    /// The TLS files of an `https://` endpoint.
    pub tls: OtlpTls,
}

/// The path OTLP/HTTP receivers take spans on, appended to a base endpoint.
const TRACES_PATH: &str = "/v1/traces";

impl OtlpConfig {
    /// A base endpoint (`http://host:4318`, as `OTEL_EXPORTER_OTLP_ENDPOINT` gives it):
    /// spans go to its `/v1/traces`.
    pub fn new(endpoint: &str, service_name: &str) -> Self {
        OtlpConfig {
            traces_url: traces_url(endpoint),
            protocol: OtlpProtocol::HttpProtobuf,
            service_name: service_name.to_string(),
            step_spans: false,
            tls: OtlpTls::default(),
        }
    }

    /// A gRPC collector address (`http://host:4317`, as `OTEL_EXPORTER_OTLP_ENDPOINT`
    /// gives it with `OTEL_EXPORTER_OTLP_PROTOCOL=grpc`).
    pub fn grpc(endpoint: &str, service_name: &str) -> Self {
        OtlpConfig {
            traces_url: endpoint.trim_end_matches('/').to_string(),
            protocol: OtlpProtocol::Grpc,
            service_name: service_name.to_string(),
            step_spans: false,
            tls: OtlpTls::default(),
        }
    }

    /// The configuration from a command-line endpoint and the standard variables, as
    /// `lookup` reads them (`std::env::var` in a process): `None` when neither an
    /// endpoint nor a traces endpoint is given, which leaves export off.
    ///
    /// - `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`: the full traces URL, used as it is;
    /// - `endpoint` (the flag) or else `OTEL_EXPORTER_OTLP_ENDPOINT`: a base URL;
    /// - `OTEL_EXPORTER_OTLP_PROTOCOL` / `…_TRACES_PROTOCOL`: `http/protobuf` (the
    ///   default) or `grpc` (then the base endpoint is the collector's address, with no
    ///   path appended);
    /// - `OTEL_SERVICE_NAME`: the service name, `camel` when unset;
    /// - `OTEL_EXPORTER_OTLP_CERTIFICATE`, `…_CLIENT_CERTIFICATE`, `…_CLIENT_KEY` (each
    ///   also as `OTEL_EXPORTER_OTLP_TRACES_…`): PEM files for an `https://` endpoint.
    pub fn from_env(
        endpoint: Option<&str>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, OtelError> {
        let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let protocol = var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"))
            .unwrap_or_else(|| "http/protobuf".into());
        let protocol = match protocol.trim() {
            "http/protobuf" => OtlpProtocol::HttpProtobuf,
            "grpc" => OtlpProtocol::Grpc,
            other => {
                return Err(OtelError::Config(format!(
                    "protocol `{other}` is not supported; use http/protobuf (port 4318 on a collector) or grpc (port 4317)"
                )))
            }
        };
        // gRPC names the service in the request, not in the path: a base endpoint is
        // used as it is.
        let base = |b: &str| match protocol {
            OtlpProtocol::HttpProtobuf => traces_url(b),
            OtlpProtocol::Grpc => b.trim_end_matches('/').to_string(),
        };
        let traces_url = match (endpoint, var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) {
            (Some(b), _) => base(b),
            (None, Some(full)) => full,
            (None, None) => match var("OTEL_EXPORTER_OTLP_ENDPOINT") {
                Some(b) => base(&b),
                None => return Ok(None),
            },
        };
        let file = |name: &str| {
            var(&format!("OTEL_EXPORTER_OTLP_TRACES_{name}"))
                .or_else(|| var(&format!("OTEL_EXPORTER_OTLP_{name}")))
                .map(std::path::PathBuf::from)
        };
        let tls = OtlpTls {
            ca_file: file("CERTIFICATE"),
            client_cert_file: file("CLIENT_CERTIFICATE"),
            client_key_file: file("CLIENT_KEY"),
        };
        let secure = traces_url.starts_with("https://");
        if !secure && !traces_url.starts_with("http://") {
            return Err(OtelError::Config(format!(
                "endpoint `{}` is neither an http:// nor an https:// URL",
                camel_api::redact_url(&traces_url)
            )));
        }
        // Certificates next to a plain endpoint are a mistake that would send spans in
        // the clear: said, not ignored.
        if !secure && !tls.is_empty() {
            return Err(OtelError::Config(format!(
                "TLS files are set (OTEL_EXPORTER_OTLP_*CERTIFICATE / *CLIENT_KEY) but the endpoint `{}` is http://; use https://",
                camel_api::redact_url(&traces_url)
            )));
        }
        Ok(Some(OtlpConfig {
            traces_url,
            protocol,
            service_name: var("OTEL_SERVICE_NAME").unwrap_or_else(|| "camel".into()),
            step_spans: false,
            tls,
        }))
    }
}

/// `base` with `/v1/traces` appended to its path.
fn traces_url(base: &str) -> String {
    format!("{}{TRACES_PATH}", base.trim_end_matches('/'))
}

/// The running export; [`TraceExport::shutdown`] sends what is queued. Dropping it
/// without a shutdown loses the spans still queued.
#[derive(Debug)]
pub struct TraceExport {
    provider: SdkTracerProvider,
}

/// How long one export may take (the SDK's default).
const EXPORT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The exporter `config` asks for.
fn exporter(config: &OtlpConfig) -> Result<grpc::Exporter, OtelError> {
    Ok(match config.protocol {
        OtlpProtocol::HttpProtobuf => grpc::Exporter::Plain(
            opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_http_client(http_client(&config.tls)?)
                .with_protocol(Protocol::HttpBinary)
                .with_endpoint(config.traces_url.clone())
                .with_timeout(EXPORT_TIMEOUT)
                .build()?,
        ),
        OtlpProtocol::Grpc => grpc::Exporter::on_own_runtime(&config.traces_url, &config.tls)?,
    })
}

/// The blocking HTTP client of the OTLP/HTTP export, with rustls on *ring* (for plain
/// `http://` too: the SDK's own client would look for a process-wide TLS provider).
/// Made on a thread of its own, as the SDK does: a blocking client refuses to be made on
/// a runtime thread.
fn http_client(tls: &OtlpTls) -> Result<reqwest::blocking::Client, OtelError> {
    let rustls = tls::http_config(tls)?;
    std::thread::spawn(move || {
        reqwest::blocking::Client::builder()
            .tls_backend_preconfigured(rustls)
            .timeout(EXPORT_TIMEOUT)
            .build()
    })
    .join()
    .map_err(|_| OtelError::Config("building the HTTP client panicked".into()))?
    .map_err(|e| OtelError::Config(format!("cannot build the HTTP client: {e}")))
}

impl TraceExport {
    /// Sends the spans still queued and stops the export thread (waits for the
    /// collector, up to the SDK's export timeout).
    pub fn shutdown(self) {
        let _ = self.provider.force_flush();
        let _ = self.provider.shutdown();
    }
}

/// Starts the OTLP export and installs its tracer for the routes started afterwards.
///
/// Call it outside an async runtime (before building one, as the `camel` binary does):
/// the exporter's HTTP client is a blocking one, which refuses to be made on a runtime
/// thread.
pub fn install(config: OtlpConfig) -> Result<TraceExport, OtelError> {
    let exporter = exporter(&config)?;
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            Resource::builder()
                .with_service_name(config.service_name.clone())
                .build(),
        )
        .build();
    let tracer = tracer::OtelTracer::new(provider.tracer("camel"), config.step_spans);
    if !camel_api::trace::install(Box::new(tracer)) {
        let _ = provider.shutdown();
        return Err(OtelError::AlreadyInstalled);
    }
    Ok(TraceExport { provider })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(
        endpoint: Option<&str>,
        vars: &[(&str, &str)],
    ) -> Result<Option<OtlpConfig>, OtelError> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        OtlpConfig::from_env(endpoint, |name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn off_without_an_endpoint() {
        assert_eq!(from(None, &[("OTEL_SERVICE_NAME", "x")]).unwrap(), None);
    }

    #[test]
    fn endpoints_and_service_name() {
        let c = from(Some("http://collector:4318/"), &[]).unwrap().unwrap();
        assert_eq!(c.traces_url, "http://collector:4318/v1/traces");
        assert_eq!(c.service_name, "camel");
        let c = from(
            None,
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
                ("OTEL_SERVICE_NAME", "orders"),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.traces_url, "http://a:4318/v1/traces");
        assert_eq!(c.service_name, "orders");
        let c = from(
            None,
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
                ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b/traces"),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.traces_url, "http://b/traces");
    }

    #[test]
    fn unsupported_settings_are_errors() {
        let json = from(
            Some("http://a:4318"),
            &[("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")],
        );
        assert!(matches!(json, Err(OtelError::Config(m)) if m.contains("http/json")));
        assert!(from(Some("a:4318"), &[]).is_err());
        let plain_with_ca = from(
            Some("http://a:4318"),
            &[("OTEL_EXPORTER_OTLP_CERTIFICATE", "/etc/ca.pem")],
        );
        assert!(matches!(plain_with_ca, Err(OtelError::Config(m)) if m.contains("use https://")));
    }

    #[test]
    fn https_takes_the_standard_tls_files() {
        let c = from(
            Some("https://a:4318"),
            &[
                ("OTEL_EXPORTER_OTLP_CERTIFICATE", "/etc/ca.pem"),
                (
                    "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE",
                    "/etc/traces-ca.pem",
                ),
                ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "/etc/me.pem"),
                ("OTEL_EXPORTER_OTLP_CLIENT_KEY", "/etc/me.key"),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.traces_url, "https://a:4318/v1/traces");
        assert_eq!(
            c.tls.ca_file.as_deref(),
            Some("/etc/traces-ca.pem".as_ref())
        );
        assert_eq!(
            c.tls.client_cert_file.as_deref(),
            Some("/etc/me.pem".as_ref())
        );
        assert_eq!(
            c.tls.client_key_file.as_deref(),
            Some("/etc/me.key".as_ref())
        );
        let c = from(Some("https://a:4318"), &[]).unwrap().unwrap();
        assert!(
            c.tls.is_empty(),
            "the system's roots, no client certificate"
        );
    }

    #[test]
    fn bad_tls_files_are_named_at_startup() {
        let dir = std::env::temp_dir().join(format!("camel-otel-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let not_pem = dir.join("ca.txt");
        std::fs::write(&not_pem, "not a certificate").unwrap();
        let missing = dir.join("missing.pem");
        for (ca, cert, key, says) in [
            (Some(&missing), None, None, "cannot read the CA certificate"),
            (Some(&not_pem), None, None, "holds no PEM certificate"),
            (None, Some(&not_pem), None, "needs its key"),
            (None, None, Some(&not_pem), "needs its certificate"),
        ] {
            let tls = OtlpTls {
                ca_file: ca.cloned(),
                client_cert_file: cert.cloned(),
                client_key_file: key.cloned(),
            };
            for protocol in [OtlpProtocol::HttpProtobuf, OtlpProtocol::Grpc] {
                let mut config = OtlpConfig::new("https://127.0.0.1:1", "t");
                config.protocol = protocol;
                config.tls = tls.clone();
                let err = exporter(&config).expect_err("refused");
                assert!(err.to_string().contains(says), "{protocol:?}: {err}");
            }
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn grpc_takes_the_base_endpoint_as_it_is() {
        let c = from(
            Some("http://collector:4317/"),
            &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.protocol, OtlpProtocol::Grpc);
        assert_eq!(c.traces_url, "http://collector:4317");
        assert_eq!(c, OtlpConfig::grpc("http://collector:4317", "camel"));
        let https = from(
            Some("https://collector:4317"),
            &[("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc")],
        )
        .unwrap()
        .unwrap();
        assert_eq!(https.traces_url, "https://collector:4317");
    }
}
