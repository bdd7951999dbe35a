//! The `ftp:`, `ftps:` and `sftp:` components: one type, told its protocol.

use std::fmt;
use std::sync::Arc;

use camel_api::{
    BoxProcessor, CamelError, Component, ComponentContext, Consumer, Endpoint, EndpointUri,
};

use crate::consumer::FtpConsumer;
use crate::options::{shown_uri, FtpOptions};
use crate::producer::FtpProducer;
use crate::Protocol;

/// Makes `ftp://`, `ftps://` or `sftp://` endpoints.
#[derive(Debug, Clone, Copy)]
pub struct FtpComponent {
    protocol: Protocol,
}

impl FtpComponent {
    /// The component of `protocol`.
    pub fn new(protocol: Protocol) -> Self {
        FtpComponent { protocol }
    }
}

impl Component for FtpComponent {
    fn scheme(&self) -> &str {
        self.protocol.scheme()
    }

    fn endpoint(
        &self,
        uri: EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let options = Arc::new(FtpOptions::from_uri(self.protocol, uri, ctx)?);
        Ok(Arc::new(FtpEndpoint {
            shown: shown_uri(&options.uri),
            producer: Arc::new(FtpProducer::new(options.clone())),
            options,
        }))
    }
}

struct FtpEndpoint {
    /// The URI with its password masked: what `uri()` shows.
    shown: String,
    options: Arc<FtpOptions>,
    producer: Arc<FtpProducer>,
}

impl fmt::Debug for FtpEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FtpEndpoint")
            .field("uri", &self.shown)
            .finish_non_exhaustive()
    }
}

impl Endpoint for FtpEndpoint {
    fn uri(&self) -> &str {
        &self.shown
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        Ok(self.producer.clone().processor())
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        Ok(Box::new(FtpConsumer::new(self.options.clone())))
    }
}
