//! `http:` / `https:` — a producer calling an HTTP server, with one pooled client (reqwest,
//! TLS by rustls) per endpoint.
//!
//! The call: method from `http_method`, else `CamelHttpMethod`, else POST with a body and
//! GET without; URL from the endpoint (or `CamelHttpUri` unless `bridge_endpoint`), with
//! `CamelHttpPath` appended (never one with a `.`/`..` segment, which would leave the
//! endpoint's path) and `CamelHttpQuery` replacing the query; the message's headers except
//! the control and transport ones; the body. The answer: status in `CamelHttpResponseCode`,
//! reason in `CamelHttpResponseText`, response headers, body (read up to
//! `max_response_size`).
//! A status outside `ok_status_code_range` is [`CamelError::HttpOperationFailed`] unless
//! `throw_exception_on_failure=false`.

mod error;
mod options;

use std::sync::Arc;

use axum::http::{HeaderName, HeaderValue, Method};
use bytes::{Bytes, BytesMut};
use camel_api::inbound::is_control_header;
use camel_api::{
    redact_url, Body, BoxProcessor, CamelError, Component, ComponentContext, Endpoint, EndpointUri,
    Exchange, Value,
};

use crate::headers::{self as names, is_transport_header, title_case};
use crate::server::path::has_dot_segment;
pub use error::HttpProducerError;
pub use options::DEFAULT_MAX_RESPONSE_SIZE;
use options::{Auth, ClientOptions};

/// Response bodies kept in an [`CamelError::HttpOperationFailed`]: enough to read a
/// server's error message, not a whole page.
const FAILED_BODY_CAP: usize = 8 * 1024;

/// The `http` (or `https`) component.
#[derive(Clone, Copy, Debug)]
pub struct HttpComponent {
    scheme: &'static str,
}

impl HttpComponent {
    /// The `http:` component.
    pub fn http() -> Self {
        HttpComponent { scheme: "http" }
    }

    /// The `https:` component.
    pub fn https() -> Self {
        HttpComponent { scheme: "https" }
    }
}

impl Component for HttpComponent {
    fn scheme(&self) -> &str {
        self.scheme
    }

    fn endpoint(
        &self,
        uri: EndpointUri,
        _ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let raw = uri.raw();
        let options = ClientOptions::parse(uri)?;
        let mut builder = reqwest::Client::builder()
            // Camel's http component does not follow redirects unless asked.
            .redirect(reqwest::redirect::Policy::none());
        if let Some(t) = options.connect_timeout {
            builder = builder.connect_timeout(t);
        }
        if let Some(t) = options.socket_timeout {
            builder = builder.read_timeout(t);
        }
        let client = builder
            .build()
            .map_err(|e| CamelError::external("building the HTTP client", e.without_url()))?;
        Ok(Arc::new(HttpEndpoint {
            shown: redact_url(&raw).into(),
            uri: raw,
            inner: Arc::new(Caller { options, client }),
        }))
    }
}

#[derive(Debug)]
struct HttpEndpoint {
    uri: Arc<str>,
    /// The URI with credentials hidden, for errors and logs.
    shown: Arc<str>,
    inner: Arc<Caller>,
}

impl Endpoint for HttpEndpoint {
    fn uri(&self) -> &str {
        &self.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        let caller = self.inner.clone();
        let shown = self.shown.clone();
        Ok(BoxProcessor::from_fn(move |ex| {
            let caller = caller.clone();
            let shown = shown.clone();
            async move { caller.call(ex, &shown).await }
        })
        .named("http"))
    }
}

#[derive(Debug)]
struct Caller {
    options: ClientOptions,
    client: reqwest::Client,
}

impl Caller {
    async fn call(&self, mut ex: Exchange, shown: &str) -> Result<Exchange, CamelError> {
        let o = &self.options;
        let method = self.method(&ex)?;
        let url = self.url(&ex, shown)?;
        let mut req = self.client.request(method, url.clone());
        for (name, value) in ex.message.headers.iter() {
            if is_control_header(name) || is_transport_header(name) {
                continue;
            }
            let (Ok(n), Ok(v)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(&value.to_string()),
            ) else {
                continue;
            };
            req = req.header(n, v);
        }
        if !ex.message.headers.contains(names::CONTENT_TYPE) {
            match &ex.message.body {
                Body::Json(_) => req = req.header(names::CONTENT_TYPE, "application/json"),
                Body::Text(_) => req = req.header(names::CONTENT_TYPE, "text/plain; charset=utf-8"),
                Body::Bytes(_) | Body::Empty => {}
            }
        }
        match &o.auth {
            Some(Auth::Basic { username, password }) => {
                req = req.basic_auth(username, Some(&password.0));
            }
            Some(Auth::Bearer(token)) => req = req.bearer_auth(&token.0),
            None => {}
        }
        if let Some(t) = o.response_timeout {
            req = req.timeout(t);
        }
        if !ex.message.body.is_empty() {
            req = req.body(ex.message.body.to_bytes());
        }
        let called = redact_url(url.as_str());
        let resp = req.send().await.map_err(|e| failure(e, &called))?;
        let status = resp.status();
        let headers = resp.headers().clone();
        let body = read_limited(resp, o.max_response_size, &called).await?;
        if o.throw_exception_on_failure && !o.is_ok(status.as_u16()) {
            let cut = body.len().min(FAILED_BODY_CAP);
            return Err(CamelError::HttpOperationFailed {
                uri: called.into(),
                status: status.as_u16(),
                status_text: status.canonical_reason().unwrap_or("").into(),
                body: String::from_utf8_lossy(&body[..cut]).into(),
            });
        }
        let h = &mut ex.message.headers;
        h.remove(names::CONTENT_TYPE);
        for name in headers.keys() {
            if is_transport_header(name.as_str()) {
                continue;
            }
            let joined: Vec<String> = headers
                .get_all(name)
                .iter()
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .collect();
            h.insert(title_case(name.as_str()), joined.join(", "));
        }
        h.insert(names::HTTP_RESPONSE_CODE, i64::from(status.as_u16()));
        h.insert(
            names::HTTP_RESPONSE_TEXT,
            status.canonical_reason().unwrap_or(""),
        );
        ex.message.body = if body.is_empty() {
            Body::Empty
        } else {
            Body::Bytes(body)
        };
        Ok(ex)
    }

