//! Typed decoding of step configurations with errors that point at the offending key.
//!
//! Every step's options go through its [`StepConfig`] here: serde does the parsing, this
//! module turns serde's messages into located [`RouteErrorKind`]s (an unknown key names the
//! nearest known one).

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
    loop {
        let (pointer, kind) = match attempt::<T>(config.clone()) {
            Ok(value) => return Ok(value),
            Err(e) => e,
        };
        if respelt < MAX_RESPELLINGS && respell(&mut config, &pointer, &kind) {
            respelt += 1;
            continue;
        }
        return Err((pointer, kind));
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
            if expected.iter().any(|e| e == "expression") {
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

/// The JSON pointer of a serde path (`when[0].steps` → `/when/0/steps`).
fn pointer_of(path: &serde_path_to_error::Path) -> String {
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
