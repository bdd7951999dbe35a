//! `split`.

use camel_api::definition::{StepConfig, StepDefinition};
use camel_api::expression_config;
use serde::{Deserialize, Deserializer};

expression_config! {
    /// `split: {tokenize: {token: ","}, steps: [...]}`: each part of the message runs
    /// through `steps` as its own exchange.
    ///
    /// The parts come from `tokenize` (Camel's tokenizer options), from any expression
    /// (`jsonpath: "$.items[*]"`, `simple: "${body}"`) yielding a list, or, without an
    /// expression, from the body itself (a JSON array's elements, or the lines of text).
    ///
    /// ```
    /// use camel_eip::config::{Split, Tokenize};
    /// let s = Split::tokenize(Tokenize::token("\n").group(100)).streaming(true);
    /// assert!(s.streaming);
    /// ```
    pub struct Split {
        /// Read the parts one at a time instead of listing them first: memory stays
        /// bounded by one part (with a file from the `file` consumer read lazily, see
        /// `docs/eips.md`), and `CamelSplitSize` is known only on the last part.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        pub streaming: bool,
        /// Where text is cut when no `tokenize` says: the body without an expression, or
        /// the text an expression gives (`simple: "${header.ids}"`). Line ends by
        /// default; `false` or `single` keeps the text whole (one part).
        #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "text_or_false")]
        pub delimiter: Option<String>,
        /// Run parts concurrently (at most `parallel_limit` at a time).
        #[serde(default, skip_serializing_if = "std::ops::Not::not", alias = "parallelProcessing")]
        pub parallel_processing: bool,
        /// How many parts run at once with `parallel_processing` (default 10, the size of
        /// Camel's default thread pool). camel-rs only.
        #[serde(default, skip_serializing_if = "Option::is_none", alias = "parallelLimit")]
        pub parallel_limit: Option<usize>,
        /// Stop at the first part that fails (default: process every part, then fail).
        #[serde(default, skip_serializing_if = "std::ops::Not::not", alias = "stopOnException")]
        pub stop_on_exception: bool,
        /// Combines the parts' results into the split's result: a built-in strategy's name
        /// or a context resource. Without it the result is the incoming exchange.
        #[serde(default, skip_serializing_if = "Option::is_none", alias = "aggregationStrategy")]
        pub aggregation_strategy: Option<String>,
        /// Milliseconds (or `2s`) the whole split may take; parts not finished by then are
        /// abandoned and the result combines those that finished.
        #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "millis")]
        pub timeout: Option<u64>,
        /// Accepted for Camel files: a failing part always fails the split's exchange here.
        #[serde(default, skip_serializing_if = "std::ops::Not::not", alias = "shareUnitOfWork")]
        pub share_unit_of_work: bool,
        /// The steps each part runs through.
        #[serde(default)]
        pub steps: Vec<StepDefinition>,
    }
}

/// Text, or `false` written as a boolean (as text: `"false"`).
fn text_or_false<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    use serde::de::Error;
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::String(s) => Ok(Some(s)),
        serde_json::Value::Bool(false) => Ok(Some("false".into())),
        other => Err(D::Error::custom(format!(
            "`delimiter` takes text or `false`, not `{other}`"
        ))),
    }
}

impl StepConfig for Split {
    const NAME: &'static str = "split";
}

impl Split {
    /// A split of the body by `tokenize`.
    pub fn tokenize(tokenize: Tokenize) -> Self {
        Split {
            tokenize: Some(tokenize.into_language_value()),
            ..Default::default()
        }
    }

    /// A split of the body (its JSON array, or its lines).
    pub fn body() -> Self {
        Split::default()
    }

    /// Reads parts one at a time.
    pub fn streaming(mut self, yes: bool) -> Self {
        self.streaming = yes;
        self
    }

    /// Runs at most `limit` parts at once.
    pub fn parallel(mut self, limit: usize) -> Self {
        self.parallel_processing = true;
        self.parallel_limit = Some(limit);
        self
    }

    /// Stops at the first failing part.
    pub fn stop_on_exception(mut self, yes: bool) -> Self {
        self.stop_on_exception = yes;
        self
    }

    /// Combines the results with the strategy called `name`.
    pub fn aggregation_strategy(mut self, name: impl Into<String>) -> Self {
        self.aggregation_strategy = Some(name.into());
        self
    }

    /// Bounds the whole split to `millis` milliseconds.
    pub fn timeout(mut self, millis: u64) -> Self {
        self.timeout = Some(millis);
        self
    }
}

/// Camel's `tokenize` expression: `{token: ",", regex: false, group: 2, skip_first: true,
/// include_tokens: false, group_delimiter: ";"}`, or just the token as text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tokenize {
    /// The text (or regex) parts are cut at.
    pub token: String,
    /// `token` is a regular expression.
    pub regex: bool,
    /// Joins this many parts into one.
    pub group: Option<usize>,
    /// Put between the parts of a group (default: the token).
    pub group_delimiter: Option<String>,
    /// Drops the first part (a header line).
    pub skip_first: bool,
    /// Keeps the token at the end of each part.
    pub include_tokens: bool,
}

