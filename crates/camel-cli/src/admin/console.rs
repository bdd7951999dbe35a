//! The web console at `/` and `/console`: a static page (HTML, CSS, JS written for it and
//! embedded in the binary, no CDN) over the admin API, plus the few reads and checks it
//! needs that the API did not have:
//!
//! - `GET /console/api/routes`: the rows `camel get routes -o json` prints (status,
//!   uptime, exchanges total/failed/in flight, mean and p99 duration);
//! - `GET /console/api/events`: the same rows once a second as server-sent events
//!   (read with `fetch`, so the token travels in the `Authorization` header, never in a
//!   URL); at most [`MAX_STREAMS`] at once, each ends after [`STREAM_LIFETIME`] or when
//!   `camel run` stops;
//! - `GET /console/api/routes/{id}/diagram.svg` (or `.mmd`, `.dot`): the running route
//!   drawn (ADR 0136);
//! - `GET /console/api/routes/{id}/yaml`: the running definition as a route file,
//!   credentials hidden (`***`);
//! - `POST /console/api/routes/{id}/validate` with a YAML body: the route parsed and
//!   compiled as a `PUT` would, nothing changed; every error with its line and column.
//!
//! The assets need no token (they hold no data: the browser loads them before it can
//! send one); everything else passes the same checks as the rest of the API. Every
//! answer of the admin server carries a strict Content-Security-Policy (scripts and
//! styles only from the server itself, no inline ones), `X-Frame-Options: DENY` and
//! `X-Content-Type-Options: nosniff`. See docs/console.md and ADR 0137.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::handlers::{describe, failure, parse_off_the_runtime};
use super::Admin;

/// Live streams served at once; one more is refused with 503 (each renders the metrics
/// once a second).
pub(super) const MAX_STREAMS: usize = 8;
/// A stream ends after this long; the page opens a new one (and so notices a token
/// that no longer works).
const STREAM_LIFETIME: Duration = Duration::from_secs(300);
/// How often a stream sends the rows.
const STREAM_PERIOD: Duration = Duration::from_secs(1);

const INDEX: &str = include_str!("../../console/index.html");
const SCRIPT: &str = include_str!("../../console/app.js");
const STYLE: &str = include_str!("../../console/app.css");
const OPS_SCRIPT: &str = include_str!("../../console/ops.js");
/// Mermaid's own minified browser build (npm `mermaid`, MIT), gzip-compressed as
/// `console/vendor/vendor.sh` stores it; loaded by a route page only when its Mermaid
/// drawing is opened (ADR 0150).
const MERMAID_GZ: &[u8] = include_bytes!("../../console/vendor/mermaid.min.js.gz");
/// Where the page loads it; the version is in the path, so it may be cached for good.
pub(super) const MERMAID_PATH: &str = "/console/vendor/mermaid-12.3.0.min.js";

/// The page's policy: nothing inline, nothing from elsewhere, no framing, no forms.
pub(super) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

pub(super) async fn index() -> Response {
    asset("text/html; charset=utf-8", INDEX)
}

pub(super) async fn script() -> Response {
    asset("text/javascript; charset=utf-8", SCRIPT)
}

pub(super) async fn style() -> Response {
    asset("text/css; charset=utf-8", STYLE)
}

pub(super) async fn ops_script() -> Response {
    asset("text/javascript; charset=utf-8", OPS_SCRIPT)
}

/// The vendored Mermaid: sent compressed as stored to a client that takes gzip (every
/// browser), inflated for one that does not.
pub(super) async fn mermaid(headers: axum::http::HeaderMap) -> Response {
    let takes_gzip = headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.split(',').any(|c| c.trim().starts_with("gzip")));
    let common = [
        (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
        (header::CACHE_CONTROL, "max-age=31536000, immutable"),
        (header::VARY, "Accept-Encoding"),
    ];
    if takes_gzip {
        return (common, [(header::CONTENT_ENCODING, "gzip")], MERMAID_GZ).into_response();
    }
    let mut text = Vec::new();
    match std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(MERMAID_GZ), &mut text) {
        Ok(_) => (common, text).into_response(),
        Err(e) => {
            let body = json!({ "error": format!("the embedded Mermaid does not inflate: {e}") });
            (StatusCode::INTERNAL_SERVER_ERROR, Json(body)).into_response()
        }
    }
}

/// True for the console's assets: they need no token (see the module docs).
pub(super) fn is_asset(path: &str) -> bool {
    matches!(
        path,
        "/" | "/console" | "/console/" | "/console/app.js" | "/console/app.css" | "/console/ops.js"
    ) || path == MERMAID_PATH
}

