//! The span exporter the batch processor drives: OTLP/HTTP as the SDK builds it, or
//! OTLP/gRPC on a Tokio runtime of its own.
//!
//! The SDK's batch processor runs exports on a plain thread of its own. tonic's channel,
//! its timeouts and its retries need a Tokio runtime, and a `camel` process's runtime is
//! built after the exporter (and is not where a stalled collector should cost a worker
//! thread). So a gRPC export is built inside a one-worker runtime kept for the exporter's
//! life, and each export runs through that runtime's handle.

use std::time::Duration;

use opentelemetry_otlp::{WithExportConfig, WithTonicConfig};
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use opentelemetry_sdk::Resource;

use crate::OtelError;

/// One of the two transports.
#[derive(Debug)]
pub(crate) enum Exporter {
    /// OTLP/HTTP: the SDK's blocking client needs no runtime.
    Plain(opentelemetry_otlp::SpanExporter),
    /// OTLP/gRPC with the runtime its channel lives on.
    Grpc {
        inner: opentelemetry_otlp::SpanExporter,
        runtime: tokio::runtime::Runtime,
    },
}

impl Exporter {
    /// A gRPC exporter to `endpoint` (`http://host:4317`). The connection is made at the
    /// first export, so a collector that is down does not stop the process.
    pub(crate) fn on_own_runtime(endpoint: &str, tls: &crate::OtlpTls) -> Result<Self, OtelError> {
        let tls = endpoint
            .starts_with("https://")
            .then(|| crate::tls::grpc_config(tls))
            .transpose()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("camel-otlp-grpc")
            .enable_all()
            .build()
            .map_err(|e| OtelError::Config(format!("cannot start the gRPC export runtime: {e}")))?;
        let inner = runtime.block_on(async {
            let builder = opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .with_endpoint(endpoint.to_string());
            match tls {
                Some(tls) => builder.with_tls_config(tls).build(),
                None => builder.build(),
            }
        })?;
        Ok(Exporter::Grpc { inner, runtime })
    }
}

impl SpanExporter for Exporter {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        match self {
            Exporter::Plain(inner) => inner.export(batch).await,
            // Called from the batch processor's own thread, never from a runtime thread,
            // so blocking on the handle is allowed.
            Exporter::Grpc { inner, runtime } => {
                if tokio::runtime::Handle::try_current().is_ok() {
                    return Err(OTelSdkError::InternalFailure(
                        "a gRPC export was called on a Tokio runtime thread".into(),
                    ));
                }
                runtime.handle().block_on(inner.export(batch))
            }
        }
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        match self {
            Exporter::Plain(inner) | Exporter::Grpc { inner, .. } => {
                inner.shutdown_with_timeout(timeout)
            }
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        match self {
            Exporter::Plain(inner) | Exporter::Grpc { inner, .. } => inner.force_flush(),
        }
    }

    fn set_resource(&mut self, resource: &Resource) {
        match self {
            Exporter::Plain(inner) | Exporter::Grpc { inner, .. } => inner.set_resource(resource),
        }
    }
}
