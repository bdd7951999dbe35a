//! The handlers of the admin API: health, metrics, the routes and the paused Pub/Sub
//! ordering keys. They run behind the checks of `guard`.

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use camel_core::{RouteError, RouteErrorKind, RouteStatus};
use serde_json::{json, Value};

use super::Admin;

/// Runs a change to the routes on its own task: a client that hangs up must not cut a
/// stop or swap off halfway (the handler's future would be dropped with the request).
pub(super) async fn detached<T: Send + 'static>(
    admin: &Admin,
    change: impl std::future::Future<Output = T> + Send + 'static,
) -> Result<T, Response> {
    admin.changes.spawn(change).await.map_err(|e| {
        let body = json!({ "error": format!("the operation failed: {e}") });
        (StatusCode::INTERNAL_SERVER_ERROR, Json(body)).into_response()
    })
}

fn error_list(errors: &[RouteError]) -> Response {
    let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
    let body = json!({ "error": list.join("; "), "errors": list });
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

/// A definition fit to show: credentials hidden, passwords cut out of URLs. Every string
/// goes through `redact_url`, since a URI need not contain `://` to carry a credential
/// (`sqs:q?secret_key=…`); a string that is no URI comes out unchanged.
fn redacted(value: &mut Value) {
    match value {
        Value::String(s) => *s = camel_api::redact_url(s),
        Value::Array(items) => items.iter_mut().for_each(redacted),
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if camel_api::is_secret_name(k) && !v.is_null() {
                    *v = Value::String("***".into());
                } else {
                    redacted(v);
                }
            }
        }
        _ => {}
    }
}

fn status_name(s: RouteStatus) -> &'static str {
    match s {
        RouteStatus::Started => "Started",
        RouteStatus::Suspended => "Suspended",
        RouteStatus::Stopped => "Stopped",
    }
}

/// True when a PUT's change failed only because the route appeared or vanished under
/// it: a swap of a route that is gone, an add of an id that is back.
fn raced(errors: &[RouteError], swapping: bool) -> bool {
    matches!(errors, [e] if matches!(
        (&e.kind, swapping),
        (RouteErrorKind::NoSuchRoute(_), true) | (RouteErrorKind::DuplicateRouteId { .. }, false)
    ))
}

/// A JSON error body with the status that fits the error.
pub(super) fn failure(e: &RouteError) -> Response {
    let code = match e.kind {
        RouteErrorKind::NoSuchRoute(_) => StatusCode::NOT_FOUND,
        RouteErrorKind::DuplicateRouteId { .. } => StatusCode::CONFLICT,
        RouteErrorKind::Lifecycle(_) => StatusCode::INTERNAL_SERVER_ERROR,
        RouteErrorKind::ContextStopping(_) => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::BAD_REQUEST,
    };
    (code, Json(json!({ "error": e.to_string() }))).into_response()
}

/// A route's id, status and source, and the operation under way on it if any; with
/// `full`, its definition too (credentials hidden). Reads never wait for an operation.
pub(super) async fn describe(admin: &Admin, id: &str, full: bool) -> Result<Value, RouteError> {
    let routes = admin.ctx.route_controller();
    let status = routes.status(id).await?;
    let operation = routes.operation(id).await?;
    let definition = routes.definition(id).await?;
    let mut out = json!({
        "id": id,
        "status": status_name(status),
        "from": camel_api::redact_url(&definition.from.uri),
    });
    if let Some(op) = operation {
        out["operation"] = Value::String(op.as_str().into());
    }
    if let Some(reason) = routes.failure(id).await? {
        out["failing"] = Value::String(reason.to_string());
    }
    if full {
        let mut shown = serde_json::to_value(&definition).unwrap_or(Value::Null);
        redacted(&mut shown);
        out["definition"] = shown;
    }
    Ok(out)
}

/// True when the query asks for every check (`?details`; the guard wants the token).
fn wants_details(query: &Option<String>) -> bool {
    query
        .as_deref()
        .is_some_and(|q| q.split('&').any(|p| p.split('=').next() == Some("details")))
}

