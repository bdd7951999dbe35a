//! The pieces of a route definition that every step's typed configuration shares.
//!
//! A route's steps are written as one-key maps (`- set_header: {name: x, simple: "…"}`):
//! [`StepDefinition`] holds the name and the configuration as data, and
//! [`StepDefinition::from_item`] is the one place that reads that shape. Each step then
//! has one `#[derive(Deserialize)]` configuration, a [`StepConfig`], which is the only
//! parser of its options: the YAML DSL, the Rust builder and the compiler all go through
//! it. Steps that take an expression embed an [`ExpressionDefinition`] through
//! [`expression_config!`](crate::expression_config), which spells it the ways Apache
//! Camel does: a language key beside the options, the same under `expression:`, and the
//! generic `language: {language: NAME, expression: …}` in either place. As in Camel, the
//! text is trimmed when it is read unless `trim: false` ([`LanguageValue`]).
//!
//! ```
//! use camel_api::definition::{ExpressionDefinition, StepDefinition};
//!
//! let step = StepDefinition::from_item(serde_json::json!({"setHeader": {"name": "x"}})).unwrap();
//! assert_eq!(step.name, "set_header");
//! let e: ExpressionDefinition = serde_json::from_value(serde_json::json!({"simple": "${body}"})).unwrap();
//! assert_eq!((e.language.as_str(), e.text.as_str()), ("simple", "${body}"));
//! ```

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value as Json};

use crate::suggest::to_snake_case;

/// One step of a route: its canonical (snake_case) name and its configuration as data.
#[derive(Clone, Debug, PartialEq)]
pub struct StepDefinition {
    /// The canonical step name (`set_header`).
    pub name: String,
    /// The configuration as written (decoded by the step's [`StepConfig`] when compiled).
    pub config: Json,
}

impl StepDefinition {
    /// A step named `name` configured by `config`.
    pub fn new(name: impl Into<String>, config: Json) -> Self {
        StepDefinition {
            name: name.into(),
            config,
        }
    }

    /// Reads one list item: a one-key map `{name: config}`, or a bare name (`- stop`).
    /// Camel's camelCase and kebab-case step names (`setHeader`, `set-header`) name the
    /// same step: the name is the registry key, not a user's data, so it has one form.
    pub fn from_item(item: Json) -> Result<Self, String> {
        match item {
            Json::String(name) => Ok(StepDefinition::new(to_snake_case(&name), Json::Null)),
            Json::Object(map) if map.len() == 1 => {
                let Some((name, config)) = map.into_iter().next() else {
                    return Err("empty step".into());
                };
                Ok(StepDefinition::new(to_snake_case(&name), config))
            }
            _ => Err("a step is a map with exactly one key, the step name (`- to: …`)".into()),
        }
    }
}

impl Serialize for StepDefinition {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry(&self.name, &self.config)?;
        m.end()
    }
}

impl<'de> Deserialize<'de> for StepDefinition {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        StepDefinition::from_item(Json::deserialize(d)?).map_err(D::Error::custom)
    }
}

/// A step's typed configuration: the one parser of its options.
///
/// Derive `Deserialize` with `#[serde(deny_unknown_fields)]`, snake_case field names and
/// Camel's camelCase spellings as `#[serde(alias = …)]`; the compiler turns serde's errors
/// into located errors with a "did you mean".
pub trait StepConfig: Serialize + DeserializeOwned + Send + 'static {
    /// The step's canonical name.
    const NAME: &'static str;

    /// The configuration written as one scalar (`- to: log:x`, `- log: "hi"`), for steps
    /// that have such a shorthand.
    fn from_scalar(_text: &str) -> Option<Self> {
        None
    }
}

/// An expression as a route writes it: a language, its text and its options. Compiled
/// with the route by the language registered under [`language`](Self::language).
///
/// Serialised as a one-key map, `{simple: "${body}"}` (or
/// `{jsonpath: {expression: "$.a", suppress_exceptions: true}}` with options).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExpressionDefinition {
    /// The language name.
    pub language: String,
    /// The expression text.
    pub text: String,
    /// Language options (`suppress_exceptions` …), as written.
    pub options: Map<String, Json>,
    /// Written in Camel's generic form, `language: {language: NAME, expression: TEXT}`:
    /// kept so that the expression is written back, and located, the way it was read.
    wrapped: bool,
}

