//! The route compiler: turns a [`RouteDefinition`] into one processor pipeline.
//!
//! Each step name maps to a [`StepCompiler`] registered in [`StepRegistry`]; adding an EIP
//! means writing one compiler and registering it. The output is a [`PipelineAssembly`]:
//! the pipeline and every step that owns background work ([`StepLifecycle`]), in route
//! order, so the controller can start and drain them.

mod decode;
mod expression;
mod route;
mod step_context;
pub mod steps;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use camel_api::{BoxProcessor, Endpoint, StepLifecycle};
use serde_json::Value as Json;

pub use route::compile_route;
pub use step_context::StepContext;

use crate::error::RouteError;

/// A compiled pipeline and the lifecycle-bearing steps in it, in route order.
#[derive(Clone)]
pub struct PipelineAssembly {
    /// The whole route's processor.
    pub pipeline: BoxProcessor,
    /// Steps with background work.
    pub lifecycles: Vec<Arc<dyn StepLifecycle>>,
}

impl fmt::Debug for PipelineAssembly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PipelineAssembly")
            .field("lifecycles", &self.lifecycles)
            .finish_non_exhaustive()
    }
}

/// A route ready to run: its id, its source endpoint and its pipeline.
#[derive(Debug, Clone)]
pub struct CompiledRoute {
    /// The route id.
    pub id: String,
    /// The `from` endpoint.
    pub source: Arc<dyn Endpoint>,
    /// The pipeline.
    pub assembly: PipelineAssembly,
}

/// Compiles one kind of step.
pub trait StepCompiler: Send + Sync + 'static {
    /// The canonical (snake_case) step name.
    fn name(&self) -> &'static str;

    /// Compiles the step's configuration into a processor.
    fn compile(&self, config: &Json, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError>;
}

/// The step compilers known to a context, by name.
#[derive(Clone)]
pub struct StepRegistry {
    compilers: HashMap<&'static str, Arc<dyn StepCompiler>>,
}

impl fmt::Debug for StepRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Default for StepRegistry {
    fn default() -> Self {
        let mut r = StepRegistry {
            compilers: HashMap::new(),
        };
        steps::register_builtin(&mut r);
        r
    }
}

impl StepRegistry {
    /// Registers a step compiler under its name (replacing any earlier one).
    pub fn register(&mut self, compiler: impl StepCompiler) {
        self.compilers.insert(compiler.name(), Arc::new(compiler));
    }

    /// The compiler for `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn StepCompiler>> {
        self.compilers.get(name).cloned()
    }

    /// All step names, sorted.
    pub fn names(&self) -> Vec<&'static str> {
        let mut v: Vec<_> = self.compilers.keys().copied().collect();
        v.sort_unstable();
        v
    }
}
