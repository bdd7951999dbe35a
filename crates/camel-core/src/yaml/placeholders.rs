//! The pass that resolves property placeholders in a parsed route file, before its routes
//! are read: each string value is resolved where it stands, so the pointer of a value
//! that cannot be resolved is the one the position index knows. Every string of the
//! files loaded together counts against one [`Budget`].

use camel_api::suggest::to_snake_case;
use serde_json::Value as Json;

use super::node::escape;
use crate::properties::{Budget, Properties, PropertyError};

/// Resolves every string value under `value` (whose pointer is `pointer`) in place,
/// collecting each failure with the pointer of its value. Keys are left as written: they
/// name options and headers, not configuration. Once `budget` is spent, the first string
/// past it is an error and the others are left as written (the errors keep them from
/// being read): one error says it, rather than one per value.
pub(super) fn resolve(
    value: &mut Json,
    pointer: String,
    properties: &Properties,
    budget: &mut Budget,
    errors: &mut Vec<(PropertyError, String)>,
) {
    let mut pass = Pass {
        properties,
        budget,
        errors,
        spent: false,
    };
    pass.walk(value, pointer);
}

struct Pass<'a> {
    properties: &'a Properties,
    budget: &'a mut Budget,
    errors: &'a mut Vec<(PropertyError, String)>,
    /// The budget was passed in this pass (and said so once).
    spent: bool,
}

impl Pass<'_> {
    fn walk(&mut self, value: &mut Json, pointer: String) {
        if let Json::String(text) = value {
            if let Some(done) = simple_properties(text, &|name| {
                Known::from(self.properties.get(name).map(str::to_string))
            }) {
                *text = done;
            }
        }
        match value {
            Json::String(text) if text.contains("{{") && !self.spent => {
                if text.contains("{{?") {
                    *text = super::templates::drop_unset_options(text, |v| self.unset_optional(v));
                }
                match self.properties.resolve_counted(text, self.budget) {
                    Ok(resolved) => {
                        let whole = text.starts_with("{{")
                            && text.ends_with("}}")
                            && text.matches("{{").count() == 1;
                        *value = if whole {
                            typed(resolved)
                        } else {
                            Json::String(resolved)
                        };
                    }
                    Err(e) => {
                        self.spent |= matches!(e, PropertyError::TotalTooLarge { .. });
                        self.errors.push((e, pointer));
                    }
                }
            }
            Json::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    self.walk(item, format!("{pointer}/{i}"));
                }
            }
            Json::Object(map) => {
                // An endpoint option whose value is an unset optional placeholder alone
                // is left out, as Camel leaves it out, rather than given empty.
                let key = pointer.rsplit('/').next().unwrap_or_default();
                if super::templates::holds_endpoint_options(key) {
                    map.retain(|_, v| !v.as_str().is_some_and(|t| self.unset_optional(t)));
                }
                for (k, v) in map.iter_mut() {
                    self.walk(v, format!("{pointer}/{}", escape(&to_snake_case(k))));
                }
            }
            _ => {}
        }
    }
}

impl Pass<'_> {
    /// Whether `text` is `{{?key}}` alone and `key` is not set.
    fn unset_optional(&self, text: &str) -> bool {
        super::templates::is_optional_placeholder(text)
            .is_some_and(|key| self.properties.get(key).is_none())
    }
}

/// What a property lookup found, for [`simple_properties`].
pub(super) enum Known {
    /// The property's value.
    Set(String),
    /// Not set.
    Unset,
    /// Not known here (a later pass may know it).
    Unknown,
}

impl From<Option<String>> for Known {
    fn from(value: Option<String>) -> Self {
        value.map_or(Known::Unset, Known::Set)
    }
}