impl ExpressionDefinition {
    /// An expression in `language`.
    pub fn new(language: impl Into<String>, text: impl Into<String>) -> Self {
        ExpressionDefinition {
            language: language.into(),
            text: text.into(),
            options: Map::new(),
            wrapped: false,
        }
    }

    /// True when the expression was written as `language: {language: NAME, expression: …}`.
    pub fn is_wrapped(&self) -> bool {
        self.wrapped
    }

    /// The expression's value is null: `constant: null` (YAML's null, not the text
    /// `"null"`), which sets a null body or header as Camel does.
    pub fn is_null_constant(&self) -> bool {
        self.language == "constant" && self.options.get(NULL_CONSTANT) == Some(&Json::Bool(true))
    }

    /// Adds a language option.
    pub fn option(mut self, name: &str, value: impl Into<Json>) -> Self {
        self.options.insert(name.to_string(), value.into());
        self
    }

    /// The value under the language key.
    pub fn value(&self) -> LanguageValue {
        LanguageValue {
            text: self.text.clone(),
            options: self.options.clone(),
        }
    }
}

impl Serialize for ExpressionDefinition {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(1))?;
        if self.wrapped {
            m.serialize_entry(GENERIC_LANGUAGE, &LanguageWrapper(self.clone()))?;
        } else {
            m.serialize_entry(&self.language, &self.value())?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for ExpressionDefinition {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = Map::<String, Json>::deserialize(d)?;
        let mut entries = map.into_iter();
        match (entries.next(), entries.next()) {
            (Some((language, value)), None) if language == GENERIC_LANGUAGE => {
                let LanguageWrapper(e) =
                    LanguageWrapper::deserialize(value).map_err(D::Error::custom)?;
                Ok(e)
            }
            (Some((language, value)), None) => {
                let value = LanguageValue::deserialize(value).map_err(D::Error::custom)?;
                Ok(ExpressionDefinition::read(language, value, false))
            }
            _ => Err(D::Error::custom(
                "`expression` takes exactly one language key, as in `{simple: \"${body}\"}`",
            )),
        }
    }
}

impl ExpressionDefinition {
    /// The expression `value` holds under `language`, with Camel's default trimming of
    /// the text applied (see [`LanguageValue`]).
    fn read(language: String, value: LanguageValue, wrapped: bool) -> Self {
        let LanguageValue {
            mut text,
            mut options,
        } = value;
        if language != "constant" {
            // `simple: null` is an empty text; only a constant can be null.
            options.remove(NULL_CONSTANT);
        }
        let keep_spaces = options.get(TRIM) == Some(&Json::Bool(false));
        // The token of `tokenize` is often a space or a line break: never trimmed.
        if !keep_spaces && language != "tokenize" {
            let trimmed = text.trim();
            if trimmed.len() != text.len() {
                text = trimmed.to_string();
            }
        }
        ExpressionDefinition {
            language,
            text,
            options,
            wrapped,
        }
    }
}

/// The key of Camel's generic language wrapper, `language: {language: NAME, expression: …}`.
pub const GENERIC_LANGUAGE: &str = "language";

/// The option marking a null constant (`constant: null`). Not a Camel option: the
/// definition sets it when the value is YAML's null, and the `constant` language reads it.
pub const NULL_CONSTANT: &str = "$null";

/// Camel's `trim` option of every expression (default true): whether the text loses its
/// leading and trailing whitespace before it is compiled.
pub const TRIM: &str = "trim";

/// Camel's generic language expression, `language: {language: groovy, expression: "…"}`:
/// the language named by a value instead of a key. Reads into the same
/// [`ExpressionDefinition`] as the language's own key would, so an unknown or JVM
/// language is refused with its own name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LanguageWrapper(pub ExpressionDefinition);

