//! Property placeholders, as Camel writes them: `{{key}}`, `{{key:default}}`,
//! `{{env:NAME}}` and `{{env:NAME:default}}`, resolved in a route file's strings when the
//! file is loaded (see [`crate::yaml::load_str_with`]).
//!
//! ```
//! use camel_core::properties::Properties;
//!
//! let mut props = Properties::new();
//! props.set("folder", "in");
//! assert_eq!(props.resolve("file:{{folder}}?delay={{delay:500}}").unwrap(), "file:in?delay=500");
//! ```
//!
//! A property's value may itself hold placeholders (Camel resolves them too); a chain
//! deeper than [`MAX_DEPTH`], a cycle, or a result longer than [`MAX_RESOLVED_LEN`] is an
//! error, and so is text beyond a [`Budget`] shared by every string of one load of route
//! files ([`MAX_TOTAL_RESOLVED_LEN`] by default). Values are never part of an error message, and `Debug` hides the values of
//! secret-looking keys (`password`, `token`, …).

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// How many property values may nest placeholders inside each other before resolution
/// stops: a cycle (`a={{b}}`, `b={{a}}`) would otherwise never end.
pub const MAX_DEPTH: usize = 16;

/// The longest text one resolution may produce. Values that each name another several
/// times multiply (1.5 KB of them once expanded to 1 GB); past this bound resolution
/// stops with [`PropertyError::TooLarge`] instead of taking the machine's memory.
pub const MAX_RESOLVED_LEN: usize = 1 << 20;

/// The most text resolution may produce over one load of route files, every string of
/// every file together (the default of [`Budget`]). Each string is bounded by
/// [`MAX_RESOLVED_LEN`], but thousands of values naming the same large property would
/// still add up to gigabytes; this is the YAML loader's own bound on a document's size,
/// so resolution can at most double what a route file may already hold.
pub const MAX_TOTAL_RESOLVED_LEN: usize = 64 << 20;

/// Why a placeholder could not be resolved, or a properties file not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PropertyError {
    /// No source defines the key and the placeholder has no default.
    #[error(
        "property placeholder `{{{{{key}}}}}`: no property `{key}` is defined (set it in \
         application.properties, with --properties FILE or --property {key}=VALUE, or give a \
         default: `{{{{{key}:default}}}}`)"
    )]
    Missing {
        /// The key, as written in the placeholder.
        key: String,
    },
    /// The environment variable is not set and the placeholder has no default.
    #[error(
        "property placeholder `{{{{env:{name}}}}}`: the environment variable `{name}` is not \
         set (set it, or give a default: `{{{{env:{name}:default}}}}`)"
    )]
    MissingEnv {
        /// The variable's name.
        name: String,
    },
    /// `{{` without its `}}`, or an empty key.
    #[error("malformed property placeholder: {0}")]
    Malformed(String),
    /// Property values refer to each other in a cycle, or nest too deep.
    #[error(
        "property `{key}` refers to other properties more than {MAX_DEPTH} levels deep (a cycle?)"
    )]
    TooDeep {
        /// The key whose value could not be resolved.
        key: String,
    },
    /// Resolving the placeholders would produce more than [`MAX_RESOLVED_LEN`] bytes.
    #[error(
        "property placeholders expand to more than {MAX_RESOLVED_LEN} bytes (at property \
         `{key}`): values that repeat other properties multiply"
    )]
    TooLarge {
        /// The key being expanded when the bound was passed (empty at the top level).
        key: String,
    },
    /// The strings resolved so far with one [`Budget`] (every string of the route files
    /// loaded together) and this one would add up to more than the budget.
    #[error(
        "property placeholders expand to more than {} in total over the route files loaded \
         together (this value passed the bound): many values naming large properties add up",
        shown_size(*limit)
    )]
    TotalTooLarge {
        /// The budget, in bytes.
        limit: usize,
    },
    /// A properties file could not be read or parsed.
    #[error("{file}: {message}")]
    File {
        /// The file.
        file: String,
        /// What went wrong (never a value).
        message: String,
    },
}

