//! `camel run` and `camel validate`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use crate::file_routes::FileRoutes;
use crate::properties::PropertyArgs;
use camel_core::{CamelContext, RouteDefinition, RouteError};
use tokio::time::Instant;

use crate::shutdown::{forced, stop, ShutdownSignals, Stopping, STARTUP_ERROR};

/// Options of `camel run` (the names of Camel JBang's flags).
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// Route files (YAML). Without any: every `*.camel.yaml` and `application.properties`
    /// of the current folder.
    files: Vec<PathBuf>,
    /// Stop after this many exchanges have completed, across all routes.
    #[arg(long)]
    max_messages: Option<u64>,
    /// Stop after this many seconds.
    #[arg(long)]
    max_seconds: Option<u64>,
    /// Stop once no exchange has completed for this many seconds.
    #[arg(long)]
    max_idle_seconds: Option<u64>,
    /// Graceful shutdown deadline in seconds.
    #[arg(long, default_value_t = 30)]
    shutdown_timeout: u64,
    /// Watch the route files and apply changes while running: changed routes are swapped,
    /// new ones started, removed ones stopped; a file with errors changes nothing.
    #[arg(long)]
    watch: bool,
    /// Serve Prometheus metrics (camel_exchanges_*, camel_route_*, camel_outbox_*, camel_sink_*, …) at
    /// http://ADDR/metrics, e.g. 127.0.0.1:9464.
    #[arg(long)]
    metrics_addr: Option<std::net::SocketAddr>,
    /// Send a span per exchange per route over OTLP/HTTP to this collector base URL
    /// (spans go to its /v1/traces), e.g. http://127.0.0.1:4318. Off by default; the
    /// standard OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and
    /// OTEL_SERVICE_NAME variables are read too.
    #[arg(long, value_name = "URL")]
    pub(crate) otel_endpoint: Option<String>,
    /// With an OTLP export, a span per step too (a child of the route's span, with
    /// `camel.step.id` and `camel.step.kind`), besides the span per exchange. Also read
    /// from CAMEL_OTEL_STEP_SPANS=true.
    #[arg(long, env = "CAMEL_OTEL_STEP_SPANS")]
    pub(crate) otel_step_spans: bool,
    /// With metrics served, time every step too: `camel_message_history_seconds` by
    /// `routeId` and `nodeId` (Camel's message history). Also turned on by the property
    /// `camel.metrics.enableMessageHistory=true` or CAMEL_STEP_METRICS=true. Off by default:
    /// it costs two clock reads and a histogram record per step per exchange.
    #[arg(long, env = "CAMEL_STEP_METRICS")]
    step_metrics: bool,
    #[command(flatten)]
    admin: crate::admin::AdminArgs,
    #[command(flatten)]
    trace: crate::trace::TraceRunArgs,
    /// Seconds a batching sink's per-destination series (`camel_sink_batch_*`) may stay
    /// unchanged before `/metrics` drops them (a destination's batcher stops after its
    /// `idle_timeout`); 0 keeps them forever. Keep it above the longest sink `idle_timeout`.
    #[arg(long, default_value_t = 300)]
    sink_metrics_expiry: u64,
    /// Port of the embedded HTTP server for `platform-http:` routes; it binds only when
    /// such a route starts. 0 picks a free port (the log says which).
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Address the embedded HTTP server binds: loopback unless told otherwise, so a route
    /// is not on the network by accident; `--host 0.0.0.0` serves every interface.
    #[arg(long, default_value = "127.0.0.1")]
    host: std::net::IpAddr,
    /// Seconds a client has to send a request body to a `platform-http:` route before it
    /// is answered 408.
    #[arg(long, default_value_t = 30)]
    http_body_timeout: u64,
    /// Request body bytes the HTTP server holds at once across all connections; a body
    /// beyond it is answered 503.
    #[arg(long, default_value_t = camel_http::DEFAULT_MAX_BUFFERED_BODY_BYTES)]
    http_max_buffered_body_bytes: usize,
    #[command(flatten)]
    properties: PropertyArgs,
}

/// Loads every file with the properties read now, as one context, collecting the errors
/// of all of them.
fn load(
    files: &[PathBuf],
    properties: &PropertyArgs,
) -> Result<Vec<RouteDefinition>, Vec<RouteError>> {
    // One context: the top-level error handling of any file applies to every route.
    let (routes, errors) = crate::sources::load_partial(files, properties)
        .map_err(|e| vec![RouteError::new(camel_core::RouteErrorKind::InvalidValue(e))])?;
    if errors.is_empty() {
        Ok(routes)
    } else {
        Err(errors)
    }
}

