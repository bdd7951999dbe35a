//! Value helpers shared by the functions: text forms, sizes, kinds, splitting.

use camel_api::{CamelError, Value};

/// The text form of a value; null is the empty text.
pub(crate) fn text_of(value: &Value) -> String {
    value.to_string()
}

/// Camel's `kindOfType`: null, number, string, boolean, array or object.
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Int(_) | Value::Float(_) => "number",
        Value::Text(_) | Value::Bytes(_) => "string",
        Value::Json(j) => match &**j {
            serde_json::Value::Array(_) => "array",
            serde_json::Value::Object(_) => "object",
            serde_json::Value::Null => "null",
            serde_json::Value::Bool(_) => "boolean",
            serde_json::Value::Number(_) => "number",
            serde_json::Value::String(_) => "string",
        },
    }
}

/// `length()`/`size()` of a value: elements of a list or map, characters of a text.
pub(crate) fn size(value: &Value) -> usize {
    match value {
        Value::Null => 0,
        Value::Json(j) => match &**j {
            serde_json::Value::Array(a) => a.len(),
            serde_json::Value::Object(o) => o.len(),
            other => other.to_string().chars().count(),
        },
        other => text_of(other).chars().count(),
    }
}

/// The items of a value seen as a collection: a JSON array's elements, a text split at
/// commas (as Camel iterates a String), null as none, anything else as itself.
pub(crate) fn items(value: &Value) -> Vec<Value> {
    match value {
        Value::Null => Vec::new(),
        Value::Json(j) => match j.as_array() {
            Some(a) => a.iter().cloned().map(Value::from_json).collect(),
            None => vec![value.clone()],
        },
        Value::Text(_) | Value::Bytes(_) => text_of(value)
            .split(',')
            .map(|s| Value::Text(s.trim().into()))
            .collect(),
        other => vec![other.clone()],
    }
}

/// A list of texts as a JSON array.
pub(crate) fn text_list<'a>(parts: impl Iterator<Item = &'a str>) -> Value {
    Value::from_json(serde_json::Value::Array(
        parts
            .map(|p| serde_json::Value::String(p.to_owned()))
            .collect(),
    ))
}

/// Java's `String.split(regex)`: the separator is a regular expression and trailing
/// empty parts are dropped.
pub(crate) fn java_split(text: &str, separator: &str) -> Result<Value, CamelError> {
    let regex = regex::Regex::new(separator).map_err(|e| {
        CamelError::processor(format!("simple: invalid split regex `{separator}`: {e}"))
    })?;
    let mut parts: Vec<&str> = regex.split(text).collect();
    while parts.len() > 1 && parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    Ok(text_list(parts.into_iter()))
}

/// Upper-cases the first letter of every word.
pub(crate) fn capitalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at_word_start = true;
    for c in text.chars() {
        if at_word_start && c.is_alphabetic() {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        at_word_start = c.is_whitespace();
    }
    out
}

/// One space between words, none at the ends.
pub(crate) fn normalize_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Removes one pair of surrounding quotes.
pub(crate) fn unquote(text: &str) -> &str {
    for q in ['\'', '"'] {
        if let Some(inner) = text.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner;
        }
    }
    text
}

/// Camel's `replace` escapes: `&quot;`, `&apos;` and `&empty;`.
pub(crate) fn replace_escapes(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&empty;", "")
}

/// The kinds of `${escape(kind)}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Escape {
    Html,
    Xml,
    Json,
    Js,
    Sql,
    Url,
}

impl Escape {
    pub(crate) fn parse(kind: &str) -> Option<Escape> {
        Some(match kind.to_ascii_lowercase().as_str() {
            "html" => Escape::Html,
            "xml" => Escape::Xml,
            "json" => Escape::Json,
            "js" | "javascript" => Escape::Js,
            "sql" => Escape::Sql,
            "url" => Escape::Url,
            _ => return None,
        })
    }

