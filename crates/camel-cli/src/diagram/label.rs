//! The text on a node: a step's name and main argument, and the settings worth seeing.
//! Every URI loses its credentials (`camel_api::redact_url`) and every option that names
//! a secret shows `***`: diagrams end up in READMEs and browsers.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::graph::field;

/// Longest text on one line of a node.
const MAX_LINE: usize = 60;
/// Most setting lines under a node's title.
const MAX_DETAIL: usize = 6;

/// `text` cut to [`MAX_LINE`] characters, with `…` when cut.
pub(crate) fn short(text: &str) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() <= MAX_LINE {
        one_line
    } else {
        let cut: String = one_line.chars().take(MAX_LINE - 1).collect();
        format!("{cut}…")
    }
}

/// The scheme of a URI (`timer` of `timer:tick?period=1`), lower case.
pub(crate) fn scheme(uri: &str) -> String {
    uri.split(':').next().unwrap_or("").to_ascii_lowercase()
}

/// The part of a URI after its scheme, without the query (`orders` of `outbox:orders`).
pub(crate) fn path_of(uri: &str) -> String {
    let rest = uri.split_once(':').map_or(uri, |(_, r)| r);
    without_query(rest.trim_start_matches("//"))
}

pub(crate) fn without_query(uri: &str) -> String {
    uri.split('?').next().unwrap_or("").to_string()
}

fn scalar_text(v: &Json) -> Option<String> {
    match v {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        Json::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The URI with the parameters written beside it merged into its query, credentials
/// hidden; parameters beside the URI win, as they do when the endpoint is made.
pub(crate) fn uri_with_parameters(uri: &str, parameters: &BTreeMap<String, Json>) -> String {
    let mut query: BTreeMap<String, String> = BTreeMap::new();
    let (head, q) = uri.split_once('?').unwrap_or((uri, ""));
    for pair in q.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        query.insert(k.to_string(), v.to_string());
    }
    for (k, v) in parameters {
        query.insert(k.clone(), scalar_text(v).unwrap_or_else(|| v.to_string()));
    }
    let mut out = head.to_string();
    for (i, (k, v)) in query.iter().enumerate() {
        out.push(if i == 0 { '?' } else { '&' });
        out.push_str(k);
        out.push('=');
        if camel_api::is_secret_name(k) {
            out.push_str("***");
        } else {
            out.push_str(v);
        }
    }
    camel_api::redact_url(&out)
}

/// The query options of a (merged, redacted) URI as `name=value` lines.
pub(crate) fn settings(uri: &str) -> Vec<String> {
    let Some((_, q)) = uri.split_once('?') else {
        return Vec::new();
    };
    let mut lines: Vec<String> = q.split('&').filter(|p| !p.is_empty()).map(short).collect();
    cap(&mut lines);
    lines
}

fn cap(lines: &mut Vec<String>) {
    if lines.len() > MAX_DETAIL {
        let more = lines.len() - (MAX_DETAIL - 1);
        lines.truncate(MAX_DETAIL - 1);
        lines.push(format!("… {more} more"));
    }
}

/// The scalar options of a map as `name=value` lines (secrets hidden, nested steps and
/// maps left out).
pub(crate) fn scalars(config: &Json) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(map) = config.as_object() {
        for (k, v) in map {
            if k == "id" || k == "steps" || k == "description" {
                continue;
            }
            if let Some(text) = scalar_text(v) {
                let shown = if camel_api::is_secret_name(k) {
                    "***".to_string()
                } else {
                    camel_api::redact_url(&text)
                };
                lines.push(short(&format!("{k}={shown}")));
            }
        }
    }
    cap(&mut lines);
    lines
}

/// The text of an expression held by `holder`: `{simple: "…"}`, `{expression: {simple: …}}`,
/// `{jq: {expression: "…"}}`, a bare string.
pub(crate) fn expression(holder: &Json) -> Option<String> {
    match holder {
        Json::String(s) => Some(s.clone()),
        Json::Object(map) => {
            for (k, v) in map {
                if matches!(k.as_str(), "steps" | "id" | "name" | "description") {
                    continue;
                }
                if is_language(k) {
                    if let Some(text) = scalar_text(v) {
                        return Some(text);
                    }
                }
                if let Json::Object(_) = v {
                    if k == "expression" || is_language(k) {
                        if let Some(inner) = expression(v) {
                            return Some(inner);
                        }
                    }
                }
            }
            None
        }
        _ => None,
    }
}

fn is_language(key: &str) -> bool {
    matches!(
        key,
        "simple"
            | "constant"
            | "header"
            | "jsonpath"
            | "json_path"
            | "jsonPath"
            | "jq"
            | "xpath"
            | "tokenize"
            | "exchange_property"
            | "exchangeProperty"
            | "variable"
            | "expression"
            | "groovy"
            | "method"
            | "ref"
    )
}

/// The exceptions a `do_catch` or `on_exception` names, comma-separated (`any` if none).
pub(crate) fn exceptions(holder: &Json) -> String {
    let names: Vec<String> = field(holder.as_object(), "exception")
        .map(|v| match v {
            Json::Array(items) => items.iter().filter_map(scalar_text).collect(),
            other => scalar_text(other).into_iter().collect(),
        })
        .unwrap_or_default();
    if names.is_empty() {
        "any".into()
    } else {
        short(&names.join(", "))
    }
}

