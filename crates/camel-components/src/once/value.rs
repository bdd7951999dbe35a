//! The values a once endpoint sets: where each comes from and how it becomes a value.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use camel_api::suggest::to_snake_case;
use camel_api::{
    percent_decode, BoxExpression, CamelError, ComponentContext, EndpointUri, Exchange, Value,
};

/// The largest file a `file:` value may name: the text is held for the endpoint's life
/// and copied into the exchange, so a wrong path to a huge file fails the load instead.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Where one value comes from.
#[derive(Debug)]
pub(super) enum Source {
    /// Text from the URI (or a file), with the boolean or integer it reads as.
    Literal { text: Arc<str>, value: Value },
    /// `language:NAME:EXPRESSION`, evaluated on the exchange when it fires.
    Expression(BoxExpression),
}

impl Source {
    /// The value on `exchange` as built so far.
    pub(super) fn value(&self, exchange: &Exchange) -> Result<Value, CamelError> {
        match self {
            Source::Literal { value, .. } => Ok(value.clone()),
            Source::Expression(expression) => expression.evaluate(exchange),
        }
    }
}

/// Everything a firing sets, each list in the order written.
#[derive(Debug, Default)]
pub(super) struct Assignments {
    pub(super) variables: Vec<(String, Source)>,
    pub(super) properties: Vec<(String, Source)>,
    pub(super) headers: Vec<(String, Source)>,
    pub(super) body: Option<Source>,
}

/// The prefixes of Camel's multi-value options and the YAML map that holds the same.
const PREFIXES: [(&str, &str); 3] = [
    ("variable.", "variables"),
    ("exchangeProperty.", "exchange_properties"),
    ("header.", "headers"),
];

impl Assignments {
    /// Takes `body`, the prefixed options and the YAML maps from `uri`.
    pub(super) fn take(
        uri: &mut EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Self, CamelError> {
        let raw = uri.raw();
        let mut lists: [Vec<(String, Source)>; 3] = Default::default();
        // Parameters are kept under snake_case names, which would change the key's case
        // (`header.orderId`); the key as written is read from the URI's own query.
        for (key, _) in query_pairs(&raw) {
            for (i, (prefix, _)) in PREFIXES.iter().enumerate() {
                let Some(name) = key.strip_prefix(prefix) else {
                    continue;
                };
                if name.is_empty() {
                    return Err(CamelError::invalid_uri(
                        raw.clone(),
                        format!("`{prefix}` needs a name after it, as in `{prefix}id=7`"),
                    ));
                }
                if let Some(text) = uri.parameters.take_str(&to_snake_case(&key)) {
                    lists[i].push((name.to_string(), source(&raw, &key, &text, ctx)?));
                }
            }
        }
        for (i, (_, map)) in PREFIXES.iter().enumerate() {
            if let Some(text) = uri.parameters.take_str(map) {
                for (name, text) in yaml_map(&raw, map, &text)? {
                    let option = format!("{map}.{name}");
                    lists[i].push((name, source(&raw, &option, &text, ctx)?));
                }
            }
        }
        let body = uri
            .parameters
            .take_str("body")
            .map(|text| source(&raw, "body", &text, ctx))
            .transpose()?;
        let [variables, properties, headers] = lists;
        Ok(Assignments {
            variables,
            properties,
            headers,
            body,
        })
    }
}

/// The `name=value` pairs of the query of `uri`, decoded, in order.
fn query_pairs(uri: &str) -> Vec<(String, String)> {
    let Some((_, query)) = uri.split_once('?') else {
        return Vec::new();
    };
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

/// A YAML map given in `parameters` (it arrives as JSON text): its entries as text.
fn yaml_map(uri: &Arc<str>, option: &str, text: &str) -> Result<Vec<(String, String)>, CamelError> {
    let bad = || {
        CamelError::invalid_uri(
            uri.clone(),
            format!("parameter `{option}` must be a map of names to values, as in `{option}: {{id: 7}}`"),
        )
    };
    let serde_json::Value::Object(map) = serde_json::from_str(text).map_err(|_| bad())? else {
        return Err(bad());
    };
    map.into_iter()
        .map(|(name, value)| match value {
            serde_json::Value::String(s) => Ok((name, s)),
            serde_json::Value::Object(_) | serde_json::Value::Array(_) => Err(bad()),
            serde_json::Value::Null => Ok((name, String::new())),
            other => Ok((name, other.to_string())),
        })
        .collect()
}

/// Reads one value as written: `language:NAME:EXPR`, `file:PATH`, or plain text.
fn source(
    uri: &Arc<str>,
    option: &str,
    text: &str,
    ctx: &dyn ComponentContext,
) -> Result<Source, CamelError> {
    let bad = |reason: String| {
        CamelError::invalid_uri(uri.clone(), format!("parameter `{option}`: {reason}"))
    };
    if let Some(rest) = text.strip_prefix("language:") {
        let Some((language, expression)) = rest.split_once(':') else {
            return Err(bad(
                "write `language:NAME:EXPRESSION`, as in `language:simple:${header.id}`".into(),
            ));
        };
        let expression = match expression.strip_prefix("file:") {
            Some(path) => read_file(Path::new(path)).map_err(bad)?,
            None => expression.to_string(),
        };
        return ctx
            .expression(language, &expression)
            .map(Source::Expression)
            .map_err(|e| bad(e.to_string()));
    }
    if text.starts_with("classpath:") {
        return Err(bad(
            "there is no classpath here: name the file with `file:PATH`".into(),
        ));
    }
    let text = match text.strip_prefix("file:") {
        Some(path) => read_file(Path::new(path)).map_err(bad)?,
        None => text.to_string(),
    };
    Ok(Source::Literal {
        value: converted(&text),
        text: text.into(),
    })
}

/// Camel's conversion of a value: a boolean, an integer, or else text.
fn converted(text: &str) -> Value {
    match text {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => match text.parse::<i64>() {
            Ok(n) if !text.starts_with('+') => Value::Int(n),
            _ => Value::Text(text.into()),
        },
    }
}

/// The text of a regular file of at most [`MAX_FILE_BYTES`]. The type is checked before
/// the open, so a FIFO named by mistake cannot block the load.
fn read_file(path: &Path) -> Result<String, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("`{shown}`: {e}"))?;
    if !meta.is_file() {
        return Err(format!("`{shown}` is not a regular file"));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!("`{shown}` is larger than {MAX_FILE_BYTES} bytes"));
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FILE_BYTES).read_to_string(&mut text))
        .map_err(|e| format!("`{shown}`: {e}"))?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_convert_as_camel_does() {
        assert_eq!(converted("true"), Value::Bool(true));
        assert_eq!(converted("123"), Value::Int(123));
        assert_eq!(converted("-4"), Value::Int(-4));
        assert_eq!(converted("+4"), Value::Text("+4".into()));
        assert_eq!(converted("1.5"), Value::Text("1.5".into()));
        assert_eq!(converted("True"), Value::Text("True".into()));
    }

    #[test]
    fn query_keys_keep_their_case() {
        let pairs = query_pairs("once:x?header.orderId=7&body=a%20b");
        assert_eq!(pairs[0], ("header.orderId".to_string(), "7".to_string()));
        assert_eq!(pairs[1], ("body".to_string(), "a b".to_string()));
    }
}
