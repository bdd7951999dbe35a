use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use crate::redact::shown_value;
use crate::suggest::{nearest, to_snake_case, Spelling};
use crate::CamelError;

/// A parsed endpoint URI: `scheme:path?name=value&…`, plus parameters given beside it
/// (the YAML `parameters` map). Parameter names are normalised to snake_case, so Camel's
/// camelCase spellings (`fileName`) work as aliases of the canonical ones (`file_name`).
#[derive(Clone, Debug)]
pub struct EndpointUri {
    raw: Arc<str>,
    scheme: String,
    path: String,
    /// The parameters not yet consumed by the component.
    pub parameters: Parameters,
}

impl EndpointUri {
    /// Parses `scheme:path?query`.
    pub fn parse(uri: &str) -> Result<Self, CamelError> {
        let raw: Arc<str> = uri.trim().into();
        let Some((scheme, rest)) = raw.split_once(':') else {
            return Err(CamelError::invalid_uri(
                raw.clone(),
                "a URI needs a scheme, as in `direct:name`",
            ));
        };
        if scheme.is_empty()
            || !scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '+' || c == '.')
        {
            return Err(CamelError::invalid_uri(
                raw.clone(),
                format!("`{scheme}` is not a valid scheme"),
            ));
        }
        let (path, query) = match rest.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (rest, None),
        };
        let path = path.trim_start_matches("//").to_string();
        let mut parameters = Parameters::new(raw.clone());
        if let Some(query) = query {
            for pair in query.split('&').filter(|p| !p.is_empty()) {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                parameters.set(&percent_decode(k), percent_decode(v));
            }
        }
        Ok(EndpointUri {
            scheme: scheme.to_string(),
            path,
            parameters,
            raw,
        })
    }

    /// Adds parameters given beside the URI (they win over the query string).
    pub fn with_parameters<'a>(
        mut self,
        extra: impl IntoIterator<Item = (&'a str, String)>,
    ) -> Self {
        for (k, v) in extra {
            self.parameters.set(k, v);
        }
        self
    }

    /// The URI as written.
    pub fn as_str(&self) -> &str {
        &self.raw
    }

    /// The URI as a shared string.
    pub fn raw(&self) -> Arc<str> {
        self.raw.clone()
    }

    /// The scheme (`direct`).
    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    /// Everything between the scheme and the query (`name` in `direct:name`).
    pub fn path(&self) -> &str {
        &self.path
    }
}

impl fmt::Display for EndpointUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

/// Decodes `%XX` escapes; anything else, `+` included, stays as written (`+` is a space
/// only in a query, which its reader handles).
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Escapes every byte but RFC 3986's unreserved characters (`A-Z a-z 0-9 - . _ ~`) as
/// `%XX`: safe as one URL path segment or one query value.
pub fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Endpoint parameters. A component takes the ones it knows with the typed `take_*`
/// methods and then calls [`Parameters::finish`], which rejects whatever is left — an
/// unknown parameter is an error, never silently ignored.
#[derive(Clone, Debug)]
pub struct Parameters {
    uri: Arc<str>,
    entries: BTreeMap<String, String>,
    /// Each name as the user wrote it, by its snake_case form: messages echo it so.
    written: BTreeMap<String, String>,
}

impl Parameters {
    fn new(uri: Arc<str>) -> Self {
        Parameters {
            uri,
            entries: BTreeMap::new(),
            written: BTreeMap::new(),
        }
    }

    /// Sets a parameter (the name is normalised to snake_case).
    pub fn set(&mut self, name: &str, value: String) {
        let snake = to_snake_case(name);
        self.written.insert(snake.clone(), name.to_string());
        self.entries.insert(snake, value);
    }

    /// A parameter's name as the user wrote it (its snake_case form when not given).
    pub fn written(&self, name: &str) -> String {
        match self.written.get(name) {
            Some(w) => w.clone(),
            None => self.spelling().spell(name),
        }
    }

    /// The spelling the user wrote the parameters in (camelCase when none tells).
    fn spelling(&self) -> Spelling {
        Spelling::among(self.written.values().map(String::as_str))
    }

    /// True when the parameter is present (and not yet taken).
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// Takes every parameter whose name starts with `prefix` (snake_case, as
    /// `additional_properties.`): each with the rest of its name as the user wrote it
    /// (`additionalProperties.max.poll.records` gives `max.poll.records`).
    pub fn take_prefixed(&mut self, prefix: &str) -> Vec<(String, String)> {
        let names: Vec<String> = self
            .entries
            .keys()
            .filter(|k| k.starts_with(prefix))
            .cloned()
            .collect();
        let mut out = Vec::new();
        for name in names {
            let Some(value) = self.entries.remove(&name) else {
                continue;
            };
            let written = self.written(&name);
            // The part after the prefix's first `.`, as written.
            let rest = match written.split_once('.') {
                Some((_, rest)) => rest.to_string(),
                None => name[prefix.len()..].to_string(),
            };
            out.push((rest, value));
        }
        out
    }

    /// Takes a parameter as text.
    pub fn take_str(&mut self, name: &str) -> Option<String> {
        self.entries.remove(name)
    }