impl Serialize for LanguageWrapper {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = self.0.options.clone();
        map.remove(NULL_CONSTANT);
        map.insert(
            GENERIC_LANGUAGE.into(),
            Json::String(self.0.language.clone()),
        );
        map.insert("expression".into(), Json::String(self.0.text.clone()));
        map.serialize(s)
    }
}

impl<'de> Deserialize<'de> for LanguageWrapper {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        const SHAPE: &str = "`language` takes `language: NAME` and `expression: TEXT`, \
                             as in `language: {language: simple, expression: \"${body}\"}`";
        let Json::Object(mut map) = Json::deserialize(d)? else {
            return Err(D::Error::custom(SHAPE));
        };
        let name = match map.remove(GENERIC_LANGUAGE) {
            Some(Json::String(name)) if !name.trim().is_empty() => name.trim().to_string(),
            Some(other) if !other.is_string() => {
                return Err(D::Error::custom(format!(
                    "the language's name must be text, got `{other}`; {SHAPE}"
                )))
            }
            _ => {
                return Err(D::Error::custom(format!(
                    "missing the language's name; {SHAPE}"
                )))
            }
        };
        if name == GENERIC_LANGUAGE {
            return Err(D::Error::custom(
                "`language` cannot name itself; name a language such as `simple`",
            ));
        }
        if !map.contains_key("expression") {
            return Err(D::Error::custom(format!(
                "missing `expression` (the text in `{name}`); {SHAPE}"
            )));
        }
        let value = LanguageValue::deserialize(Json::Object(map)).map_err(D::Error::custom)?;
        Ok(LanguageWrapper(ExpressionDefinition::read(
            name, value, true,
        )))
    }
}

/// What a language key holds: the text (`simple: "${body}"`), or the text with options
/// (`jsonpath: {expression: "$.a", suppress_exceptions: true}`).
///
/// As in Camel, the text of every language but `tokenize` loses its leading and
/// trailing whitespace (a YAML block's last line break, say) unless `trim: false` is
/// given; that happens when the expression is read from the definition, so the
/// languages compile the text they are given. YAML's null (`constant: null`) is the
/// empty text, or a null value for `constant` ([`NULL_CONSTANT`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LanguageValue {
    /// The expression text.
    pub text: String,
    /// The language's options.
    pub options: Map<String, Json>,
}

impl Serialize for LanguageValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.text.is_empty()
            && self.options.len() == 1
            && self.options.get(NULL_CONSTANT) == Some(&Json::Bool(true))
        {
            return s.serialize_none();
        }
        if self.options.is_empty() {
            return s.serialize_str(&self.text);
        }
        let mut map = self.options.clone();
        map.insert("expression".into(), Json::String(self.text.clone()));
        map.serialize(s)
    }
}

impl<'de> Deserialize<'de> for LanguageValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text_of = |v: &Json| match v {
            Json::String(s) => Some(s.clone()),
            Json::Number(n) => Some(n.to_string()),
            Json::Bool(b) => Some(b.to_string()),
            Json::Null => Some(String::new()),
            _ => None,
        };
        match Json::deserialize(d)? {
            Json::Object(mut options) => {
                // Camel's node id and description of an expression name it for tooling;
                // they are not options of the language.
                options.remove("id");
                options.remove("description");
                // Camel's `tokenize` writes its text as `token`.
                let text = options
                    .remove("expression")
                    .or_else(|| options.remove("token"))
                    .and_then(|v| text_of(&v))
                    .ok_or_else(|| {
                        let keys: Vec<&str> = options.keys().map(String::as_str).collect();
                        D::Error::custom(format!(
                            "a language with options needs its text under `expression` \
                             (`token` for tokenize); found only: {}",
                            keys.join(", ")
                        ))
                    })?;
                normalise_trim(&mut options).map_err(D::Error::custom)?;
                Ok(LanguageValue { text, options })
            }
            Json::Null => Ok(LanguageValue {
                text: String::new(),
                options: Map::from_iter([(NULL_CONSTANT.to_string(), Json::Bool(true))]),
            }),
            other => Ok(LanguageValue {
                text: text_of(&other)
                    .ok_or_else(|| D::Error::custom("a language key takes an expression text"))?,
                options: Map::new(),
            }),
        }
    }
}