/// Adds the browser-safety headers to every answer of the admin server.
pub(super) async fn headers(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let mut response = next.run(req).await;
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// The rows of `camel get routes`, from the routes and one render of the metrics.
async fn rows(admin: &Admin) -> Value {
    let mut routes = Vec::new();
    for id in admin.ctx.route_controller().route_ids().await {
        if let Ok(v) = describe(admin, &id, false).await {
            routes.push(v);
        }
    }
    let scrape = crate::inspect::Scrape::parse(&admin.metrics.render());
    serde_json::to_value(crate::inspect::rows(&Value::Array(routes), &scrape))
        .unwrap_or(Value::Null)
}

pub(super) async fn routes(State(admin): State<Admin>) -> Response {
    Json(rows(&admin).await).into_response()
}

pub(super) async fn events(State(admin): State<Admin>) -> Response {
    let Ok(permit) = admin.streams.clone().try_acquire_owned() else {
        let body = json!({ "error": format!("at most {MAX_STREAMS} live streams at once") });
        return (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response();
    };
    let deadline = tokio::time::Instant::now() + STREAM_LIFETIME;
    let mut tick = tokio::time::interval(STREAM_PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let state = (admin, tick, permit);
    let stream = futures::stream::unfold(state, move |(admin, mut tick, permit)| async move {
        tokio::select! {
            _ = tick.tick() => {}
            _ = admin.stop.cancelled() => return None,
        }
        if tokio::time::Instant::now() >= deadline {
            return None;
        }
        let data = rows(&admin).await.to_string();
        let event = Bytes::from(format!("event: routes\ndata: {data}\n\n"));
        Some((Ok::<_, Infallible>(event), (admin, tick, permit)))
    });
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        Body::from_stream(stream),
    )
        .into_response()
}

/// `diagram.svg`, `diagram.mmd` (Mermaid) or `diagram.dot`: the running route drawn.
pub(super) async fn diagram(
    State(admin): State<Admin>,
    Path((id, file)): Path<(String, String)>,
) -> Response {
    let (format, content_type) = match file.as_str() {
        "diagram.svg" => (crate::diagram::Format::Svg, "image/svg+xml; charset=utf-8"),
        "diagram.mmd" => (crate::diagram::Format::Mermaid, "text/plain; charset=utf-8"),
        "diagram.dot" => (crate::diagram::Format::Dot, "text/plain; charset=utf-8"),
        _ => {
            let body = json!({ "error": "expected diagram.svg, diagram.mmd or diagram.dot" });
            return (StatusCode::NOT_FOUND, Json(body)).into_response();
        }
    };
    let definition = match admin.ctx.route_controller().definition(&id).await {
        Ok(d) => d,
        Err(e) => return failure(&e),
    };
    let graph = crate::diagram::Graph::of(&definition, &id);
    let text = crate::diagram::render(&[graph], format);
    ([(header::CONTENT_TYPE, content_type)], text).into_response()
}

pub(super) async fn yaml(State(admin): State<Admin>, Path(id): Path<String>) -> Response {
    match describe(&admin, &id, true).await {
        Ok(v) => {
            let text = super::route_yaml::route_file(&v["definition"]);
            (
                [(header::CONTENT_TYPE, "application/yaml; charset=utf-8")],
                text,
            )
                .into_response()
        }
        Err(e) => failure(&e),
    }
}

/// The id a definition is checked under (see `validate`).
const CHECK_ID: &str = "console-check-route";

/// One error as the editor shows it.
fn error_json(e: &camel_core::RouteError) -> Value {
    // The place goes in its own fields, not in front of the message.
    let mut unplaced = e.clone();
    unplaced.location = None;
    json!({
        "message": unplaced.to_string(),
        "line": e.location.as_ref().map(|l| l.line),
        "column": e.location.as_ref().map(|l| l.column),
    })
}

pub(super) async fn validate(
    State(admin): State<Admin>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let Ok(text) = std::str::from_utf8(&body) else {
        return Json(json!({ "ok": false, "errors": [{"message": "the text is not UTF-8"}] }))
            .into_response();
    };
    if let Err(why) = camel_core::model::check_route_id(&id) {
        return Json(json!({ "ok": false, "errors": [{"message": why}] })).into_response();
    }
    let routes = match parse_off_the_runtime(text.to_string(), "editor".into()).await {
        Ok(Ok(r)) => r,
        Ok(Err(errors)) => {
            let list: Vec<Value> = errors.0.iter().map(error_json).collect();
            return Json(json!({ "ok": false, "errors": list })).into_response();
        }
        Err(response) => return response,
    };
    let problem = match routes.as_slice() {
        [one] if one.id.as_deref().is_some_and(|given| given != id) => {
            Some(format!("the route's id is not `{id}`"))
        }
        [_] => None,
        other => Some(format!("expected one route, got {}", other.len())),
    };
    if let Some(message) = problem {
        return Json(json!({ "ok": false, "errors": [{"message": message}] })).into_response();
    }
    // Compiled in the running context (its components, beans and datasources) under a
    // stand-in id: under its own, the running route would make it a duplicate, and a
    // duplicate is not compiled further. Messages name the route by its own id.
    let mut routes = routes;
    routes[0].id = Some(CHECK_ID.to_string());
    let errors: Vec<Value> = match admin.ctx.validate(&routes).await {
        Ok(()) => Vec::new(),
        Err(errors) => errors
            .0
            .iter()
            .map(|e| {
                let mut e = e.clone();
                if e.route_id.as_deref() == Some(CHECK_ID) {
                    e.route_id = Some(id.clone());
                }
                let mut v = error_json(&e);
                if let Some(Value::String(m)) = v.get_mut("message") {
                    *m = m.replace(CHECK_ID, &id);
                }
                v
            })
            .collect(),
    };
    Json(json!({ "ok": errors.is_empty(), "errors": errors })).into_response()
}
