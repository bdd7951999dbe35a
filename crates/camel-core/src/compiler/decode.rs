//! Typed decoding of step configurations with errors that point at the offending key.
//!
//! Every step's options go through its [`StepConfig`] here: serde does the parsing, this
//! module turns serde's messages into located [`RouteErrorKind`]s (an unknown key names the
//! nearest known one).
//!
//! Camel's schema types many options as booleans and numbers but its loader accepts them
//! quoted (`parallelProcessing: "true"`, `completionSize: "2"`), and tools write them so.
//! Rather than teach every field, [`decode`] retries: where serde wanted a boolean or a
//! number and found text that reads as one, the text is replaced by the value and the
//! configuration decoded again. Text that reads as neither is an error in our words.

use camel_api::definition::StepConfig;
use camel_api::suggest::{nearest, to_snake_case};
use serde::de::DeserializeOwned;
use serde_json::Value as Json;

use crate::error::RouteErrorKind;

/// A decoding failure: the JSON pointer below the configuration, and what is wrong.
pub(crate) type DecodeError = (String, RouteErrorKind);

/// How many keys of one configuration may be written in another spelling (bounds the
/// retries below).
const MAX_RESPELLINGS: usize = 64;

/// Decodes `config` into `T`; `null` counts as an empty map.
///
/// A key serde does not know but whose snake_case form is one it does (`pretty-print`,
/// `PrettyPrint`) is read as that key: every spelling the reader used to normalise is
/// still accepted, while keys of user maps (endpoint parameters) are never touched,
/// since only the configuration's own fields are unknown to serde.
pub(crate) fn decode<T: DeserializeOwned>(config: &Json) -> Result<T, DecodeError> {
    let mut config = if config.is_null() {
        Json::Object(Default::default())
    } else {
        config.clone()
    };
    let mut respelt = 0;
    let mut converted = 0;
    loop {
        let (pointer, kind) = match attempt::<T>(config.clone()) {
            Ok(value) => return Ok(value),
            Err(e) => e,
        };
        if respelt < MAX_RESPELLINGS
            && (respell(&mut config, &pointer, &kind)
                || drop_node_text(&mut config, &pointer, &kind)
                || wrap_language(&mut config, &pointer, &kind))
        {
            respelt += 1;
            continue;
        }
        if let RouteErrorKind::InvalidValue(message) = &kind {
            if converted < MAX_CONVERSIONS
                && EXPRESSION_SHAPE_ERRORS
                    .iter()
                    .any(|e| message.starts_with(e))
                && unwrap_expression(&mut config, &pointer)
            {
                converted += 1;
                continue;
            }
            if let Some(wanted) = Wanted::of(message) {
                if converted < MAX_CONVERSIONS {
                    match convert_text(&mut config, &pointer, wanted) {
                        Conversion::Done => {
                            converted += 1;
                            continue;
                        }
                        Conversion::Unreadable(text) => {
                            return Err((pointer, wanted.refusal(&text)));
                        }
                        Conversion::NotText => {}
                    }
                }
                return Err((pointer, wanted.refusal_of(message)));
            }
        }
        return Err((pointer, kind));
    }
}

/// How many quoted scalars and wrapped expressions of one configuration may be rewritten
/// (bounds the retries).
const MAX_CONVERSIONS: usize = 256;

/// The starts of the errors an expression option (`on_when`, `completion_predicate`,
/// `handled`, …) gives when its language is wrapped in `expression:` (alone, or beside a
/// node `id`).
const EXPRESSION_SHAPE_ERRORS: &[&str] = &[
    "a language with options needs its text under",
    "`expression` takes exactly one language key",
];

/// Camel's `WhenDefinition` and friends write their predicate either as a language key
/// (`onWhen: {simple: …}`) or wrapped (`onWhen: {expression: {simple: …}}`). Options
/// typed as a bare expression read the first form; this turns the second into it, in
/// place. False when the value at `pointer` is not a lone `expression:` holding one
/// language.
fn unwrap_expression(config: &mut Json, pointer: &str) -> bool {
    let Some(slot) = config.pointer_mut(pointer) else {
        return false;
    };
    let Json::Object(map) = slot else {
        return false;
    };
    // Camel's node id and description beside the wrapper name it for tooling.
    let others = map
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "expression" | "id" | "description"))
        .count();
    let inner = match map.get("expression") {
        Some(Json::Object(inner)) if others == 0 && inner.len() == 1 => inner.clone(),
        _ => return false,
    };
    *slot = Json::Object(inner);
    true
}

