//! The built-in step compilers, one function per step, registered by name.

mod data;
mod endpoint;
pub(crate) mod layer;
mod message;
mod multicast;
pub(crate) mod resequence;
mod routing;
mod transacted;

use camel_api::BoxProcessor;
use serde_json::Value as Json;

use super::{StepCompiler, StepContext, StepRegistry};
use crate::error::RouteError;

type CompileFn = fn(&Json, &mut StepContext<'_>) -> Result<BoxProcessor, RouteError>;

/// A step compiler made from a name and a function.
#[derive(Debug, Clone, Copy)]
pub struct FnStep(pub &'static str, pub CompileFn);

impl StepCompiler for FnStep {
    fn name(&self) -> &'static str {
        self.0
    }

    fn compile(&self, config: &Json, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
        (self.1)(config, cx)
    }
}

pub(crate) fn register_builtin(r: &mut StepRegistry) {
    for step in [
        FnStep("to", endpoint::to),
        FnStep("process", endpoint::process),
        FnStep("log", message::log),
        FnStep("set_header", message::set_header),
        FnStep("set_property", message::set_property),
        FnStep("set_body", message::set_body),
        FnStep("transform", message::set_body),
        FnStep("remove_header", message::remove_header),
        FnStep("remove_headers", message::remove_headers),
        FnStep("remove_property", message::remove_property),
        FnStep("stop", message::stop),
        FnStep("filter", routing::filter),
        FnStep("choice", routing::choice),
        FnStep("marshal", data::marshal),
        FnStep("unmarshal", data::unmarshal),
        FnStep("convert_body_to", data::convert_body_to),
        FnStep("resequence", resequence::nested),
        FnStep("multicast", multicast::multicast),
        FnStep("scatter_gather", multicast::scatter_gather),
        FnStep("transacted", transacted::transacted),
        FnStep("layer", layer::layer),
    ] {
        r.register(step);
    }
}
