//! Which exchange headers travel as message attributes.
//!
//! Destinations cap attributes (SQS: 10) and a route's headers are mostly internal, so
//! a sink carries only the headers its `headers` parameter lists.

use std::sync::Arc;

use camel_api::{CamelError, Exchange, Parameters};

/// The headers a sink copies into message attributes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeaderSelection {
    names: Vec<Arc<str>>,
}

impl HeaderSelection {
    /// Takes the `headers` parameter: comma-separated header names.
    pub fn take_parameter(params: &mut Parameters) -> Result<Self, CamelError> {
        let names = params
            .take_str("headers")
            .map(|list| {
                list.split(',')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(Arc::from)
                    .collect()
            })
            .unwrap_or_default();
        Ok(HeaderSelection { names })
    }

    /// A selection of the given names.
    pub fn of(names: &[&str]) -> Self {
        HeaderSelection {
            names: names.iter().map(|n| Arc::from(*n)).collect(),
        }
    }

    /// Number of selected headers.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when no header is selected.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The selected headers present on `exchange`, as text.
    pub fn select(&self, exchange: &Exchange) -> Vec<(Arc<str>, Arc<str>)> {
        self.names
            .iter()
            .filter_map(|n| {
                exchange
                    .header(n)
                    .filter(|v| !v.is_null())
                    .map(|v| (n.clone(), Arc::from(v.to_string())))
            })
            .collect()
    }

    /// The selected names, for a batch identity.
    pub fn joined(&self) -> String {
        self.names.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use camel_api::EndpointUri;

    #[test]
    fn selects_listed_headers_present_on_the_exchange() {
        let mut uri = EndpointUri::parse("x:y?headers=a, b,c").unwrap();
        let sel = HeaderSelection::take_parameter(&mut uri.parameters).unwrap();
        assert_eq!(sel.len(), 3);
        let ex = Exchange::new("x")
            .with_header("a", 1)
            .with_header("c", "z")
            .with_header("d", "no");
        assert_eq!(
            sel.select(&ex),
            vec![
                (Arc::from("a"), Arc::from("1")),
                (Arc::from("c"), Arc::from("z"))
            ]
        );
    }
}
