//! The outboxes of `camel run` through the admin API: their backlog, who drains each
//! partition, the dead messages, and the two repairs `camel outbox` offers from the shell
//! (`retry-dead`, `discard`), for the console's outbox page.
//!
//! The outboxes are those the run's `outbox` component has opened (a relay's on its
//! route's start, a publisher's on its first message), found through the context
//! resource [`OUTBOX_COMPONENT`]. An admin made from the running handle wakes this
//! process's workers at once after a repair.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use camel_outbox::admin::{DeadSelection, OutboxAdmin};
use serde_json::{json, Value};

use super::Admin;

/// The context resource holding the run's `camel_outbox::OutboxComponent`.
pub(crate) const OUTBOX_COMPONENT: &str = "camel.cli.outbox-component";

/// Dead messages listed per outbox (the page shows them with a button each).
const DEAD_LISTED: u32 = 50;

fn admins(admin: &Admin) -> Vec<OutboxAdmin> {
    let Some(resource) = admin.ctx.registry().resource(OUTBOX_COMPONENT) else {
        return Vec::new();
    };
    let resource: &dyn std::any::Any = &*resource;
    resource
        .downcast_ref::<camel_outbox::OutboxComponent>()
        .map(camel_outbox::OutboxComponent::admins)
        .unwrap_or_default()
}

fn not_found(name: &str) -> Response {
    let body = json!({ "error": format!("no outbox `{name}` is open in this process") });
    (StatusCode::NOT_FOUND, Json(body)).into_response()
}

/// An outbox error as an answer: the database's trouble is the server's, not the caller's.
fn outbox_failure(name: &str, e: &camel_outbox::OutboxError) -> Response {
    // Outbox errors name their database without its password (ADR 0042).
    let message = format!("outbox `{name}`: {e}");
    (StatusCode::BAD_GATEWAY, Json(json!({ "error": message }))).into_response()
}

async fn describe(admin: &OutboxAdmin) -> Result<Value, camel_outbox::OutboxError> {
    let counts = admin.counts().await?;
    let owners: Vec<Value> = admin
        .owners()
        .await?
        .iter()
        .map(|o| {
            json!({
                "partition": o.partition,
                "this_process": o.this_process,
                "session": o.session,
            })
        })
        .collect();
    let dead: Vec<Value> = admin
        .dead(DEAD_LISTED)
        .await?
        .iter()
        .map(|d| {
            json!({
                "id": d.id,
                "group_key": d.group_key,
                "attempts": d.attempts,
                "last_error": d.last_error,
            })
        })
        .collect();
    Ok(json!({
        "name": admin.name(),
        "pending": counts.pending,
        "in_backoff": counts.in_backoff,
        "dead": counts.dead,
        "oldest_pending_age_seconds": counts.oldest_pending_age.map(|d| d.as_secs_f64()),
        "partitions": owners,
        "dead_messages": dead,
    }))
}

/// `GET /outboxes`: every open outbox with its counts, owners and first dead messages.
pub(super) async fn list(State(admin): State<Admin>) -> Response {
    let mut all = Vec::new();
    for outbox in admins(&admin) {
        match describe(&outbox).await {
            Ok(v) => all.push(v),
            Err(e) => all.push(json!({
                "name": outbox.name(),
                "error": e.to_string(),
            })),
        }
    }
    Json(Value::Array(all)).into_response()
}

fn find(admin: &Admin, name: &str) -> Option<OutboxAdmin> {
    admins(admin).into_iter().find(|a| a.name() == name)
}

/// What `POST /outboxes/{name}/retry-dead` takes: `{"ids": [..]}` or `{"all": true}`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RetryDead {
    #[serde(default)]
    ids: Vec<i64>,
    #[serde(default)]
    all: bool,
}

/// What `POST /outboxes/{name}/discard` takes: `{"id": N}`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Discard {
    id: i64,
}

fn bad_request(message: impl Into<String>) -> Response {
    (
        StatusCode::BAD_REQUEST,
        Json(json!({ "error": message.into() })),
    )
        .into_response()
}

/// The JSON body of a repair, or why it is not one.
fn body<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    serde_json::from_slice(bytes).map_err(|e| format!("the body: {e}"))
}

/// `POST /outboxes/{name}/{action}`: `retry-dead` or `discard`.
pub(super) async fn act(
    State(admin): State<Admin>,
    Path((name, action)): Path<(String, String)>,
    bytes: axum::body::Bytes,
) -> Response {
    let Some(outbox) = find(&admin, &name) else {
        return not_found(&name);
    };
    match action.as_str() {
        "retry-dead" => {
            let request: RetryDead = match body(&bytes) {
                Ok(r) => r,
                Err(why) => return bad_request(why),
            };
            let selection = match (request.all, request.ids.is_empty()) {
                (true, true) => DeadSelection::All,
                (false, false) => DeadSelection::Ids(request.ids),
                (true, false) => return bad_request("give `ids` or `all`, not both"),
                (false, true) => {
                    return bad_request("say which dead messages to revive: `ids` or `all: true`")
                }
            };
            match outbox.retry_dead(selection).await {
                Ok(n) => Json(json!({ "outbox": name, "revived": n })).into_response(),
                Err(e) => outbox_failure(&name, &e),
            }
        }
        "discard" => {
            let request: Discard = match body(&bytes) {
                Ok(r) => r,
                Err(why) => return bad_request(why),
            };
            match outbox.discard(request.id).await {
                Ok(found) => Json(json!({ "outbox": name, "id": request.id, "discarded": found }))
                    .into_response(),
                Err(e) => outbox_failure(&name, &e),
            }
        }
        other => {
            let body = json!({ "error": format!("unknown outbox action `{other}`: retry-dead or discard") });
            (StatusCode::NOT_FOUND, Json(body)).into_response()
        }
    }
}
