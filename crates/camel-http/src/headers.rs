//! Header names and the header filter both directions share. Control headers (`Camel*`,
//! the destination headers) never cross the wire either way:
//! [`camel_api::inbound::is_control_header`] decides, as for every transport.
//!
//! HTTP header names are case-insensitive and hyper hands them over in lower case; the
//! exchange's headers are case-sensitive, so inbound names are written in the canonical
//! HTTP/1 form (`Content-Type`, `X-Request-Id`), the spelling Camel's constants use.

/// The request method (`GET`, `POST`, …), set by the consumer, read by the producer.
pub const HTTP_METHOD: &str = "CamelHttpMethod";
/// The request path (`/orders/42`), set by the consumer; the producer appends it to its URI.
pub const HTTP_PATH: &str = "CamelHttpPath";
/// The request target (path and query), set by the consumer; the producer calls it instead
/// of its own URI unless `bridge_endpoint=true`.
pub const HTTP_URI: &str = "CamelHttpUri";
/// The raw query string (without `?`), set by the consumer; it replaces the producer's query.
pub const HTTP_QUERY: &str = "CamelHttpQuery";
/// The response status: the consumer replies with it, the producer sets it.
pub const HTTP_RESPONSE_CODE: &str = "CamelHttpResponseCode";
/// The response's reason phrase, set by the producer.
pub const HTTP_RESPONSE_TEXT: &str = "CamelHttpResponseText";
/// The body's media type, both ways.
pub const CONTENT_TYPE: &str = "Content-Type";

/// Headers that describe one connection or are recomputed from the body, so copying them
/// between a request and a response (or onto another request) would be wrong.
pub(crate) fn is_transport_header(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    ];
    NAMES.iter().any(|n| n.eq_ignore_ascii_case(name))
}

/// `x-request-id` → `X-Request-Id`.
pub(crate) fn title_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = true;
    for c in name.chars() {
        if upper {
            out.push(c.to_ascii_uppercase());
        } else {
            out.push(c.to_ascii_lowercase());
        }
        upper = c == '-';
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(title_case("content-type"), "Content-Type");
        assert_eq!(title_case("x-api-key"), "X-Api-Key");
        assert!(is_transport_header("Transfer-Encoding"));
        assert!(!is_transport_header("Accept"));
    }
}