/// What serde wanted where it found something else.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Wanted {
    Boolean,
    /// A whole number; `signed` when it may be negative.
    Integer {
        signed: bool,
    },
    Decimal,
}

impl Wanted {
    /// Reads serde's "invalid type: …, expected X" (or "invalid value") for the scalar
    /// kinds we convert.
    fn of(message: &str) -> Option<Wanted> {
        let rest = message
            .strip_prefix("invalid type: ")
            .or_else(|| message.strip_prefix("invalid value: "))?;
        let (_, expected) = rest.rsplit_once(", expected ")?;
        Some(match expected.trim() {
            "a boolean" => Wanted::Boolean,
            "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => Wanted::Integer { signed: false },
            "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => Wanted::Integer { signed: true },
            "f32" | "f64" => Wanted::Decimal,
            _ => return None,
        })
    }

    /// The value `text` stands for, if it reads as one.
    fn read(self, text: &str) -> Option<Json> {
        let text = text.trim();
        match self {
            Wanted::Boolean if text.eq_ignore_ascii_case("true") => Some(Json::Bool(true)),
            Wanted::Boolean if text.eq_ignore_ascii_case("false") => Some(Json::Bool(false)),
            Wanted::Boolean => None,
            Wanted::Integer { .. } => text
                .parse::<u64>()
                .map(Json::from)
                .or_else(|_| text.parse::<i64>().map(Json::from))
                .ok(),
            Wanted::Decimal => text
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Json::Number),
        }
    }

    fn what(self) -> &'static str {
        match self {
            Wanted::Boolean => "`true` or `false`",
            Wanted::Integer { signed: false } => "a whole number, 0 or more",
            Wanted::Integer { signed: true } => "a whole number",
            Wanted::Decimal => "a number",
        }
    }

    /// The error for text that reads as no value of this kind.
    fn refusal(self, text: &str) -> RouteErrorKind {
        RouteErrorKind::InvalidValue(format!("`{text}` is not {}", self.what()))
    }

    /// The error for another value of the wrong kind, from serde's message.
    fn refusal_of(self, message: &str) -> RouteErrorKind {
        let found = message
            .split_once(": ")
            .and_then(|(_, rest)| rest.rsplit_once(", expected "))
            .map(|(found, _)| found.to_string())
            .unwrap_or_default();
        RouteErrorKind::InvalidValue(format!("takes {}, not {found}", self.what()))
    }
}

enum Conversion {
    Done,
    /// The value is text that reads as no value of the kind wanted.
    Unreadable(String),
    NotText,
}

/// Replaces the text at `pointer` with the boolean or number it spells.
fn convert_text(config: &mut Json, pointer: &str, wanted: Wanted) -> Conversion {
    let Some(slot) = config.pointer_mut(pointer) else {
        return Conversion::NotText;
    };
    let Json::String(text) = slot else {
        return Conversion::NotText;
    };
    match wanted.read(text) {
        Some(value) => {
            *slot = value;
            Conversion::Done
        }
        None => Conversion::Unreadable(text.clone()),
    }
}

/// Camel's schema gives nearly every node (a step, a `when`, a catch, an error handler, a
/// redelivery policy) a `description` and, since 4.23, a `note`: text for tooling that
/// changes nothing. Where a configuration does not name them, they are dropped, in place.
fn drop_node_text(config: &mut Json, pointer: &str, kind: &RouteErrorKind) -> bool {
    let RouteErrorKind::UnknownKey { key, .. } = kind else {
        return false;
    };
    if !matches!(key.as_str(), "description" | "note") {
        return false;
    }
    let Some(parent) = pointer.strip_suffix(&format!("/{key}")) else {
        return false;
    };
    match config.pointer_mut(parent) {
        Some(Json::Object(map)) if map.get(key).is_some_and(Json::is_string) => {
            map.remove(key);
            true
        }
        _ => false,
    }
}

