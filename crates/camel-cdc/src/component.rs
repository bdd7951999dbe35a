//! The `pg-replication-slot:` component (and its alias `postgres-cdc:`).

use std::sync::Arc;

use camel_api::{
    BoxProcessor, CamelError, Component, ComponentContext, Consumer, Endpoint, EndpointUri,
};

use crate::consumer::CdcConsumer;
use crate::options::CdcOptions;

/// Makes `pg-replication-slot:` endpoints (consumers only: Camel's component has no
/// producer either).
#[derive(Debug, Clone)]
pub struct CdcComponent {
    scheme: &'static str,
}

impl CdcComponent {
    /// `pg-replication-slot:`, Camel's name.
    pub fn new() -> Self {
        CdcComponent {
            scheme: "pg-replication-slot",
        }
    }

    /// `postgres-cdc:`, the same component under the name users search for.
    pub fn alias() -> Self {
        CdcComponent {
            scheme: "postgres-cdc",
        }
    }
}

impl Default for CdcComponent {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for CdcComponent {
    fn scheme(&self) -> &str {
        self.scheme
    }

    fn endpoint(
        &self,
        uri: EndpointUri,
        _ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        Ok(Arc::new(CdcEndpoint {
            options: CdcOptions::from_uri(uri)?,
        }))
    }
}

#[derive(Debug)]
struct CdcEndpoint {
    options: CdcOptions,
}

impl Endpoint for CdcEndpoint {
    fn uri(&self) -> &str {
        &self.options.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        Err(CamelError::invalid_uri(
            self.options.uri.clone(),
            "pg-replication-slot: is a consumer only (use it in `from`); write to PostgreSQL with sql:",
        ))
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        Ok(Box::new(CdcConsumer::new(self.options.clone())))
    }
}