    fn method(&self, ex: &Exchange) -> Result<Method, CamelError> {
        if let Some(m) = &self.options.method {
            return Ok(m.clone());
        }
        match ex.header(names::HTTP_METHOD) {
            Some(v) => {
                let text = v.to_string();
                Method::from_bytes(text.trim().to_ascii_uppercase().as_bytes()).map_err(|_| {
                    CamelError::processor(format!(
                        "header {} = {text:?} is not an HTTP method",
                        names::HTTP_METHOD
                    ))
                })
            }
            None if ex.message.body.is_empty() => Ok(Method::GET),
            None => Ok(Method::POST),
        }
    }

    fn url(&self, ex: &Exchange, shown: &str) -> Result<reqwest::Url, CamelError> {
        let o = &self.options;
        let text_header = |name| {
            ex.header(name)
                .map(Value::to_string)
                .filter(|s| !s.is_empty())
        };
        let mut url = match text_header(names::HTTP_URI).filter(|_| !o.bridge_endpoint) {
            // Only an absolute URL replaces the endpoint's: a consumer's `CamelHttpUri` is a
            // request target (`/path?q`), which `CamelHttpPath` and `CamelHttpQuery` carry.
            Some(u) if u.starts_with("http://") || u.starts_with("https://") => {
                reqwest::Url::parse(&u).map_err(|e| {
                    CamelError::processor(format!("header {} is not a URL: {e}", names::HTTP_URI))
                })?
            }
            _ => o.url.clone(),
        };
        if let Some(path) = text_header(names::HTTP_PATH) {
            // The URL parser resolves dot segments: appended, `..` would climb out of the
            // endpoint's path (`/api` + `/../admin` is `/admin`).
            if has_dot_segment(&path) {
                return Err(CamelError::external(
                    format!("calling {shown}"),
                    HttpProducerError::PathLeavesBase { path },
                ));
            }
            let joined = format!(
                "{}/{}",
                url.path().trim_end_matches('/'),
                path.trim_start_matches('/')
            );
            url.set_path(&joined);
        }
        if let Some(q) = text_header(names::HTTP_QUERY) {
            url.set_query(Some(&q));
        }
        if url.host_str().is_none() {
            return Err(CamelError::invalid_uri(
                shown.to_string(),
                "no host to call",
            ));
        }
        Ok(url)
    }
}

/// The response body, refused as soon as it proves larger than `limit`: from its declared
/// length before reading, else when the bytes read pass it.
async fn read_limited(
    mut resp: reqwest::Response,
    limit: usize,
    called: &str,
) -> Result<Bytes, CamelError> {
    let too_large = || {
        CamelError::external(
            format!("calling {called}"),
            HttpProducerError::ResponseTooLarge { limit },
        )
    };
    let declared = resp.content_length();
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    // Most bodies arrive in one chunk, which is returned without a copy.
    let Some(first) = resp.chunk().await.map_err(|e| failure(e, called))? else {
        return Ok(Bytes::new());
    };
    if first.len() > limit {
        return Err(too_large());
    }
    let Some(second) = resp.chunk().await.map_err(|e| failure(e, called))? else {
        return Ok(first);
    };
    let capacity = declared.map_or(first.len() + second.len(), |n| n as usize);
    let mut buf = BytesMut::with_capacity(capacity);
    let mut next = Some(second);
    buf.extend_from_slice(&first);
    while let Some(chunk) = next {
        if buf.len() + chunk.len() > limit {
            return Err(too_large());
        }
        buf.extend_from_slice(&chunk);
        next = resp.chunk().await.map_err(|e| failure(e, called))?;
    }
    Ok(buf.freeze())
}

/// A transport failure, without the URL reqwest would print (it may hold credentials).
fn failure(e: reqwest::Error, called: &str) -> CamelError {
    if e.is_timeout() {
        CamelError::Timeout(format!("calling {called}").into())
    } else {
        CamelError::external(format!("calling {called}"), e.without_url())
    }
}
