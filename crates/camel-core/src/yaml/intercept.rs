//! Reading Camel's interceptors (ADR 0090): `- intercept:`, `- interceptFrom:` and
//! `- interceptSendToEndpoint:` at the top of a file (for every route of the file) or in
//! a `routeConfiguration` (for the routes that take it).
//!
//! ```yaml
//! - interceptSendToEndpoint:
//!     uri: "http:*"
//!     skipSendToOriginalEndpoint: true
//!     steps:
//!       - when: {simple: "${header.dryRun} == true"}
//!       - to: mock:http
//! - route:
//!     from: {uri: direct:a, steps: [{to: "http://example.org"}]}
//! ```

use serde_json::{Map, Value as Json};

use super::loader::Reader;
use super::normalise::normalise_config;
use crate::error::RouteError;
use crate::model::intercept::RouteIntercepts;

/// Which interceptor a key names.
#[derive(Clone, Copy, Debug)]
pub(super) enum InterceptKind {
    /// `intercept`
    Every,
    /// `intercept_from`
    From,
    /// `intercept_send_to_endpoint`
    SendTo,
}

impl InterceptKind {
    /// The kind a snake_case key names.
    pub(super) fn of(key: &str) -> Option<Self> {
        match key {
            "intercept" => Some(InterceptKind::Every),
            "intercept_from" => Some(InterceptKind::From),
            "intercept_send_to_endpoint" => Some(InterceptKind::SendTo),
            _ => None,
        }
    }

    /// Camel's spelling, the wrapper key of a list item.
    fn camel_name(self) -> &'static str {
        match self {
            InterceptKind::Every => "intercept",
            InterceptKind::From => "interceptFrom",
            InterceptKind::SendTo => "interceptSendToEndpoint",
        }
    }
}

impl Reader {
    /// One interceptor at `pointer` (a map, or a uri for the two that take one), added
    /// to `into` unless it is `disabled`.
    pub(super) fn intercept(
        &self,
        kind: InterceptKind,
        mut body: Json,
        pointer: &str,
        into: &mut RouteIntercepts,
    ) -> Result<(), RouteError> {
        if let (InterceptKind::From | InterceptKind::SendTo, Json::String(uri)) = (kind, &body) {
            let mut map = Map::new();
            map.insert("uri".into(), Json::String(uri.clone()));
            body = Json::Object(map);
        }
        normalise_config(&mut body);
        let at = pointer.to_string();
        match kind {
            InterceptKind::Every => {
                let d: crate::model::intercept::InterceptDefinition =
                    self.decode_at(&body, pointer)?;
                if !d.disabled {
                    into.intercept.push((d, at));
                }
            }
            InterceptKind::From => {
                let d: crate::model::intercept::InterceptFromDefinition =
                    self.decode_at(&body, pointer)?;
                if !d.disabled {
                    into.intercept_from.push((d, at));
                }
            }
            InterceptKind::SendTo => {
                let d: crate::model::intercept::InterceptSendToEndpointDefinition =
                    self.decode_at(&body, pointer)?;
                if !d.disabled {
                    into.intercept_send_to_endpoint.push((d, at));
                }
            }
        }
        Ok(())
    }

    /// The interceptors of a `routeConfiguration` key: one, or a list written
    /// `[{interceptFrom: {...}}, ...]` (Camel's shape) or `[{...}, ...]`.
    pub(super) fn intercept_list(
        &self,
        kind: InterceptKind,
        value: Json,
        pointer: &str,
        into: &mut RouteIntercepts,
    ) -> Result<(), RouteError> {
        for (item, at) in self.configuration_items(value, pointer, kind.camel_name()) {
            self.intercept(kind, item, &at, into)?;
        }
        Ok(())
    }
}
