//! Functions that read the environment or facts about the exchange rather than the
//! message: `${env.X}`, `${uuid}`, `${file:…}`, `${bodyOneLine}`, `${prettyBody}`.
//! Also the Camel functions this implementation refuses, each with its reason, so that
//! a route written for Camel fails at load time instead of yielding a wrong value.

use std::sync::Arc;

use camel_api::{Body, CamelError, Exchange, Value};
use rand::RngCore;

use super::file::Attribute;
use crate::problem::Problem;

/// A resolved fact.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Info {
    /// `${file:…}`.
    File(Attribute),
    /// `${env.X}`, `${sysenv.X}`, `${env:X}`: read when evaluated; null when unset.
    Env(Arc<str>),
    /// `${uuid}`: a random (version 4) UUID.
    Uuid,
    /// `${bodyOneLine}`: the body as text without line breaks.
    BodyOneLine,
    /// `${prettyBody}`: a JSON body (or text that parses as JSON) indented.
    PrettyBody,
    /// `${exception…}`: the caught error.
    Exception(super::exception::Part),
    /// `${routeId}` and `${camelId}`: fixed when the route is compiled.
    Fixed(Value),
}

/// The context name `${camelId}` gives: Camel's name for a first, unnamed context.
pub(crate) const CAMEL_ID: &str = "camel-1";

/// Resolves `name`; `Ok(None)` when it is none of these.
pub(crate) fn parse(name: &str, at: usize) -> Result<Option<Info>, Problem> {
    if let Some(part) = super::exception::parse(name, at)? {
        return Ok(Some(Info::Exception(part)));
    }
    match name {
        "uuid" | "uuid()" | "uuid(default)" | "uuid(random)" => return Ok(Some(Info::Uuid)),
        "bodyOneLine" => return Ok(Some(Info::BodyOneLine)),
        "prettyBody" => return Ok(Some(Info::PrettyBody)),
        "camelId" => return Ok(Some(Info::Fixed(Value::from(CAMEL_ID)))),
        "routeId" => {
            if let Some(route) = camel_api::current_route() {
                return Ok(Some(Info::Fixed(Value::Text(route))));
            }
        }
        _ => {}
    }
    if let Some(kind) = name.strip_prefix("uuid(") {
        return Err(Problem::new(
            at + 5,
            format!(
                "uuid kind `{}` is not supported: only `default` and `random` (both a random \
                 UUID); Camel's other kinds come from its JVM generators",
                kind.trim_end_matches(')')
            ),
        ));
    }
    for prefix in ["env.", "env:", "sysenv.", "sysenv:"] {
        if let Some(key) = name.strip_prefix(prefix) {
            if key.is_empty() {
                return Err(Problem::new(at + prefix.len(), "missing variable name"));
            }
            return Ok(Some(Info::Env(key.into())));
        }
    }
    Ok(None)
}

