//! The checks every admin request passes before a handler sees it, in order:
//!
//! 1. Exactly one `Host` (else 400, RFC 9112 section 3.2), and it names an allowed host
//!    (else 421): loopback names, the address the connection came in on, and
//!    `--admin-allowed-host`. A page that rebinds its own DNS name to 127.0.0.1 still
//!    sends its own name, so it is turned away. A target in absolute form
//!    (`POST http://name/...`) must name an allowed host too (else 421): a server takes
//!    that authority and ignores `Host` (RFC 9112 section 3.2.2), so both are checked.
//! 2. A change (any method but GET and HEAD) with an `Origin` must come from an allowed
//!    host (else 403): a browser names the page that sent it.
//! 3. The bearer token (else 401): every change needs it; with a token configured, every
//!    read but the probes (`GET /health`, `/health/live`, `/health/ready`, without
//!    `?details`) needs it too: a kubelet has no token, and the probes show no more than
//!    up or down and why. The console's static assets (`/`, `/console`, its script and
//!    style sheet) need none either: they hold no data, and a browser loads them before
//!    the page can ask for the token.
//! 4. A change's body is JSON or YAML by its `Content-Type` (else 415); a body-less
//!    change may leave it out. A browser sends a cross-origin POST without a preflight
//!    only with `text/plain`, a form type, or none and a body: all refused here.
//! 5. A change's body arrives whole within the header timeout and the body limit (else
//!    408 or 413), so a slow body cannot hold a connection.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde_json::json;

use super::token::Token;

/// The local address of the connection a request came in on (set by the accept loop).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LocalAddr(pub(crate) SocketAddr);

/// What the checks need; shared by every request.
#[derive(Debug)]
pub(crate) struct Guard {
    pub(crate) token: Option<Token>,
    /// Lower case, IPv6 in brackets, without port.
    pub(crate) hosts: Vec<String>,
    pub(crate) body_timeout: Duration,
    pub(crate) body_limit: usize,
}

/// Names every admin API answers to, whatever it is bound to.
const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

impl Guard {
    pub(crate) fn new(
        token: Option<Token>,
        bound: SocketAddr,
        extra: &[String],
        body_timeout: Duration,
        body_limit: usize,
    ) -> Guard {
        let mut hosts: Vec<String> = LOOPBACK.iter().map(|h| (*h).to_string()).collect();
        // Not `0.0.0.0` or `[::]`: browsers send a page's request for http://0.0.0.0/ to
        // this machine, so that name must not open the door a loopback bind keeps shut.
        if !bound.ip().is_unspecified() {
            hosts.push(ip_host(bound));
        }
        hosts.extend(extra.iter().cloned());
        Guard {
            token,
            hosts,
            body_timeout,
            body_limit,
        }
    }

    fn allows(&self, host: &str, local: Option<SocketAddr>) -> bool {
        let Some(name) = host_name(host) else {
            return false;
        };
        self.hosts.contains(&name) || local.is_some_and(|l| ip_host(l) == name)
    }
}

/// The address as a `Host` header names it: IPv6 in brackets.
fn ip_host(addr: SocketAddr) -> String {
    match addr {
        SocketAddr::V4(a) => a.ip().to_string(),
        SocketAddr::V6(a) => format!("[{}]", a.ip()),
    }
}

/// The host of a `Host` value (`name`, `name:port`, `[v6]:port`), lower case; `None`
/// when it is malformed (a port that is not a number, a stray bracket).
fn host_name(value: &str) -> Option<String> {
    let value = value.to_ascii_lowercase();
    let (name, port) = if value.starts_with('[') {
        let end = value.find(']')?;
        let rest = &value[end + 1..];
        let port = if rest.is_empty() {
            None
        } else {
            Some(rest.strip_prefix(':')?)
        };
        (&value[..=end], port)
    } else {
        match value.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (value.as_str(), None),
        }
    };
    if port.is_some_and(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    (!name.is_empty()).then(|| name.to_string())
}

/// The `host[:port]` of an `Origin` (`http://host:port`), `None` for `null` and
/// anything but http(s).
fn origin_host(origin: &str) -> Option<&str> {
    let rest = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))?;
    (!rest.is_empty() && !rest.contains('/')).then_some(rest)
}

fn refuse(code: StatusCode, message: String) -> Response {
    (code, Json(json!({ "error": message }))).into_response()
}

/// 421 for a host name (`what`: where it came from) that is not on the allow-list.
fn misdirected(what: &str, name: &str) -> Response {
    refuse(
        StatusCode::MISDIRECTED_REQUEST,
        format!("{what} `{}` is not allowed: use a loopback name, the admin address, or a name given with --admin-allowed-host", name.escape_debug()),
    )
}

fn changes(method: &Method) -> bool {
    method != Method::GET && method != Method::HEAD
}

/// The body types a change accepts (parameters such as `charset` allowed).
fn accepted_type(value: &str) -> bool {
    let essence = value.split(';').next().unwrap_or_default().trim();
    ["application/json", "application/yaml"]
        .iter()
        .any(|t| essence.eq_ignore_ascii_case(t))
}

/// True when the request says it has a body: a length above 0, or chunked.
fn has_body(headers: &HeaderMap) -> bool {
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() != b"0")
}

/// A health probe that needs no token: no per-check detail asked for.
fn is_probe(uri: &axum::http::Uri) -> bool {
    let details = uri
        .query()
        .is_some_and(|q| q.split('&').any(|p| p.split('=').next() == Some("details")));
    matches!(uri.path(), "/health" | "/health/live" | "/health/ready") && !details
}

