//! Camel's jq functions that read the exchange: `header("name")`, `property("name")` and
//! `variable("name")`, each also with a default (`header("name"; "none")`).
//!
//! jaq's functions see only their input, so each call with a literal name is rewritten,
//! before the filter is compiled, into a global variable (`$__camel_0`) whose value is
//! read from the exchange on every run: `(NAME; DEFAULT)` becomes `($__camel_0 //
//! (DEFAULT))`. A call whose name is not a literal text stays as written and is refused
//! as an undefined filter.

use camel_api::variables::Variable;
use camel_api::Exchange;
use jaq_json::Val;

use crate::source::Source;

/// The exchange functions found in a filter, in the order of their variables.
#[derive(Debug, Default)]
pub(super) struct ExchangeReads {
    reads: Vec<Source>,
}

impl ExchangeReads {
    /// The names of the global variables, for jaq's compiler.
    pub(super) fn names(&self) -> Vec<String> {
        (0..self.reads.len()).map(var).collect()
    }

    /// The value of each variable on `exchange` (null when unset, or without one).
    pub(super) fn values(&self, exchange: Option<&Exchange>) -> Vec<Val> {
        self.reads
            .iter()
            .map(|read| {
                let Some(value) = exchange.and_then(|e| read.value(e)) else {
                    return Val::Null;
                };
                let json = serde_json::to_vec(&value.to_json()).unwrap_or_default();
                jaq_json::read::parse_single(&json).unwrap_or(Val::Null)
            })
            .collect()
    }
}

fn var(i: usize) -> String {
    format!("$__camel_{i}")
}

/// `text` with each exchange function of a literal name replaced by its variable.
pub(super) fn rewrite(text: &str) -> (String, ExchangeReads) {
    let mut reads = ExchangeReads::default();
    if !["header", "property", "variable"]
        .iter()
        .any(|f| text.contains(&format!("{f}(")))
    {
        return (text.to_string(), reads);
    }
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let boundary = text[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '_' | '$' | '.' | '"')));
        let call = boundary
            .then(|| {
                ["header", "property", "variable"]
                    .into_iter()
                    .find(|f| rest.starts_with(&format!("{f}(")))
            })
            .flatten()
            .and_then(|f| call_at(rest, f).map(|c| (f, c)));
        match call {
            Some((function, (name, default, len))) => {
                let source = match function {
                    "header" => Some(Source::Header(name.into())),
                    "property" => Some(Source::Property(name.into())),
                    _ => Variable::parse(&name).ok().map(Source::Variable),
                };
                let Some(source) = source else {
                    out.push_str(&rest[..len]);
                    i += len;
                    continue;
                };
                let v = var(reads.reads.len());
                reads.reads.push(source);
                match default {
                    Some(d) => out.push_str(&format!("({v} // ({d}))")),
                    None => out.push_str(&v),
                }
                i += len;
            }
            None => {
                let c = rest.chars().next().unwrap_or_default();
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    (out, reads)
}

/// `function("name")` or `function("name"; default)` at the start of `text`: the name,
/// the default's text and the length of the call.
fn call_at(text: &str, function: &str) -> Option<(String, Option<String>, usize)> {
    let after = &text[function.len() + 1..];
    let trimmed = after.trim_start();
    let lead = after.len() - trimmed.len();
    let inner = trimmed.strip_prefix('"')?;
    let close = inner.find('"')?;
    let name = &inner[..close];
    if name.contains('\\') || name.is_empty() {
        return None;
    }
    let past_name = function.len() + 1 + lead + close + 2;
    let tail = &text[past_name..];
    let t = tail.trim_start();
    let skipped = tail.len() - t.len();
    if t.starts_with(')') {
        return Some((name.to_string(), None, past_name + skipped + 1));
    }
    let default = t.strip_prefix(';')?;
    let end = closing_paren(default)?;
    let text_of_default = default[..end].trim();
    if text_of_default.is_empty() {
        return None;
    }
    Some((
        name.to_string(),
        Some(text_of_default.to_string()),
        past_name + skipped + 1 + end + 1,
    ))
}

/// The offset of the `)` closing a list that starts `text` (jq strings and nested
/// parentheses skipped).
fn closing_paren(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '(' | '[' | '{' => depth += 1,
            ')' if depth == 0 => return Some(i),
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    #[test]
    fn literal_names_become_variables() {
        let (text, reads) = rewrite(r#"(variable("a") | fromjson) + [header("b"; "x")]"#);
        assert_eq!(text, r#"($__camel_0 | fromjson) + [($__camel_1 // ("x"))]"#);
        assert_eq!(reads.names(), ["$__camel_0", "$__camel_1"]);
        let (text, reads) = rewrite(r#".header(.x) | .property | "header(\"a\")""#);
        assert_eq!(text, r#".header(.x) | .property | "header(\"a\")""#);
        assert!(reads.names().is_empty());
    }
}