fn check_json(c: &camel_core::context::HealthCheck) -> Value {
    let mut check = json!({ "name": c.id, "status": c.state.as_str() });
    if let Some(message) = &c.message {
        check["message"] = Value::String(message.clone());
    }
    check
}

/// A health report as JSON: `status`, and the checks (all of them with `details`, else
/// the ones that are down); 503 when down.
fn health_response(report: &camel_core::context::HealthReport, details: bool) -> Response {
    let checks: Vec<Value> = report
        .checks
        .iter()
        .filter(|c| details || c.state == camel_core::context::HealthState::Down)
        .map(check_json)
        .collect();
    let code = if report.is_up() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let body = json!({ "status": report.state.as_str(), "checks": checks });
    (code, Json(body)).into_response()
}

/// `GET /health/live`: the process answers.
pub(super) async fn health_live(State(admin): State<Admin>, RawQuery(q): RawQuery) -> Response {
    health_response(&admin.ctx.liveness(), wants_details(&q))
}

/// `GET /health/ready`: every auto-started route runs and its consumer reaches its source.
pub(super) async fn health_ready(State(admin): State<Admin>, RawQuery(q): RawQuery) -> Response {
    health_response(&admin.ctx.health(), wants_details(&q))
}

/// `GET /health`: route counts and failing consumers, as before; with `?details`, the
/// readiness checks one by one too.
pub(super) async fn health(State(admin): State<Admin>, RawQuery(q): RawQuery) -> Response {
    let routes = admin.ctx.route_controller();
    let (mut started, mut suspended, mut stopped) = (0, 0, 0);
    let mut failing = Vec::new();
    for id in routes.route_ids().await {
        match routes.status(&id).await {
            Ok(RouteStatus::Started) => started += 1,
            Ok(RouteStatus::Suspended) => suspended += 1,
            Ok(RouteStatus::Stopped) => stopped += 1,
            // Removed since the listing: not counted.
            Err(_) => {}
        }
        if let Ok(Some(reason)) = routes.failure(&id).await {
            failing.push(json!({ "id": id, "reason": &*reason }));
        }
    }
    let counts = json!({
        "started": started,
        "suspended": suspended,
        "stopped": stopped,
        "failing": failing.len(),
    });
    // A started route whose source is unreachable takes nothing in: the process is not
    // doing its job, so it is DOWN (503) until the consumer recovers.
    let (status, code) = if failing.is_empty() {
        ("UP", StatusCode::OK)
    } else {
        ("DOWN", StatusCode::SERVICE_UNAVAILABLE)
    };
    let mut body = json!({
        "status": status,
        "routes": counts,
        "exchanges": {
            "completed": admin.ctx.stats().completed(),
            "failed": admin.ctx.stats().failed(),
        },
    });
    if !failing.is_empty() {
        body["failing"] = Value::Array(failing);
    }
    if wants_details(&q) {
        let report = admin.ctx.health();
        body["checks"] = Value::Array(report.checks.iter().map(check_json).collect());
        body["ready"] = Value::String(report.state.as_str().into());
        if let Some(cluster) = crate::cluster::health_details(&admin.ctx).await {
            body["cluster"] = cluster;
        }
    }
    (code, Json(body)).into_response()
}

pub(super) async fn render_metrics(State(admin): State<Admin>) -> Response {
    crate::metrics::response(&admin.metrics)
}

pub(super) async fn list(State(admin): State<Admin>) -> Response {
    let mut out = Vec::new();
    for id in admin.ctx.route_controller().route_ids().await {
        // A route removed meanwhile is simply not listed.
        if let Ok(v) = describe(&admin, &id, false).await {
            out.push(v);
        }
    }
    Json(Value::Array(out)).into_response()
}

pub(super) async fn one(State(admin): State<Admin>, Path(id): Path<String>) -> Response {
    match describe(&admin, &id, true).await {
        Ok(v) => Json(v).into_response(),
        Err(e) => failure(&e),
    }
}

