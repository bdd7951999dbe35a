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
mod tracer;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
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
    /// - `OTEL_SERVICE_NAME`: the service name, `camel` when unset.
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
        // The exporter's client is built without TLS (ADR 0123): a collector or agent
        // beside the process is the setup this serves; one that is far away is reached
        // through that local collector.
        if !traces_url.starts_with("http://") {
            return Err(OtelError::Config(format!(
                "endpoint `{}` is not an http:// URL (https is not supported yet: send to a local collector)",
                camel_api::redact_url(&traces_url)
            )));
        }
        Ok(Some(OtlpConfig {
            traces_url,
            protocol,
            service_name: var("OTEL_SERVICE_NAME").unwrap_or_else(|| "camel".into()),
            step_spans: false,
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

/// The exporter `config` asks for.
fn exporter(config: &OtlpConfig) -> Result<grpc::Exporter, OtelError> {
    Ok(match config.protocol {
        OtlpProtocol::HttpProtobuf => grpc::Exporter::Plain(
            opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(Protocol::HttpBinary)
                .with_endpoint(config.traces_url.clone())
                .build()?,
        ),
        OtlpProtocol::Grpc => grpc::Exporter::on_own_runtime(&config.traces_url)?,
    })
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
        assert!(from(Some("https://a:4318"), &[]).is_err());
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
        );
        assert!(https.is_err(), "TLS is not built in");
    }
}
