//! The admin HTTP API of `camel run --admin-addr ADDR`: health, Prometheus metrics, and
//! the routes — list them, start, stop, suspend, resume, replace (hot swap) and remove.
//! See docs/admin.md.

use std::net::SocketAddr;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use camel_core::{CamelContext, RouteError, RouteErrorKind, RouteStatus};
use metrics_exporter_prometheus::PrometheusHandle;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

#[derive(Clone)]
struct Admin {
    ctx: CamelContext,
    metrics: PrometheusHandle,
}

/// Binds `addr` and serves the API until `stop` fires; returns the bound address (useful
/// with port 0).
pub(crate) async fn serve(
    addr: SocketAddr,
    ctx: CamelContext,
    metrics: PrometheusHandle,
    stop: CancellationToken,
) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let upkeep = metrics.clone();
    let upkeep_stop = stop.clone();
    // Histograms are summarised on a timer, as the exporter's own listener does.
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = upkeep_stop.cancelled() => return,
                _ = tokio::time::sleep(Duration::from_secs(5)) => upkeep.run_upkeep(),
            }
        }
    });
    let app = Router::new()
        .route("/health", get(health))
        .route("/metrics", get(render_metrics))
        .route("/routes", get(list))
        .route("/routes/{id}", get(one).put(replace).delete(remove))
        .route("/routes/{id}/{action}", post(act))
        .with_state(Admin { ctx, metrics });
    tokio::spawn(async move {
        let server = axum::serve(listener, app).with_graceful_shutdown(stop.cancelled_owned());
        if let Err(e) = server.await {
            tracing::warn!(error = %e, "admin API stopped");
        }
    });
    Ok(bound)
}

fn status_name(s: RouteStatus) -> &'static str {
    match s {
        RouteStatus::Started => "Started",
        RouteStatus::Suspended => "Suspended",
        RouteStatus::Stopped => "Stopped",
    }
}

/// A JSON error body with the status that fits the error.
fn failure(e: &RouteError) -> Response {
    let code = match e.kind {
        RouteErrorKind::NoSuchRoute(_) => StatusCode::NOT_FOUND,
        RouteErrorKind::Lifecycle(_) => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    };
    (code, Json(json!({ "error": e.to_string() }))).into_response()
}

async fn describe(admin: &Admin, id: &str) -> Result<Value, RouteError> {
    let routes = admin.ctx.route_controller();
    let status = routes.status(id).await?;
    let definition = routes.definition(id).await?;
    Ok(json!({
        "id": id,
        "status": status_name(status),
        "from": definition.from.uri,
        "definition": definition,
    }))
}

async fn health(State(admin): State<Admin>) -> Response {
    let routes = admin.ctx.route_controller();
    let (mut started, mut suspended, mut stopped) = (0, 0, 0);
    for id in routes.route_ids().await {
        match routes.status(&id).await {
            Ok(RouteStatus::Started) => started += 1,
            Ok(RouteStatus::Suspended) => suspended += 1,
            Ok(RouteStatus::Stopped) | Err(_) => stopped += 1,
        }
    }
    let body = json!({
        "status": "UP",
        "routes": { "started": started, "suspended": suspended, "stopped": stopped },
        "exchanges": {
            "completed": admin.ctx.stats().completed(),
            "failed": admin.ctx.stats().failed(),
        },
    });
    Json(body).into_response()
}

async fn render_metrics(State(admin): State<Admin>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        admin.metrics.render(),
    )
        .into_response()
}

async fn list(State(admin): State<Admin>) -> Response {
    let mut out = Vec::new();
    for id in admin.ctx.route_controller().route_ids().await {
        // A route removed meanwhile is simply not listed.
        if let Ok(mut v) = describe(&admin, &id).await {
            if let Some(m) = v.as_object_mut() {
                m.remove("definition");
            }
            out.push(v);
        }
    }
    Json(Value::Array(out)).into_response()
}

async fn one(State(admin): State<Admin>, Path(id): Path<String>) -> Response {
    match describe(&admin, &id).await {
        Ok(v) => Json(v).into_response(),
        Err(e) => failure(&e),
    }
}

async fn act(State(admin): State<Admin>, Path((id, action)): Path<(String, String)>) -> Response {
    let routes = admin.ctx.route_controller();
    let mut cut_off = 0;
    let done = match action.as_str() {
        "start" => routes.start_route(&id).await,
        "stop" => routes.stop_route(&id).await.map(|o| cut_off = o.cut_off),
        "suspend" => routes.suspend_route(&id).await,
        "resume" => routes.resume_route(&id).await,
        other => {
            let body = json!({
                "error": format!("unknown action `{other}` (expected start, stop, suspend or resume)")
            });
            return (StatusCode::NOT_FOUND, Json(body)).into_response();
        }
    };
    if let Err(e) = done {
        return failure(&e);
    }
    tracing::info!(route_id = %id, %action, "route changed through the admin API");
    match routes.status(&id).await {
        Ok(s) => {
            Json(json!({ "id": id, "status": status_name(s), "cut_off": cut_off })).into_response()
        }
        Err(e) => failure(&e),
    }
}

/// `PUT /routes/{id}` with a YAML body holding one route: swaps the running route (or adds
/// and starts a new one). The new definition is compiled first; an error changes nothing.
async fn replace(State(admin): State<Admin>, Path(id): Path<String>, body: Bytes) -> Response {
    let Ok(text) = std::str::from_utf8(&body) else {
        let body = json!({ "error": "the body must be UTF-8 YAML" });
        return (StatusCode::BAD_REQUEST, Json(body)).into_response();
    };
    let origin = format!("PUT /routes/{id}");
    let mut routes = match camel_core::yaml::load_str(text, &origin) {
        Ok(r) => r,
        Err(errors) => {
            let list: Vec<String> = errors.0.iter().map(ToString::to_string).collect();
            return (StatusCode::BAD_REQUEST, Json(json!({ "errors": list }))).into_response();
        }
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
    let controller = admin.ctx.route_controller();
    let existed = controller.route_ids().await.contains(&id);
    let done = if existed {
        controller.swap(&id, definition).await.map(drop)
    } else {
        // Added to a started context, it starts unless it says `auto_startup: false`.
        match admin.ctx.add_routes(vec![definition]).await {
            Ok(_) => Ok(()),
            Err(errors) => {
                let list: Vec<String> = errors.0.iter().map(ToString::to_string).collect();
                return (StatusCode::BAD_REQUEST, Json(json!({ "errors": list }))).into_response();
            }
        }
    };
    if let Err(e) = done {
        return failure(&e);
    }
    tracing::info!(route_id = %id, swapped = existed, "route replaced through the admin API");
    match describe(&admin, &id).await {
        Ok(mut v) => {
            if let Some(m) = v.as_object_mut() {
                m.insert("swapped".into(), Value::Bool(existed));
            }
            let code = if existed {
                StatusCode::OK
            } else {
                StatusCode::CREATED
            };
            (code, Json(v)).into_response()
        }
        Err(e) => failure(&e),
    }
}

async fn remove(State(admin): State<Admin>, Path(id): Path<String>) -> Response {
    match admin.ctx.route_controller().remove_route(&id).await {
        Ok(outcome) => {
            tracing::info!(route_id = %id, "route removed through the admin API");
            Json(json!({ "id": id, "removed": true, "cut_off": outcome.cut_off })).into_response()
        }
        Err(e) => failure(&e),
    }
}
