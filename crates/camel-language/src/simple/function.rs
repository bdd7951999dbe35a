//! The `${...}` functions of the simple language: what they read from an exchange.
//!
//! A function is resolved once, at parse time, into a [`Function`] value; evaluation is
//! a field lookup, never a string match.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::Arc;

use camel_api::{Body, CamelError, Exchange, Value};

use crate::problem::Problem;

/// The function names the parser knows, for "did you mean" suggestions.
const KNOWN: &[&str] = &[
    "body",
    "in.body",
    "bodyAs",
    "mandatoryBodyAs",
    "header",
    "headers",
    "in.header",
    "in.headers",
    "exchangeProperty",
    "exchangeId",
    "id",
    "null",
];

/// A resolved `${...}` function.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Function {
    /// `${body}`: the message body as a value.
    Body,
    /// `${bodyAs(Type)}`: the body converted to a type.
    BodyAs(Conversion),
    /// `${header.NAME}`: a header, or null.
    Header(Arc<str>),
    /// `${exchangeProperty.NAME}`: an exchange property, or null.
    Property(Arc<str>),
    /// `${exchangeId}`: the exchange id as text.
    ExchangeId,
    /// `${null}`.
    Null,
}

/// The target of `${bodyAs(...)}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Conversion {
    Text,
    Integer,
    Decimal,
    Boolean,
}

impl Function {
    /// The function's value. Headers and properties are borrowed, not cloned.
    pub(crate) fn value<'a>(&self, exchange: &'a Exchange) -> Result<Cow<'a, Value>, CamelError> {
        Ok(match self {
            Function::Body => Cow::Owned(exchange.message.body.to_value()),
            Function::Header(name) => borrowed_or_null(exchange.header(name)),
            Function::Property(name) => borrowed_or_null(exchange.property(name)),
            Function::ExchangeId => Cow::Owned(Value::Text(exchange.id.to_string().into())),
            Function::Null => Cow::Owned(Value::Null),
            Function::BodyAs(conversion) => {
                Cow::Owned(convert_body(&exchange.message.body, *conversion)?)
            }
        })
    }

    /// Appends the function's text form to `out` without building an intermediate value
    /// where it can (text bodies and headers are copied straight in).
    pub(crate) fn append_to(
        &self,
        exchange: &Exchange,
        out: &mut String,
    ) -> Result<(), CamelError> {
        match self {
            Function::Body | Function::BodyAs(Conversion::Text) => {
                append_body(&exchange.message.body, out);
                Ok(())
            }
            Function::ExchangeId => {
                // Infallible for a String.
                let _ = write!(out, "{}", exchange.id);
                Ok(())
            }
            Function::Header(name) => {
                if let Some(value) = exchange.header(name) {
                    append_value(value, out);
                }
                Ok(())
            }
            _ => {
                append_value(&*self.value(exchange)?, out);
                Ok(())
            }
        }
    }
}

fn borrowed_or_null(value: Option<&Value>) -> Cow<'_, Value> {
    match value {
        Some(v) => Cow::Borrowed(v),
        None => Cow::Owned(Value::Null),
    }
}

