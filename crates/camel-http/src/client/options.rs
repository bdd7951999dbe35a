//! The `http:`/`https:` endpoint's options, read from its URI.
//!
//! Options this producer knows are taken out of the query; every other query pair is
//! passed through, as written, as the HTTP query of the call (as Camel does).

use std::fmt;
use std::time::Duration;

use axum::http::Method;
use camel_api::suggest::to_snake_case;
use camel_api::{CamelError, EndpointUri};

pub(super) const OPTIONS: &[&str] = &[
    "http_method",
    "throw_exception_on_failure",
    "ok_status_code_range",
    "bridge_endpoint",
    "connect_timeout",
    "socket_timeout",
    "so_timeout",
    "response_timeout",
    "auth_method",
    "auth_username",
    "auth_password",
    "auth_bearer_token",
    "max_response_size",
];

/// Default of `max_response_size`: 100 MiB.
pub const DEFAULT_MAX_RESPONSE_SIZE: usize = 100 * 1024 * 1024;

/// A credential: shown as `***` by `Debug`, so no log line or error can print it.
#[derive(Clone)]
pub(super) struct Secret(pub(super) String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

#[derive(Clone, Debug)]
pub(super) enum Auth {
    Basic { username: String, password: Secret },
    Bearer(Secret),
}

#[derive(Clone, Debug)]
pub(super) struct ClientOptions {
    /// The URL called: scheme, authority, path and the passed-through query.
    pub(super) url: reqwest::Url,
    pub(super) method: Option<Method>,
    pub(super) throw_exception_on_failure: bool,
    pub(super) ok_status_codes: Vec<(u16, u16)>,
    pub(super) bridge_endpoint: bool,
    pub(super) connect_timeout: Option<Duration>,
    pub(super) socket_timeout: Option<Duration>,
    pub(super) response_timeout: Option<Duration>,
    pub(super) auth: Option<Auth>,
    /// Largest response body read; bounds the memory one call can take.
    pub(super) max_response_size: usize,
}

impl ClientOptions {
    pub(super) fn parse(mut uri: EndpointUri) -> Result<Self, CamelError> {
        let raw = uri.raw();
        let bad = |reason: String| CamelError::invalid_uri(raw.clone(), reason);
        // The query as written: what is not an option goes to the server untouched.
        let mut passed = Vec::new();
        if let Some((_, query)) = raw.split_once('?') {
            for pair in query.split('&').filter(|p| !p.is_empty()) {
                let name = pair.split_once('=').map_or(pair, |(k, _)| k);
                let key = to_snake_case(name);
                if !OPTIONS.contains(&key.as_str()) {
                    uri.parameters.take_str(&key);
                    passed.push(pair);
                }
            }
        }
        let mut base = format!("{}://{}", uri.scheme(), uri.path());
        if !passed.is_empty() {
            base.push('?');
            base.push_str(&passed.join("&"));
        }
        let url = reqwest::Url::parse(&base).map_err(|e| bad(format!("not a URL: {e}")))?;
        if url.host_str().is_none_or(str::is_empty) {
            return Err(bad(
                "the URI names no host, as in `http://example.com/path`".into(),
            ));
        }
        let p = &mut uri.parameters;
        let method = match p.take_str("http_method") {
            None => None,
            Some(m) => Some(
                Method::from_bytes(m.trim().to_ascii_uppercase().as_bytes())
                    .map_err(|_| bad(format!("`http_method` = `{m}` is not an HTTP method")))?,
            ),
        };
        let throw_exception_on_failure = p.take_bool("throw_exception_on_failure")?.unwrap_or(true);
        let ok_status_codes = match p.take_str("ok_status_code_range") {
            None => vec![(200, 299)],
            Some(r) => parse_ranges(&r).map_err(bad)?,
        };
        let bridge_endpoint = p.take_bool("bridge_endpoint")?.unwrap_or(false);
        let connect_timeout = p.take_duration("connect_timeout")?;
        let so_timeout = p.take_duration("so_timeout")?;
        let socket_timeout = p.take_duration("socket_timeout")?.or(so_timeout);
        let response_timeout = p.take_duration("response_timeout")?;
        let max_response_size = p
            .take::<usize>("max_response_size")?
            .unwrap_or(DEFAULT_MAX_RESPONSE_SIZE);
        let method_name = p.take_choice("auth_method", &["basic", "bearer"])?;
        let username = p.take_str("auth_username");
        let password = p.take_str("auth_password").map(Secret);
        let token = p.take_str("auth_bearer_token").map(Secret);
        let auth = match (method_name, username, password, token) {
            (Some("bearer") | None, None, None, Some(token)) => Some(Auth::Bearer(token)),
            (Some("basic") | None, Some(username), password, None) => Some(Auth::Basic {
                username,
                password: password.unwrap_or(Secret(String::new())),
            }),
            (None, None, None, None) => None,
            (Some("bearer"), ..) => {
                return Err(bad(
                    "`auth_method=bearer` takes `auth_bearer_token` only".into()
                ))
            }
            (Some("basic"), ..) => {
                return Err(bad(
                    "`auth_method=basic` takes `auth_username` (and `auth_password`)".into(),
                ))
            }
            _ => {
                return Err(bad(
                    "give either `auth_username`/`auth_password` or `auth_bearer_token`".into(),
                ))
            }
        };
        uri.parameters.finish(OPTIONS)?;
        Ok(ClientOptions {
            url,
            method,
            throw_exception_on_failure,
            ok_status_codes,
            bridge_endpoint,
            connect_timeout,
            socket_timeout,
            response_timeout,
            auth,
            max_response_size,
        })
    }

    pub(super) fn is_ok(&self, status: u16) -> bool {
        self.ok_status_codes
            .iter()
            .any(|(lo, hi)| (*lo..=*hi).contains(&status))
    }
}

/// `200-204,209,301-304`.
fn parse_ranges(text: &str) -> Result<Vec<(u16, u16)>, String> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let parse = |s: &str| {
            s.trim()
                .parse::<u16>()
                .ok()
                .filter(|c| (100..=599).contains(c))
        };
        match (parse(lo), parse(hi)) {
            (Some(lo), Some(hi)) if lo <= hi => out.push((lo, hi)),
            _ => {
                return Err(format!(
                    "`ok_status_code_range`: `{part}` is not a status or a range like 200-299"
                ))
            }
        }
    }
    if out.is_empty() {
        return Err("`ok_status_code_range` is empty".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(uri: &str) -> Result<ClientOptions, CamelError> {
        ClientOptions::parse(EndpointUri::parse(uri).unwrap())
    }

    #[test]
    fn options_are_taken_and_the_rest_passed_through() {
        let o = parse("http://h:8080/api/v1?httpMethod=put&pageSize=3&q=a%20b&throwExceptionOnFailure=false&okStatusCodeRange=200-204,209&maxResponseSize=1024").unwrap();
        assert_eq!(o.max_response_size, 1024);
        assert_eq!(
            parse("http://h/x").unwrap().max_response_size,
            DEFAULT_MAX_RESPONSE_SIZE
        );
        assert_eq!(o.url.as_str(), "http://h:8080/api/v1?pageSize=3&q=a%20b");
        assert_eq!(o.method, Some(Method::PUT));
        assert!(!o.throw_exception_on_failure);
        assert!(o.is_ok(204) && o.is_ok(209) && !o.is_ok(205));
    }

    #[test]
    fn credentials_never_show() {
        let o = parse("https://h/x?authUsername=u&authPassword=S3CRET").unwrap();
        assert!(!format!("{o:?}").contains("S3CRET"));
        let err = parse("https://h/x?authPassword=S3CRET&authBearerToken=T0KEN").unwrap_err();
        let text = format!("{err} {err:?}");
        assert!(
            !text.contains("S3CRET") && !text.contains("T0KEN"),
            "{text}"
        );
        assert!(matches!(
            parse("https://h/x?authBearerToken=t").unwrap().auth,
            Some(Auth::Bearer(_))
        ));
    }

    #[test]
    fn the_parameters_map_takes_options_only() {
        let with = |k: &'static str| {
            ClientOptions::parse(
                EndpointUri::parse("http://h/x?q=1")
                    .unwrap()
                    .with_parameters([(k, "2".to_string())]),
            )
        };
        let o = with("socketTimeout").unwrap();
        assert_eq!(o.socket_timeout, Some(Duration::from_millis(2)));
        assert_eq!(o.url.as_str(), "http://h/x?q=1");
        let err = with("pageSize").unwrap_err().to_string();
        assert!(err.contains("unknown parameter `pageSize`"), "{err}");
    }

    #[test]
    fn bad_options_are_located() {
        assert!(parse("http://h/x?httpMethod=GE T").is_err());
        assert!(parse("http://h/x?okStatusCodeRange=299-200").is_err());
        assert!(parse("http:?pageSize=1").is_err());
        assert!(parse("http://h/x?connectTimeout=soon").is_err());
    }
}
