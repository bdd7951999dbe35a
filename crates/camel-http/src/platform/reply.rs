//! Responses: from a finished exchange, from a route's error, and the server's own answers
//! (400, 404, 405, 408, 413, 503) as RFC 9457 problem documents.

use axum::body::Body as HttpBody;
use axum::http::{header, HeaderName, HeaderValue, Method, Response, StatusCode};
use camel_api::inbound::is_control_header;
use camel_api::{Body, CamelError, Exchange, Headers};

use crate::headers::{self as names, is_transport_header};
use crate::one_line::OneLine;

/// A problem document: a title from the status and a short detail; never a route's error
/// text, which may name hosts, files or queries.
pub(super) fn problem(status: StatusCode, detail: &str) -> Response<HttpBody> {
    let doc = serde_json::json!({
        "type": "about:blank",
        "title": status.canonical_reason().unwrap_or("Error"),
        "status": status.as_u16(),
        "detail": detail,
    });
    let mut resp = Response::new(HttpBody::from(doc.to_string()));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    );
    resp
}

pub(super) fn unavailable(retry_after_secs: u64, detail: &str) -> Response<HttpBody> {
    let mut resp = problem(StatusCode::SERVICE_UNAVAILABLE, detail);
    resp.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
    resp
}

pub(super) fn method_not_allowed(allowed: &[Method]) -> Response<HttpBody> {
    let mut resp = problem(
        StatusCode::METHOD_NOT_ALLOWED,
        "the route on this path does not take this method",
    );
    let list: Vec<&str> = allowed.iter().map(Method::as_str).collect();
    if let Ok(v) = HeaderValue::from_str(&list.join(", ")) {
        resp.headers_mut().insert(header::ALLOW, v);
    }
    resp
}

/// 413; the connection closes, so the unread rest of the body is never read.
pub(super) fn too_large(max: usize) -> Response<HttpBody> {
    let mut resp = problem(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("the request body is larger than {max} bytes"),
    );
    resp.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// 408 for a body not sent within the server's body read timeout; the connection closes.
pub(super) fn timed_out(timeout: std::time::Duration) -> Response<HttpBody> {
    let mut resp = problem(
        StatusCode::REQUEST_TIMEOUT,
        &format!(
            "the request body was not received within {} ms",
            timeout.as_millis()
        ),
    );
    resp.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// 503 for a body that does not fit in the server's budget of buffered body bytes; the
/// connection closes, as the body is not read.
pub(super) fn bodies_over_budget(retry_after_secs: u64) -> Response<HttpBody> {
    let mut resp = unavailable(
        retry_after_secs,
        "the server holds as many request bodies as it may; retry later",
    );
    resp.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// A route's failure: 503 when it refused for now (stopping, a full queue, load
/// shedding), else 500. The error is logged, not sent.
pub(super) fn from_error(e: &CamelError, route_id: &str, retry: u64) -> Response<HttpBody> {
    match e {
        CamelError::Stopping(_) => unavailable(retry, "the route is stopping"),
        CamelError::RetryAfter { ms, .. } => {
            unavailable(ms.div_ceil(1000).max(1), "the route is at capacity")
        }
        CamelError::Overloaded(_) => unavailable(retry, "the route is at capacity"),
        _ => {
            tracing::warn!(route_id, error = %OneLine(e), "platform-http: the route failed; answering 500");
            problem(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the route failed to process the request",
            )
        }
    }
}

/// The response of a finished exchange: status from `CamelHttpResponseCode` (else 200, or
/// 204 without a body, as Camel), `Content-Type` as the route set it or from the body's
/// kind, and
/// the headers the route set or changed (not those the request brought in unchanged).
pub(super) fn from_exchange(
    ex: Exchange,
    inbound: &Headers,
    produces: Option<&str>,
) -> Response<HttpBody> {
    let msg = ex.message;
    let status = msg
        .headers
        .get(names::HTTP_RESPONSE_CODE)
        .and_then(|v| v.as_i64())
        .and_then(|c| u16::try_from(c).ok())
        .and_then(|c| StatusCode::from_u16(c).ok());
    let status = match status {
        Some(s) => s,
        None if msg.body.is_empty() => StatusCode::NO_CONTENT,
        None => StatusCode::OK,
    };
    // The route's own `Content-Type` wins; the request's, still unchanged, describes the
    // request body, so it only stays when the body is still bytes (an echo, say).
    let declared = msg.headers.get(names::CONTENT_TYPE);
    let set_by_route = declared.filter(|v| inbound.get(names::CONTENT_TYPE) != Some(*v));
    let content_type = match (set_by_route, &msg.body) {
        (Some(v), _) => Some(v.to_string()),
        // The operation's declared type (`produces`) for whatever body the route made.
        (None, body) if !body.is_empty() && produces.is_some() => produces.map(str::to_string),
        (None, Body::Json(_)) => Some("application/json".to_string()),
        (None, Body::Text(_)) => Some("text/plain; charset=utf-8".to_string()),
        (None, Body::Bytes(_)) => declared.map(|v| v.to_string()),
        (None, Body::Empty) => None,
    };
    let mut resp = Response::new(HttpBody::from(msg.body.to_bytes()));
    *resp.status_mut() = status;
    let out = resp.headers_mut();
    for (name, value) in msg.headers.iter() {
        if is_control_header(name)
            || is_transport_header(name)
            || name.eq_ignore_ascii_case(names::CONTENT_TYPE)
            || inbound.get(name) == Some(value)
        {
            continue;
        }
        let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(&value.to_string()),
        ) else {
            tracing::debug!(
                header = %OneLine(name),
                "platform-http: header not valid in HTTP, not sent"
            );
            continue;
        };
        out.append(n, v);
    }
    if let Some(ct) = content_type.and_then(|ct| HeaderValue::from_str(&ct).ok()) {
        out.insert(header::CONTENT_TYPE, ct);
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_content_type_and_headers() {
        let inbound: Headers = [("Accept", "text/plain"), ("id", "7")]
            .into_iter()
            .collect();
        let ex = Exchange::new(serde_json::json!({"ok": true}))
            .with_header("Accept", "text/plain")
            .with_header("id", "8")
            .with_header(names::HTTP_RESPONSE_CODE, 201)
            .with_header("CamelHttpPath", "/x")
            .with_header("Transfer-Encoding", "chunked")
            .with_header("X-Made", "here");
        let resp = from_exchange(ex, &inbound, None);
        assert_eq!(resp.status(), StatusCode::CREATED);
        let h = resp.headers();
        assert_eq!(h[header::CONTENT_TYPE], "application/json");
        assert_eq!(h["id"], "8", "changed by the route");
        assert_eq!(h["x-made"], "here");
        assert!(h.get("accept").is_none(), "came in unchanged");
        assert!(h.get("camelhttppath").is_none());
        assert!(h.get("transfer-encoding").is_none());
    }

    #[test]
    fn empty_body_is_no_content_and_errors_leak_nothing() {
        let resp = from_exchange(Exchange::default(), &Headers::new(), None);
        assert_eq!(resp.status(), StatusCode::NO_CONTENT);
        let e = CamelError::processor("secret table users_private missing");
        let resp = from_error(&e, "r", 1);
        assert_eq!(resp.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let e = CamelError::RetryAfter {
            ms: 2500,
            reason: camel_api::RetryReason::Entries,
        };
        let resp = from_error(&e, "r", 1);
        assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(resp.headers()[header::RETRY_AFTER], "3");
    }
}
