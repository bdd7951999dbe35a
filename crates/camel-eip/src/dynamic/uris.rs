//! The endpoint URIs an expression's value names.

use camel_api::Value;

/// Camel's default separator between URIs in one text value.
pub const DEFAULT_DELIMITER: &str = ",";

/// The URIs in `value`, in order: a text split at `delimiter` (not split when the
/// delimiter is `false`, as in Camel), a JSON array element by element (each element
/// split as text), nothing for `null`. Blanks around each URI are trimmed and empty
/// ones dropped.
///
/// ```
/// use camel_api::Value;
/// use camel_eip::dynamic::uris;
///
/// assert_eq!(uris(&Value::from("direct:a, mock:b,,"), ","), ["direct:a", "mock:b"]);
/// assert_eq!(uris(&Value::from_json(serde_json::json!(["a:1", "b:2"])), ","), ["a:1", "b:2"]);
/// assert!(uris(&Value::Null, ",").is_empty());
/// ```
pub fn uris(value: &Value, delimiter: &str) -> Vec<String> {
    let mut out = Vec::new();
    match value {
        Value::Null => {}
        Value::Json(json) => match &**json {
            serde_json::Value::Array(items) => {
                for item in items {
                    match item {
                        serde_json::Value::String(s) => split_into(s, delimiter, &mut out),
                        serde_json::Value::Null => {}
                        other => split_into(&other.to_string(), delimiter, &mut out),
                    }
                }
            }
            serde_json::Value::String(s) => split_into(s, delimiter, &mut out),
            serde_json::Value::Null => {}
            other => split_into(&other.to_string(), delimiter, &mut out),
        },
        other => split_into(&other.to_string(), delimiter, &mut out),
    }
    out
}

fn split_into(text: &str, delimiter: &str, out: &mut Vec<String>) {
    let push = |part: &str, out: &mut Vec<String>| {
        let part = part.trim();
        if !part.is_empty() {
            out.push(part.to_string());
        }
    };
    if delimiter.is_empty() || delimiter.eq_ignore_ascii_case("false") {
        push(text, out);
    } else {
        for part in text.split(delimiter) {
            push(part, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delimiter_false_keeps_one_uri_and_custom_delimiters_split() {
        assert_eq!(uris(&Value::from("a:1,b:2"), "false"), ["a:1,b:2"]);
        assert_eq!(uris(&Value::from("a:1;b:2"), ";"), ["a:1", "b:2"]);
        assert_eq!(
            uris(&Value::from_json(serde_json::json!(["a:1;b:2", null])), ";"),
            ["a:1", "b:2"]
        );
    }
}