/// `64 MiB` for a whole number of MiB, else `N bytes`.
fn shown_size(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// How much text placeholder resolution may still produce, shared by the strings resolved
/// with [`Properties::resolve_counted`]: the YAML loader uses one for every string of the
/// files it loads together, so many values naming a large property cannot add up to
/// gigabytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    limit: usize,
    used: usize,
}

impl Default for Budget {
    /// [`MAX_TOTAL_RESOLVED_LEN`].
    fn default() -> Self {
        Self::new(MAX_TOTAL_RESOLVED_LEN)
    }
}

impl Budget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Self { limit, used: 0 }
    }

    /// The bytes resolution may still produce.
    pub fn remaining(&self) -> usize {
        self.limit.saturating_sub(self.used)
    }
}

/// Property values by key; [`Properties::set`] and [`Properties::merge`] let a later
/// source win over an earlier one.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Properties {
    values: BTreeMap<String, String>,
}

impl fmt::Debug for Properties {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(
                self.values
                    .iter()
                    .map(|(k, v)| (k, camel_api::shown_value(k, v))),
            )
            .finish()
    }
}

impl Properties {
    /// No properties: only defaults and `env:` resolve.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `key` (replacing an earlier value).
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.values.insert(key.into(), value.into());
    }

    /// The value of `key`, unresolved.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// True when no property is set.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Every property, unresolved, sorted by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Adds every property of `other`; `other` wins where both have a key.
    pub fn merge(&mut self, other: Properties) {
        self.values.extend(other.values);
    }

    /// Reads a `.properties` file, or a YAML file (`.yaml`/`.yml`: nested maps become
    /// dotted keys, `a: {b: 1}` is `a.b=1`).
    pub fn read_file(path: &Path) -> Result<Properties, PropertyError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| PropertyError::File {
            file: file.clone(),
            message: e.to_string(),
        })?;
        let yaml = matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml")
        );
        if yaml {
            Self::parse_yaml(&text).map_err(|message| PropertyError::File { file, message })
        } else {
            Ok(Self::parse_properties(&text))
        }
    }

    /// Parses Java `.properties` text: `key=value`, `key: value` or `key value`; `#` and
    /// `!` start comments; a line ending in `\` continues on the next.
    pub fn parse_properties(text: &str) -> Properties {
        let mut props = Properties::new();
        let mut logical = String::new();
        for line in text.lines() {
            let line = line.trim_start();
            if logical.is_empty() && (line.is_empty() || line.starts_with(['#', '!'])) {
                continue;
            }
            if let Some(cont) = line.strip_suffix('\\') {
                logical.push_str(cont);
                continue;
            }
            logical.push_str(line);
            let entry = std::mem::take(&mut logical);
            let split = entry.find(['=', ':', ' ', '\t']).unwrap_or(entry.len());
            let key = entry[..split].trim_end();
            let rest = entry[split..].trim_start();
            let value = rest
                .strip_prefix(['=', ':'])
                .map_or(rest, str::trim_start)
                .trim_end();
            if !key.is_empty() {
                props.set(key, value);
            }
        }
        props
    }

    /// Parses YAML text whose nested maps become dotted keys.
    pub fn parse_yaml(text: &str) -> Result<Properties, String> {
        let docs = crate::yaml::parse_values(text)
            .map_err(|(message, line, column)| format!("{line}:{column}: {message}"))?;
        let mut props = Properties::new();
        for doc in docs {
            flatten(&doc, String::new(), &mut props);
        }
        Ok(props)
    }

    /// Resolves every placeholder in `text`.
    pub fn resolve(&self, text: &str) -> Result<String, PropertyError> {
        self.resolve_at(text, 0, None, MAX_RESOLVED_LEN)
    }

    /// Like [`Properties::resolve`], and the result counts against `budget`: past it,
    /// [`PropertyError::TotalTooLarge`], and so is every later string that is not empty.
    /// Resolution stops as soon as the text built passes the room left, so a string that
    /// does not fit is never built whole.
    ///
    /// ```
    /// use camel_core::properties::{Budget, Properties, PropertyError};
    ///
    /// let mut props = Properties::new();
    /// props.set("big", "x".repeat(600));
    /// let mut budget = Budget::new(1000);
    /// assert!(props.resolve_counted("{{big}}", &mut budget).is_ok());
    /// assert_eq!(
    ///     props.resolve_counted("{{big}}", &mut budget).unwrap_err(),
    ///     PropertyError::TotalTooLarge { limit: 1000 }
    /// );
    /// ```
    pub fn resolve_counted(
        &self,
        text: &str,
        budget: &mut Budget,
    ) -> Result<String, PropertyError> {
        let room = budget.remaining();
        let over = |budget: &mut Budget| {
            budget.used = budget.limit;
            PropertyError::TotalTooLarge {
                limit: budget.limit,
            }
        };
        match self.resolve_at(text, 0, None, room.min(MAX_RESOLVED_LEN)) {
            // Only a text without placeholders comes back longer than the limit given.
            Ok(out) if out.len() > room => Err(over(budget)),
            Ok(out) => {
                budget.used += out.len();
                Ok(out)
            }
            // The room left, not the bound of one string, was the limit that stopped it.
            Err(PropertyError::TooLarge { .. }) if room < MAX_RESOLVED_LEN => Err(over(budget)),
            Err(e) => Err(e),
        }
    }

    /// Resolves `text`, failing with [`PropertyError::TooLarge`] as soon as the result
    /// passes `limit` bytes (nested values get the room their caller has left).
    fn resolve_at(
        &self,
        text: &str,
        depth: usize,
        from: Option<&str>,
        limit: usize,
    ) -> Result<String, PropertyError> {
        if !text.contains("{{") {
            return Ok(text.to_string());
        }
        if depth > MAX_DEPTH {
            return Err(PropertyError::TooDeep {
                key: from.unwrap_or_default().to_string(),
            });
        }
        let too_large = || PropertyError::TooLarge {
            key: from.unwrap_or_default().to_string(),
        };
        let mut out = String::with_capacity(text.len().min(limit));
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            out.push_str(&rest[..start]);
            if out.len() > limit {
                return Err(too_large());
            }
            let inner_start = start + 2;
            let Some(len) = rest[inner_start..].find("}}") else {
                return Err(PropertyError::Malformed(
                    "`{{` without a closing `}}`".into(),
                ));
            };
            let inner = &rest[inner_start..inner_start + len];
            out.push_str(&self.placeholder(inner, depth, limit - out.len())?);
            if out.len() > limit {
                return Err(too_large());
            }
            rest = &rest[inner_start + len + 2..];
        }
        out.push_str(rest);
        if out.len() > limit {
            return Err(too_large());
        }
        Ok(out)
    }

    /// The value of one placeholder's inside (`key`, `key:default`, `env:NAME[:default]`),
    /// a property's value resolved within `room` bytes.
    fn placeholder(&self, inner: &str, depth: usize, room: usize) -> Result<String, PropertyError> {
        let inner = inner.trim();
        if let Some(env) = inner.strip_prefix("env:") {
            let (name, default) = split_default(env);
            // Camel also looks the name up upper-cased with `.`/`-` as `_`.
            let upper = name.to_ascii_uppercase().replace(['.', '-'], "_");
            return match std::env::var(name).or_else(|_| std::env::var(&upper)) {
                Ok(v) => Ok(v),
                Err(_) => default
                    .map(str::to_string)
                    .ok_or_else(|| PropertyError::MissingEnv { name: name.into() }),
            };
        }
        // `{{?key}}`: Camel's optional placeholder, nothing when the key is not set.
        if let Some(key) = inner.strip_prefix('?') {
            let key = key.trim();
            return match self.values.get(key) {
                Some(v) => self.resolve_at(v, depth + 1, Some(key), room),
                None => Ok(String::new()),
            };
        }
        let (key, default) = split_default(inner);
        if key.is_empty() {
            return Err(PropertyError::Malformed("`{{}}` names no property".into()));
        }
        match (self.values.get(key), default) {
            (Some(v), _) => self.resolve_at(v, depth + 1, Some(key), room),
            (None, Some(d)) => Ok(d.to_string()),
            (None, None) => Err(PropertyError::Missing { key: key.into() }),
        }
    }
}