pub(crate) fn report(errors: &[RouteError]) {
    for e in errors {
        eprintln!("error: {e}");
    }
    eprintln!("{} error(s)", errors.len());
}

/// A context with the built-in components plus the ones this binary ships: the outbox
/// (embedded SQLite under `./camel-data/` unless a route names a datasource) and the
/// batching sinks (SQS, Pub/Sub, NATS), RabbitMQ, HTTP (`platform-http:` served as `http`
/// says, `http:`, `https:`), and the state stores (`aggregation_repository: postgres://…`).
fn context(http: camel_http::ServerConfig) -> CamelContext {
    let ctx = CamelContext::new();
    ctx.add_component(Arc::new(camel_http::PlatformHttpComponent::new(http)));
    ctx.add_component(Arc::new(camel_http::HttpComponent::http()));
    ctx.add_component(Arc::new(camel_http::HttpComponent::https()));
    let outboxes = camel_outbox::OutboxComponent::new();
    // The admin API's outbox page reads and administers the outboxes it opens.
    ctx.add_resource(crate::admin::OUTBOX_COMPONENT, Arc::new(outboxes.clone()));
    ctx.add_component(Arc::new(outboxes));
    ctx.add_component(Arc::new(camel_sinks::sqs::SqsComponent::new()));
    ctx.add_component(Arc::new(camel_sinks::sqs::Aws2SqsComponent::default()));
    ctx.add_component(Arc::new(camel_sinks::sns::SnsComponent::new()));
    ctx.add_component(Arc::new(camel_sinks::pubsub::PubSubComponent::new()));
    ctx.add_component(Arc::new(
        camel_sinks::pubsub::GooglePubsubComponent::default(),
    ));
    ctx.add_component(Arc::new(camel_sinks::nats::NatsComponent::new()));
    ctx.add_component(Arc::new(camel_sql::SqlComponent::new()));
    // Repositories of aggregate and idempotent_consumer written as database URLs.
    // On the context's pools: one per database with `sql:` and the outbox (ADR 0085).
    camel_state::register_with_pools(ctx.pools().clone(), |name, resource| {
        ctx.add_resource(name, resource)
    });
    // … and as `redis://…` URLs, other URLs passed on to camel-state's (ADR 0161).
    camel_redis::repositories::register(
        ctx.registry().resource(camel_eip::state::STORE_FACTORY),
        |name, resource| ctx.add_resource(name, resource),
    );
    ctx.add_component(Arc::new(camel_rabbitmq::RabbitMqComponent::new()));
    ctx.add_component(Arc::new(camel_kafka::KafkaComponent::new()));
    // `master:` refuses its endpoints until `camel.cluster.*` names a store (then
    // `sources::register_datasource` replaces it with one that elects; ADR 0140).
    ctx.add_component(Arc::new(camel_cluster::MasterComponent::new(None)));
    // MQTT 5 and 3.1.1 (crate camel-mqtt, ADR 0138).
    ctx.add_component(Arc::new(camel_mqtt::MqttComponent::mqtt5()));
    ctx.add_component(Arc::new(camel_mqtt::MqttComponent::mqtt311()));
    // PostgreSQL change data capture over logical replication (crate camel-cdc, ADR 0156).
    ctx.add_component(Arc::new(camel_cdc::CdcComponent::new()));
    ctx.add_component(Arc::new(camel_cdc::CdcComponent::alias()));
    // Redis commands, pub/sub and stream consumer groups (crate camel-redis, ADR 0139).
    ctx.add_component(Arc::new(camel_redis::RedisComponent::spring_redis()));
    ctx.add_component(Arc::new(camel_redis::RedisComponent::redis()));
    // S3 objects in and out (crate camel-s3, ADR 0153).
    ctx.add_component(Arc::new(camel_s3::S3Component::new()));
    // FTP, FTPS and SFTP folders in and out (crate camel-ftp, ADR 0162).
    for component in camel_ftp::components() {
        ctx.add_component(component);
    }
    // XML: `xslt:` and the `xpath` language (crate camel-xml, ADR 0112).
    #[cfg(feature = "xml")]
    {
        ctx.add_component(Arc::new(camel_xml::XsltComponent));
        ctx.registry()
            .add_language("xpath", Arc::new(camel_xml::XPathLanguage));
    }
    ctx
}