/// Languages camel-rs has that a step may name beside its options in Camel's YAML DSL
/// (`setBody: {exchangeProperty: name}`) but that are no field of the step
/// configurations (which list the common ones): they are read as
/// `expression: {NAME: …}`, snake_case.
const WRAPPED_LANGUAGES: &[&str] = &["exchange_property"];

/// Moves an unknown key naming one of [`WRAPPED_LANGUAGES`] under `expression`, in place;
/// false when the key is another, or an expression is already given.
fn wrap_language(config: &mut Json, pointer: &str, kind: &RouteErrorKind) -> bool {
    let RouteErrorKind::UnknownKey { key, expected, .. } = kind else {
        return false;
    };
    let language = to_snake_case(key);
    if !WRAPPED_LANGUAGES.contains(&language.as_str())
        || !expected.iter().any(|e| e == "expression")
    {
        return false;
    }
    let Some(parent) = pointer.strip_suffix(&format!("/{key}")) else {
        return false;
    };
    match config.pointer_mut(parent) {
        Some(Json::Object(map)) if !map.contains_key("expression") => match map.remove(key) {
            Some(value) => {
                let mut wrapped = serde_json::Map::new();
                wrapped.insert(language, value);
                map.insert("expression".into(), Json::Object(wrapped));
                true
            }
            None => false,
        },
        _ => false,
    }
}

/// Renames an unknown key to the known key it spells, in place; false when it spells none.
fn respell(config: &mut Json, pointer: &str, kind: &RouteErrorKind) -> bool {
    let RouteErrorKind::UnknownKey { key, expected, .. } = kind else {
        return false;
    };
    let snake = to_snake_case(key);
    let Some(known) = expected.iter().find(|e| to_snake_case(e) == snake) else {
        return false;
    };
    let Some(parent) = pointer.strip_suffix(&format!("/{key}")) else {
        return false;
    };
    match config.pointer_mut(parent) {
        Some(Json::Object(map)) if !map.contains_key(known) => match map.remove(key) {
            Some(value) => {
                map.insert(known.clone(), value);
                true
            }
            None => false,
        },
        _ => false,
    }
}

fn attempt<T: DeserializeOwned>(config: Json) -> Result<T, DecodeError> {
    serde_path_to_error::deserialize::<_, T>(config).map_err(|e| {
        let message = e.inner().to_string();
        let mut pointer = pointer_of(e.path());
        let kind = classify(&message);
        // serde names the map that holds an unknown key; point at the key itself.
        if let RouteErrorKind::UnknownKey { key, expected, .. } = &kind {
            if !pointer.ends_with(&format!("/{key}")) {
                pointer = format!("{pointer}/{key}");
            }
            // A Camel language we lack where an expression goes (`setBody: {groovy: …}`)
            // is not a typo (ADR 0051).
            if expected.iter().any(|e| e == "expression")
                && !WRAPPED_LANGUAGES.contains(&to_snake_case(key).as_str())
            {
                if let Some(message) = crate::model::camel_dsl::unsupported(
                    crate::model::camel_dsl::Kind::Language,
                    &to_snake_case(key),
                ) {
                    return (pointer, RouteErrorKind::InvalidValue(message));
                }
            }
        }
        (pointer, kind)
    })
}

/// Decodes a step's configuration: a map, `null` (no options), or a scalar for steps with
/// a shorthand (`- to: log:x`).
pub(crate) fn decode_step<T: StepConfig>(config: &Json) -> Result<T, DecodeError> {
    let scalar = match config {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        Json::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    match scalar {
        None => decode(config),
        Some(text) => T::from_scalar(&text).ok_or_else(|| {
            (
                String::new(),
                RouteErrorKind::InvalidValue(format!(
                    "`{}` takes a map of options, not `{text}`",
                    T::NAME
                )),
            )
        }),
    }
}

/// The JSON pointer of a serde path (`when[0].steps` → `/when/0/steps`), for locating
/// a decode error in the YAML it came from.
pub fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => pointer.push_str(&format!("/{index}")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
            }
            Segment::Unknown => {}
        }
    }
    pointer
}

