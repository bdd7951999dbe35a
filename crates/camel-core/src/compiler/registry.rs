//! What routes are compiled against: components by scheme, languages, step compilers and
//! shared resources.

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, RwLock};

use camel_api::suggest::nearest;
use camel_api::{
    BoxExpression, BoxPredicate, BoxProcessor, CamelError, Component, ComponentContext, Endpoint,
    EndpointUri,
};
use camel_language::LanguageRegistry;

use super::{StepCompiler, StepRegistry};
use crate::error::RouteErrorKind;
use crate::model::EndpointDefinition;

/// Components, languages, step compilers and named resources of a context.
///
/// Each table sits behind an `Arc` so that steps resolving endpoints while a route runs
/// (recipient list, `to_d`, …) can hold a [`WeakRegistry`]: a weak handle, so a running
/// route never keeps its context's components alive (ADR 0060).
#[derive(Default)]
pub struct Registry {
    components: Arc<RwLock<HashMap<String, Arc<dyn Component>>>>,
    resources: Arc<RwLock<HashMap<String, Arc<dyn Any + Send + Sync>>>>,
    // Behind locks so user code can add languages and steps after the context is built;
    // read (and cloned out of) on the cold compile path only.
    languages: Arc<RwLock<LanguageRegistry>>,
    steps: Arc<RwLock<StepRegistry>>,
    /// Factories of the bean types a file's `beans:` entries name (ADR 0076).
    bean_types: Arc<RwLock<HashMap<String, crate::bean::BeanFactory>>>,
    /// Database pools, one per database, closed when the context stops (ADR 0085).
    pools: camel_api::pools::Pools,
    /// The backlog tracer: which routes get step hooks when compiled (ADR 0132).
    tracer: crate::observe::backlog::BacklogTracer,
}

/// A weak handle on a [`Registry`]'s tables, upgraded while a route runs.
#[derive(Clone, Default)]
pub(crate) struct WeakRegistry {
    components: std::sync::Weak<RwLock<HashMap<String, Arc<dyn Component>>>>,
    resources: std::sync::Weak<RwLock<HashMap<String, Arc<dyn Any + Send + Sync>>>>,
    languages: std::sync::Weak<RwLock<LanguageRegistry>>,
    steps: std::sync::Weak<RwLock<StepRegistry>>,
    bean_types: std::sync::Weak<RwLock<HashMap<String, crate::bean::BeanFactory>>>,
    pools: camel_api::pools::Pools,
    tracer: crate::observe::backlog::BacklogTracer,
}

impl fmt::Debug for WeakRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakRegistry")
            .field("alive", &(self.components.strong_count() > 0))
            .finish()
    }
}

