//! One request: find the route, read the body within its bound, run the exchange, answer.

use axum::body::Body as HttpBody;
use axum::http::{header, request::Parts, Request, Response, StatusCode};
use bytes::{Bytes, BytesMut};
use camel_api::inbound::admits_transport_header;
use camel_api::{Body, CamelError, Exchange, ExchangePattern, Headers, Value};
use futures::StreamExt;
use hyper::body::{Body as _, Incoming};

use super::{reply, Binding};
use crate::headers::{self as names, title_case};
use crate::server::budget::Reservation;
use crate::server::path::{has_dot_segment, query_pairs};
use crate::server::table::Lookup;
use crate::server::Shared;

pub(crate) async fn handle(shared: &Shared, req: Request<Incoming>) -> Response<HttpBody> {
    let retry = shared.retry_after_secs;
    if shared.is_stopping() {
        return reply::unavailable(retry, "the server is stopping");
    }
    if has_dot_segment(req.uri().path()) {
        return reply::problem(
            StatusCode::BAD_REQUEST,
            "the path has a `.` or `..` segment (also percent-encoded); send it normalized",
        );
    }
    let (reg, params) = match shared.table.lookup(req.method(), req.uri().path()) {
        Lookup::Found(reg, params) => (reg, params),
        Lookup::WrongMethod(allowed) => return reply::method_not_allowed(&allowed),
        Lookup::NotFound => {
            return reply::problem(StatusCode::NOT_FOUND, "no route serves this path")
        }
    };
    let Some(_in_flight) = reg.enter() else {
        return reply::unavailable(retry, "the route is suspended or stopping");
    };
    let max = reg.max_body_size;
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return reply::too_large(max);
    }
    let (parts, body) = req.into_parts();
    // Held until the response is built: the body lives in the exchange until then.
    let mut reservation = shared.bodies.reservation();
    let bytes = if body.is_end_stream() {
        Bytes::new()
    } else {
        let declared = declared.map(|n| n as usize);
        let read = read_body(body, max, declared, &mut reservation);
        match tokio::time::timeout(shared.body_read_timeout, read).await {
            Ok(Ok(bytes)) => bytes,
            Err(_) => return reply::timed_out(shared.body_read_timeout),
            Ok(Err(BodyError::TooLarge)) => return reply::too_large(max),
            Ok(Err(BodyError::OverBudget)) => return reply::bodies_over_budget(retry),
            Ok(Err(BodyError::Read)) => {
                return reply::problem(
                    StatusCode::BAD_REQUEST,
                    "the request body could not be read",
                )
            }
        }
    };
    let body = match bind(&reg.binding, bytes) {
        Ok(body) => body,
        Err(detail) => return reply::problem(StatusCode::BAD_REQUEST, &detail),
    };
    let exchange = to_exchange(&parts, params, body);
    let inbound = exchange.message.headers.clone();
    // In its own task: a client that hangs up drops this future, and the exchange must not
    // stop halfway through its steps because of it (a write done, the next one not).
    let ctx = reg.ctx.clone();
    let outcome = tokio::spawn(async move { ctx.send(exchange).await }).await;
    match outcome {
        Ok(Ok(done)) => reply::from_exchange(done, &inbound, reg.binding.produces.as_deref()),
        Ok(Err(e)) => reply::from_error(&e, reg.ctx.route_id(), retry),
        Err(join) => reply::from_error(
            &CamelError::processor(format!("the exchange's task ended: {join}")),
            reg.ctx.route_id(),
            retry,
        ),
    }
}

enum BodyError {
    TooLarge,
    /// The server's budget of buffered body bytes has no room for this body.
    OverBudget,
    Read,
}

/// Reads at most `max` bytes; stops reading as soon as the body proves larger. The bytes
/// are reserved in the server's budget first: a declared length at once (before anything
/// is read or allocated), a chunked body as its chunks arrive.
async fn read_body(
    body: Incoming,
    max: usize,
    declared: Option<usize>,
    reservation: &mut Reservation,
) -> Result<Bytes, BodyError> {
    if let Some(n) = declared {
        reservation.grow(n).map_err(|_| BodyError::OverBudget)?;
    }
    let mut stream = HttpBody::new(body).into_data_stream();
    let mut buf = BytesMut::with_capacity(declared.unwrap_or(0));
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| BodyError::Read)?;
        if buf.len() + chunk.len() > max {
            return Err(BodyError::TooLarge);
        }
        // hyper ends a body at its declared length, so a declared body is reserved whole.
        if declared.is_none() {
            reservation
                .grow(chunk.len())
                .map_err(|_| BodyError::OverBudget)?;
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf.freeze())
}