/// Camel functions this implementation does not offer, with why and what to use.
const UNSUPPORTED: &[(&str, &str)] = &[
    ("routeId", "it is only known inside a route: this expression is compiled outside one"),
    ("fromRouteId", "exchanges do not carry the id of the route they run in yet; set a header with the id in the route and read it"),
    ("routeGroup", "routes have no groups"),
    ("stepId", "exchanges do not carry the step they run in"),
    ("camelContext", "there is no Java context object to call methods on"),
    ("variableAs", "write `${variable.NAME}` and compare it: numbers in text compare as numbers; or convert it first with the `convert_variable_to` step"),
    ("setVariable", "expressions do not change the exchange; use the `set_variable` step"),
    ("setHeader", "expressions do not change the exchange; use the `set_header` step"),
    ("sys", "there are no JVM system properties; use `${env.NAME}`"),
    ("properties", "property placeholders are not resolved yet"),
    ("propertiesExist", "property placeholders are not resolved yet"),
    ("bean", "there is no bean registry"),
    ("ref", "there is no bean registry"),
    ("type", "there are no Java types to refer to"),
    ("exchange", "there is no Java exchange object to call methods on; use the functions for its parts"),
    ("messageAs", "there are no Java message types"),
    ("bodyType", "bodies are text, bytes or JSON, not Java classes; use `${kindOfType()}`"),
    ("convertTo", "use `${bodyAs(Type)}` for the body"),
    ("logExchange", "use the `log` step"),
    ("messageHistory", "message history is not recorded"),
    ("originalBody", "the original message is not kept"),
    ("function", "there are no custom functions"),
    ("load", "there is no classpath to load from"),
    ("hostname", "not supported yet; use `${env.HOSTNAME}` where the environment sets it"),
    ("threadId", "tasks move between threads, so a thread says nothing about the exchange"),
    ("threadName", "tasks move between threads, so a thread says nothing about the exchange"),
    ("throwException", "expressions do not fail on purpose; use a `filter` or `choice` step"),
    ("assert", "expressions do not fail on purpose; use a `filter` or `choice` step"),
    ("val", "write the value itself"),
    ("collate", "not supported yet; use the `split` step"),
    ("skip", "not supported yet; use the `split` step"),
    ("forEach", "not supported yet"),
    ("filter", "not supported yet"),
    ("map", "not supported yet"),
    ("listAdd", "expressions do not change the exchange"),
    ("listRemove", "expressions do not change the exchange"),
    ("mapAdd", "expressions do not change the exchange"),
    ("mapRemove", "expressions do not change the exchange"),
    ("xpath", "there is no XML support"),
    ("simpleJsonpath", "use `${jsonpath(…)}`"),
];

/// A located refusal when `name` is a Camel function this implementation does not offer.
pub(crate) fn unsupported(name: &str, at: usize) -> Option<Problem> {
    let word = name.split(['.', '(', ':', '[']).next().unwrap_or(name);
    let (_, why) = UNSUPPORTED.iter().find(|(w, _)| *w == word)?;
    Some(Problem::new(
        at,
        format!("`{word}` is not supported in this simple language: {why}"),
    ))
}

impl Info {
    pub(crate) fn value(&self, exchange: &Exchange) -> Result<Value, CamelError> {
        Ok(match self {
            Info::File(a) => a.value(exchange),
            Info::Env(key) => std::env::var(&**key).map_or(Value::Null, |v| Value::Text(v.into())),
            Info::Uuid => Value::Text(uuid_v4().into()),
            Info::Fixed(v) => v.clone(),
            Info::BodyOneLine => match exchange.message.body.as_text() {
                Some(t) => Value::Text(t.replace(['\r', '\n'], "").into()),
                None => Value::Null,
            },
            Info::PrettyBody => pretty(&exchange.message.body),
            Info::Exception(part) => part.value(exchange),
        })
    }
}

fn pretty(body: &Body) -> Value {
    let json = match body {
        Body::Json(j) => Some((**j).clone()),
        other => other.as_text().and_then(|t| serde_json::from_str(&t).ok()),
    };
    match json.and_then(|j| serde_json::to_string_pretty(&j).ok()) {
        Some(p) => Value::Text(p.into()),
        None => body
            .as_text()
            .map_or(Value::Null, |t| Value::Text(t.into())),
    }
}

/// A version 4 UUID from 122 random bits.
fn uuid_v4() -> String {
    let mut b = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_version_4_and_differ() {
        let a = uuid_v4();
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"), "{a}");
        assert_ne!(a, uuid_v4());
    }

    #[test]
    fn refusals_name_the_function_and_its_reason() {
        let p = unsupported("routeId", 4).unwrap();
        assert_eq!(p.at, 4);
        assert!(
            p.message.contains("`routeId` is not supported"),
            "{}",
            p.message
        );
        assert!(unsupported("exception.message", 0).is_none());
        assert!(unsupported("camelId", 0).is_none());
        assert!(unsupported("body", 0).is_none());
        assert_eq!(parse("uuid(short)", 2).unwrap_err().at, 7);
    }

    #[test]
    fn pretty_prints_json_and_keeps_other_text() {
        let v = pretty(&Body::from(r#"{"a":1}"#));
        assert_eq!(v, Value::from("{\n  \"a\": 1\n}"));
        assert_eq!(pretty(&Body::from("plain")), Value::from("plain"));
        assert_eq!(pretty(&Body::Empty), Value::Null);
    }
}