impl WeakRegistry {
    /// The registry, while its context exists.
    pub(crate) fn upgrade(&self) -> Option<Registry> {
        Some(Registry {
            components: self.components.upgrade()?,
            resources: self.resources.upgrade()?,
            languages: self.languages.upgrade()?,
            steps: self.steps.upgrade()?,
            bean_types: self.bean_types.upgrade()?,
            pools: self.pools.clone(),
            tracer: self.tracer.clone(),
        })
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("components", &self.component_schemes())
            .field("languages", &self.language_names())
            .field("steps", &self.step_names())
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// A weak handle on these tables.
    pub(crate) fn downgrade(&self) -> WeakRegistry {
        WeakRegistry {
            components: Arc::downgrade(&self.components),
            resources: Arc::downgrade(&self.resources),
            languages: Arc::downgrade(&self.languages),
            steps: Arc::downgrade(&self.steps),
            bean_types: Arc::downgrade(&self.bean_types),
            pools: self.pools.clone(),
            tracer: self.tracer.clone(),
        }
    }

    /// The context's backlog tracer.
    pub fn tracer(&self) -> &crate::observe::backlog::BacklogTracer {
        &self.tracer
    }

    /// The resource named `name`, or the one `make` builds, registered under `name` if
    /// none was (atomically: two routes compiled at once share one).
    pub(crate) fn resource_or_insert_with(
        &self,
        name: &str,
        make: impl FnOnce() -> Arc<dyn Any + Send + Sync>,
    ) -> Arc<dyn Any + Send + Sync> {
        self.resources
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .entry(name.to_string())
            .or_insert_with(make)
            .clone()
    }

    /// The context's database pools (one per database, shared by its components).
    pub fn pools(&self) -> &camel_api::pools::Pools {
        &self.pools
    }

    /// Registers a component under its scheme.
    pub fn add_component(&self, component: Arc<dyn Component>) {
        let scheme = component.scheme().to_string();
        self.components
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(scheme, component);
    }

    /// The component for `scheme`.
    pub fn component(&self, scheme: &str) -> Option<Arc<dyn Component>> {
        self.components
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(scheme)
            .cloned()
    }

    /// Every registered component (a snapshot: the lock is not held while they are used).
    pub(crate) fn components(&self) -> Vec<Arc<dyn Component>> {
        self.components
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// Registered schemes, sorted.
    pub fn component_schemes(&self) -> Vec<String> {
        sorted_keys(&self.components)
    }

    /// Registers a shared resource (a datasource, a client, a Rust processor).
    pub fn add_resource(&self, name: &str, resource: Arc<dyn Any + Send + Sync>) {
        self.resources
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string(), resource);
    }

    /// The resource named `name`.
    pub fn resource(&self, name: &str) -> Option<Arc<dyn Any + Send + Sync>> {
        self.resources
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned()
    }

    /// A Rust processor registered as a resource under `name`, or the default method of a
    /// bean registered under it.
    pub fn processor(&self, name: &str) -> Option<BoxProcessor> {
        self.bean(name).and_then(|b| b.processor(None))
    }

    /// Registers a bean under `name` (replacing any resource of that name).
    pub fn add_bean(&self, name: &str, bean: Arc<dyn camel_api::Bean>) {
        self.add_resource(name, camel_api::bean_resource(bean));
    }

    /// The bean registered under `name`: one added with [`add_bean`](Self::add_bean), or a
    /// [`BoxProcessor`] resource (a bean whose one method is the processor).
    pub fn bean(&self, name: &str) -> Option<Arc<dyn camel_api::Bean>> {
        self.resource(name).and_then(camel_api::bean_of)
    }

    /// Registers a policy under `name` (replacing any resource of that name), for
    /// `policy: {ref: name, steps: [...]}` in routes compiled afterwards.
    pub fn add_policy(&self, name: &str, policy: camel_eip::policy::Policy) {
        self.add_resource(name, Arc::new(policy));
    }

    /// The policy registered under `name`.
    pub fn policy(&self, name: &str) -> Option<camel_eip::policy::Policy> {
        self.resource(name)
            .and_then(|r| r.downcast::<camel_eip::policy::Policy>().ok())
            .map(|p| (*p).clone())
    }

    /// Names of the registered policies, sorted.
    pub fn policy_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .resources
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(_, r)| r.is::<camel_eip::policy::Policy>())
            .map(|(n, _)| n.clone())
            .collect();
        v.sort();
        v
    }

    /// Registers (or replaces) the factory of the bean type `name`.
    pub fn add_bean_type(&self, name: &str, factory: crate::bean::BeanFactory) {
        self.bean_types
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string(), factory);
    }

    /// The factory of the bean type `name`.
    pub fn bean_type(&self, name: &str) -> Option<crate::bean::BeanFactory> {
        self.bean_types
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned()
    }

    /// Names of the registered bean types, sorted.
    pub fn bean_type_names(&self) -> Vec<String> {
        sorted_keys(&self.bean_types)
    }

    /// Names of the registered beans (and processors), sorted.
    pub fn bean_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .resources
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(_, r)| camel_api::bean_of(Arc::clone(r)).is_some())
            .map(|(n, _)| n.clone())
            .collect();
        v.sort();
        v
    }

    /// A snapshot of the language registry.
    pub fn languages(&self) -> LanguageRegistry {
        self.languages
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Registers (or replaces) an expression language under `name`.
    pub fn add_language(&self, name: &'static str, language: Arc<dyn camel_api::Language>) {
        self.languages
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .register_as(name, language);
    }

    /// The language called `name`.
    pub fn language(&self, name: &str) -> Option<Arc<dyn camel_api::Language>> {
        self.languages
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
    }

    /// Names of the registered languages, sorted.
    pub fn language_names(&self) -> Vec<&'static str> {
        self.languages
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .names()
    }

    /// Registers (or replaces) the compiler of the step called `name` (snake_case).
    pub fn add_step(&self, name: impl Into<String>, compiler: impl StepCompiler) {
        self.steps
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .register(name, compiler);
    }

    /// The compiler of the step called `name`.
    pub fn step(&self, name: &str) -> Option<Arc<dyn StepCompiler>> {
        self.steps
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
    }

    /// Names of the registered steps, sorted.
    pub fn step_names(&self) -> Vec<String> {
        self.steps.read().unwrap_or_else(|e| e.into_inner()).names()
    }

    /// Resolves an endpoint definition through its component.
    pub(crate) fn endpoint(
        &self,
        def: &EndpointDefinition,
        route_id: Option<&str>,
    ) -> Result<Arc<dyn Endpoint>, RouteErrorKind> {
        self.endpoint_with(def, route_id, Options::Compiled)
    }

    /// Resolves a URI computed while a route runs (`to_d`, a recipient list, …). Part of
    /// it may come from the message, so the endpoint's options are taken as literal
    /// text: an option that is an expression for a route file's endpoint (`file_name`,
    /// a group key, …) is not compiled here, and a value such as `${env.SECRET}` stays
    /// that text instead of being evaluated.
    pub(crate) fn runtime_endpoint(
        &self,
        def: &EndpointDefinition,
        route_id: Option<&str>,
    ) -> Result<Arc<dyn Endpoint>, RouteErrorKind> {
        self.endpoint_with(def, route_id, Options::Literal)
    }

    fn endpoint_with(
        &self,
        def: &EndpointDefinition,
        route_id: Option<&str>,
        options: Options,
    ) -> Result<Arc<dyn Endpoint>, RouteErrorKind> {
        let def = &crate::model::endpoint_path::camel_form(def);
        let parameters = def.parameter_strings();
        unresolved_placeholder(&def.uri, &parameters)?;
        // `uri: kafka` with its path in `parameters`: a Camel component we lack is named
        // as such, not refused for want of a `:`.
        if !def.uri.contains(':') && self.component(&def.uri).is_none() {
            if let Some(message) = crate::model::camel_dsl::unsupported(
                crate::model::camel_dsl::Kind::Component,
                &def.uri,
            ) {
                return Err(RouteErrorKind::InvalidValue(message));
            }
        }
        let uri = EndpointUri::parse(&def.uri)
            .map_err(RouteErrorKind::Endpoint)?
            .with_parameters(parameters);
        let Some(component) = self.component(uri.scheme()) else {
            if let Some(message) = crate::model::camel_dsl::unsupported(
                crate::model::camel_dsl::Kind::Component,
                uri.scheme(),
            ) {
                return Err(RouteErrorKind::InvalidValue(message));
            }
            let schemes = self.component_schemes();
            return Err(RouteErrorKind::UnknownComponent(
                CamelError::UnknownComponent {
                    uri: uri.raw(),
                    scheme: uri.scheme().into(),
                    suggestion: nearest(uri.scheme(), schemes.iter().map(String::as_str))
                        .map(Into::into),
                },
            ));
        };
        let cx = EndpointContext {
            registry: self,
            route_id,
            options,
        };
        component
            .endpoint(uri, &cx)
            .map_err(RouteErrorKind::Endpoint)
    }
}

