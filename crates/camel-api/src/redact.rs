//! Hiding credentials wherever a URI, URL or option value is shown: errors, logs, the
//! admin API. There is one redaction, used by every crate, so a credential position
//! covered here is covered everywhere (ADR 0042).
//!
//! ```
//! assert_eq!(
//!     camel_api::redact_url("sqs:q?region=eu-west-1&secret_key=S3CRET"),
//!     "sqs:q?region=eu-west-1&secret_key=***"
//! );
//! ```

/// `url` fit for a message: the user information of `scheme://user:password@host…` is
/// replaced by `***`, options whose name holds a credential (`password`, `secret_key`,
/// `token`, …) show `***`, and a URL given as an option's value (or a comma-separated
/// list of them) is redacted the same way.
///
/// A password may hold `?` (its `@` still ends the user information); a password holding
/// `/` must be percent-encoded, as URLs require.
///
/// ```
/// assert_eq!(
///     camel_api::redact_url("postgres://app:secret@127.0.0.1/shop"),
///     "postgres://***@127.0.0.1/shop"
/// );
/// assert_eq!(camel_api::redact_url("sqlite:orders.db"), "sqlite:orders.db");
/// assert_eq!(
///     camel_api::redact_url("postgres://h/db?user=app&password=s3cret"),
///     "postgres://h/db?user=app&password=***"
/// );
/// assert_eq!(
///     camel_api::redact_url("outbox:x?datasource=postgres://u:pw@h/db&partitions=2"),
///     "outbox:x?datasource=postgres://***@h/db&partitions=2"
/// );
/// assert_eq!(
///     camel_api::redact_url("nats:s?servers=nats://u:p?w@h:4222,nats://v:q@g"),
///     "nats:s?servers=nats://***@h:4222,nats://***@g"
/// );
/// ```
pub fn redact_url(url: &str) -> String {
    let (head, query) = split_query(url);
    let mut out = match authority(head) {
        Some((start, at)) => format!("{}***{}", &head[..start], &head[at..]),
        None => head.to_string(),
    };
    if let Some(query) = query {
        out.push('?');
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, v)) => format!("{k}={}", shown_value(k, v)),
                None => pair.to_string(),
            })
            .collect();
        out.push_str(&pairs.join("&"));
    }
    out
}

/// An option's value fit for a message: `***` for a credential's name, a URL (or list of
/// URLs) redacted, anything else as it is.
///
/// ```
/// assert_eq!(camel_api::shown_value("accessKey", "AKIA1"), "***");
/// assert_eq!(camel_api::shown_value("period", "5s"), "5s");
/// ```
pub fn shown_value(name: &str, value: &str) -> String {
    if is_secret_name(name) {
        "***".to_string()
    } else if value.contains("://") {
        value
            .split(',')
            .map(redact_url)
            .collect::<Vec<_>>()
            .join(",")
    } else {
        value.to_string()
    }
}

/// Splits `url` into what comes before its query and the query. The query starts at the
/// first `?` after the user information, so a `?` inside a password does not start it.
fn split_query(url: &str) -> (&str, Option<&str>) {
    let from = authority(url).map_or(0, |(_, at)| at);
    match url[from..].find('?') {
        Some(q) => (&url[..from + q], Some(&url[from + q + 1..])),
        None => (url, None),
    }
}

/// Where the user information of a hierarchical URL (`scheme://userinfo@host`) starts,
/// and where its `@` is. The authority ends at the first `/` after `//`; its last `@`
/// ends the user information, whatever characters the password holds before it.
fn authority(url: &str) -> Option<(usize, usize)> {
    let colon = url.find(':')?;
    let scheme = &url[..colon];
    let valid_scheme = !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !valid_scheme || !url[colon + 1..].starts_with("//") {
        return None;
    }
    let start = colon + 3;
    let rest = &url[start..];
    let end = rest.find('/').unwrap_or(rest.len());
    rest[..end].rfind('@').map(|at| (start, start + at))
}

/// True for an option or key name that holds a credential (`password`, `secret_key`,
/// `accessKey`, `token`, …), in any case and with or without `_`/`-`.
///
/// ```
/// assert!(camel_api::is_secret_name("secret_key"));
/// assert!(camel_api::is_secret_name("accessKey"));
/// assert!(camel_api::is_secret_name("privateKeyPassphrase"));
/// assert!(!camel_api::is_secret_name("region"));
/// ```
pub fn is_secret_name(key: &str) -> bool {
    let k = key.to_ascii_lowercase().replace(['-', '_'], "");
    [
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "secret",
        "token",
        "sslkey",
        "accesskey",
        "credential",
    ]
    .iter()
    .any(|s| k.contains(s))
}

/// True for a message header that carries a credential: one [`is_secret_name`] names, and
/// the HTTP headers that carry one whatever they are called (`Authorization`,
/// `Proxy-Authorization`, `Cookie`, `Set-Cookie`, and API keys: `X-Api-Key`, `apikey`).
/// Whatever shows a message (the backlog tracer) shows such a header's value as `***`.
///
/// ```
/// assert!(camel_api::is_secret_header("Authorization"));
/// assert!(camel_api::is_secret_header("x-api-key"));
/// assert!(camel_api::is_secret_header("CamelAwsSecretKey"));
/// assert!(!camel_api::is_secret_header("Content-Type"));
/// ```
pub fn is_secret_header(name: &str) -> bool {
    if is_secret_name(name) {
        return true;
    }
    let k = name.to_ascii_lowercase().replace(['-', '_'], "");
    ["authorization", "cookie", "apikey"]
        .iter()
        .any(|s| k.contains(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARK: &str = "MARK3R";

    /// A marker in every credential position never survives redaction.
    #[test]
    fn no_credential_position_survives() {
        let uris = [
            format!("postgres://app:{MARK}@h:5432/db"),
            format!("postgres://app:{MARK}?x@h/db"),
            format!("nats://u:{MARK}?q@h:4222"),
            format!("sqs:q?endpoint=http://127.0.0.1:5000&access_key={MARK}&secret_key={MARK}"),
            format!("sqs:q?accessKey={MARK}&sessionToken={MARK}"),
            format!("postgres://h/db?password={MARK}"),
            format!("outbox:x?datasource=postgres://u:{MARK}@h/db&partitions=2"),
            format!("outbox:x?datasource=mysql://u:{MARK}?z@h/db"),
            format!("nats:s?servers=nats://u:{MARK}?q@h:1,nats://v:{MARK}@g:2"),
            format!("http://h/p?next=https://u:{MARK}@x/y"),
            format!("timer://u:{MARK}@x?period=1&token={MARK}"),
        ];
        for uri in uris {
            let shown = redact_url(&uri);
            assert!(!shown.contains(MARK), "{uri} → {shown}");
            assert_eq!(redact_url(&shown), shown, "idempotent");
        }
    }

    #[test]
    fn plain_uris_are_unchanged() {
        for uri in [
            "timer:tick?period=500",
            "file:/tmp/in?include=*.txt",
            "postgres://h/db?user=app",
            "http://127.0.0.1:5000/",
            "direct:a@b",
        ] {
            assert_eq!(redact_url(uri), uri);
        }
    }
}