/// Reads Camel's `trim` option as a boolean (`true`, `false` or their text).
fn normalise_trim(options: &mut Map<String, Json>) -> Result<(), String> {
    let trim = match options.get(TRIM) {
        None => return Ok(()),
        Some(Json::Bool(b)) => *b,
        Some(Json::String(t)) if t.eq_ignore_ascii_case("true") => true,
        Some(Json::String(t)) if t.eq_ignore_ascii_case("false") => false,
        Some(other) => {
            return Err(format!(
                "option `trim` must be true or false, got `{other}`"
            ))
        }
    };
    options.insert(TRIM.into(), Json::Bool(trim));
    Ok(())
}

/// Reads an optional language key where YAML's null is a value (`constant: null`), not
/// an absent key (not public API; used by [`expression_config!`]).
#[doc(hidden)]
pub fn nullable_language<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<LanguageValue>, D::Error> {
    LanguageValue::deserialize(d).map(Some)
}

/// The languages a step may name directly beside its other options (`simple: "…"`),
/// as Camel's YAML DSL does; any other registered language goes under `expression:`, or
/// in Camel's generic form `language: {language: NAME, expression: …}` ([`LanguageWrapper`]),
/// which may stand beside the options too.
pub const SHORTHAND_LANGUAGES: [&str; 8] = [
    "simple", "constant", "header", "jsonpath", "jq", "csimple", "tokenize", "xpath",
];

/// Why no single expression could be read from a step's configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExpressionSlotError {
    /// No expression given.
    Missing,
    /// More than one given; `second` is the pointer of the second one.
    Several {
        /// JSON pointer (below the step) of the second expression.
        second: String,
    },
}

/// A configuration with an expression spelled one of Camel's ways. Implemented by
/// [`expression_config!`](crate::expression_config).
pub trait WithExpression {
    /// `(relative pointer, expression)` for each spelling present, in field order.
    fn expressions(&self) -> Vec<(String, ExpressionDefinition)>;

    /// Sets the expression, in the shortest spelling that reads back the same.
    fn set_expression(&mut self, expression: ExpressionDefinition);

    /// The one expression given, with the pointer (below the step) of its text.
    fn expression(&self) -> Result<(String, ExpressionDefinition), ExpressionSlotError> {
        let mut found = self.expressions().into_iter();
        match (found.next(), found.next()) {
            (Some(one), None) => Ok(one),
            (None, _) => Err(ExpressionSlotError::Missing),
            (Some(_), Some((second, _))) => Err(ExpressionSlotError::Several { second }),
        }
    }
}