/// The keys of a locked map, sorted.
fn sorted_keys<V>(map: &RwLock<HashMap<String, V>>) -> Vec<String> {
    let mut v: Vec<String> = map
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .keys()
        .cloned()
        .collect();
    v.sort();
    v
}

/// Refuses a `{{name}}` property placeholder left in an endpoint's URI or parameters. The
/// YAML loader resolves placeholders before this point, so one that arrives here came
/// from a route built in Rust (or a resolved value holding `{{`); passed through as text
/// one became a folder named `{{folderName}}`.
fn unresolved_placeholder(uri: &str, parameters: &[(&str, String)]) -> Result<(), RouteErrorKind> {
    let texts =
        std::iter::once(("the URI", uri)).chain(parameters.iter().map(|(k, v)| (*k, v.as_str())));
    for (place, text) in texts {
        let Some(start) = text.find("{{") else {
            continue;
        };
        let end = text[start..]
            .find("}}")
            .map_or(text.len(), |e| start + e + 2);
        // Shown only where the redaction would show it: a password may hold `{{`.
        let (shown, place) = if place == "the URI" {
            (camel_api::redact_url(text), place.to_string())
        } else {
            (
                camel_api::shown_value(place, text),
                format!("parameter `{place}`"),
            )
        };
        let placeholder = Some(&text[start..end])
            .filter(|p| shown.contains(p))
            .unwrap_or("{{…}}");
        return Err(RouteErrorKind::Endpoint(CamelError::invalid_uri(
            uri,
            format!(
                "{place} holds the unresolved property placeholder `{placeholder}`: only \
                 route files have their placeholders resolved (resolve the value before \
                 building the route)"
            ),
        )));
    }
    Ok(())
}