/// Appends the text form of `value` (null appends nothing).
pub(crate) fn append_value(value: &Value, out: &mut String) {
    match value {
        Value::Null => {}
        Value::Text(s) => out.push_str(s),
        Value::Bytes(b) => out.push_str(&String::from_utf8_lossy(b)),
        // Infallible for a String.
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

fn append_body(body: &Body, out: &mut String) {
    match body {
        Body::Empty => {}
        Body::Text(s) => out.push_str(s),
        Body::Bytes(b) => out.push_str(&String::from_utf8_lossy(b)),
        Body::Json(j) => {
            let _ = write!(out, "{j}");
        }
    }
}

fn convert_body(body: &Body, to: Conversion) -> Result<Value, CamelError> {
    let text = || body.as_text().unwrap_or_default();
    match to {
        Conversion::Text => Ok(Value::Text(text().into())),
        Conversion::Integer => text()
            .trim()
            .parse::<i64>()
            .map(Value::Int)
            .map_err(|e| CamelError::conversion("integer", e)),
        Conversion::Decimal => text()
            .trim()
            .parse::<f64>()
            .map(Value::Float)
            .map_err(|e| CamelError::conversion("decimal", e)),
        Conversion::Boolean => match text().trim() {
            t if t.eq_ignore_ascii_case("true") => Ok(Value::Bool(true)),
            t if t.eq_ignore_ascii_case("false") => Ok(Value::Bool(false)),
            t => Err(CamelError::conversion(
                "boolean",
                format!("`{t}` is not true or false"),
            )),
        },
    }
}

/// Parses the inside of `${...}`; `offset` is the byte offset of `content` in the whole
/// expression, so problems point at the right column.
pub(crate) fn parse(content: &str, offset: usize) -> Result<Function, Problem> {
    let leading = content.len() - content.trim_start().len();
    let name = content.trim();
    let at = offset + leading;
    if name.is_empty() {
        return Err(Problem::new(offset, "empty function `${}`"));
    }
    match name {
        "body" | "in.body" => return Ok(Function::Body),
        "exchangeId" | "id" => return Ok(Function::ExchangeId),
        "null" => return Ok(Function::Null),
        _ => {}
    }
    for prefix in ["bodyAs(", "mandatoryBodyAs("] {
        if let Some(rest) = name.strip_prefix(prefix) {
            return parse_body_as(rest, at + prefix.len());
        }
    }
    for prefix in ["in.headers", "in.header", "headers", "header"] {
        if let Some(rest) = name.strip_prefix(prefix) {
            if let Some(key) = parse_key(rest, at + prefix.len(), "header")? {
                return Ok(Function::Header(key));
            }
        }
    }
    if let Some(rest) = name.strip_prefix("exchangeProperty") {
        if let Some(key) = parse_key(rest, at + "exchangeProperty".len(), "property")? {
            return Ok(Function::Property(key));
        }
    }
    let word = name
        .split(|c: char| matches!(c, '.' | '[' | '(' | ':') || c.is_whitespace())
        .next()
        .unwrap_or(name);
    let hint = camel_api::suggest::nearest(word, KNOWN.iter().copied())
        .map(|s| format!("; did you mean `{s}`?"))
        .unwrap_or_default();
    Err(Problem::new(at, format!("unknown function `{name}`{hint}")))
}

/// Reads `.NAME` or `[NAME]` / `['NAME']` after a header or property prefix.
/// `Ok(None)` when `rest` is not a key at all (so the caller tries other functions).
fn parse_key(rest: &str, at: usize, what: &str) -> Result<Option<Arc<str>>, Problem> {
    if let Some(key) = rest.strip_prefix('.') {
        if key.is_empty() {
            return Err(Problem::new(at, format!("missing {what} name after `.`")));
        }
        // `${header.foo.length()}` is an OGNL method call in Camel. Read as a header
        // named `foo.length()` it was silently null; say instead that calls are not
        // supported, where the call starts. A name with `(` can still be read as
        // `${header[foo(1)]}`.
        if let Some(paren) = key.find('(') {
            let call = key[..paren].rfind('.').map_or(0, |dot| dot + 1);
            return Err(Problem::new(
                at + 1 + call,
                format!(
                    "method calls such as `{}` are not supported in the simple language; \
                     write a {what} name containing `(` as `[{key}]`",
                    &key[call..]
                ),
            ));
        }
        return Ok(Some(key.into()));
    }
    if let Some(inner) = rest.strip_prefix('[') {
        let Some(inner) = inner.strip_suffix(']') else {
            return Err(Problem::new(
                at,
                format!("missing `]` after the {what} name"),
            ));
        };
        let key = unquote(inner.trim());
        if key.is_empty() {
            return Err(Problem::new(at, format!("missing {what} name in `[]`")));
        }
        return Ok(Some(key.into()));
    }
    if rest.is_empty() {
        return Err(Problem::new(
            at,
            format!("missing {what} name: write `.NAME` or `[NAME]`"),
        ));
    }
    Ok(None)
}

fn unquote(s: &str) -> &str {
    for q in ['\'', '"'] {
        if let Some(inner) = s.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

fn parse_body_as(rest: &str, at: usize) -> Result<Function, Problem> {
    let Some(type_name) = rest.strip_suffix(')') else {
        return Err(Problem::new(at, "missing `)` after the type"));
    };
    let type_name = type_name.trim();
    let short = type_name.rsplit('.').next().unwrap_or(type_name);
    let conversion = match short {
        "String" => Conversion::Text,
        "Integer" | "Long" | "int" | "long" => Conversion::Integer,
        "Double" | "Float" | "double" | "float" => Conversion::Decimal,
        "Boolean" | "boolean" => Conversion::Boolean,
        other => {
            return Err(Problem::new(
                at,
                format!("unknown type `{other}`; use String, Integer, Long, Double or Boolean"),
            ))
        }
    };
    Ok(Function::BodyAs(conversion))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_every_spelling() {
        assert_eq!(parse("body", 0), Ok(Function::Body));
        assert_eq!(parse(" in.body ", 0), Ok(Function::Body));
        for s in [
            "header.x",
            "headers.x",
            "in.header.x",
            "in.headers.x",
            "header[x]",
            "header['x']",
        ] {
            assert_eq!(parse(s, 0), Ok(Function::Header("x".into())), "{s}");
        }
        assert_eq!(
            parse("exchangeProperty.p", 0),
            Ok(Function::Property("p".into()))
        );
        assert_eq!(
            parse("exchangeProperty[p]", 0),
            Ok(Function::Property("p".into()))
        );
        assert_eq!(parse("exchangeId", 0), Ok(Function::ExchangeId));
        assert_eq!(
            parse("bodyAs(String)", 0),
            Ok(Function::BodyAs(Conversion::Text))
        );
        assert_eq!(
            parse("bodyAs(java.lang.Integer)", 0),
            Ok(Function::BodyAs(Conversion::Integer))
        );
    }

    #[test]
    fn header_names_may_contain_dots() {
        assert_eq!(parse("header.a.b", 0), Ok(Function::Header("a.b".into())));
    }

    #[test]
    fn unknown_function_points_at_its_name_and_suggests() {
        let p = parse("  bdy", 2).unwrap_err();
        assert_eq!(p.at, 4);
        assert!(p.message.contains("did you mean `body`"), "{}", p.message);
    }

    #[test]
    fn other_spellings_get_a_suggestion() {
        let p = parse("header:x", 0).unwrap_err();
        assert!(p.message.contains("did you mean `header`"), "{}", p.message);
    }

    #[test]
    fn missing_names_are_errors() {
        assert!(parse("header.", 0)
            .unwrap_err()
            .message
            .contains("missing header name"));
        assert!(parse("header", 0)
            .unwrap_err()
            .message
            .contains("missing header name"));
        assert!(parse("header[x", 0).unwrap_err().message.contains("`]`"));
        assert!(parse("exchangeProperty[]", 0).is_err());
        assert!(parse("bodyAs(Foo)", 0)
            .unwrap_err()
            .message
            .contains("unknown type"));
        assert!(parse("", 3).is_err());
    }

    #[test]
    fn evaluates_against_an_exchange() {
        let mut ex = Exchange::new("42").with_header("h", 7);
        ex.properties.insert("p", "v");
        let value = |f: Function| f.value(&ex).unwrap().into_owned();
        assert_eq!(value(Function::Body), Value::from("42"));
        assert_eq!(value(Function::Header("h".into())), Value::Int(7));
        assert_eq!(value(Function::Header("missing".into())), Value::Null);
        assert_eq!(value(Function::Property("p".into())), Value::from("v"));
        assert_eq!(value(Function::BodyAs(Conversion::Integer)), Value::Int(42));
        assert_eq!(
            value(Function::BodyAs(Conversion::Decimal)),
            Value::Float(42.0)
        );
        assert_eq!(value(Function::ExchangeId), Value::from(ex.id.to_string()));
        let bad = Exchange::new("x");
        assert!(Function::BodyAs(Conversion::Boolean).value(&bad).is_err());
    }

    #[test]
    fn appends_text_forms() {
        let ex = Exchange::new("b").with_header("n", 3);
        let mut out = String::new();
        Function::Body.append_to(&ex, &mut out).unwrap();
        Function::Header("n".into())
            .append_to(&ex, &mut out)
            .unwrap();
        Function::Header("none".into())
            .append_to(&ex, &mut out)
            .unwrap();
        assert_eq!(out, "b3");
    }
}