/// The request body as the route sees it: bytes, or with `binding_mode=json` a parsed JSON
/// document. A malformed document is the client's mistake, answered 400 with where the
/// parser stopped (line and column of the body) and why; the body itself is not echoed.
fn bind(binding: &Binding, bytes: Bytes) -> Result<Body, String> {
    if bytes.is_empty() {
        return Ok(Body::Empty);
    }
    if !binding.json {
        return Ok(Body::Bytes(bytes));
    }
    serde_json::from_slice::<serde_json::Value>(&bytes)
        .map(Body::from)
        .map_err(|e| {
            let why = match e.classify() {
                serde_json::error::Category::Eof => "the document ends too early",
                serde_json::error::Category::Syntax => "syntax error",
                serde_json::error::Category::Data => "unexpected data",
                serde_json::error::Category::Io => "the body could not be read",
            };
            format!(
                "the request body is not valid JSON: {why} at line {} column {} ({e})",
                e.line(),
                e.column()
            )
        })
}

/// The exchange for a request: headers, query and path parameters, then Camel's headers
/// (set last, so nothing from the client can stand in for them).
fn to_exchange(parts: &Parts, params: Vec<(String, String)>, body: Body) -> Exchange {
    let mut ex = Exchange::new(body).with_pattern(ExchangePattern::InOut);
    let h = &mut ex.message.headers;
    for (name, value) in &parts.headers {
        let name = name.as_str();
        if !admits_transport_header(name, &[]) {
            continue;
        }
        let value = String::from_utf8_lossy(value.as_bytes());
        add(h, title_case(name), Value::from(value.as_ref()), ", ");
    }
    let query = parts.uri.query();
    for (name, value) in query.into_iter().flat_map(query_pairs) {
        if admits_transport_header(&name, &[]) {
            add(h, name, Value::from(value), "");
        }
    }
    for (name, value) in params {
        h.insert(name, value);
    }
    h.insert(names::HTTP_METHOD, parts.method.as_str());
    h.insert(names::HTTP_PATH, parts.uri.path());
    let uri = parts
        .uri
        .path_and_query()
        .map_or_else(|| parts.uri.path(), |pq| pq.as_str());
    h.insert(names::HTTP_URI, uri);
    if let Some(q) = query {
        h.insert(names::HTTP_QUERY, q);
    }
    ex
}

/// A repeated header joins with `sep`; a repeated query parameter (`sep` empty) becomes a
/// JSON array, as Camel makes it a list.
fn add(h: &mut Headers, name: String, value: Value, sep: &str) {
    let merged = match h.get(&name) {
        None => value,
        Some(Value::Json(prev)) if sep.is_empty() => {
            let mut items = prev.as_array().cloned().unwrap_or_default();
            items.push(value.to_json());
            Value::Json(std::sync::Arc::new(items.into()))
        }
        Some(prev) if sep.is_empty() => Value::Json(std::sync::Arc::new(
            vec![prev.to_json(), value.to_json()].into(),
        )),
        Some(prev) => Value::from(format!("{prev}{sep}{value}")),
    };
    h.insert(name, merged);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_maps_to_headers() {
        let req = Request::builder()
            .method("POST")
            .uri("/orders/7?x=1&x=2&CamelHttpResponseCode=201&q=a+b")
            .header("content-type", "application/json")
            .header("x-trace", "t1")
            .header("x-trace", "t2")
            .header("camelfilename", "/etc/passwd")
            .body(())
            .unwrap();
        let (parts, ()) = req.into_parts();
        let ex = to_exchange(
            &parts,
            vec![("id".into(), "7".into())],
            Body::Bytes(Bytes::from("{}")),
        );
        let h = &ex.message.headers;
        assert_eq!(
            h.get("Content-Type"),
            Some(&Value::from("application/json"))
        );
        assert_eq!(h.get("X-Trace"), Some(&Value::from("t1, t2")));
        assert_eq!(
            h.get("x").map(Value::to_json),
            Some(serde_json::json!(["1", "2"]))
        );
        assert_eq!(h.get("q"), Some(&Value::from("a b")));
        assert_eq!(h.get("id"), Some(&Value::from("7")));
        assert_eq!(h.get(names::HTTP_METHOD), Some(&Value::from("POST")));
        assert_eq!(h.get(names::HTTP_PATH), Some(&Value::from("/orders/7")));
        assert_eq!(
            h.get(names::HTTP_QUERY),
            Some(&Value::from("x=1&x=2&CamelHttpResponseCode=201&q=a+b"))
        );
        assert!(h.get(names::HTTP_RESPONSE_CODE).is_none());
        assert!(h.get("Camelfilename").is_none());
        assert_eq!(ex.pattern, ExchangePattern::InOut);
    }

    #[test]
    fn json_binding_parses_or_locates_the_mistake() {
        let json = Binding {
            json: true,
            ..Default::default()
        };
        let body = bind(&json, Bytes::from(r#"{"qty": 2}"#)).unwrap();
        assert!(matches!(&body, Body::Json(j) if j["qty"] == 2), "{body:?}");
        assert!(bind(&json, Bytes::new()).unwrap().is_empty());
        let err = bind(&json, Bytes::from("{\n  \"qty\": 2,\n  oops\n}")).unwrap_err();
        assert!(err.contains("line 3 column 3"), "{err}");
        let err = bind(&json, Bytes::from(r#"{"qty": "#)).unwrap_err();
        assert!(err.contains("ends too early"), "{err}");
        let off = bind(&Binding::default(), Bytes::from("not json")).unwrap();
        assert!(matches!(off, Body::Bytes(_)));
    }
}