pub(super) async fn act(
    State(admin): State<Admin>,
    Path((id, action)): Path<(String, String)>,
) -> Response {
    let routes = admin.ctx.route_controller();
    if !["start", "stop", "suspend", "resume"].contains(&action.as_str()) {
        let body = json!({
            "error": format!("unknown action `{action}` (expected start, stop, suspend or resume)")
        });
        return (StatusCode::NOT_FOUND, Json(body)).into_response();
    }
    let change = {
        let (routes, id, action) = (routes.clone(), id.clone(), action.clone());
        async move {
            match action.as_str() {
                "start" => routes.start_route(&id).await.map(|()| 0),
                "stop" => routes.stop_route(&id).await.map(|o| o.cut_off),
                "suspend" => routes.suspend_route(&id).await.map(|()| 0),
                _ => routes.resume_route(&id).await.map(|()| 0),
            }
        }
    };
    let cut_off = match detached(&admin, change).await {
        Ok(Ok(n)) => n,
        Ok(Err(e)) => return failure(&e),
        Err(response) => return response,
    };
    tracing::info!(route_id = %id, %action, "route changed through the admin API");
    match routes.status(&id).await {
        Ok(s) => {
            Json(json!({ "id": id, "status": status_name(s), "cut_off": cut_off })).into_response()
        }
        Err(e) => failure(&e),
    }
}

/// Parses a YAML body on the blocking pool, one body at a time: a large document takes
/// CPU time the routes' async workers must not lose, and two at once would double the
/// memory a hostile body can claim.
pub(super) async fn parse_off_the_runtime(
    text: String,
    origin: String,
) -> Result<Result<Vec<camel_core::RouteDefinition>, camel_core::RouteErrors>, Response> {
    static ONE_AT_A_TIME: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);
    let _permit = ONE_AT_A_TIME.acquire().await.map_err(|_| internal())?;
    tokio::task::spawn_blocking(move || camel_core::yaml::load_str(&text, &origin))
        .await
        .map_err(|_| internal())
}

fn internal() -> Response {
    let body = json!({ "error": "the YAML parser failed" });
    (StatusCode::INTERNAL_SERVER_ERROR, Json(body)).into_response()
}