/// `text` with simple's property functions resolved where the properties are known, as
/// Camel resolves them when the route starts: `${properties:key}`,
/// `${properties:key:default}` become the value (the default when unset), and
/// `${propertiesExist:key}` / `${propertiesExist:!key}` become `true` or `false`. The
/// Kamelet catalog's `precondition` choices test their parameters so. `None` when nothing
/// changed; a function of an unknown key, or of an unset key without a default, is left
/// for the simple language to refuse.
pub(super) fn simple_properties(text: &str, lookup: &dyn Fn(&str) -> Known) -> Option<String> {
    if !text.contains("${properties") {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(start) = rest.find("${properties") {
        out.push_str(&rest[..start]);
        let inner_start = start + 2;
        let Some(len) = rest[inner_start..].find('}') else {
            break;
        };
        let inner = &rest[inner_start..inner_start + len];
        let end = inner_start + len + 1;
        let replaced = if let Some(key) = inner.strip_prefix("propertiesExist:") {
            let (negate, key) = match key.trim().strip_prefix('!') {
                Some(k) => (true, k.trim()),
                None => (false, key.trim()),
            };
            match lookup(key) {
                Known::Set(_) => Some((!negate).to_string()),
                Known::Unset => Some(negate.to_string()),
                Known::Unknown => None,
            }
        } else if let Some(spec) = inner.strip_prefix("properties:") {
            let (key, default) = match spec.split_once(':') {
                Some((k, d)) => (k.trim(), Some(d)),
                None => (spec.trim(), None),
            };
            match (lookup(key), default) {
                (Known::Set(v), _) => Some(v),
                (Known::Unset, Some(d)) => Some(d.to_string()),
                _ => None,
            }
        } else {
            None
        };
        match replaced {
            Some(v) => {
                out.push_str(&v);
                changed = true;
            }
            None => out.push_str(&rest[start..end]),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// A value that was one placeholder alone takes the type its text has, as if written
/// there (`batch_size: "{{size}}"` with `size=10` is the number 10), since properties are
/// text and typed options expect numbers and booleans. Only a text that round-trips
/// changes type: `007` and `1.50` stay text.
fn typed(text: String) -> Json {
    match text.as_str() {
        "true" => return Json::Bool(true),
        "false" => return Json::Bool(false),
        _ => {}
    }
    if let Ok(n) = text.parse::<i64>() {
        if n.to_string() == text {
            return Json::from(n);
        }
    }
    if let Some(n) = text
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
    {
        if n.to_string() == text {
            return Json::Number(n);
        }
    }
    Json::String(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(name: &str) -> Known {
        match name {
            "set" => Known::Set("yes".into()),
            "unset" => Known::Unset,
            _ => Known::Unknown,
        }
    }

    #[test]
    fn property_functions_resolve_when_the_property_is_known() {
        let cases = [
            ("${propertiesExist:set}", Some("true")),
            ("${propertiesExist:!set}", Some("false")),
            ("${propertiesExist:unset}", Some("false")),
            ("${propertiesExist:!unset}", Some("true")),
            ("a ${properties:set} b", Some("a yes b")),
            ("${properties:unset:true}", Some("true")),
            ("${properties:unset}", None),
            ("${properties:other:1}", None),
            ("${body}", None),
        ];
        for (text, want) in cases {
            assert_eq!(simple_properties(text, &lookup).as_deref(), want, "{text}");
        }
    }

    #[test]
    fn a_lone_placeholder_takes_the_type_of_its_text() {
        let mut props = Properties::new();
        for (k, v) in [("n", "10"), ("b", "true"), ("z", "007"), ("f", "1.5")] {
            props.set(k, v);
        }
        let mut value = serde_json::json!({
            "n": "{{n}}", "b": "{{b}}", "z": "{{z}}", "f": "{{f}}", "mixed": "{{n}}ms"
        });
        let mut errors = Vec::new();
        resolve(
            &mut value,
            String::new(),
            &props,
            &mut Budget::default(),
            &mut errors,
        );
        assert!(errors.is_empty());
        assert_eq!(
            value,
            serde_json::json!({"n": 10, "b": true, "z": "007", "f": 1.5, "mixed": "10ms"})
        );
    }

    #[test]
    fn optional_placeholders_leave_out_what_is_not_set() {
        let mut props = Properties::new();
        props.set("set", "5");
        let mut value = serde_json::json!({
            "parameters": {"a": "{{?unset}}", "b": "{{?set}}"},
            "constant": "{{?unset}}", "c": "x{{?unset}}y",
            "uri": "timer:t?period={{?set}}&repeatCount={{?unset}}",
            "only": "timer:t?repeatCount={{?unset}}"
        });
        let mut errors = Vec::new();
        resolve(
            &mut value,
            String::new(),
            &props,
            &mut Budget::default(),
            &mut errors,
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            value,
            serde_json::json!({
                "parameters": {"b": 5}, "constant": "", "c": "xy",
                "uri": "timer:t?period=5", "only": "timer:t"
            })
        );
    }

    #[test]
    fn the_budget_spans_every_file_loaded_together_and_fails_once_located() {
        // 960 KB per value, under the bound of one resolution; 40 of them per file, so the
        // second file passes the 64 MiB of the whole load.
        let mut props = Properties::new();
        props.set("p0", "x".repeat(1000));
        props.set("p1", "{{p0}}".repeat(32));
        props.set("p2", "{{p1}}".repeat(30));
        let file = |route: &str| {
            let mut text = format!("- from:\n    uri: direct:{route}\n    steps:\n");
            for i in 0..40 {
                text.push_str(&format!("      - log: 'm{i} {{{{p2}}}}'\n"));
            }
            text
        };
        let (a, b) = (file("a"), file("b"));
        let (_, errors) =
            crate::yaml::load_texts_partial_with(&[(&a, "a.yaml"), (&b, "b.yaml")], &props);
        assert_eq!(errors.len(), 1, "{errors:?}");
        let text = errors[0].to_string();
        // 64 MiB / 960,000 bytes: the 70th value passes it, the 30th of the second file.
        assert!(text.starts_with("b.yaml:33:9: "), "{text}");
        assert!(
            text.contains("property placeholders expand to more than 64 MiB in total"),
            "{text}"
        );
        // Each file alone fits.
        assert!(
            crate::yaml::load_texts_partial_with(&[(&b, "b.yaml")], &props)
                .1
                .is_empty()
        );
    }
}