impl Tokenize {
    /// Cuts at `token`.
    pub fn token(token: impl Into<String>) -> Self {
        Tokenize {
            token: token.into(),
            ..Default::default()
        }
    }

    /// Cuts at matches of `regex`.
    pub fn regex(regex: impl Into<String>) -> Self {
        Tokenize {
            regex: true,
            ..Tokenize::token(regex)
        }
    }

    /// Joins every `n` parts.
    pub fn group(mut self, n: usize) -> Self {
        self.group = Some(n);
        self
    }

    /// Drops the first part.
    pub fn skip_first(mut self) -> Self {
        self.skip_first = true;
        self
    }

    /// Keeps the token at the end of each part.
    pub fn include_tokens(mut self) -> Self {
        self.include_tokens = true;
        self
    }

    /// The `tokenize` expression (token and options) as a route carries it.
    pub fn into_language_value(self) -> camel_api::definition::LanguageValue {
        let mut options = serde_json::Map::new();
        if self.regex {
            options.insert("regex".into(), true.into());
        }
        if let Some(n) = self.group {
            options.insert("group".into(), n.into());
        }
        if let Some(d) = self.group_delimiter {
            options.insert("group_delimiter".into(), d.into());
        }
        if self.skip_first {
            options.insert("skip_first".into(), true.into());
        }
        if self.include_tokens {
            options.insert("include_tokens".into(), true.into());
        }
        camel_api::definition::LanguageValue {
            text: self.token,
            options,
        }
    }
}

/// A count written as a number or as text (Camel's schema types many numbers as strings).
pub(crate) fn count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    use serde::de::Error;
    match Option::<serde_json::Value>::deserialize(d)? {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Number(n)) => n
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("expected a whole number, got {n}"))),
        Some(serde_json::Value::String(s)) => s
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| D::Error::custom(format!("expected a whole number, got `{s}`"))),
        Some(other) => Err(D::Error::custom(format!(
            "expected a whole number, got `{other}`"
        ))),
    }
}

/// A [`count`] as `u64`.
pub(crate) fn count_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(count(d)?.map(|n| n as u64))
}

/// Milliseconds written as a number or as a duration text (`500`, `500ms`, `2s`).
pub(crate) fn millis<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    use serde::de::Error;
    match Option::<serde_json::Value>::deserialize(d)? {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Number(n)) => n
            .as_u64()
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("expected milliseconds, got {n}"))),
        Some(serde_json::Value::String(s)) => camel_api::parse_duration(&s)
            .map(|d| Some(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)))
            .ok_or_else(|| {
                D::Error::custom(format!(
                    "expected milliseconds or a duration such as `2s`, got `{s}`"
                ))
            }),
        Some(other) => Err(D::Error::custom(format!(
            "expected milliseconds, got `{other}`"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use camel_api::definition::WithExpression;
    use serde_json::json;

    #[test]
    fn camel_spellings_read() {
        let s: Split = serde_json::from_value(json!({
            "tokenize": {"token": ",", "group": "2", "skipFirst": true},
            "streaming": true, "parallelProcessing": true, "stopOnException": true,
            "aggregationStrategy": "GroupedBodyAggregationStrategy", "timeout": "2s",
            "shareUnitOfWork": true,
            "steps": [{"to": "log:x"}],
        }))
        .unwrap();
        let t = s.tokenize.as_ref().unwrap();
        assert_eq!(t.text, ",");
        assert_eq!(t.options.get("skipFirst"), Some(&json!(true)));
        assert!(s.streaming && s.parallel_processing && s.stop_on_exception);
        assert_eq!(s.timeout, Some(2000));
        let j: Split = serde_json::from_value(json!({"jsonpath": "$[*]", "steps": []})).unwrap();
        assert_eq!(j.expression().unwrap().1.language, "jsonpath");
        let t: Split = serde_json::from_value(json!({"tokenize": "\n"})).unwrap();
        assert_eq!(t.tokenize.unwrap().text, "\n");
        let built = Split::tokenize(Tokenize::token(",").group(2).skip_first());
        let v = built.tokenize.unwrap();
        assert_eq!(
            (v.text.as_str(), v.options.get("group")),
            (",", Some(&json!(2)))
        );
    }

    #[test]
    fn typos_are_refused() {
        // A tokenize map without its token (the typo is reported by the language when the
        // route is compiled; see camel-core's split tests).
        assert!(serde_json::from_value::<Split>(json!({"tokenize": {"tokn": ","}})).is_err());
        let e = serde_json::from_value::<Split>(json!({"timeout": "soon"})).unwrap_err();
        assert!(e.to_string().contains("soon"), "{e}");
    }

    #[test]
    fn builder_round_trips() {
        let s = Split::tokenize(Tokenize::regex("[,;]").group(3))
            .parallel(4)
            .aggregation_strategy("grouped_body")
            .timeout(100);
        let back: Split = serde_json::from_value(serde_json::to_value(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }
}
