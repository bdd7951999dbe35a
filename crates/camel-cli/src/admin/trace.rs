//! The backlog tracer's endpoints: `GET /trace` and `GET /routes/{id}/trace` (the kept
//! exchanges, after a cursor), `POST /trace/{start|stop}` and
//! `POST /routes/{id}/trace/{start|stop}` (ADR 0132). They sit behind the same checks
//! as every endpoint: a token for a change, and for a read once a token is set.

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::handlers::{detached, failure};
use super::Admin;

/// Bytes of records one answer carries at most (at least one record is always sent):
/// a client asks again with the last `seq` while `more` is true.
const PAGE_BYTES: usize = 8 * 1024 * 1024;

fn bad_request(message: String) -> Response {
    (StatusCode::BAD_REQUEST, Json(json!({ "error": message }))).into_response()
}

/// The `since` of a query (0 without one).
fn since(query: &Option<String>) -> Result<u64, String> {
    let Some(query) = query.as_deref() else {
        return Ok(0);
    };
    for pair in query.split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if k == "since" {
            return v.parse().map_err(|_| {
                format!(
                    "since: `{}` is not a record number",
                    v.chars().take(40).collect::<String>()
                )
            });
        }
    }
    Ok(0)
}

/// The records of `route` (every route with `None`) after `after`, one page of them.
fn page(admin: &Admin, route: Option<&str>, after: u64) -> Value {
    let tracer = admin.ctx.tracer();
    let config = tracer.config();
    let mut bytes = 0;
    let mut more = false;
    let mut exchanges = Vec::new();
    for record in tracer.exchanges(route, after) {
        if bytes >= PAGE_BYTES {
            more = true;
            break;
        }
        bytes += record.bytes;
        exchanges.push(serde_json::to_value(record.as_ref()).unwrap_or(Value::Null));
    }
    json!({
        "held_bytes": tracer.held_bytes(),
        "max_bytes": config.max_bytes,
        "capacity": config.capacity,
        "body_max_bytes": config.body_max_bytes,
        "max_steps": config.max_steps,
        "last_seq": tracer.last_seq(),
        "more": more,
        "exchanges": exchanges,
    })
}

/// `GET /trace`: every route's kept exchanges, and which routes are traced.
pub(super) async fn all(State(admin): State<Admin>, RawQuery(q): RawQuery) -> Response {
    let after = match since(&q) {
        Ok(n) => n,
        Err(why) => return bad_request(why),
    };
    let tracer = admin.ctx.tracer();
    let routes: Vec<Value> = tracer
        .routes_traced()
        .into_iter()
        .map(|(id, on)| json!({ "id": id, "enabled": on }))
        .collect();
    let enabled = tracer.is_enabled_for_all() || routes.iter().any(|r| r["enabled"] == true);
    let mut body = page(&admin, None, after);
    body["enabled"] = Value::Bool(enabled);
    body["all"] = Value::Bool(tracer.is_enabled_for_all());
    body["routes"] = Value::Array(routes);
    Json(body).into_response()
}

/// `GET /routes/{id}/trace`: one route's kept exchanges (a removed route's too, while
/// the tracer has them).
pub(super) async fn one(
    State(admin): State<Admin>,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> Response {
    let after = match since(&q) {
        Ok(n) => n,
        Err(why) => return bad_request(why),
    };
    let tracer = admin.ctx.tracer();
    let known = tracer.routes_traced().iter().any(|(r, _)| *r == id);
    if !known {
        if let Err(e) = admin.ctx.route_controller().status(&id).await {
            return failure(&e);
        }
    }
    let mut body = page(&admin, Some(&id), after);
    body["route_id"] = Value::String(id.clone());
    body["enabled"] = Value::Bool(tracer.is_enabled(&id));
    Json(body).into_response()
}

fn unknown_action(action: &str) -> Option<Response> {
    if matches!(action, "start" | "stop") {
        return None;
    }
    let body = json!({ "error": format!("unknown action `{}` (expected start or stop)", action.chars().take(40).collect::<String>()) });
    Some((StatusCode::NOT_FOUND, Json(body)).into_response())
}

async fn switch(admin: &Admin, route: Option<String>, on: bool) -> Result<Vec<String>, Response> {
    let ctx = admin.ctx.clone();
    let change = async move { ctx.set_tracing(route.as_deref(), on).await };
    match detached(admin, change).await? {
        Ok(recompiled) => Ok(recompiled),
        Err(e) => Err(failure(&e)),
    }
}

/// `POST /trace/{start|stop}`: every route, also those added later.
pub(super) async fn act_all(State(admin): State<Admin>, Path(action): Path<String>) -> Response {
    if let Some(response) = unknown_action(&action) {
        return response;
    }
    let on = action == "start";
    match switch(&admin, None, on).await {
        Ok(recompiled) => {
            tracing::info!(%action, "tracer changed for every route through the admin API");
            Json(json!({ "enabled": on, "all": on, "recompiled": recompiled })).into_response()
        }
        Err(response) => response,
    }
}

/// `POST /routes/{id}/trace/{start|stop}`.
pub(super) async fn act_one(
    State(admin): State<Admin>,
    Path((id, action)): Path<(String, String)>,
) -> Response {
    if let Some(response) = unknown_action(&action) {
        return response;
    }
    let on = action == "start";
    match switch(&admin, Some(id.clone()), on).await {
        Ok(recompiled) => {
            tracing::info!(route_id = %id, %action, "tracer changed through the admin API");
            Json(json!({ "route_id": id, "enabled": on, "recompiled": !recompiled.is_empty() }))
                .into_response()
        }
        Err(response) => response,
    }
}