/// Turns serde's "unknown field `x`, expected one of `a`, `b`" into a typed unknown-key
/// error with a suggestion; other messages stay as they are.
fn classify(message: &str) -> RouteErrorKind {
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let key = rest.split('`').next().unwrap_or_default().to_string();
        let expected: Vec<String> = rest
            .split_once("expected")
            .map(|(_, list)| {
                list.split('`')
                    .enumerate()
                    .filter(|(i, _)| i % 2 == 1)
                    .map(|(_, s)| s.to_string())
                    .collect()
            })
            .unwrap_or_default();
        let suggestion = nearest(&key, expected.iter().map(String::as_str)).map(str::to_string);
        return RouteErrorKind::UnknownKey {
            key,
            suggestion,
            expected,
        };
    }
    if let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|r| r.split('`').next())
    {
        return RouteErrorKind::Missing(field.to_string());
    }
    RouteErrorKind::InvalidValue(message.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Options {
        #[serde(default, alias = "parallelProcessing")]
        parallel_processing: bool,
        #[serde(default)]
        size: Option<usize>,
        #[serde(default)]
        offset: i32,
        #[serde(default)]
        ratio: f64,
        #[serde(default)]
        nested: Vec<Nested>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Nested {
        flag: bool,
    }

    #[test]
    fn quoted_booleans_and_numbers_are_read_as_values() {
        let o: Options = decode(&json!({
            "parallelProcessing": "true", "size": "2", "offset": " -3 ", "ratio": "0.5",
            "nested": [{"flag": "FALSE"}, {"flag": "true"}],
        }))
        .unwrap();
        assert!(o.parallel_processing);
        assert_eq!(o.size, Some(2));
        assert_eq!(o.offset, -3);
        assert_eq!(o.ratio, 0.5);
        assert_eq!(
            o.nested,
            vec![Nested { flag: false }, Nested { flag: true }]
        );
    }

    #[test]
    fn descriptions_and_notes_are_dropped_where_no_field_names_them() {
        let o: Options = decode(&json!({
            "description": "d", "note": "n", "nested": [{"flag": true, "description": "x"}],
        }))
        .unwrap();
        assert_eq!(o.nested, vec![Nested { flag: true }]);
        // Not text: still refused.
        assert!(decode::<Options>(&json!({"description": {"a": 1}})).is_err());
    }

    #[test]
    fn an_expression_option_may_wrap_its_language_in_expression() {
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Catch {
            #[serde(alias = "onWhen")]
            on_when: camel_api::definition::ExpressionDefinition,
        }
        let c: Catch = decode(&json!({
            "onWhen": {"expression": {"simple": "${header.x} == 1"}, "id": "w"}
        }))
        .unwrap();
        assert_eq!(c.on_when.language, "simple");
        assert_eq!(c.on_when.text, "${header.x} == 1");
        // Two languages in the wrapper stay an error.
        assert!(decode::<Catch>(&json!({
            "onWhen": {"expression": {"simple": "a", "constant": "b"}}
        }))
        .is_err());
    }

    #[test]
    fn text_that_is_no_value_is_a_located_error_in_our_words() {
        let (at, kind) = decode::<Options>(&json!({"size": "two"})).unwrap_err();
        assert_eq!(at, "/size");
        assert_eq!(
            kind.to_string(),
            RouteErrorKind::InvalidValue("`two` is not a whole number, 0 or more".into())
                .to_string()
        );
        let (at, kind) = decode::<Options>(&json!({"nested": [{"flag": "yes"}]})).unwrap_err();
        assert_eq!(at, "/nested/0/flag");
        assert!(
            kind.to_string().contains("`yes` is not `true` or `false`"),
            "{kind}"
        );
        let (_, kind) = decode::<Options>(&json!({"size": -1})).unwrap_err();
        assert!(!kind.to_string().contains("expected"), "{kind}");
        assert!(kind.to_string().contains("takes a whole number"), "{kind}");
    }
}
