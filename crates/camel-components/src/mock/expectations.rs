//! What a mock endpoint expects, and the check of what it received against it.

use camel_api::{Body, Exchange, Value};

use super::MockAssertionError;

/// The expectations set on one mock endpoint.
#[derive(Clone, Debug, Default)]
pub(super) struct Expectations {
    pub(super) count: Option<usize>,
    pub(super) minimum: Option<usize>,
    pub(super) bodies: Option<Vec<Body>>,
    pub(super) headers: Vec<(String, Value)>,
}

impl Expectations {
    /// How many messages must have arrived before checking makes sense.
    pub(super) fn awaited(&self) -> usize {
        let headers = usize::from(!self.headers.is_empty());
        [
            self.count.unwrap_or(0),
            self.minimum.unwrap_or(0),
            self.bodies.as_ref().map_or(0, Vec::len),
            headers,
        ]
        .into_iter()
        .max()
        .unwrap_or(0)
    }

    /// Checks `received` against every expectation; the first failure is reported.
    pub(super) fn check(
        &self,
        endpoint: &str,
        received: &[Exchange],
    ) -> Result<(), MockAssertionError> {
        let count = self.count.or_else(|| self.bodies.as_ref().map(Vec::len));
        if let Some(expected) = count {
            if received.len() != expected {
                return Err(MockAssertionError::MessageCount {
                    endpoint: endpoint.to_string(),
                    expected,
                    received: received.len(),
                    bodies: received
                        .iter()
                        .map(|ex| quote_body(&ex.message.body))
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
        }
        if let Some(expected) = self.minimum {
            if received.len() < expected {
                return Err(MockAssertionError::MinimumMessageCount {
                    endpoint: endpoint.to_string(),
                    expected,
                    received: received.len(),
                });
            }
        }
        for (i, expected) in self.bodies.iter().flatten().enumerate() {
            let actual = received.get(i).map(|ex| &ex.message.body);
            if !actual.is_some_and(|actual| same_body(expected, actual)) {
                return Err(MockAssertionError::Body {
                    endpoint: endpoint.to_string(),
                    index: i + 1,
                    expected: quote_body(expected),
                    received: actual.map_or_else(|| "<missing>".to_string(), quote_body),
                });
            }
        }
        for (name, expected) in &self.headers {
            let header_error = |index: usize, received: String| MockAssertionError::Header {
                endpoint: endpoint.to_string(),
                index,
                name: name.clone(),
                expected: format!("`{expected}`"),
                received,
            };
            if received.is_empty() {
                return Err(header_error(0, "no message".to_string()));
            }
            for (i, ex) in received.iter().enumerate() {
                match ex.header(name) {
                    Some(actual) if same_value(expected, actual) => {}
                    Some(actual) => return Err(header_error(i + 1, format!("`{actual}`"))),
                    None => return Err(header_error(i + 1, "<no such header>".to_string())),
                }
            }
        }
        Ok(())
    }
}

/// Bodies are compared by their bytes, so `"a"` as text matches `b"a"` as bytes.
fn same_body(expected: &Body, actual: &Body) -> bool {
    expected == actual || expected.to_bytes() == actual.to_bytes()
}

/// Values are compared by their text too, so `7` matches `"7"`.
fn same_value(expected: &Value, actual: &Value) -> bool {
    expected == actual || expected.to_string() == actual.to_string()
}

fn quote_body(body: &Body) -> String {
    match body {
        Body::Empty => "<empty>".to_string(),
        other => match other.as_text() {
            Some(text) => format!("{text:?}"),
            None => format!("<{} bytes>", other.len()),
        },
    }
}
