//! The functions that read the message: `body`, `bodyAs`, `header`, `headerAs`, `headers`,
//! `exchangeProperty`, `variable`, `variables`, `exchangeId`, `null`, each with its indexes and method calls.

use std::sync::Arc;

use super::access::{self, Step};
use super::text;
use super::{Conversion, Function, Mandatory};
use crate::problem::Problem;

/// Camel's header for the time the message was made at its source, in ms since the epoch.
const MESSAGE_TIMESTAMP: &str = "CamelMessageTimestamp";

/// The functions that read a value of the message, with their optional indexes and
/// method calls: body, bodyAs, header, headers, exchangeProperty, exchangeId, null.
pub(super) fn parse(name: &str, at: usize) -> Result<Option<Function>, Problem> {
    let simple = match name {
        "exchangeId" | "id" => Some(Function::ExchangeId),
        "null" => Some(Function::Null),
        "headers" | "in.headers" => Some(Function::Headers),
        "variables" => Some(Function::Variables),
        // Camel keeps the message timestamp in this header; the consumers that know when
        // their source made the message set it (kafka, the timer with metadata, the
        // scheduler), and it is absent (null) otherwise, as in Camel.
        "messageTimestamp" => Some(Function::Header(Arc::from(MESSAGE_TIMESTAMP))),
        _ => None,
    };
    if simple.is_some() {
        return Ok(simple);
    }
    for prefix in ["in.body", "body"] {
        if let Some(rest) = name.strip_prefix(prefix) {
            if rest.is_empty() {
                return Ok(Some(Function::Body));
            }
            if rest.starts_with(['.', '[']) {
                let steps = access::parse_steps(rest, at + prefix.len(), true)?;
                return Ok(Some(with_steps(Function::Body, steps)));
            }
        }
    }
    for (prefix, mandatory) in [
        ("bodyAs(", Mandatory::No),
        ("mandatoryBodyAs(", Mandatory::Yes),
    ] {
        if let Some(rest) = name.strip_prefix(prefix) {
            let rest_at = at + prefix.len();
            let Some(close) = rest.find(')') else {
                return Err(Problem::new(rest_at, "missing `)` after the type"));
            };
            let conversion = parse_type(&rest[..close], rest_at)?;
            let steps = access::parse_steps(&rest[close + 1..], rest_at + close + 1, true)?;
            return Ok(Some(with_steps(
                Function::BodyAs(conversion, mandatory),
                steps,
            )));
        }
    }
    if let Some(rest) = name.strip_prefix("headerAs(") {
        let rest_at = at + "headerAs(".len();
        let Some(close) = rest.find(')') else {
            return Err(Problem::new(rest_at, "missing `)` after the type"));
        };
        let Some((key, type_name)) = rest[..close].rsplit_once(',') else {
            return Err(Problem::new(
                rest_at,
                "`headerAs` takes a header name and a type: `${headerAs(NAME,Integer)}`",
            ));
        };
        let key = text::unquote(key.trim());
        if key.is_empty() {
            return Err(Problem::new(rest_at, "missing header name"));
        }
        let conversion = parse_type(type_name, rest_at + key.len() + 1)?;
        let steps = access::parse_steps(&rest[close + 1..], rest_at + close + 1, true)?;
        return Ok(Some(with_steps(
            Function::HeaderAs(key.into(), conversion),
            steps,
        )));
    }
    if name == "headers.size" || name == "in.headers.size" {
        return Ok(Some(with_steps(
            Function::Headers,
            access::parse_steps(".size", at, true)?,
        )));
    }
    for prefix in ["in.headers", "in.header", "headers", "header"] {
        if let Some(rest) = name.strip_prefix(prefix) {
            if let Some((key, steps)) = parse_key(rest, at + prefix.len(), "header")? {
                return Ok(Some(with_steps(Function::Header(key), steps)));
            }
        }
    }
    if let Some(rest) = name.strip_prefix("variable") {
        if let Some((key, steps)) = parse_key(rest, at + "variable".len(), "variable")? {
            let variable = camel_api::variables::Variable::parse(&key)
                .map_err(|e| Problem::new(at + "variable".len(), e.to_string()))?;
            return Ok(Some(with_steps(Function::Variable(variable), steps)));
        }
    }
    if let Some(rest) = name.strip_prefix("exchangeProperty") {
        if let Some((key, steps)) = parse_key(rest, at + "exchangeProperty".len(), "property")? {
            return Ok(Some(with_steps(Function::Property(key), steps)));
        }
    }
    Ok(None)
}

fn with_steps(function: Function, steps: Vec<Step>) -> Function {
    if steps.is_empty() {
        function
    } else {
        Function::Access(Box::new(function), steps.into_boxed_slice())
    }
}

/// Reads `.NAME` or `[NAME]` / `['NAME']` after a header or property prefix, and the
/// indexes and method calls after it. Names may hold dots (`${header.my.key}`), so the
/// name ends only where a `[` or a `.method(` starts.
/// `Ok(None)` when `rest` is not a key at all (so the caller tries other functions).
fn parse_key(rest: &str, at: usize, what: &str) -> Result<Option<Keyed>, Problem> {
    if let Some(key) = rest.strip_prefix('.') {
        let end = key_end(key);
        if end == 0 {
            return Err(Problem::new(at, format!("missing {what} name after `.`")));
        }
        if let Some(space) = key[..end].find(char::is_whitespace) {
            return Err(Problem::new(
                at + 1 + space,
                format!(
                    "unexpected text after the {what} name `{}`; write a name with spaces as `[NAME]`",
                    &key[..space]
                ),
            ));
        }
        if let Some(nested) = key[..end].find("${") {
            return Err(Problem::new(
                at + 1 + nested,
                format!("a {what} name cannot hold a function"),
            ));
        }
        let steps = access::parse_steps(&key[end..], at + 1 + end, false)?;
        return Ok(Some((key[..end].into(), steps)));
    }
    if let Some(inner) = rest.strip_prefix('[') {
        let Some(close) = inner.find(']') else {
            return Err(Problem::new(
                at,
                format!("missing `]` after the {what} name"),
            ));
        };
        let key = text::unquote(inner[..close].trim());
        if key.is_empty() {
            return Err(Problem::new(at, format!("missing {what} name in `[]`")));
        }
        let steps = access::parse_steps(&inner[close + 1..], at + close + 2, false)?;
        return Ok(Some((key.into(), steps)));
    }
    if rest.is_empty() {
        return Err(Problem::new(
            at,
            format!("missing {what} name: write `.NAME` or `[NAME]`"),
        ));
    }
    Ok(None)
}

/// A header or property name and the steps after it.
type Keyed = (Arc<str>, Vec<Step>);

/// Where a dotted key ends: at the first `[`, or at the `.` of the first `.word(`.
fn key_end(key: &str) -> usize {
    let bracket = key.find('[').unwrap_or(key.len());
    let mut end = bracket;
    for (dot, _) in key[..bracket].match_indices('.') {
        let after = &key[dot + 1..bracket];
        let word = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        if word > 0 && after[word..].starts_with('(') {
            end = dot;
            break;
        }
    }
    // A call's parentheses may hold a `[` (`${header.x.get('[')}`): only a bracket
    // before the call ends the key.
    end.min(bracket)
}

fn parse_type(type_name: &str, at: usize) -> Result<Conversion, Problem> {
    let type_name = type_name.trim();
    let short = type_name.rsplit('.').next().unwrap_or(type_name);
    Ok(match short {
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
    })
}
