//! Camel's `clientRequestValidation`: before an operation's request is routed, it is
//! checked against the operation, and a request that does not fit is answered at once.
//!
//! | check | answer |
//! |---|---|
//! | `Content-Type` given, the body is not empty, and it is none of `consumes` | 415 |
//! | `Accept` given and none of its types is one of `produces` | 406 |
//! | a `required` query or header `param` missing | 400 |
//! | a `required` `body` param and an empty body | 400 |
//!
//! The check is the operation route's first step, `rest_request_validation`, made by the
//! REST expansion; its answer is the exchange stopped with `CamelHttpResponseCode`.

use camel_api::definition::StepConfig;
use camel_api::{Body, BoxProcessor, Exchange};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::VerbDefinition;
use crate::model::StepDefinition;

/// What one operation's requests are checked against.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RequestValidation {
    /// The accepted media types, comma-separated.
    pub consumes: Option<String>,
    /// The produced media types, comma-separated.
    pub produces: Option<String>,
    /// Query parameters that must be given.
    pub query: Vec<String>,
    /// Headers that must be given.
    pub headers: Vec<String>,
    /// The body must not be empty.
    pub body: bool,
}

impl StepConfig for RequestValidation {
    const NAME: &'static str = "rest_request_validation";
}

/// The validation step of `op`.
pub(crate) fn step(
    op: &VerbDefinition,
    consumes: Option<&str>,
    produces: Option<&str>,
) -> StepDefinition {
    let required = |kind: &str| -> Vec<String> {
        op.param
            .iter()
            .filter(|p| p.required == Some(true) && p.kind.as_deref() == Some(kind))
            .map(|p| p.name.clone())
            .collect()
    };
    let config = RequestValidation {
        consumes: consumes.map(str::to_string),
        produces: produces.map(str::to_string),
        query: required("query"),
        headers: required("header"),
        body: !required("body").is_empty(),
    };
    StepDefinition::new(
        RequestValidation::NAME,
        serde_json::to_value(config).unwrap_or_else(|_| json!({})),
    )
}

/// The processor of a [`RequestValidation`].
pub fn processor(config: RequestValidation) -> BoxProcessor {
    let consumes = media_list(config.consumes.as_deref());
    let produces = media_list(config.produces.as_deref());
    BoxProcessor::sync_in_place(move |ex: &mut Exchange| {
        if let Some((code, why)) = refusal(ex, &config, &consumes, &produces) {
            ex.message.headers.insert("CamelHttpResponseCode", code);
            ex.message.headers.insert("Content-Type", "text/plain");
            ex.message.body = Body::from(why);
            ex.stop();
        }
        Ok(())
    })
    .named("rest_request_validation")
}

fn refusal(
    ex: &Exchange,
    config: &RequestValidation,
    consumes: &[String],
    produces: &[String],
) -> Option<(i64, String)> {
    let text = |name: &str| ex.header(name).map(|v| v.to_string());
    #[allow(unreachable_patterns)]
    let body_empty = match &ex.message.body {
        Body::Empty => true,
        Body::Text(t) => t.is_empty(),
        Body::Bytes(b) => b.is_empty(),
        _ => false,
    };
    if let Some(content_type) = text("Content-Type") {
        if !consumes.is_empty() && !body_empty && !accepts(consumes, &content_type) {
            return Some((415, format!("Unsupported Media Type: {content_type}")));
        }
    }
    if let Some(accept) = text("Accept") {
        let wanted: Vec<&str> = accept.split(',').collect();
        if !produces.is_empty() && !wanted.iter().any(|w| accepts(produces, w)) {
            return Some((406, format!("Not Acceptable: {accept}")));
        }
    }
    let missing: Vec<&str> = config
        .query
        .iter()
        .chain(&config.headers)
        .filter(|name| ex.header(name).is_none())
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        return Some((
            400,
            format!(
                "Some of the required parameters are missing: {}",
                missing.join(", ")
            ),
        ));
    }
    if config.body && body_empty {
        return Some((400, "The request body is missing.".into()));
    }
    None
}

fn media_list(text: Option<&str>) -> Vec<String> {
    text.unwrap_or_default()
        .split(',')
        .map(media_type)
        .filter(|m| !m.is_empty())
        .collect()
}

/// `text/plain; charset=utf-8` → `text/plain`.
fn media_type(text: &str) -> String {
    text.split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// True when `given` (one media type, possibly with wildcards) fits one of `allowed`.
fn accepts(allowed: &[String], given: &str) -> bool {
    let given = media_type(given);
    let fits = |a: &str, b: &str| {
        let (a_type, a_sub) = a.split_once('/').unwrap_or((a, "*"));
        let (b_type, b_sub) = b.split_once('/').unwrap_or((b, "*"));
        (a_type == "*" || b_type == "*" || a_type == b_type)
            && (a_sub == "*" || b_sub == "*" || a_sub == b_sub)
    };
    allowed.iter().any(|a| fits(a, &given))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(config: RequestValidation, ex: Exchange) -> Option<i64> {
        let consumes = media_list(config.consumes.as_deref());
        let produces = media_list(config.produces.as_deref());
        refusal(&ex, &config, &consumes, &produces).map(|(c, _)| c)
    }

    #[test]
    fn media_types_parameters_and_body() {
        let json_only = RequestValidation {
            consumes: Some("application/json".into()),
            produces: Some("application/json".into()),
            query: vec!["q".into()],
            ..Default::default()
        };
        let mut ex = Exchange::new("{}");
        ex.message.headers.insert("q", "x");
        ex.message
            .headers
            .insert("Content-Type", "application/json; charset=utf-8");
        ex.message.headers.insert("Accept", "text/html, */*");
        assert_eq!(check(json_only.clone(), ex.clone()), None);
        let mut xml = ex.clone();
        xml.message
            .headers
            .insert("Content-Type", "application/xml");
        assert_eq!(check(json_only.clone(), xml), Some(415));
        let mut html = ex.clone();
        html.message.headers.insert("Accept", "text/html");
        assert_eq!(check(json_only.clone(), html), Some(406));
        let mut no_q = ex.clone();
        no_q.message.headers.remove("q");
        assert_eq!(check(json_only, no_q), Some(400));
        let body = RequestValidation {
            body: true,
            ..Default::default()
        };
        assert_eq!(check(body, Exchange::new("")), Some(400));
    }
}
