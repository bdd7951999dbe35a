//! A route definition (as the admin API shows it, JSON with credentials hidden) written
//! back as a route file (`- route: {id, from: {uri, parameters, steps}, …}`), for the
//! console's editor. A small block-style YAML writer: strings that could read as another
//! type or hold YAML syntax are double-quoted (JSON's escapes are valid YAML ones).

use serde_json::{Map, Value};

/// Keys of a route written first, in this order (the rest follow by name).
const ROUTE_ORDER: &[&str] = &["id", "description", "from"];
const FROM_ORDER: &[&str] = &["uri", "parameters", "steps"];

/// The route file holding `definition` (`null` gives an empty list).
pub(super) fn route_file(definition: &Value) -> String {
    let Some(map) = definition.as_object() else {
        return "[]\n".into();
    };
    let mut from: Vec<(String, Value)> = map
        .get("from")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    if let Some(steps) = map.get("steps") {
        from.push(("steps".into(), steps.clone()));
    }
    let mut route: Vec<(String, Value)> = map
        .iter()
        .filter(|(k, v)| {
            // `auto_startup: true` is the default, left out as a file would.
            let default_startup = k.as_str() == "auto_startup" && **v == Value::Bool(true);
            !(matches!(k.as_str(), "from" | "steps") || default_startup)
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    route.push(("from".into(), Value::Null));
    let rank = |order: &[&str], k: &str| order.iter().position(|o| *o == k).unwrap_or(order.len());
    route.sort_by_key(|(k, _)| rank(ROUTE_ORDER, k));
    from.sort_by_key(|(k, _)| rank(FROM_ORDER, k));
    let mut out = String::from("- route:\n");
    for (k, v) in &route {
        pad(&mut out, 4);
        out.push_str(&key(k));
        out.push(':');
        if k == "from" {
            out.push('\n');
            for (fk, fv) in &from {
                pad(&mut out, 6);
                out.push_str(&key(fk));
                out.push(':');
                value(&mut out, fv, 6);
            }
        } else {
            value(&mut out, v, 4);
        }
    }
    out
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => string(s),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

fn plain_ok(s: &str) -> bool {
    let reserved = [
        "true", "false", "null", "yes", "no", "on", "off", "y", "n", "~",
    ];
    !s.is_empty()
        && !reserved.contains(&s.to_ascii_lowercase().as_str())
        && s.parse::<f64>().is_err()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || " _-./:${}()=<>!'&|+*,;@".contains(c))
        && !s.starts_with(|c: char| " -:?!&*@'{}[]|>%,`\"#=$".contains(c))
        && !s.ends_with([' ', ':'])
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.contains(['{', '}'])
}

fn string(s: &str) -> String {
    if plain_ok(s) {
        s.to_string()
    } else {
        Value::String(s.to_string()).to_string()
    }
}

fn key(k: &str) -> String {
    if k.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !k.is_empty()
    {
        k.to_string()
    } else {
        Value::String(k.to_string()).to_string()
    }
}

fn map(out: &mut String, m: &Map<String, Value>, indent: usize, first_inline: bool) {
    for (i, (k, v)) in m.iter().enumerate() {
        if !(i == 0 && first_inline) {
            pad(out, indent);
        }
        out.push_str(&key(k));
        out.push(':');
        value(out, v, indent);
    }
}

/// Writes `v` after `key:` (a scalar on the line, a collection below it).
fn value(out: &mut String, v: &Value, indent: usize) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            map(out, m, indent + 2, false);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            list(out, a, indent + 2);
        }
        Value::Object(_) => out.push_str(" {}\n"),
        Value::Array(_) => out.push_str(" []\n"),
        other => {
            out.push(' ');
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
}

fn list(out: &mut String, items: &[Value], indent: usize) {
    for item in items {
        pad(out, indent);
        out.push_str("- ");
        match item {
            Value::Object(m) if !m.is_empty() => map(out, m, indent + 2, true),
            Value::Array(a) if !a.is_empty() => {
                out.push('\n');
                list(out, a, indent + 2);
            }
            Value::Object(_) => out.push_str("{}\n"),
            Value::Array(_) => out.push_str("[]\n"),
            other => {
                out.push_str(&scalar(other));
                out.push('\n');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_definition_reads_back_as_the_same_route() {
        let definition = json!({
            "id": "r",
            "from": {"uri": "timer:t", "parameters": {"period": 100}},
            "steps": [
                {"set_body": {"simple": "n: ${header.x} # not a comment"}},
                {"choice": {"when": [{"simple": "${body} == 'yes'", "steps": [{"to": "log:a"}]}]}},
                {"log": "true"},
                {"stop": null}
            ],
            "auto_startup": true
        });
        let text = route_file(&definition);
        let routes =
            camel_core::yaml::load_str(&text, "t").unwrap_or_else(|e| panic!("{e:?}\n{text}"));
        let back = serde_json::to_value(&routes[0]).unwrap();
        assert_eq!(back["steps"], definition["steps"], "{text}");
        assert_eq!(back["from"], definition["from"], "{text}");
        assert_eq!(back["id"], json!("r"));
    }
}
