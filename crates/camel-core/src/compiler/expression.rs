//! Reading an expression out of a step's configuration, in the three spellings Camel
//! accepts:
//!
//! - `{expression: {simple: "${body}"}}`
//! - `{simple: "${body}"}` (any language name as the key)
//! - `{jsonpath: {expression: "$.a", suppress_exceptions: true}}` (a language with options)

use serde_json::{Map, Value as Json};

/// An expression found in a configuration, not yet compiled.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ExpressionSpec {
    pub(crate) language: String,
    pub(crate) text: String,
    pub(crate) options: Map<String, Json>,
    /// JSON pointer (relative to the step config) of the expression text.
    pub(crate) pointer: String,
}

/// Why no expression could be read.
#[derive(Debug)]
pub(crate) enum SpecError {
    /// Not one language key found.
    Missing,
    /// The value under a language key has the wrong form.
    Invalid { pointer: String, message: String },
}

fn text_of(value: &Json) -> Option<String> {
    match value {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        Json::Bool(b) => Some(b.to_string()),
        Json::Null => Some(String::new()),
        _ => None,
    }
}

fn spec_from(language: &str, value: Json, pointer: String) -> Result<ExpressionSpec, SpecError> {
    match value {
        Json::Object(mut options) => {
            let text = options
                .remove("expression")
                .and_then(|v| text_of(&v))
                .ok_or_else(|| SpecError::Invalid {
                    pointer: pointer.clone(),
                    message: format!("`{language}` with options needs an `expression` text"),
                })?;
            Ok(ExpressionSpec {
                language: language.to_string(),
                text,
                options,
                pointer: format!("{pointer}/expression"),
            })
        }
        other => {
            let text = text_of(&other).ok_or_else(|| SpecError::Invalid {
                pointer: pointer.clone(),
                message: format!("`{language}` takes an expression text"),
            })?;
            Ok(ExpressionSpec {
                language: language.to_string(),
                text,
                options: Map::new(),
                pointer,
            })
        }
    }
}

/// Removes the expression keys from `map` and returns the expression they describe.
/// `languages` are the registered language names.
pub(crate) fn take_expression(
    map: &mut Map<String, Json>,
    languages: &[&str],
) -> Result<ExpressionSpec, SpecError> {
    if let Some(inner) = map.remove("expression") {
        let Json::Object(inner) = inner else {
            return Err(SpecError::Invalid {
                pointer: "/expression".into(),
                message:
                    "`expression` takes a map with one language key, as in `{simple: \"${body}\"}`"
                        .into(),
            });
        };
        let mut entries = inner.into_iter();
        return match (entries.next(), entries.next()) {
            (Some((lang, value)), None) if languages.contains(&lang.as_str()) => {
                spec_from(&lang, value, format!("/expression/{lang}"))
            }
            (Some((lang, _)), None) => Err(SpecError::Invalid {
                pointer: format!("/expression/{lang}"),
                message: format!(
                    "unknown language `{lang}`{} (known: {})",
                    camel_api::suggest::nearest(&lang, languages.iter().copied())
                        .map(|s| format!(", did you mean `{s}`?"))
                        .unwrap_or_default(),
                    languages.join(", ")
                ),
            }),
            _ => Err(SpecError::Invalid {
                pointer: "/expression".into(),
                message: "`expression` takes exactly one language key".into(),
            }),
        };
    }
    let found: Vec<String> = map
        .keys()
        .filter(|k| languages.contains(&k.as_str()))
        .cloned()
        .collect();
    match found.as_slice() {
        [lang] => {
            let value = map.remove(lang).unwrap_or(Json::Null);
            spec_from(lang, value, format!("/{lang}"))
        }
        [] => Err(SpecError::Missing),
        [_, second, ..] => Err(SpecError::Invalid {
            pointer: format!("/{second}"),
            message: "more than one expression given; keep one language key".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const LANGS: &[&str] = &["simple", "jsonpath", "header", "constant"];

    fn take(v: Json) -> Result<ExpressionSpec, SpecError> {
        let Json::Object(mut m) = v else { panic!() };
        take_expression(&mut m, LANGS)
    }

    #[test]
    fn three_spellings_agree() {
        let a = take(json!({"expression": {"simple": "${body}"}})).unwrap();
        let b = take(json!({"simple": "${body}"})).unwrap();
        let c = take(json!({"simple": {"expression": "${body}"}})).unwrap();
        assert_eq!(
            (a.language.as_str(), a.text.as_str()),
            ("simple", "${body}")
        );
        assert_eq!((b.language, b.text), (a.language.clone(), a.text.clone()));
        assert_eq!((c.language, c.text), (a.language, a.text));
    }

    #[test]
    fn options_are_kept() {
        let s =
            take(json!({"jsonpath": {"expression": "$.a", "suppress_exceptions": true}})).unwrap();
        assert_eq!(s.options["suppress_exceptions"], json!(true));
    }

    #[test]
    fn unknown_language_is_named() {
        let Err(SpecError::Invalid { message, .. }) = take(json!({"expression": {"simpel": "x"}}))
        else {
            panic!()
        };
        assert!(message.contains("simple"), "{message}");
    }
}
