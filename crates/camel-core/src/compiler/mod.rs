//! The route compiler: turns a [`RouteDefinition`] into one processor pipeline.
//!
//! Each step name maps to a [`StepCompiler`] registered in [`StepRegistry`]; adding an EIP
//! means writing one compiler and registering it. The output is a [`PipelineAssembly`]:
//! the pipeline and every step that owns background work ([`StepLifecycle`]), in route
//! order, so the controller can start and drain them.

pub(crate) mod decode;
pub use decode::pointer_of;
mod errors;
pub(crate) mod intercept;
mod node_options;
mod order;
mod registry;
mod route;
mod step_context;
pub mod steps;

use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use camel_api::definition::StepConfig;
use camel_api::{BoxProcessor, Endpoint, StepLifecycle};
use serde_json::Value as Json;

pub use registry::Registry;
pub(crate) use registry::WeakRegistry;
pub use route::{compile_route, compile_route_reporting_all, VARIABLE_RECEIVE};
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
    /// `to` destinations that do not keep the order the source delivers in (an outbox
    /// relay into an SQS standard queue): warned about each time the route starts.
    pub unordered_destinations: Vec<String>,
}

/// Compiles one kind of step. Registered by name in a [`StepRegistry`] (a context's
/// through [`CamelContext::add_step`](crate::CamelContext::add_step)).
///
/// Most compilers are made with [`typed`] from a function over the step's typed
/// configuration; implement this trait directly to read the raw configuration.
pub trait StepCompiler: Send + Sync + 'static {
    /// Compiles the step's configuration into a processor.
    fn compile(&self, config: &Json, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError>;
}

/// A step compiler from a function over the step's typed configuration `C`: the raw
/// configuration is decoded through `C` first, and its errors are located (file, line,
/// column, nearest known key).
///
/// ```
/// use camel_api::definition::StepConfig;
/// use camel_core::compiler::{typed, StepRegistry};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize)]
/// #[serde(deny_unknown_fields)]
/// struct Noop {}
/// impl StepConfig for Noop {
///     const NAME: &'static str = "noop";
/// }
///
/// let mut steps = StepRegistry::default();
/// steps.register("noop", typed(|_: Noop, _cx| Ok(camel_api::BoxProcessor::identity())));
/// assert!(steps.get("noop").is_some());
/// ```
pub fn typed<C, F>(compile: F) -> Typed<C, F>
where
    C: StepConfig,
    F: Fn(C, &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> + Send + Sync + 'static,
{
    Typed {
        compile,
        _config: PhantomData,
    }
}

/// See [`typed`].
pub struct Typed<C, F> {
    compile: F,
    _config: PhantomData<fn() -> C>,
}

impl<C, F> fmt::Debug for Typed<C, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Typed")
            .field("config", &std::any::type_name::<C>())
            .finish()
    }
}

impl<C, F> StepCompiler for Typed<C, F>
where
    C: StepConfig,
    F: Fn(C, &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> + Send + Sync + 'static,
{
    fn compile(&self, config: &Json, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
        let config = cx.config::<C>(config)?;
        (self.compile)(config, cx)
    }
}

/// The step compilers known to a context, by name.
#[derive(Clone)]
pub struct StepRegistry {
    compilers: HashMap<String, Arc<dyn StepCompiler>>,
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
    /// Registers a step compiler under `name` (snake_case; replacing any earlier one).
    pub fn register(&mut self, name: impl Into<String>, compiler: impl StepCompiler) {
        self.compilers.insert(name.into(), Arc::new(compiler));
    }

    /// The compiler for `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn StepCompiler>> {
        self.compilers.get(name).cloned()
    }

    /// All step names, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<_> = self.compilers.keys().cloned().collect();
        v.sort_unstable();
        v
    }
}
