//! The `tokenize` language: cuts the body (or a header, property or variable) into parts,
//! the expression Camel's `split` uses most. The result is a JSON array of texts.
//!
//! Camel writes the token as `token` (`tokenize: {token: ","}`); the expression text is
//! the token. Options (snake_case or Camel's camelCase):
//!
//! | Option | Default | Meaning |
//! |---|---|---|
//! | `regex` | `false` | The token is a regular expression. |
//! | `end_token` | — | Take what lies between `token` and `end_token` instead. |
//! | `include_tokens` | `false` | With `end_token`, keep both tokens in each part. |
//! | `group` | — | Join every N parts into one, with `group_delimiter`. |
//! | `group_delimiter` | the token | What joins grouped parts. |
//! | `skip_first` | `false` | Drop the first part (a header line). |
//! | `source` | the body | `header:NAME`, `property:NAME` or `variable:NAME`. |
//!
//! A predicate holds when there is at least one part.
//!
//! ```
//! use camel_api::{Exchange, Value};
//! use camel_language::tokenize;
//!
//! let parts = tokenize(",").unwrap().evaluate(&Exchange::new("a,b,c")).unwrap();
//! assert_eq!(parts.to_json(), serde_json::json!(["a", "b", "c"]));
//! ```

use std::sync::Arc;

use camel_api::{
    BoxExpression, BoxPredicate, CamelError, Exchange, Expression, ExpressionError, Language,
    Predicate, Value,
};
use regex::Regex;

use crate::options::{bool_option, reject_options, Options};
use crate::problem::located;

const LANGUAGE: &str = "tokenize";
const REGEX: (&str, &str) = ("regex", "regex");
const END_TOKEN: (&str, &str) = ("end_token", "endToken");
const INCLUDE_TOKENS: (&str, &str) = ("include_tokens", "includeTokens");
const GROUP: (&str, &str) = ("group", "group");
const GROUP_DELIMITER: (&str, &str) = ("group_delimiter", "groupDelimiter");
const SKIP_FIRST: (&str, &str) = ("skip_first", "skipFirst");
const SOURCE: (&str, &str) = ("source", "source");
const TOKEN: (&str, &str) = ("token", "token");
const KNOWN: &[(&str, &str)] = &[
    REGEX,
    END_TOKEN,
    INCLUDE_TOKENS,
    GROUP,
    GROUP_DELIMITER,
    SKIP_FIRST,
    SOURCE,
    TOKEN,
];

/// Compiles a tokenizer that cuts the body at `token`.
pub fn tokenize(token: &str) -> Result<BoxExpression, ExpressionError> {
    Ok(Arc::new(compile(token, &Options::new())?))
}

#[derive(Debug)]
enum Cut {
    Text(String),
    Pattern(Regex),
    Between {
        start: String,
        end: String,
        include: bool,
    },
}

#[derive(Debug)]
enum Source {
    Body,
    Header(String),
    Property(String),
    Variable(String),
}

#[derive(Debug)]
struct Tokenizer {
    cut: Cut,
    group: Option<usize>,
    group_delimiter: String,
    skip_first: bool,
    source: Source,
}