/// The context `camel test` runs each case on: this binary's components, an HTTP server
/// on a free loopback port (bound only if a `platform-http:` route starts).
pub(crate) fn test_context() -> CamelContext {
    context(camel_http::ServerConfig::new(([127, 0, 0, 1], 0).into()))
}

/// Loads every file and compiles every route that loaded, even when others did not: a
/// mistake in one item does not hide the errors inside the other routes.
pub(crate) async fn validate(files: &[PathBuf], properties: &PropertyArgs) -> ExitCode {
    match check(files, properties, false).await {
        Ok(routes) => {
            println!("ok: {} route(s) in {} file(s)", routes.len(), files.len());
            ExitCode::SUCCESS
        }
        Err(Checked::Unreadable(e)) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
        Err(Checked::Errors(errors)) => {
            report(&errors);
            ExitCode::FAILURE
        }
    }
}

/// Why [`check`] found the files unfit to run.
pub(crate) enum Checked {
    /// A file or a properties source could not be read.
    Unreadable(String),
    /// Every error of the routes, in the files' order.
    Errors(Vec<RouteError>),
}

/// Loads and compiles the routes of `files` without running them, as `camel validate`:
/// the routes, or every error found. `for_pod`: as they would load in a Kubernetes pod
/// (`camel export --kubernetes`), where the cluster backend has a default (ADR 0172).
pub(crate) async fn check(
    files: &[PathBuf],
    properties: &PropertyArgs,
    for_pod: bool,
) -> Result<Vec<RouteDefinition>, Checked> {
    let (routes, mut errors) =
        crate::sources::load_partial(files, properties).map_err(Checked::Unreadable)?;
    // Validation starts no route, so the server never binds: any port will do.
    let ctx = context(camel_http::ServerConfig::new(([127, 0, 0, 1], 0).into()));
    if let Err(e) = crate::sources::register_datasource(&ctx, files, properties, for_pod) {
        errors.push(RouteError::new(camel_core::RouteErrorKind::InvalidValue(e)));
    }
    if let Err(e) = ctx.validate(&routes).await {
        errors.extend(e.0);
    }
    camel_core::error::drop_shadowed(&mut errors);
    // In the files' order: a route's nested errors are found list by list.
    errors.sort_by(|a, b| {
        let key = |e: &RouteError| {
            e.location
                .as_ref()
                .map(|l| (l.file.clone(), l.line, l.column))
        };
        key(a).cmp(&key(b))
    });
    if errors.is_empty() {
        Ok(routes)
    } else {
        Err(Checked::Errors(errors))
    }
}

async fn idle_for(ctx: &CamelContext, limit: Duration) {
    let mut last = ctx.stats().completed();
    let mut since = tokio::time::Instant::now();
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    loop {
        tick.tick().await;
        let now = ctx.stats().completed();
        if now != last {
            last = now;
            since = tokio::time::Instant::now();
        } else if since.elapsed() >= limit {
            return;
        }
    }
}

async fn wait_until_done(
    ctx: &CamelContext,
    args: &RunArgs,
    signals: &mut ShutdownSignals,
) -> &'static str {
    let max_messages = async {
        match args.max_messages {
            Some(n) => ctx.stats().wait_for(n).await,
            None => std::future::pending().await,
        }
    };
    let max_seconds = async {
        match args.max_seconds {
            Some(s) => tokio::time::sleep(Duration::from_secs(s)).await,
            None => std::future::pending().await,
        }
    };
    let max_idle = async {
        match args.max_idle_seconds {
            Some(s) => idle_for(ctx, Duration::from_secs(s)).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = signals.recv() => "signal",
        _ = max_messages => "max-messages reached",
        _ = max_seconds => "max-seconds reached",
        _ = max_idle => "max-idle-seconds reached",
    }
}

/// Each file's modification time and length: what tells a change (and a write still
/// going on).
/// What [`modified`] returns: per file, its modification time and length.
type Stamps = Vec<Option<(std::time::SystemTime, u64)>>;

fn modified(files: &[PathBuf]) -> Stamps {
    files
        .iter()
        .map(|f| {
            std::fs::metadata(f)
                .and_then(|m| Ok((m.modified()?, m.len())))
                .ok()
        })
        .collect()
}

/// How long a changed file must stay unchanged before it is read: an editor or a
/// `cp` that truncates then writes leaves a moment in which the file is empty or half
/// written, and reading then would reload a wrong set of routes.
const SETTLE: Duration = Duration::from_millis(200);