pub(crate) async fn check(State(guard): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    let local = req.extensions().get::<LocalAddr>().map(|l| l.0);
    let mut hosts = req.headers().get_all(header::HOST).iter();
    let first = hosts.next();
    if hosts.next().is_some() {
        return refuse(
            StatusCode::BAD_REQUEST,
            "a request may carry only one Host header".into(),
        );
    }
    let host = first.and_then(|v| v.to_str().ok()).unwrap_or_default();
    if !guard.allows(host, local) {
        return misdirected("Host", host);
    }
    // The whole authority, user info included: `user@127.0.0.1` is not an allowed name.
    if let Some(authority) = req.uri().authority() {
        if !guard.allows(authority.as_str(), local) {
            return misdirected("the request target's authority", authority.as_str());
        }
    }
    let change = changes(req.method());
    if change {
        if let Some(origin) = req.headers().get(header::ORIGIN) {
            let seen = origin.to_str().unwrap_or_default();
            if !origin_host(seen).is_some_and(|h| guard.allows(h, local)) {
                return refuse(
                    StatusCode::FORBIDDEN,
                    format!(
                        "Origin `{}` is not allowed to change anything",
                        seen.escape_debug()
                    ),
                );
            }
        }
    }
    let open_read = is_probe(req.uri()) || super::console::is_asset(req.uri().path());
    if change || (guard.token.is_some() && !open_read) {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .map(|v| v.as_bytes());
        let admitted = match &guard.token {
            Some(token) => given.is_some_and(|g| token.admits(g)),
            None => false,
        };
        if !admitted {
            let message = if guard.token.is_some() {
                "this request needs `Authorization: Bearer TOKEN` with the admin token"
            } else {
                "the admin API is read-only without a token: start camel run with --admin-token-file PATH or CAMEL_ADMIN_TOKEN to allow changes"
            };
            let mut response = refuse(StatusCode::UNAUTHORIZED, message.into());
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer realm=\"camel admin\""),
            );
            return response;
        }
    }
    if !change {
        return next.run(req).await;
    }
    let content_type = req.headers().get(header::CONTENT_TYPE);
    let typed = content_type.is_some_and(|v| v.to_str().is_ok_and(accepted_type));
    if !typed && (content_type.is_some() || has_body(req.headers())) {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "a change takes a body only as Content-Type application/yaml or application/json"
                .into(),
        );
    }
    let (parts, body) = req.into_parts();
    let read = Limited::new(body, guard.body_limit).collect();
    let bytes = match tokio::time::timeout(guard.body_timeout, read).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => {
            return refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the body is over {} KiB", guard.body_limit / 1024),
            )
        }
        Ok(Err(e)) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                format!("reading the body failed: {e}"),
            )
        }
        Err(_) => {
            return refuse(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the body did not arrive within {} s",
                    guard.body_timeout.as_secs()
                ),
            )
        }
    };
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> Guard {
        let bound = "10.1.2.3:9464".parse().unwrap();
        let extra = ["admin.example".to_string()];
        Guard::new(None, bound, &extra, Duration::from_secs(1), 1024)
    }

    #[test]
    fn hosts_are_loopback_names_the_bound_address_and_the_extra_names_on_any_port() {
        let g = guard();
        for ok in [
            "localhost",
            "LOCALHOST:1",
            "127.0.0.1:9464",
            "[::1]:80",
            "[::1]",
            "10.1.2.3:9464",
            "admin.example:443",
        ] {
            assert!(g.allows(ok, None), "{ok}");
        }
        for bad in [
            "",
            "evil.example",
            "localhost.evil.example",
            "127.0.0.1:x",
            "127.0.0.1:",
            "[::1]x",
            "10.1.2.4",
            "user@127.0.0.1",
            "127.0.0.1, evil.example",
        ] {
            assert!(!g.allows(bad, None), "{bad}");
        }
        let local = "192.168.0.7:9464".parse().ok();
        assert!(
            g.allows("192.168.0.7:9464", local),
            "the connection's own address"
        );
        let everywhere = "0.0.0.0:9464".parse().unwrap();
        let g = Guard::new(None, everywhere, &[], Duration::from_secs(1), 1024);
        assert!(!g.allows("0.0.0.0:9464", None), "not the wildcard address");
        assert!(g.allows("localhost:9464", None));
    }

    #[test]
    fn origins_name_an_http_host() {
        assert_eq!(origin_host("http://localhost:9464"), Some("localhost:9464"));
        assert_eq!(origin_host("https://[::1]"), Some("[::1]"));
        assert_eq!(origin_host("null"), None);
        assert_eq!(origin_host("file://"), None);
    }

    #[test]
    fn probes_need_no_token_but_their_details_do() {
        for (uri, probe) in [
            ("/health", true),
            ("/health/live", true),
            ("/health/ready", true),
            ("/health/ready?x=1", true),
            ("/health?details", false),
            ("/health/ready?details=true", false),
            ("/health/other", false),
            ("/routes", false),
        ] {
            let uri: axum::http::Uri = uri.parse().unwrap();
            assert_eq!(is_probe(&uri), probe, "{uri}");
        }
    }

    #[test]
    fn only_json_and_yaml_bodies_are_accepted() {
        assert!(accepted_type("application/yaml"));
        assert!(accepted_type("Application/JSON; charset=utf-8"));
        assert!(!accepted_type("text/plain"));
        assert!(!accepted_type("application/x-www-form-urlencoded"));
        assert!(!accepted_type("multipart/form-data; boundary=x"));
    }
}