    /// Takes and parses a parameter.
    pub fn take<T>(&mut self, name: &str) -> Result<Option<T>, CamelError>
    where
        T: FromStr,
        T::Err: fmt::Display,
    {
        match self.entries.remove(name) {
            None => Ok(None),
            Some(v) => v.trim().parse::<T>().map(Some).map_err(|e| {
                CamelError::invalid_uri(
                    self.uri.clone(),
                    format!(
                        "parameter `{}` = `{}`: {e}",
                        self.written(name),
                        shown_value(name, &v)
                    ),
                )
            }),
        }
    }

    /// Takes a boolean (`true`/`false`).
    pub fn take_bool(&mut self, name: &str) -> Result<Option<bool>, CamelError> {
        self.take::<bool>(name)
    }

    /// Takes a duration: a number of milliseconds, or a number with a unit
    /// (`500ms`, `2s`, `1m`, `1h`).
    pub fn take_duration(&mut self, name: &str) -> Result<Option<Duration>, CamelError> {
        match self.entries.remove(name) {
            None => Ok(None),
            Some(v) => parse_duration(&v).map(Some).ok_or_else(|| {
                CamelError::invalid_uri(
                    self.uri.clone(),
                    format!(
                        "parameter `{}` = `{}` is not a duration (use 1000, 500ms, 2s, 1m)",
                        self.written(name),
                        shown_value(name, &v)
                    ),
                )
            }),
        }
    }

    /// Takes a parameter with one of the given values (compared case-insensitively,
    /// camelCase accepted), returning the matching canonical value.
    pub fn take_choice(
        &mut self,
        name: &str,
        choices: &[&'static str],
    ) -> Result<Option<&'static str>, CamelError> {
        match self.entries.remove(name) {
            None => Ok(None),
            Some(v) => {
                let norm = to_snake_case(&v).to_ascii_lowercase();
                choices
                    .iter()
                    .find(|c| c.eq_ignore_ascii_case(&norm) || c.eq_ignore_ascii_case(&v))
                    .copied()
                    .map(Some)
                    .ok_or_else(|| {
                        CamelError::invalid_uri(
                            self.uri.clone(),
                            format!(
                                "parameter `{}` = `{}`: expected one of {}",
                                self.written(name),
                                shown_value(name, &v),
                                choices.join(", ")
                            ),
                        )
                    })
            }
        }
    }

    /// Fails if any parameter was not taken, naming it and the nearest known one.
    pub fn finish(self, known: &[&str]) -> Result<(), CamelError> {
        match self.entries.keys().next() {
            None => Ok(()),
            Some(unknown) => {
                // Echoed as written, suggestions in the same spelling (`showBody`, or
                // `show_body` in a file written in snake_case).
                let spelling = Spelling::of(&self.written(unknown)).unwrap_or(self.spelling());
                let hint = nearest(unknown, known.iter().copied())
                    .map(|n| format!("; did you mean `{}`?", spelling.spell(n)))
                    .unwrap_or_else(|| {
                        if known.is_empty() {
                            "; this endpoint takes no parameters".to_string()
                        } else {
                            let names: Vec<String> =
                                known.iter().map(|k| spelling.spell(k)).collect();
                            format!("; known parameters: {}", names.join(", "))
                        }
                    });
                Err(CamelError::invalid_uri(
                    self.uri.clone(),
                    format!("unknown parameter `{}`{hint}", self.written(unknown)),
                ))
            }
        }
    }
}

/// Parses `1000`, `500ms`, `2s`, `1m`, `1h` into a duration.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let t = text.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().ok()?;
    if !n.is_finite() || n < 0.0 {
        return None;
    }
    let ms = match unit.trim() {
        "" | "ms" => n,
        "s" => n * 1000.0,
        "m" => n * 60_000.0,
        "h" => n * 3_600_000.0,
        _ => return None,
    };
    Some(Duration::from_micros((ms * 1000.0) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_win_over_the_query_string() {
        let mut uri = EndpointUri::parse("log:x?level=DEBUG&showBody=true")
            .unwrap()
            .with_parameters([("level", "WARN".to_string())]);
        assert_eq!(uri.parameters.take_str("level").as_deref(), Some("WARN"));
        assert_eq!(
            uri.parameters.take_str("show_body").as_deref(),
            Some("true")
        );
        uri.parameters.finish(&[]).unwrap();
    }

    #[test]
    fn parses_scheme_path_and_query() {
        let mut uri = EndpointUri::parse("timer:tick?period=500&repeatCount=3").unwrap();
        assert_eq!(uri.scheme(), "timer");
        assert_eq!(uri.path(), "tick");
        assert_eq!(
            uri.parameters.take_duration("period").unwrap(),
            Some(Duration::from_millis(500))
        );
        assert_eq!(uri.parameters.take::<u64>("repeat_count").unwrap(), Some(3));
        uri.parameters.finish(&[]).unwrap();
    }

    #[test]
    fn unknown_parameter_is_named_with_suggestion() {
        let uri = EndpointUri::parse("timer:t?perod=1").unwrap();
        let err = uri.parameters.finish(&["period", "delay"]).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("perod") && text.contains("period"), "{text}");
    }

    #[test]
    fn rejects_uri_without_scheme() {
        assert!(EndpointUri::parse("nothing").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2s"), Some(Duration::from_secs(2)));
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_duration("x"), None);
    }
}