/// Polls the files' modification times once a second and reloads on a change.
/// `seen`: the files' stamps taken before they were first read, so an edit made while
/// the routes were starting is not mistaken for the state already applied.
async fn watch(
    ctx: CamelContext,
    files: Vec<PathBuf>,
    properties: PropertyArgs,
    mut applied: FileRoutes,
    mut seen: Stamps,
) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        let mut now = modified(&files);
        if now == seen {
            continue;
        }
        loop {
            tokio::time::sleep(SETTLE).await;
            let again = modified(&files);
            if again == now {
                break;
            }
            now = again;
        }
        seen = now;
        // Parsing is CPU work of unbounded size: keep it off the routes' async workers.
        // The properties are read again too: an edited value counts with the edit.
        let loaded = {
            let files = files.clone();
            let properties = properties.clone();
            tokio::task::spawn_blocking(move || load(&files, &properties)).await
        };
        let Ok(loaded) = loaded else {
            tracing::warn!(
                "reading the changed route files failed; the running routes are unchanged"
            );
            continue;
        };
        let routes = match loaded {
            Ok(r) => r,
            Err(errors) => {
                report(&errors);
                tracing::warn!(
                    "route files changed but have errors; the running routes are unchanged"
                );
                continue;
            }
        };
        // Only what changed in the files since the last reading is applied: routes the
        // admin API added or swapped since stay as they are (ADR 0039).
        let controller = ctx.route_controller();
        let mut running = Vec::new();
        for id in controller.route_ids().await {
            if let Ok(definition) = controller.definition(&id).await {
                running.push(definition);
            }
        }
        match ctx.reload(applied.target(running, &routes)).await {
            Ok(r) => {
                applied.applied(&routes, &r);
                tracing::info!(
                    added = ?r.added,
                    swapped = ?r.swapped,
                    removed = ?r.removed,
                    unchanged = r.unchanged.len(),
                    "routes reloaded"
                )
            }
            Err(errors) => {
                report(&errors.0);
                tracing::warn!("reload refused; the running routes are unchanged");
            }
        }
    }
}

/// What startup leaves running, for the stop to end.
struct Running {
    admin_server: Option<tokio::task::JoinHandle<()>>,
    watcher: Option<tokio::task::JoinHandle<()>>,
}

/// Adds and starts the routes, then the admin API and the watcher. `Err` with the exit
/// status when something cannot start (what did start is stopped first).
async fn start(
    ctx: &CamelContext,
    args: &RunArgs,
    routes: Vec<RouteDefinition>,
    stamps: Stamps,
    admin: Option<(crate::admin::AdminConfig, crate::metrics::Exporter)>,
    admin_stop: &tokio_util::sync::CancellationToken,
    admin_changes: &tokio_util::task::TaskTracker,
) -> Result<Running, ExitCode> {
    let file_routes = match ctx.add_routes(routes.clone()).await {
        Ok(ids) => FileRoutes::new(&routes, &ids),
        Err(errors) => {
            report(&errors.0);
            return Err(ExitCode::from(STARTUP_ERROR));
        }
    };
    if let Err(errors) = ctx.start().await {
        report(&errors.0);
        ctx.stop().await;
        return Err(ExitCode::from(STARTUP_ERROR));
    }
    let mut admin_server = None;
    if let Some((config, handle)) = admin {
        let addr = config.addr;
        let serving = crate::admin::serve(
            &config,
            ctx.clone(),
            handle,
            admin_stop.clone(),
            admin_changes.clone(),
        );
        match serving.await {
            Ok((bound, server)) => {
                let scheme = if config.tls.is_some() {
                    "https"
                } else {
                    "http"
                };
                tracing::info!(addr = %bound, scheme, "admin API listening");
                admin_server = Some(server);
            }
            Err(e) => {
                eprintln!("error: cannot serve the admin API on {addr}: {e}");
                ctx.stop().await;
                return Err(ExitCode::from(STARTUP_ERROR));
            }
        }
    }
    let watcher = args.watch.then(|| {
        tokio::spawn(watch(
            ctx.clone(),
            args.files.clone(),
            args.properties.clone(),
            file_routes,
            stamps,
        ))
    });
    Ok(Running {
        admin_server,
        watcher,
    })
}

