//! `camel run`'s trace export: `--otel-endpoint` or the standard `OTEL_EXPORTER_OTLP_*`
//! variables turn it on (docs/observability.md#traces); without either nothing is
//! installed and routes run unwrapped.

use camel_otel::{OtlpConfig, TraceExport};

/// Starts the export when asked; called before the async runtime exists (the exporter's
/// blocking client refuses a runtime thread). `Err` is the message for the user.
/// `step_spans` adds a span per step (`--otel-step-spans`).
pub(crate) fn start(
    endpoint: Option<&str>,
    step_spans: bool,
) -> Result<Option<TraceExport>, String> {
    let config = OtlpConfig::from_env(endpoint, |name| std::env::var(name).ok())
        .map_err(|e| e.to_string())?;
    let Some(mut config) = config else {
        return Ok(None);
    };
    config.step_spans = step_spans;
    let url = config.traces_url.clone();
    let service = config.service_name.clone();
    let transport = match config.protocol {
        camel_otel::OtlpProtocol::Grpc => "OTLP/gRPC",
        _ => "OTLP/HTTP",
    };
    let export = camel_otel::install(config).map_err(|e| e.to_string())?;
    tracing::info!(url = %camel_api::redact_url(&url), service = %service, transport, "exporting traces");
    Ok(Some(export))
}