/// Defines a step configuration that carries an expression next to its own fields, in the
/// spellings Camel's YAML DSL accepts: `expression: {simple: "…"}`, or a language key
/// (`simple`, `constant`, `header`, `jsonpath`, `jq`, `csimple`, `tokenize`) beside the
/// other options, its value a text
/// or `{expression: text, …options}`, or Camel's generic
/// `language: {language: NAME, expression: text}` (also under `expression:`). Unknown
/// keys are refused.
///
/// ```
/// use camel_api::definition::{ExpressionDefinition, WithExpression};
///
/// camel_api::expression_config! {
///     /// `tag: {name: x, simple: "…"}`.
///     pub struct Tag {
///         /// The tag's name.
///         pub name: String,
///     }
/// }
///
/// let t: Tag = serde_json::from_value(serde_json::json!({"name": "a", "header": "b"})).unwrap();
/// assert_eq!(t.expression().unwrap().1, ExpressionDefinition::new("header", "b"));
/// assert!(serde_json::from_value::<Tag>(serde_json::json!({"nmae": "a"})).is_err());
/// ```
#[macro_export]
macro_rules! expression_config {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
        #[derive($crate::__schemars::JsonSchema)]
        #[schemars(crate = "camel_api::__schemars")]
        #[schemars(transform = camel_api::schema::serde_fields::<Self>)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
            /// `expression: {language: text}`: the expression in any registered language.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub expression: Option<$crate::definition::ExpressionDefinition>,
            /// `language: {language: name, expression: text}`: Camel's generic wrapper.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub language: Option<$crate::definition::LanguageWrapper>,
            /// `simple: text`.
            #[serde(
                default,
                deserialize_with = "camel_api::definition::nullable_language",
                skip_serializing_if = "Option::is_none"
            )]
            pub simple: Option<$crate::definition::LanguageValue>,
            /// `constant: text`.
            #[serde(
                default,
                deserialize_with = "camel_api::definition::nullable_language",
                skip_serializing_if = "Option::is_none"
            )]
            pub constant: Option<$crate::definition::LanguageValue>,
            /// `header: name`.
            #[serde(
                default,
                deserialize_with = "camel_api::definition::nullable_language",
                skip_serializing_if = "Option::is_none"
            )]
            pub header: Option<$crate::definition::LanguageValue>,
            /// `jsonpath: text`.
            #[serde(
                default,
                deserialize_with = "camel_api::definition::nullable_language",
                skip_serializing_if = "Option::is_none"
            )]
            pub jsonpath: Option<$crate::definition::LanguageValue>,
            /// `jq: text`.
            #[serde(
                default,
                deserialize_with = "camel_api::definition::nullable_language",
                skip_serializing_if = "Option::is_none"
            )]
            pub jq: Option<$crate::definition::LanguageValue>,
            /// `csimple: text` (the simple language).
            #[serde(
                default,
                deserialize_with = "camel_api::definition::nullable_language",
                skip_serializing_if = "Option::is_none"
            )]
            pub csimple: Option<$crate::definition::LanguageValue>,
            /// `tokenize: token` or `tokenize: {token, …options}`.
            #[serde(
                default,
                deserialize_with = "camel_api::definition::nullable_language",
                skip_serializing_if = "Option::is_none"
            )]
            pub tokenize: Option<$crate::definition::LanguageValue>,
            /// `xpath: text` (the `xpath` language, when one is registered).
            #[serde(
                default,
                deserialize_with = "camel_api::definition::nullable_language",
                skip_serializing_if = "Option::is_none"
            )]
            pub xpath: Option<$crate::definition::LanguageValue>,
        }

        impl $crate::definition::WithExpression for $name {
            fn expressions(&self) -> Vec<(String, $crate::definition::ExpressionDefinition)> {
                $crate::definition::collect_expressions(
                    self.expression.as_ref(),
                    self.language.as_ref(),
                    [
                        ("simple", self.simple.as_ref()),
                        ("constant", self.constant.as_ref()),
                        ("header", self.header.as_ref()),
                        ("jsonpath", self.jsonpath.as_ref()),
                        ("jq", self.jq.as_ref()),
                        ("csimple", self.csimple.as_ref()),
                        ("tokenize", self.tokenize.as_ref()),
                        ("xpath", self.xpath.as_ref()),
                    ],
                )
            }

            fn set_expression(&mut self, e: $crate::definition::ExpressionDefinition) {
                self.expression = None;
                self.language = None;
                self.simple = None;
                self.constant = None;
                self.header = None;
                self.jsonpath = None;
                self.jq = None;
                self.csimple = None;
                self.tokenize = None;
                self.xpath = None;
                if e.is_wrapped() {
                    self.language = Some($crate::definition::LanguageWrapper(e));
                    return;
                }
                let value = Some(e.value());
                match e.language.as_str() {
                    "simple" => self.simple = value,
                    "constant" => self.constant = value,
                    "header" => self.header = value,
                    "jsonpath" => self.jsonpath = value,
                    "jq" => self.jq = value,
                    "csimple" => self.csimple = value,
                    "tokenize" => self.tokenize = value,
                    "xpath" => self.xpath = value,
                    _ => self.expression = Some(e),
                }
            }
        }
    };
}