pub(crate) async fn run(mut args: RunArgs) -> ExitCode {
    if args.files.is_empty() {
        match crate::discover::files_in(Path::new(".")) {
            Ok(files) => args.files = files,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(STARTUP_ERROR);
            }
        }
    }
    // The admin flags are checked before anything starts: a public bind without a token
    // is refused here (ADR 0102).
    let admin = match args.admin.config() {
        Ok(admin) => admin,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(STARTUP_ERROR);
        }
    };
    let mut signals = ShutdownSignals::install();
    // Read on the blocking pool, with the signals heeded meanwhile: a route file that is
    // a pipe (`camel run <(generate)`) or on a hung file system blocks the read, and a
    // read on the async worker would leave Ctrl-C and SIGTERM unanswered.
    tracing::info!(files = args.files.len(), "reading the route files");
    let files = args.files.clone();
    let properties = args.properties.clone();
    let loaded = tokio::select! {
        loaded = tokio::task::spawn_blocking(move || (modified(&files), load(&files, &properties))) => loaded,
        _ = signals.recv() => {
            tracing::info!(reason = "signal during startup", "stopping");
            return ExitCode::SUCCESS;
        }
    };
    let (stamps, routes) = match loaded {
        Ok((stamps, Ok(r))) => (stamps, r),
        Ok((_, Err(errors))) => {
            report(&errors);
            return ExitCode::from(STARTUP_ERROR);
        }
        Err(e) => {
            eprintln!("error: reading the route files failed: {e}");
            return ExitCode::from(STARTUP_ERROR);
        }
    };
    let sink_expiry =
        (args.sink_metrics_expiry > 0).then(|| Duration::from_secs(args.sink_metrics_expiry));
    let exporter = if args.metrics_addr.is_some() || admin.is_some() {
        match crate::metrics::Exporter::install(sink_expiry) {
            Ok(exporter) => Some(exporter),
            Err(e) => {
                eprintln!("error: cannot install the metrics recorder: {e}");
                return ExitCode::from(STARTUP_ERROR);
            }
        }
    } else {
        None
    };
    if let (Some(addr), Some(exporter)) = (args.metrics_addr, &exporter) {
        match crate::metrics::serve(addr, exporter.clone()).await {
            Ok(bound) => tracing::info!(addr = %bound, "serving Prometheus metrics at /metrics"),
            Err(e) => {
                eprintln!("error: cannot serve metrics on {addr}: {e}");
                return ExitCode::from(STARTUP_ERROR);
            }
        }
    }
    if exporter.is_some() {
        match crate::sources::property_is_true(
            &args.files,
            &args.properties,
            "camel.metrics.enableMessageHistory",
        ) {
            Ok(from_properties) if args.step_metrics || from_properties => {
                camel_core::context::metrics::set_step_timing(true);
            }
            Ok(_) => {}
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(STARTUP_ERROR);
            }
        }
    }
    let admin_metrics = admin.zip(exporter);
    let ctx = context(
        camel_http::ServerConfig::new((args.host, args.port).into())
            .with_body_read_timeout(Duration::from_secs(args.http_body_timeout))
            .with_max_buffered_body_bytes(args.http_max_buffered_body_bytes),
    );
    ctx.set_shutdown_timeout(Duration::from_secs(args.shutdown_timeout));
    args.trace.apply(&ctx);
    if let Err(e) = crate::sources::register_datasource(&ctx, &args.files, &args.properties, false)
    {
        eprintln!("error: {e}");
        return ExitCode::from(STARTUP_ERROR);
    }
    let admin_stop = tokio_util::sync::CancellationToken::new();
    let admin_changes = tokio_util::task::TaskTracker::new();
    // A signal during startup (a route slow to start: a database that does not answer)
    // stops at once what has started, instead of waiting for startup to end.
    let starting = start(
        &ctx,
        &args,
        routes,
        stamps,
        admin_metrics,
        &admin_stop,
        &admin_changes,
    );
    let started = tokio::select! {
        started = starting => Some(started),
        _ = signals.recv() => None,
    };
    let (why, running) = match started {
        Some(Ok(running)) => (wait_until_done(&ctx, &args, &mut signals).await, running),
        Some(Err(code)) => return code,
        None => (
            "signal during startup",
            Running {
                admin_server: None,
                watcher: None,
            },
        ),
    };
    if let Some(w) = running.watcher {
        w.abort();
    }
    tracing::info!(reason = why, "stopping");
    let mut stopping = Stopping::new(
        Instant::now() + Duration::from_secs(args.shutdown_timeout),
        &mut signals,
    );
    match stop(
        &ctx,
        running.admin_server,
        &admin_stop,
        &admin_changes,
        &mut stopping,
    )
    .await
    {
        Ok(code) => code,
        Err(signal) => forced(signal),
    }
}
