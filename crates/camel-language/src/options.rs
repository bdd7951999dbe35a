//! Reading a language's options from a route (`suppress_exceptions: true`).
//!
//! Unknown options are errors, as unknown YAML keys are everywhere else: a misspelt
//! option silently ignored is a bug found in production.

use camel_api::ExpressionError;

use crate::problem::located;

/// Options as they arrive from a route.
pub(crate) type Options = serde_json::Map<String, serde_json::Value>;

/// Options every language takes: Camel's `trim` (applied to the text when the route's
/// definition is read, see [`camel_api::definition::LanguageValue`]) and the marker of
/// a null constant.
const EVERY_LANGUAGE: [&str; 2] = [
    camel_api::definition::TRIM,
    camel_api::definition::NULL_CONSTANT,
];

/// Fails on any option whose name is not in `known` (snake_case or its camelCase alias)
/// or one that every language takes (`trim`).
pub(crate) fn reject_options(
    language: &str,
    text: &str,
    options: &Options,
    known: &[(&str, &str)],
) -> Result<(), ExpressionError> {
    for key in options.keys() {
        if EVERY_LANGUAGE.contains(&key.as_str()) {
            continue;
        }
        if known
            .iter()
            .any(|(snake, camel)| key == snake || key == camel)
        {
            continue;
        }
        let message = if known.is_empty() {
            format!("the {language} language takes no options but `trim`, got `{key}`")
        } else {
            let hint = camel_api::suggest::nearest(key, known.iter().map(|(snake, _)| *snake))
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            format!("unknown {language} option `{key}`{hint}")
        };
        return Err(located(language, text, 0, message));
    }
    Ok(())
}

/// The text as the language compiles it: trimmed when the options say `trim: true`
/// (a route's definition has trimmed it already, by default; this serves the Rust
/// callers that pass the option themselves).
pub(crate) fn trimmed<'a>(text: &'a str, options: &Options) -> &'a str {
    match options.get(camel_api::definition::TRIM) {
        Some(serde_json::Value::Bool(true)) => text.trim(),
        _ => text,
    }
}

/// A text option under its snake_case name or camelCase alias; `None` when absent.
pub(crate) fn text_option<'a>(
    language: &str,
    text: &str,
    options: &'a Options,
    (snake, camel): (&str, &str),
) -> Result<Option<&'a str>, ExpressionError> {
    match options.get(snake).or_else(|| options.get(camel)) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(s.as_str())),
        Some(other) => Err(located(
            language,
            text,
            0,
            format!("option `{snake}` must be text, got `{other}`"),
        )),
    }
}

/// A boolean option under its snake_case name or camelCase alias; `false` when absent.
pub(crate) fn bool_option(
    language: &str,
    text: &str,
    options: &Options,
    (snake, camel): (&str, &str),
) -> Result<bool, ExpressionError> {
    match options.get(snake).or_else(|| options.get(camel)) {
        None => Ok(false),
        Some(serde_json::Value::Bool(b)) => Ok(*b),
        Some(serde_json::Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(true),
        Some(serde_json::Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(false),
        Some(other) => Err(located(
            language,
            text,
            0,
            format!("option `{snake}` must be true or false, got `{other}`"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn options(value: serde_json::Value) -> Options {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn unknown_options_are_named_with_a_suggestion() {
        let known = [("suppress_exceptions", "suppressExceptions")];
        let e = reject_options(
            "jsonpath",
            "$",
            &options(json!({"suppress_exception": true})),
            &known,
        )
        .unwrap_err();
        assert!(
            e.message.contains("did you mean `suppress_exceptions`"),
            "{}",
            e.message
        );
        assert!(reject_options(
            "jsonpath",
            "$",
            &options(json!({"suppressExceptions": true})),
            &known
        )
        .is_ok());
        let e = reject_options("simple", "x", &options(json!({"a": 1})), &[]).unwrap_err();
        assert!(e.message.contains("takes no options"));
        // Every language takes `trim`.
        assert!(reject_options("simple", "x", &options(json!({"trim": false})), &[]).is_ok());
        assert!(reject_options("jsonpath", "$", &options(json!({"trim": true})), &known).is_ok());
        assert_eq!(trimmed(" x ", &options(json!({"trim": true}))), "x");
        assert_eq!(trimmed(" x ", &options(json!({"trim": false}))), " x ");
        assert_eq!(trimmed(" x ", &Options::new()), " x ");
    }

    #[test]
    fn bool_options_accept_booleans_and_their_text() {
        let name = ("suppress_exceptions", "suppressExceptions");
        assert!(!bool_option("j", "$", &Options::new(), name).unwrap());
        assert!(bool_option(
            "j",
            "$",
            &options(json!({"suppressExceptions": true})),
            name
        )
        .unwrap());
        assert!(bool_option(
            "j",
            "$",
            &options(json!({"suppress_exceptions": "TRUE"})),
            name
        )
        .unwrap());
        assert!(bool_option("j", "$", &options(json!({"suppress_exceptions": 3})), name).is_err());
    }
}