/// Lists the expressions present in an [`expression_config!`] struct (not public API).
#[doc(hidden)]
pub fn collect_expressions(
    under_expression: Option<&ExpressionDefinition>,
    generic: Option<&LanguageWrapper>,
    shorthand: [(&str, Option<&LanguageValue>); 8],
) -> Vec<(String, ExpressionDefinition)> {
    let mut found = Vec::new();
    if let Some(e) = under_expression {
        let at = if e.wrapped {
            format!("/expression/{GENERIC_LANGUAGE}/expression")
        } else {
            pointer_of(&format!("/expression/{}", e.language), &e.options)
        };
        found.push((at, e.clone()));
    }
    if let Some(LanguageWrapper(e)) = generic {
        found.push((format!("/{GENERIC_LANGUAGE}/expression"), e.clone()));
    }
    for (language, value) in shorthand {
        if let Some(v) = value {
            let at = pointer_of(&format!("/{language}"), &v.options);
            found.push((
                at,
                ExpressionDefinition::read(language.to_string(), v.clone(), false),
            ));
        }
    }
    found
}

fn pointer_of(key: &str, options: &Map<String, Json>) -> String {
    if options.keys().all(|k| k == NULL_CONSTANT) {
        key.to_string()
    } else {
        format!("{key}/expression")
    }
}

#[cfg(test)]
#[allow(unreachable_pub)]
mod tests {
    // The macro names this crate as its users do.
    extern crate self as camel_api;

    use super::*;
    use serde_json::json;

    crate::expression_config! {
        /// A test step.
        pub struct Probe {
            /// A name.
            pub name: String,
        }
    }

    #[test]
    fn three_spellings_read_the_same_expression() {
        for v in [
            json!({"name": "a", "expression": {"simple": "${body}"}}),
            json!({"name": "a", "simple": "${body}"}),
            json!({"name": "a", "simple": {"expression": "${body}"}}),
        ] {
            let p: Probe = serde_json::from_value(v.clone()).unwrap();
            let (_, e) = p.expression().unwrap();
            assert_eq!(e, ExpressionDefinition::new("simple", "${body}"), "{v}");
        }
    }

    #[test]
    fn options_and_pointers() {
        let p: Probe = serde_json::from_value(
            json!({"name": "a", "jsonpath": {"expression": "$.a", "suppressExceptions": true}}),
        )
        .unwrap();
        let (at, e) = p.expression().unwrap();
        assert_eq!(at, "/jsonpath/expression");
        assert_eq!(e.options["suppressExceptions"], json!(true));
        let two: Probe =
            serde_json::from_value(json!({"name": "a", "simple": "x", "constant": "y"})).unwrap();
        assert_eq!(
            two.expression(),
            Err(ExpressionSlotError::Several {
                second: "/constant".into()
            })
        );
    }

