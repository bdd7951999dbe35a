//! Endpoint patterns as Camel's advice-with reads them: a URI, a glob with `*`
//! (`sqs:*`, `http*:*`), or a regular expression matched against the whole URI.

use regex::Regex;

use crate::AdviceError;

/// A pattern that selects endpoint URIs.
#[derive(Clone, Debug)]
pub struct EndpointPattern {
    text: String,
    glob: Regex,
    /// The pattern read as a regular expression, when it is one.
    regex: Option<Regex>,
}

impl EndpointPattern {
    /// Reads `text`: `*` alone matches every endpoint.
    pub fn new(text: &str) -> Result<Self, AdviceError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(AdviceError::Pattern {
                pattern: text.to_string(),
                reason: "an endpoint pattern is not empty (`*` matches every endpoint)".into(),
            });
        }
        let glob = text
            .split('*')
            .map(regex::escape)
            .collect::<Vec<_>>()
            .join(".*");
        let glob = Regex::new(&format!("^{glob}$")).map_err(|e| AdviceError::Pattern {
            pattern: text.to_string(),
            reason: e.to_string(),
        })?;
        let regex = Regex::new(&format!("^(?:{text})$")).ok();
        Ok(EndpointPattern {
            text: text.to_string(),
            glob,
            regex,
        })
    }

    /// The pattern as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether `uri` is selected: as written, and with `scheme://path` read as
    /// `scheme:path` (Camel treats the two spellings as one endpoint).
    pub fn matches(&self, uri: &str) -> bool {
        let normal = normalise(uri);
        [uri, normal.as_str()]
            .iter()
            .any(|u| self.glob.is_match(u) || self.regex.as_ref().is_some_and(|r| r.is_match(u)))
    }
}

/// `scheme://path?query` → `scheme:path?query`.
fn normalise(uri: &str) -> String {
    match uri.split_once(':') {
        Some((scheme, rest)) => format!("{scheme}:{}", rest.trim_start_matches("//")),
        None => uri.to_string(),
    }
}

/// The name of the mock that stands in for `uri`: the URI without its query, with
/// `scheme://` read as `scheme:` (`sqs://orders?x=1` → `sqs:orders`), so a test asks for
/// `mock:sqs:orders` however the route spelt it.
pub fn mock_name(uri: &str) -> String {
    let without_query = uri.split_once('?').map_or(uri, |(u, _)| u);
    normalise(without_query.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_regexes_and_both_spellings() {
        let sqs = EndpointPattern::new("sqs:*").unwrap();
        assert!(sqs.matches("sqs:orders"));
        assert!(sqs.matches("sqs://orders?region=x"));
        assert!(!sqs.matches("kafka:orders"));
        let http = EndpointPattern::new("http*:*").unwrap();
        assert!(http.matches("https://example.org/a"));
        assert!(http.matches("http:localhost:8080"));
        assert!(!http.matches("platform-http:/orders"));
        let exact = EndpointPattern::new("log:out").unwrap();
        assert!(exact.matches("log:out"));
        assert!(!exact.matches("log:outbound"));
        let regex = EndpointPattern::new("(kafka|sqs):.+").unwrap();
        assert!(regex.matches("kafka:t"));
        assert!(!regex.matches("seda:t"));
        assert!(EndpointPattern::new("*")
            .unwrap()
            .matches("anything:at-all"));
        assert!(EndpointPattern::new(" ").is_err());
    }

    #[test]
    fn mock_names_drop_the_query_and_slashes() {
        assert_eq!(mock_name("sqs://orders?region=eu"), "sqs:orders");
        assert_eq!(mock_name("kafka:t"), "kafka:t");
    }
}