impl Registry {
    /// The transaction manager for `datasource` (each component's default database when
    /// `None`): the first component, in scheme order, that offers one.
    pub(crate) fn transaction_manager(
        &self,
        datasource: Option<&str>,
        route_id: Option<&str>,
    ) -> Result<Option<Arc<dyn camel_api::transaction::TransactionManager>>, CamelError> {
        let cx = EndpointContext {
            registry: self,
            route_id,
            options: Options::Compiled,
        };
        for scheme in self.component_schemes() {
            let Some(component) = self.component(&scheme) else {
                continue;
            };
            if let Some(manager) = component.transaction_manager(datasource, &cx)? {
                return Ok(Some(manager));
            }
        }
        Ok(None)
    }
}

/// How the expressions an endpoint's options hold are compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Options {
    /// In the language they name: the URI is the route author's.
    Compiled,
    /// As constants: the URI was computed from an exchange while the route ran.
    Literal,
}

/// The [`ComponentContext`] handed to components while a route compiles.
struct EndpointContext<'a> {
    registry: &'a Registry,
    route_id: Option<&'a str>,
    options: Options,
}

impl EndpointContext<'_> {
    fn language(&self, language: &str) -> Result<Arc<dyn camel_api::Language>, CamelError> {
        self.registry.language(language).ok_or_else(|| {
            CamelError::processor(format!(
                "unknown expression language `{language}` (known: {})",
                self.registry.language_names().join(", ")
            ))
        })
    }
}

impl ComponentContext for EndpointContext<'_> {
    fn expression(&self, language: &str, text: &str) -> Result<BoxExpression, CamelError> {
        if self.options == Options::Literal {
            return Ok(camel_language::constant(text));
        }
        Ok(self
            .language(language)?
            .expression(text, &Default::default())?)
    }

    fn predicate(&self, language: &str, text: &str) -> Result<BoxPredicate, CamelError> {
        let language = match self.options {
            Options::Compiled => language,
            Options::Literal => "constant",
        };
        Ok(self
            .language(language)?
            .predicate(text, &Default::default())?)
    }

    fn producer(&self, uri: &str) -> Result<BoxProcessor, CamelError> {
        let endpoint = self
            .registry
            .endpoint_with(&EndpointDefinition::new(uri), self.route_id, self.options)
            .map_err(|kind| match kind {
                RouteErrorKind::Endpoint(e) | RouteErrorKind::UnknownComponent(e) => e,
                other => CamelError::invalid_uri(uri.to_string(), other),
            })?;
        endpoint.producer()
    }

    fn endpoint(&self, uri: &str) -> Result<Arc<dyn Endpoint>, CamelError> {
        self.registry
            .endpoint_with(&EndpointDefinition::new(uri), self.route_id, self.options)
            .map_err(|kind| match kind {
                RouteErrorKind::Endpoint(e) | RouteErrorKind::UnknownComponent(e) => e,
                other => CamelError::invalid_uri(uri.to_string(), other),
            })
    }

    fn resource(&self, name: &str) -> Option<Arc<dyn Any + Send + Sync>> {
        self.registry.resource(name)
    }

    fn route_id(&self) -> Option<&str> {
        self.route_id
    }

    fn pools(&self) -> Option<camel_api::pools::Pools> {
        Some(self.registry.pools.clone())
    }
}