/// `PUT /routes/{id}` with a YAML body holding one route: swaps the running route (or adds
/// and starts a new one). The new definition is compiled first; an error changes nothing.
pub(super) async fn replace(
    State(admin): State<Admin>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let Ok(text) = std::str::from_utf8(&body) else {
        let body = json!({ "error": "the body must be UTF-8 YAML" });
        return (StatusCode::BAD_REQUEST, Json(body)).into_response();
    };
    // The id names the source in error messages and log lines: refuse one that could
    // forge a line before it is shown anywhere.
    if let Err(why) = camel_core::model::check_route_id(&id) {
        let message = format!("PUT /routes/{{id}}: {why}");
        let body = json!({ "error": message, "errors": [message] });
        return (StatusCode::BAD_REQUEST, Json(body)).into_response();
    }
    let origin = format!("PUT /routes/{id}");
    let mut routes = match parse_off_the_runtime(text.to_string(), origin).await {
        Ok(Ok(r)) => r,
        Ok(Err(errors)) => return error_list(&errors.0),
        Err(response) => return response,
    };
    if routes.len() != 1 {
        let body = json!({ "error": format!("expected one route, got {}", routes.len()) });
        return (StatusCode::BAD_REQUEST, Json(body)).into_response();
    }
    let mut definition = routes.remove(0);
    if definition.id.as_deref().is_some_and(|given| given != id) {
        let body = json!({ "error": format!("the route's id is not `{id}`") });
        return (StatusCode::BAD_REQUEST, Json(body)).into_response();
    }
    definition.id = Some(id.clone());
    let ctx = admin.ctx.clone();
    let change = {
        let id = id.clone();
        async move {
            let controller = ctx.route_controller();
            // A DELETE or another PUT can come between the look and the change: a swap
            // that finds the route gone adds it, an add that finds it back swaps it. A
            // route that keeps coming and going is a conflict (409).
            let mut exists = controller.route_ids().await.contains(&id);
            let mut last = Vec::new();
            for _ in 0..3 {
                let outcome = if exists {
                    controller
                        .swap(&id, definition.clone())
                        .await
                        .map(|_| true)
                        .map_err(|e| vec![e])
                } else {
                    // Added to a started context, it starts unless `auto_startup: false`.
                    ctx.add_routes(vec![definition.clone()])
                        .await
                        .map(|_| false)
                        .map_err(|errors| errors.0)
                };
                match outcome {
                    Err(errors) if raced(&errors, exists) => {
                        exists = !exists;
                        last = errors;
                    }
                    other => return other,
                }
            }
            Err(last)
        }
    };
    let existed = match detached(&admin, change).await {
        Ok(Ok(existed)) => existed,
        // A PUT creates what is missing: "not found" here only means the route kept
        // vanishing under concurrent DELETEs.
        Ok(Err(errors)) if raced(&errors, true) => {
            let body =
                json!({ "error": format!("route `{id}` was changed concurrently; try again") });
            return (StatusCode::CONFLICT, Json(body)).into_response();
        }
        Ok(Err(errors)) if errors.len() == 1 => return failure(&errors[0]),
        Ok(Err(errors)) => return error_list(&errors),
        Err(response) => return response,
    };
    tracing::info!(route_id = %id, swapped = existed, "route replaced through the admin API");
    let code = if existed {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    match describe(&admin, &id, true).await {
        Ok(mut v) => {
            if let Some(m) = v.as_object_mut() {
                m.insert("swapped".into(), Value::Bool(existed));
            }
            (code, Json(v)).into_response()
        }
        // Done, then removed by a DELETE that came right after: the PUT still succeeded.
        Err(e) if matches!(e.kind, RouteErrorKind::NoSuchRoute(_)) => {
            let body = json!({ "id": id, "swapped": existed, "removed_since": true });
            (code, Json(body)).into_response()
        }
        Err(e) => failure(&e),
    }
}

/// `GET /sinks/pubsub/projects/P/topics/T/paused`: the topic's paused ordering keys.
/// The components of `camel run` share the process-wide batcher registry, where the
/// pauses live.
pub(super) async fn paused_keys(Path((project, topic)): Path<(String, String)>) -> Response {
    let topic = format!("projects/{project}/topics/{topic}");
    let registry = camel_sinks::BatcherRegistry::global();
    let keys = camel_sinks::pubsub::paused_ordering_keys(&registry, &topic);
    Json(json!({ "topic": topic, "paused": keys })).into_response()
}

/// `POST …/paused/{key}/resume`: resumes one ordering key for every route on the topic.
pub(super) async fn resume_key(
    Path((project, topic, key)): Path<(String, String, String)>,
) -> Response {
    let topic = format!("projects/{project}/topics/{topic}");
    let registry = camel_sinks::BatcherRegistry::global();
    let resumed = camel_sinks::pubsub::resume_ordering_key(&registry, &topic, &key);
    if resumed {
        tracing::info!(%topic, ordering_key = %key, "Pub/Sub ordering key resumed through the admin API");
    }
    Json(json!({ "topic": topic, "ordering_key": key, "resumed": resumed })).into_response()
}

pub(super) async fn remove(State(admin): State<Admin>, Path(id): Path<String>) -> Response {
    let routes = admin.ctx.route_controller();
    let change = {
        let id = id.clone();
        async move { routes.remove_route(&id).await }
    };
    let removed = match detached(&admin, change).await {
        Ok(r) => r,
        Err(response) => return response,
    };
    match removed {
        Ok(outcome) => {
            tracing::info!(route_id = %id, "route removed through the admin API");
            Json(json!({ "id": id, "removed": true, "cut_off": outcome.cut_off })).into_response()
        }
        Err(e) => failure(&e),
    }
}