impl PropertyError {
    /// The placeholder as written (`{{key}}`, `{{env:NAME}}`) when a value was missing.
    pub fn placeholder(&self) -> Option<String> {
        match self {
            PropertyError::Missing { key } => Some(format!("{{{{{key}}}}}")),
            PropertyError::MissingEnv { name } => Some(format!("{{{{env:{name}}}}}")),
            _ => None,
        }
    }
}

/// `key:default` → (`key`, `Some(default)`); the default may hold colons (`http://x`).
fn split_default(text: &str) -> (&str, Option<&str>) {
    match text.split_once(':') {
        Some((k, d)) => (k.trim(), Some(d)),
        None => (text.trim(), None),
    }
}

fn flatten(value: &serde_json::Value, prefix: String, props: &mut Properties) {
    use serde_json::Value as Json;
    match value {
        Json::Object(map) => {
            for (k, v) in map {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(v, key, props);
            }
        }
        Json::Null => {}
        Json::String(s) => props.set(prefix, s.clone()),
        Json::Array(items) => {
            // Camel's YAML properties join a list with commas.
            let joined: Vec<String> = items
                .iter()
                .map(|i| match i {
                    Json::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            props.set(prefix, joined.join(","));
        }
        other => props.set(prefix, other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> Properties {
        let mut p = Properties::new();
        for (k, v) in pairs {
            p.set(*k, *v);
        }
        p
    }

    #[test]
    fn keys_defaults_and_text_around() {
        let p = props(&[("dir", "in"), ("n", "5")]);
        assert_eq!(
            p.resolve("file:{{dir}}?max={{n}}&x={{missing:7}}").unwrap(),
            "file:in?max=5&x=7"
        );
        assert_eq!(p.resolve("no placeholder").unwrap(), "no placeholder");
        // A default may hold colons; an empty default is an empty value.
        assert_eq!(p.resolve("{{url:http://h:1/x}}").unwrap(), "http://h:1/x");
        assert_eq!(p.resolve("[{{gone:}}]").unwrap(), "[]");
        // A defined key wins over the default.
        assert_eq!(p.resolve("{{dir:out}}").unwrap(), "in");
    }

    #[test]
    fn env_lookups_with_and_without_default() {
        std::env::set_var("CAMEL_PROPS_TEST_HOME", "/h");
        let p = Properties::new();
        assert_eq!(p.resolve("{{env:CAMEL_PROPS_TEST_HOME}}").unwrap(), "/h");
        assert_eq!(
            p.resolve("{{env:CAMEL_PROPS_TEST_UNSET:def}}").unwrap(),
            "def"
        );
        assert_eq!(
            p.resolve("{{env:CAMEL_PROPS_TEST_UNSET}}").unwrap_err(),
            PropertyError::MissingEnv {
                name: "CAMEL_PROPS_TEST_UNSET".into()
            }
        );
    }

    #[test]
    fn missing_key_is_named_and_no_value_is_printed() {
        let p = props(&[("db.password", "hunter2")]);
        let e = p.resolve("x {{nope}}").unwrap_err();
        assert_eq!(e, PropertyError::Missing { key: "nope".into() });
        let text = e.to_string();
        assert!(text.contains("`{{nope}}`"), "{text}");
        assert!(text.contains("--property nope=VALUE"), "{text}");
        assert!(!format!("{p:?}").contains("hunter2"), "{p:?}");
        assert!(matches!(
            p.resolve("{{open").unwrap_err(),
            PropertyError::Malformed(_)
        ));
    }

    #[test]
    fn values_refer_to_other_values_but_cycles_stop() {
        let p = props(&[("host", "h"), ("url", "http://{{host}}:{{port:80}}")]);
        assert_eq!(p.resolve("{{url}}/x").unwrap(), "http://h:80/x");
        let cycle = props(&[("a", "{{b}}"), ("b", "{{a}}")]);
        assert!(matches!(
            cycle.resolve("{{a}}").unwrap_err(),
            PropertyError::TooDeep { .. }
        ));
    }

    #[test]
    fn values_that_multiply_stop_at_the_bound() {
        // Each level names the one below ten times: 10^9 copies of the last if resolved.
        let mut props = Properties::new();
        props.set("p0", "x".repeat(100));
        for level in 1..=9 {
            props.set(
                format!("p{level}"),
                format!("{{{{p{}}}}}", level - 1).repeat(10),
            );
        }
        let err = props.resolve("{{p9}}").unwrap_err();
        assert!(matches!(err, PropertyError::TooLarge { .. }), "{err}");
        // A large but legitimate value still resolves.
        props.set("big", "y".repeat(MAX_RESOLVED_LEN / 2));
        assert_eq!(
            props.resolve("{{big}}").unwrap().len(),
            MAX_RESOLVED_LEN / 2
        );
    }

    #[test]
    fn a_budget_bounds_the_text_of_many_resolutions_together() {
        // Each string stays far under the bound of one resolution; together they pass the
        // budget, and the one that would pass it is an error, as is every later one.
        let mut props = Properties::new();
        props.set("p0", "x".repeat(100));
        props.set("p1", "{{p0}}".repeat(10));
        let mut budget = Budget::new(5_000);
        for _ in 0..4 {
            assert_eq!(
                props
                    .resolve_counted("a {{p1}}", &mut budget)
                    .unwrap()
                    .len(),
                1002
            );
        }
        assert_eq!(budget.remaining(), 5_000 - 4 * 1002);
        let err = props.resolve_counted("a {{p1}}", &mut budget).unwrap_err();
        assert_eq!(err, PropertyError::TotalTooLarge { limit: 5_000 });
        assert!(
            err.to_string().contains("more than 5000 bytes in total"),
            "{err}"
        );
        assert_eq!(budget.remaining(), 0);
        assert!(matches!(
            props.resolve_counted("{{p0}}", &mut budget).unwrap_err(),
            PropertyError::TotalTooLarge { .. }
        ));
        // A string that passes the bound of one resolution with room to spare is still
        // that error, and the default budget is the YAML loader's 64 MiB.
        props.set("big", "{{p1}}".repeat(MAX_RESOLVED_LEN / 1000 + 1));
        let mut budget = Budget::default();
        assert!(matches!(
            props.resolve_counted("{{big}}", &mut budget).unwrap_err(),
            PropertyError::TooLarge { .. }
        ));
        assert_eq!(budget.remaining(), MAX_TOTAL_RESOLVED_LEN);
        assert_eq!(
            PropertyError::TotalTooLarge {
                limit: MAX_TOTAL_RESOLVED_LEN
            }
            .to_string()
            .split(" in total")
            .next(),
            Some("property placeholders expand to more than 64 MiB")
        );
    }

    #[test]
    fn properties_and_yaml_files_parse() {
        let p = Properties::parse_properties(
            "# comment\n! also\nname = world\ncolon: yes\nspaced value here\nlong = a\\\n  b\n\n",
        );
        assert_eq!(p.get("name"), Some("world"));
        assert_eq!(p.get("colon"), Some("yes"));
        assert_eq!(p.get("spaced"), Some("value here"));
        assert_eq!(p.get("long"), Some("ab"));
        let y = Properties::parse_yaml("app:\n  name: w\n  port: 80\n  list: [a, b]\n").unwrap();
        assert_eq!(y.get("app.name"), Some("w"));
        assert_eq!(y.get("app.port"), Some("80"));
        assert_eq!(y.get("app.list"), Some("a,b"));
    }
}
