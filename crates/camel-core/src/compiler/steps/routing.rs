//! `filter` and `choice`.

use camel_api::BoxProcessor;
use serde_json::Value as Json;

use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};

const PREDICATE_KEYS: &[&str] = &[
    "expression",
    "simple",
    "jsonpath",
    "header",
    "constant",
    "steps",
];

/// `filter: {simple: "...", steps: [...]}`.
pub(super) fn filter(config: &Json, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    let mut map = cx.object(config)?;
    let steps = map.remove("steps").unwrap_or(Json::Null);
    let predicate = cx.take_predicate(&mut map)?;
    cx.no_more_keys(&map, PREDICATE_KEYS)?;
    let steps = cx.compile_steps(&steps, "/steps")?;
    Ok(camel_eip::filter::filter(predicate, steps))
}

/// `choice: {when: [{simple: "...", steps: [...]}, …], otherwise: {steps: [...]}}`.
pub(super) fn choice(config: &Json, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    let mut map = cx.object(config)?;
    let whens = match map.remove("when") {
        Some(Json::Array(items)) => items,
        Some(_) => {
            return Err(cx.error_at(
                "/when",
                RouteErrorKind::InvalidValue("`when` takes a list".into()),
            ))
        }
        None => return Err(cx.error(RouteErrorKind::Missing("when".into()))),
    };
    let otherwise = map.remove("otherwise");
    cx.no_more_keys(&map, &["when", "otherwise"])?;
    let mut branches = Vec::with_capacity(whens.len());
    for (i, when) in whens.iter().enumerate() {
        let at = format!("/when/{i}");
        let mut when_map = match when {
            Json::Object(m) => m.clone(),
            _ => {
                return Err(cx.error_at(
                    &at,
                    RouteErrorKind::InvalidValue(
                        "a `when` is a map with a predicate and `steps`".into(),
                    ),
                ))
            }
        };
        let steps = when_map.remove("steps").unwrap_or(Json::Null);
        let predicate = cx.take_predicate(&mut when_map).map_err(|mut e| {
            if e.location.is_none() {
                e = e.at(None);
            }
            e
        })?;
        if let Some(key) = when_map.keys().next() {
            return Err(cx.error_at(
                &format!("{at}/{key}"),
                RouteErrorKind::UnknownKey {
                    key: key.clone(),
                    suggestion: camel_api::suggest::nearest(key, PREDICATE_KEYS.iter().copied())
                        .map(str::to_string),
                    expected: PREDICATE_KEYS.iter().map(|s| s.to_string()).collect(),
                },
            ));
        }
        let steps = cx.compile_steps(&steps, &format!("{at}/steps"))?;
        branches.push((predicate, steps));
    }
    let otherwise = match otherwise {
        None | Some(Json::Null) => None,
        Some(Json::Object(mut m)) => {
            let steps = m.remove("steps").unwrap_or(Json::Null);
            if let Some(key) = m.keys().next() {
                return Err(cx.error_at(
                    &format!("/otherwise/{key}"),
                    RouteErrorKind::UnknownKey {
                        key: key.clone(),
                        suggestion: camel_api::suggest::nearest(key, ["steps"]).map(str::to_string),
                        expected: vec!["steps".into()],
                    },
                ));
            }
            Some(cx.compile_steps(&steps, "/otherwise/steps")?)
        }
        Some(list @ Json::Array(_)) => Some(cx.compile_steps(&list, "/otherwise")?),
        Some(_) => {
            return Err(cx.error_at(
                "/otherwise",
                RouteErrorKind::InvalidValue("`otherwise` takes `{steps: [...]}`".into()),
            ))
        }
    };
    Ok(camel_eip::choice::choice(branches, otherwise))
}