    #[test]
    fn set_expression_round_trips_through_json() {
        let mut p = Probe {
            name: "a".into(),
            ..Default::default()
        };
        p.set_expression(ExpressionDefinition::new("simple", "${body}"));
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"name": "a", "simple": "${body}"})
        );
        p.set_expression(ExpressionDefinition::new("shout", "x"));
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(v, json!({"name": "a", "expression": {"shout": "x"}}));
        let back: Probe = serde_json::from_value(v).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn the_generic_language_wrapper_reads_as_the_language_key() {
        for (v, at) in [
            (
                json!({"name": "a", "language": {"language": "simple", "expression": "${body}"}}),
                "/language/expression",
            ),
            (
                json!({"name": "a", "expression": {"language": {"language": "simple", "expression": "${body}"}}}),
                "/expression/language/expression",
            ),
        ] {
            let p: Probe = serde_json::from_value(v.clone()).unwrap();
            let (pointer, e) = p.expression().unwrap();
            assert_eq!(pointer, at, "{v}");
            assert_eq!(
                (e.language.as_str(), e.text.as_str()),
                ("simple", "${body}")
            );
            assert!(e.is_wrapped());
            assert!(e.options.is_empty());
            // Written back the way it was read.
            assert_eq!(serde_json::to_value(&p).unwrap(), v);
        }
        // A JVM language keeps its own name, for the compiler to refuse by name.
        let e: ExpressionDefinition = serde_json::from_value(
            json!({"language": {"language": "groovy", "expression": "body.x", "trim": false}}),
        )
        .unwrap();
        assert_eq!(e.language, "groovy");
        assert_eq!(e.options["trim"], json!(false));
    }

    #[test]
    fn a_broken_wrapper_says_what_it_needs() {
        for (v, needle) in [
            (
                json!({"language": {"expression": "x"}}),
                "missing the language's name",
            ),
            (
                json!({"language": {"language": "simple"}}),
                "missing `expression`",
            ),
            (
                json!({"language": {"language": 3, "expression": "x"}}),
                "must be text",
            ),
            (json!({"language": "simple"}), "takes `language: NAME`"),
            (
                json!({"language": {"language": "language", "expression": "x"}}),
                "itself",
            ),
        ] {
            let e = serde_json::from_value::<ExpressionDefinition>(v.clone()).unwrap_err();
            assert!(e.to_string().contains(needle), "{v}: {e}");
        }
        let e =
            serde_json::from_value::<Probe>(json!({"name": "a", "language": {"expression": "x"}}))
                .unwrap_err();
        assert!(e.to_string().contains("language's name"), "{e}");
    }

    #[test]
    fn yaml_null_is_a_null_constant_and_an_empty_text_elsewhere() {
        let p: Probe = serde_json::from_value(json!({"name": "a", "constant": null})).unwrap();
        let (at, e) = p.expression().unwrap();
        assert_eq!(at, "/constant");
        assert!(e.is_null_constant());
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"name": "a", "constant": null})
        );
        let e: ExpressionDefinition = serde_json::from_value(json!({"constant": null})).unwrap();
        assert!(e.is_null_constant());
        // The text "null" is text.
        let e: ExpressionDefinition = serde_json::from_value(json!({"constant": "null"})).unwrap();
        assert!(!e.is_null_constant());
        let p: Probe = serde_json::from_value(json!({"name": "a", "simple": null})).unwrap();
        let (_, e) = p.expression().unwrap();
        assert_eq!(e, ExpressionDefinition::new("simple", ""));
    }

    #[test]
    fn texts_are_trimmed_unless_trim_is_false() {
        let read = |v: Json| {
            let p: Probe = serde_json::from_value(v).unwrap();
            p.expression().unwrap().1
        };
        assert_eq!(
            read(json!({"name": "a", "simple": "  Hi ${body}\n"})).text,
            "Hi ${body}"
        );
        assert_eq!(
            read(json!({"name": "a", "constant": {"expression": " x ", "trim": "true"}})).text,
            "x"
        );
        let kept = read(json!({"name": "a", "constant": {"expression": " x ", "trim": false}}));
        assert_eq!(
            (kept.text.as_str(), &kept.options["trim"]),
            (" x ", &json!(false))
        );
        let e: ExpressionDefinition =
            serde_json::from_value(json!({"simple": " ${body} "})).unwrap();
        assert_eq!(e.text, "${body}");
        // A tokenize token is often whitespace itself.
        assert_eq!(read(json!({"name": "a", "tokenize": " "})).text, " ");
        assert_eq!(
            read(json!({"name": "a", "tokenize": {"token": "\n"}})).text,
            "\n"
        );
        // The Rust builder's text is taken as written.
        assert_eq!(ExpressionDefinition::new("simple", " x ").text, " x ");
        let e = serde_json::from_value::<Probe>(
            json!({"name": "a", "simple": {"expression": "x", "trim": 1}}),
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("`trim` must be true or false"),
            "{e}"
        );
    }

    #[test]
    fn step_items_have_one_shape() {
        assert_eq!(
            StepDefinition::from_item(json!("stop")).unwrap(),
            StepDefinition::new("stop", Json::Null)
        );
        assert_eq!(
            StepDefinition::from_item(json!({"convert-body-to": "String"}))
                .unwrap()
                .name,
            "convert_body_to"
        );
        assert!(StepDefinition::from_item(json!({"a": 1, "b": 2})).is_err());
        assert!(StepDefinition::from_item(json!(3)).is_err());
    }
}