/// A step's title and detail lines.
pub(crate) fn step(name: &str, config: &Json) -> (String, Vec<String>) {
    match name {
        "to" | "to_d" | "wire_tap" | "in_only" | "in_out" | "enrich" | "poll_enrich" => {
            let (uri, params) = match config {
                Json::String(s) => (s.clone(), BTreeMap::new()),
                other => {
                    let map = other.as_object();
                    let uri = field(map, "uri").and_then(scalar_text).unwrap_or_default();
                    let params = field(map, "parameters")
                        .and_then(Json::as_object)
                        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                        .unwrap_or_default();
                    (uri, params)
                }
            };
            let full = uri_with_parameters(&uri, &params);
            let title = match scheme(&uri).as_str() {
                "outbox" if name == "to" => format!("outbox publish {}", path_of(&uri)),
                _ => format!("{name} {}", short(&without_query(&full))),
            };
            (title, settings(&full))
        }
        "resequence" => resequence(config),
        "log" => {
            let message = expression(config)
                .or_else(|| field(config.as_object(), "message").and_then(scalar_text))
                .unwrap_or_default();
            (short(&format!("log {message}")), Vec::new())
        }
        "set_header" | "set_property" | "set_variable" | "set_exchange_property" => {
            let target = field(config.as_object(), "name")
                .and_then(scalar_text)
                .unwrap_or_default();
            let value = expression(config).unwrap_or_default();
            (short(&format!("{name} {target} = {value}")), Vec::new())
        }
        _ => {
            let main = expression(config);
            let title = match (config, main) {
                (Json::String(s), _) => short(&format!("{name} {s}")),
                (_, Some(e)) => short(&format!("{name} {e}")),
                _ => name.to_string(),
            };
            let detail = scalars(config)
                .into_iter()
                .filter(|line| !is_language(line.split('=').next().unwrap_or("")))
                .collect();
            (title, detail)
        }
    }
}

/// The resequencer's policy and every setting, defaults included, as the compiler reads
/// them (the typed configuration decodes the step, then shows itself).
fn resequence(config: &Json) -> (String, Vec<String>) {
    let typed = serde_json::from_value::<camel_eip::config::Resequence>(config.clone())
        .ok()
        .and_then(|r| serde_json::to_value(&r).ok());
    let shown = typed.as_ref().unwrap_or(config);
    let Some(map) = shown.as_object() else {
        return ("resequence".into(), Vec::new());
    };
    let mut title = "resequence".to_string();
    let mut detail = Vec::new();
    for (k, v) in map {
        match v {
            Json::Object(inner)
                if matches!(
                    k.as_str(),
                    "stream"
                        | "batch"
                        | "stream_config"
                        | "batch_config"
                        | "streamConfig"
                        | "batchConfig"
                ) =>
            {
                let policy = if k.starts_with("stream") {
                    "stream"
                } else {
                    "batch"
                };
                title = format!("resequence · {policy} policy");
                for (ik, iv) in inner {
                    if let Some(t) = scalar_text(iv) {
                        detail.push(short(&format!("{ik}={t}")));
                    }
                }
            }
            // The policy's own settings and what a swap does; the channel sizes are
            // tuning, not policy.
            other if matches!(k.as_str(), "on_swap" | "dead_letter_uri") => {
                if let Some(t) = scalar_text(other) {
                    detail.push(short(&format!("{k}={}", camel_api::redact_url(&t))));
                }
            }
            _ => {}
        }
    }
    // Every setting: the policy is what this node is for.
    (title, detail)
}

/// The error handler's title and settings.
pub(crate) fn error_handler(json: &Json) -> (String, Vec<String>) {
    let Some((kind, inner)) = json.as_object().and_then(|m| m.iter().next()) else {
        return ("error handler".into(), Vec::new());
    };
    let uri = field(inner.as_object(), "dead_letter_uri")
        .or_else(|| field(inner.as_object(), "uri"))
        .and_then(scalar_text);
    let title = match uri {
        Some(u) => short(&format!("{kind} → {}", camel_api::redact_url(&u))),
        None => kind.clone(),
    };
    let mut detail = scalars(inner);
    if let Some(policy) = field(inner.as_object(), "redelivery_policy") {
        detail.extend(scalars(policy));
    }
    detail.retain(|l| !l.starts_with("dead_letter_uri="));
    cap(&mut detail);
    (title, detail)
}

/// An `on_exception` clause's title and settings.
pub(crate) fn on_exception(json: &Json) -> (String, Vec<String>) {
    let title = format!("on_exception {}", exceptions(json));
    let mut detail = scalars(json);
    let map = json.as_object();
    for key in ["handled", "continued"] {
        if let Some(e) = field(map, key).and_then(expression) {
            detail.push(short(&format!("{key}: {e}")));
        }
    }
    if let Some(policy) = field(map, "redelivery_policy") {
        detail.extend(scalars(policy));
    }
    cap(&mut detail);
    (short(&title), detail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_uri_loses_its_credentials_and_secret_options() {
        let params = BTreeMap::from([("password".to_string(), json!("hunter2"))]);
        let uri = uri_with_parameters("sql:select 1?datasource=postgres://u:pw@h/db", &params);
        assert!(!uri.contains("hunter2"), "{uri}");
        assert!(!uri.contains(":pw@"), "{uri}");
    }

    #[test]
    fn long_text_is_cut_and_kept_on_one_line() {
        let t = short(&format!("a\nb{}", "x".repeat(200)));
        assert!(t.chars().count() <= MAX_LINE && t.ends_with('…') && !t.contains('\n'));
    }

    #[test]
    fn a_stream_resequencer_shows_its_policy_with_defaults() {
        let (title, detail) = step(
            "resequence",
            &json!({"stream": {"sequence": "${header.seq}"}}),
        );
        assert_eq!(title, "resequence · stream policy");
        assert!(
            detail.iter().any(|l| l.starts_with("capacity=")),
            "{detail:?}"
        );
    }
}