    pub(crate) fn apply(self, text: &str) -> String {
        match self {
            Escape::Html | Escape::Xml => {
                let apostrophe = if self == Escape::Html {
                    "&#39;"
                } else {
                    "&apos;"
                };
                let mut out = String::with_capacity(text.len());
                for c in text.chars() {
                    match c {
                        '&' => out.push_str("&amp;"),
                        '<' => out.push_str("&lt;"),
                        '>' => out.push_str("&gt;"),
                        '"' => out.push_str("&quot;"),
                        '\'' => out.push_str(apostrophe),
                        c => out.push(c),
                    }
                }
                out
            }
            Escape::Json | Escape::Js => {
                let quoted = serde_json::Value::String(text.to_owned()).to_string();
                let inner = &quoted[1..quoted.len() - 1];
                if self == Escape::Json {
                    inner.to_owned()
                } else {
                    inner.replace('\'', "\\'").replace("</", "<\\/")
                }
            }
            Escape::Sql => text.replace('\'', "''"),
            Escape::Url => camel_api::percent_encode(text),
        }
    }
}

/// Pads `text` to `width` characters with `filler` repeated: on the right for a
/// positive width, on the left for a negative one.
pub(crate) fn pad(text: &str, width: i64, filler: &str) -> String {
    let have = text.chars().count();
    let want = width.unsigned_abs() as usize;
    if have >= want || filler.is_empty() {
        return text.to_owned();
    }
    let padding: String = filler.chars().cycle().take(want - have).collect();
    if width > 0 {
        format!("{text}{padding}")
    } else {
        format!("{padding}{text}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_and_sizes() {
        assert_eq!(kind_of(&Value::Null), "null");
        assert_eq!(kind_of(&Value::Int(1)), "number");
        assert_eq!(kind_of(&Value::from_json(json!([1]))), "array");
        assert_eq!(kind_of(&Value::from_json(json!({"a": 1}))), "object");
        assert_eq!(size(&Value::from("héllo")), 5);
        assert_eq!(size(&Value::from_json(json!([1, 2]))), 2);
        assert_eq!(size(&Value::Null), 0);
    }

    #[test]
    fn split_follows_java() {
        assert_eq!(
            java_split("a,b,,", ",").unwrap(),
            Value::from_json(json!(["a", "b"]))
        );
        assert_eq!(
            java_split("a1b22c", "[0-9]+").unwrap(),
            Value::from_json(json!(["a", "b", "c"]))
        );
        assert!(java_split("x", "(").is_err());
    }

    #[test]
    fn escapes_and_padding() {
        assert_eq!(
            Escape::Html.apply("Tom & 'J' <b>"),
            "Tom &amp; &#39;J&#39; &lt;b&gt;"
        );
        assert_eq!(Escape::Xml.apply("'\""), "&apos;&quot;");
        assert_eq!(Escape::Json.apply("a\"b\n"), "a\\\"b\\n");
        assert_eq!(Escape::Js.apply("it's </x>"), "it\\'s <\\/x>");
        assert_eq!(Escape::Sql.apply("O'Brien"), "O''Brien");
        assert_eq!(
            Escape::Url.apply("Camel in Action/é"),
            "Camel%20in%20Action%2F%C3%A9"
        );
        assert_eq!(pad("foo", 5, " "), "foo  ");
        assert_eq!(pad("foo", -5, "@"), "@@foo");
        assert_eq!(pad("foobar", 3, " "), "foobar");
    }

    #[test]
    fn word_helpers() {
        assert_eq!(capitalize("hello big world"), "Hello Big World");
        assert_eq!(normalize_whitespace("  a   b \n c "), "a b c");
        assert_eq!(replace_escapes("&quot;x&apos;&empty;"), "\"x'");
        assert_eq!(
            items(&Value::from("a, b")),
            vec![Value::from("a"), Value::from("b")]
        );
    }
}