fn text_option(options: &Options, (snake, camel): (&str, &str)) -> Option<String> {
    options
        .get(snake)
        .or_else(|| options.get(camel))
        .map(|v| match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
}

fn compile(text: &str, options: &Options) -> Result<Tokenizer, ExpressionError> {
    if options.contains_key("xml") || options.contains_key("inherit_namespace_tag_name") {
        return Err(located(
            LANGUAGE,
            text,
            0,
            "XML tokenizing is not supported: split XML with a Rust processor",
        ));
    }
    reject_options(LANGUAGE, text, options, KNOWN)?;
    // Camel puts the token under `token`; a text given as the expression is the token too.
    let token = text_option(options, TOKEN).unwrap_or_else(|| text.to_string());
    if token.is_empty() {
        return Err(located(LANGUAGE, text, 0, "the token is empty"));
    }
    let cut = if let Some(end) = text_option(options, END_TOKEN) {
        Cut::Between {
            start: token.clone(),
            end,
            include: bool_option(LANGUAGE, text, options, INCLUDE_TOKENS)?,
        }
    } else if bool_option(LANGUAGE, text, options, REGEX)? {
        Cut::Pattern(
            Regex::new(&token)
                .map_err(|e| located(LANGUAGE, text, 0, format!("bad regular expression: {e}")))?,
        )
    } else {
        Cut::Text(token.clone())
    };
    let group = match text_option(options, GROUP) {
        None => None,
        Some(g) => match g.trim().parse::<usize>() {
            Ok(n) if n > 0 => Some(n),
            _ => {
                return Err(located(
                    LANGUAGE,
                    text,
                    0,
                    format!("option `group` must be a positive number, got `{g}`"),
                ))
            }
        },
    };
    let source = match text_option(options, SOURCE) {
        None => Source::Body,
        Some(s) => match s.split_once(':') {
            Some(("header", n)) => Source::Header(n.to_string()),
            Some(("property", n)) => Source::Property(n.to_string()),
            Some(("variable", n)) => Source::Variable(n.to_string()),
            _ if s == "body" => Source::Body,
            _ => {
                return Err(located(
                    LANGUAGE,
                    text,
                    0,
                    format!(
                        "option `source` is `header:NAME`, `property:NAME` or \
                         `variable:NAME`, got `{s}`"
                    ),
                ))
            }
        },
    };
    Ok(Tokenizer {
        cut,
        group,
        group_delimiter: text_option(options, GROUP_DELIMITER).unwrap_or(token),
        skip_first: bool_option(LANGUAGE, text, options, SKIP_FIRST)?,
        source,
    })
}

impl Tokenizer {
    fn input(&self, exchange: &Exchange) -> Option<String> {
        let value = match &self.source {
            Source::Body => return exchange.message.body.as_text().map(|t| t.to_string()),
            Source::Header(n) => exchange.header(n),
            Source::Property(n) => exchange.property(n),
            Source::Variable(n) => exchange.variable(n),
        };
        match value? {
            Value::Null => None,
            v => Some(
                v.as_utf8_text()
                    .map_or_else(|| v.to_string(), str::to_string),
            ),
        }
    }

    fn parts(&self, exchange: &Exchange) -> Result<Vec<String>, CamelError> {
        let Some(input) = self.input(exchange) else {
            return Ok(Vec::new());
        };
        let mut parts: Vec<String> = match &self.cut {
            Cut::Text(t) => input.split(t.as_str()).map(str::to_string).collect(),
            Cut::Pattern(r) => r.split(&input).map(str::to_string).collect(),
            Cut::Between {
                start,
                end,
                include,
            } => {
                let mut found = Vec::new();
                let mut rest = input.as_str();
                while let Some(s) = rest.find(start.as_str()) {
                    let after = &rest[s + start.len()..];
                    let Some(e) = after.find(end.as_str()) else {
                        break;
                    };
                    let inner = &after[..e];
                    found.push(if *include {
                        format!("{start}{inner}{end}")
                    } else {
                        inner.to_string()
                    });
                    rest = &after[e + end.len()..];
                }
                found
            }
        };
        // A trailing token (`a,b,`) leaves no empty last part, as in Camel.
        if matches!(self.cut, Cut::Text(_) | Cut::Pattern(_))
            && parts.last().is_some_and(String::is_empty)
        {
            parts.pop();
        }
        if self.skip_first && !parts.is_empty() {
            parts.remove(0);
        }
        if let Some(n) = self.group {
            parts = parts
                .chunks(n)
                .map(|c| c.join(&self.group_delimiter))
                .collect();
        }
        Ok(parts)
    }
}

impl Expression for Tokenizer {
    fn evaluate(&self, exchange: &Exchange) -> Result<Value, CamelError> {
        let parts = self.parts(exchange)?;
        Ok(Value::Json(Arc::new(serde_json::Value::Array(
            parts.into_iter().map(serde_json::Value::String).collect(),
        ))))
    }
}

impl Predicate for Tokenizer {
    fn matches(&self, exchange: &Exchange) -> Result<bool, CamelError> {
        Ok(!self.parts(exchange)?.is_empty())
    }
}

/// The `tokenize` language for a [`crate::LanguageRegistry`]; options in the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct TokenizeLanguage;

impl Language for TokenizeLanguage {
    fn name(&self) -> &'static str {
        LANGUAGE
    }

    fn expression(&self, text: &str, options: &Options) -> Result<BoxExpression, ExpressionError> {
        Ok(Arc::new(compile(text, options)?))
    }

    fn predicate(&self, text: &str, options: &Options) -> Result<BoxPredicate, ExpressionError> {
        Ok(Arc::new(compile(text, options)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(text: &str, options: serde_json::Value, body: &str) -> serde_json::Value {
        let options = options.as_object().cloned().unwrap_or_default();
        TokenizeLanguage
            .expression(text, &options)
            .unwrap()
            .evaluate(&Exchange::new(body))
            .unwrap()
            .to_json()
    }

    #[test]
    fn cuts_by_text_regex_and_between_tokens() {
        assert_eq!(run(",", json!({}), "a,b,c,"), json!(["a", "b", "c"]));
        assert_eq!(run("", json!({"token": "\n"}), "x\ny"), json!(["x", "y"]));
        assert_eq!(
            run("\\s*;\\s*", json!({"regex": true}), "a ; b;c"),
            json!(["a", "b", "c"])
        );
        assert_eq!(
            run(
                "<i>",
                json!({"endToken": "</i>"}),
                "<l><i>1</i><i>2</i></l>"
            ),
            json!(["1", "2"])
        );
        assert_eq!(
            run(
                "<i>",
                json!({"end_token": "</i>", "includeTokens": true}),
                "<i>1</i>"
            ),
            json!(["<i>1</i>"])
        );
    }

    #[test]
    fn groups_skips_and_sources() {
        assert_eq!(
            run("\n", json!({"group": 2, "skipFirst": true}), "h\n1\n2\n3"),
            json!(["1\n2", "3"])
        );
        assert_eq!(
            run(",", json!({"group": "2", "groupDelimiter": ";"}), "1,2,3"),
            json!(["1;2", "3"])
        );
        let ex = Exchange::new("ignored").with_header("ids", "4 5");
        let mut o = Options::new();
        o.insert("source".into(), "header:ids".into());
        let t = compile(" ", &o).unwrap();
        assert_eq!(t.evaluate(&ex).unwrap().to_json(), json!(["4", "5"]));
        assert!(t.matches(&ex).unwrap());
        assert!(!t.matches(&Exchange::new("")).unwrap());
    }

    #[test]
    fn bad_options_are_errors() {
        let bad = |o: serde_json::Value| {
            TokenizeLanguage
                .expression(",", o.as_object().unwrap())
                .unwrap_err()
                .to_string()
        };
        assert!(bad(json!({"xml": true})).contains("XML"));
        assert!(bad(json!({"group": 0})).contains("positive"));
        assert!(bad(json!({"regex": true, "token": "("})).contains("regular expression"));
        assert!(bad(json!({"source": "body2"})).contains("source"));
        assert!(bad(json!({"tokn": ","})).contains("did you mean `token`"));
    }
}
