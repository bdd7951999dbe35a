//! Beans (ADR 0076): Rust objects registered by name and called from routes with
//! `- bean: {ref, method}` or `to: bean:name?method=m`; bean types whose factories build
//! the beans a file's top-level `beans:` entries declare; the `bean` component; and the
//! built-in bean types the `camel` binary knows (`counter`, `template`).
//!
//! ```
//! use camel_api::{Exchange, MethodBean};
//! use camel_core::{CamelContext, RouteBuilder};
//! use camel_core::model::BeanStep;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let ctx = CamelContext::new();
//! ctx.register_bean("shouter", MethodBean::new().method_fn("shout", |ex: &mut Exchange| {
//!     let text = ex.message.body.as_text().unwrap_or_default().to_uppercase();
//!     ex.message.body = text.into();
//!     Ok(())
//! }));
//! let route = RouteBuilder::from("direct:in").bean(BeanStep::reference("shouter").method("shout")).build();
//! ctx.add_routes(vec![route]).await.unwrap();
//! ctx.start().await.unwrap();
//! let out = ctx.request("direct:in", Exchange::new("hi")).await.unwrap();
//! assert_eq!(out.message.body.as_text().as_deref(), Some("HI"));
//! ctx.stop().await;
//! # }
//! ```

use std::collections::HashSet;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use camel_api::suggest::nearest;
use camel_api::{
    bean_of, Bean, BoxExpression, BoxProcessor, CamelError, Component, ComponentContext, Endpoint,
    EndpointUri, Exchange, MethodBean, Value,
};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value as Json};

use crate::compiler::Registry;
use crate::error::{RouteError, RouteErrorKind};
use crate::model::{bean_name, camel_dsl, looks_like_java_class, BeanDefinition, RouteDefinition};

/// Builds a bean from the `properties` of a `beans:` entry; the error says what is wrong
/// with them.
pub type BeanFactory =
    Arc<dyn Fn(&Map<String, Json>) -> Result<Arc<dyn Bean>, String> + Send + Sync>;

/// A [`BeanFactory`] from a function over typed properties: `P` is decoded from the
/// entry's `properties` (use `serde_json::Map<String, Json>` to read them as written).
pub fn bean_factory<P, B, F>(build: F) -> BeanFactory
where
    P: DeserializeOwned,
    B: Bean,
    F: Fn(P) -> Result<B, String> + Send + Sync + 'static,
{
    Arc::new(move |properties: &Map<String, Json>| {
        let typed: P = serde_json::from_value(Json::Object(properties.clone()))
            .map_err(|e| format!("its properties do not fit: {e}"))?;
        build(typed).map(|b| Arc::new(b) as Arc<dyn Bean>)
    })
}

/// The processor of `method` (the default one when `None`) of `bean`, registered as `name`.
pub(crate) fn method_of(
    bean: &dyn Bean,
    name: &str,
    method: Option<&str>,
) -> Result<BoxProcessor, String> {
    bean.processor(method).ok_or_else(|| {
        let methods = bean.methods();
        match method {
            Some(m) if methods.is_empty() => format!(
                "bean `{name}` has one default method and no method `{m}`: leave `method` out"
            ),
            Some(m) => {
                let hint = nearest(m, methods.iter().map(String::as_str))
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default();
                format!(
                    "bean `{name}` has no method `{m}` (its methods: {}){hint}",
                    methods.join(", ")
                )
            }
            None => format!("bean `{name}` has no default method: name one with `method`"),
        }
    })
}

/// Why no bean is registered under `name`: a Java class needs a JVM; anything else is
/// missing from the registry.
pub(crate) fn missing_bean(name: &str, registered: &[String]) -> String {
    if looks_like_java_class(name) {
        return camel_dsl::java_class_message(name);
    }
    let hint = nearest(name, registered.iter().map(String::as_str))
        .map(|n| format!("; did you mean `{n}`?"))
        .unwrap_or_default();
    format!(
        "no bean is registered under `{name}`{hint} (register one in Rust with \
         `CamelContext::register_bean`, or declare it in a top-level `beans:` entry)"
    )
}

/// Builds a bean of the registered type `bean_type` (`#class:` dropped) from `properties`.
pub(crate) fn build_bean(
    registry: &Registry,
    name: &str,
    bean_type: &str,
    properties: &Map<String, Json>,
) -> Result<Arc<dyn Bean>, String> {
    let written = bean_type.trim();
    let key = written.strip_prefix("#class:").unwrap_or(written);
    let Some(factory) = registry.bean_type(key) else {
        if looks_like_java_class(written) {
            return Err(camel_dsl::java_class_message(name));
        }
        let types = registry.bean_type_names();
        let hint = nearest(key, types.iter().map(String::as_str))
            .map(|n| format!("; did you mean `{n}`?"))
            .unwrap_or_default();
        return Err(format!(
            "no bean type `{key}` is registered{hint} (registered: {}; add one in Rust with \
             `CamelContext::register_bean_type`)",
            types.join(", ")
        ));
    };
    factory(properties).map_err(|e| format!("bean `{name}` of type `{key}`: {e}"))
}

/// Builds and registers the beans the routes' files declare (each name once), returning
/// an error, at its `type`, for each that cannot be built.
pub(crate) fn register_declared(
    registry: &Registry,
    routes: &[RouteDefinition],
) -> Vec<RouteError> {
    let mut seen = HashSet::new();
    let mut errors = Vec::new();
    for def in routes.iter().flat_map(|r| &r.beans) {
        if !seen.insert(def.name.as_str()) {
            continue;
        }
        if def.refused {
            // Its error was reported when its file was read.
            registry.add_resource(&def.name, Arc::new(RefusedBean));
            continue;
        }
        // A JDBC `DataSource` bean is the database `sql:` endpoints open by its name.
        match crate::datasource_bean::datasource_url(&def.bean_type, &def.properties) {
            Some(Ok(url)) => {
                registry.add_resource(&def.name, Arc::new(url));
                continue;
            }
            Some(Err(why)) => {
                errors.push(
                    RouteError::new(RouteErrorKind::InvalidValue(format!(
                        "bean `{}`: {why}",
                        def.name
                    )))
                    .at(def.location.clone()),
                );
                continue;
            }
            None => {}
        }
        // A bean of one of Camel's aggregation strategy classes is the built-in strategy,
        // found by `aggregationStrategy: "#name"`.
        if let Some(strategy) = builtin_strategy(def) {
            registry.add_resource(&def.name, Arc::new(strategy));
            continue;
        }
        match build_bean(registry, &def.name, &def.bean_type, &def.properties) {
            Ok(bean) => registry.add_bean(&def.name, bean),
            Err(why) => {
                // Steps that name it are not reported again (see `was_refused`).
                registry.add_resource(&def.name, Arc::new(RefusedBean));
                errors.push(
                    RouteError::new(RouteErrorKind::InvalidValue(why)).at(def.location.clone()),
                );
            }
        }
    }
    errors
}

/// Kept under the name of a declared bean that could not be built (a Java class): the
/// bean's own error says why, so a step naming it reports nothing more. A load with such
/// an error adds no route, so nothing ever calls through the name.
#[derive(Debug)]
pub(crate) struct RefusedBean;

/// True when `name` is a bean the routes' files declared and that was refused.
pub(crate) fn was_refused(registry: &Registry, name: &str) -> bool {
    registry
        .resource(name)
        .is_some_and(|r| r.is::<RefusedBean>())
}

/// Stands for a refused bean in a step that names it: the bean's own error says why, and
/// a load with that error adds no route, so this never runs.
pub(crate) fn refused_stand_in(name: &str) -> BoxProcessor {
    let why = format!("the bean `{name}` was refused when the routes loaded");
    BoxProcessor::sync(move |_| Err(CamelError::processor(&why)))
}

/// The built-in aggregation strategy a declared bean is, when its type is one of Camel's
/// strategy classes (`org.apache.camel.processor.aggregate.StringAggregationStrategy`)
/// and its properties are those the built-in reads (`delimiter` of the string one).
pub(crate) fn builtin_strategy(
    def: &BeanDefinition,
) -> Option<camel_eip::aggregation::SharedStrategy> {
    let mut spec = def.bean_type.trim().to_string();
    for (key, value) in &def.properties {
        let text = match value {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        };
        match key.as_str() {
            "delimiter" => {
                spec.push_str(&format!("?delimiter={}", camel_api::percent_encode(&text)));
            }
            _ => return None,
        }
    }
    camel_eip::aggregation::builtin(&spec)
}

/// A declared bean, for [`BeanDefinition`]s written in Rust.
impl BeanDefinition {
    /// A bean `name` of the registered type `bean_type`, without properties.
    pub fn new(name: impl Into<String>, bean_type: impl Into<String>) -> Self {
        BeanDefinition {
            name: name.into(),
            bean_type: bean_type.into(),
            ..Default::default()
        }
    }

    /// Adds a property.
    pub fn property(mut self, name: &str, value: impl Into<Json>) -> Self {
        self.properties.insert(name.to_string(), value.into());
        self
    }
}

/// The `bean` component: `bean:name?method=m` calls a method of a registered bean. Only
/// produces. Camel's `scope` and `cache` parameters are accepted and ignored (a bean here
/// is one shared object).
#[derive(Clone, Copy, Debug, Default)]
pub struct BeanComponent;

impl Component for BeanComponent {
    fn scheme(&self) -> &str {
        "bean"
    }

    fn endpoint(
        &self,
        mut uri: EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let raw = uri.raw();
        let name = bean_name(uri.path()).to_string();
        if name.is_empty() {
            return Err(CamelError::invalid_uri(
                raw,
                "`bean:` needs the bean's name, as in `bean:greeter?method=hello`",
            ));
        }
        let method = uri.parameters.take_str("method");
        let _ = uri.parameters.take_str("scope");
        let _ = uri.parameters.take_str("cache");
        uri.parameters.finish(&["method", "scope", "cache"])?;
        let resource = ctx.resource(&name);
        if resource.as_ref().is_some_and(|r| r.is::<RefusedBean>()) {
            // Its own error says why; the load adds no route, so this never runs.
            let producer = refused_stand_in(&name);
            return Ok(Arc::new(BeanEndpoint { uri: raw, producer }));
        }
        let bean = resource
            .and_then(bean_of)
            .ok_or_else(|| CamelError::invalid_uri(raw.clone(), missing_bean(&name, &[])))?;
        let producer = method_of(bean.as_ref(), &name, method.as_deref())
            .map_err(|why| CamelError::invalid_uri(raw.clone(), why))?;
        Ok(Arc::new(BeanEndpoint { uri: raw, producer }))
    }
}

#[derive(Debug)]
struct BeanEndpoint {
    uri: Arc<str>,
    producer: BoxProcessor,
}

impl Endpoint for BeanEndpoint {
    fn uri(&self) -> &str {
        &self.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        Ok(self.producer.clone())
    }
}

/// Properties of the built-in `counter` bean type.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CounterProperties {
    /// The first number handed out (default 1).
    #[serde(default = "one")]
    start: i64,
    /// The header `stamp` sets (default `counter`).
    #[serde(default = "counter_header")]
    header: String,
}

fn one() -> i64 {
    1
}

fn counter_header() -> String {
    "counter".into()
}

/// `counter`: a number shared by every route that calls it. `next` (the default) makes
/// the body the next number; `stamp` puts it in a header and keeps the body.
fn counter(p: CounterProperties) -> Result<MethodBean, String> {
    let count = Arc::new(AtomicI64::new(p.start));
    let next = Arc::clone(&count);
    let header: Arc<str> = p.header.into();
    Ok(MethodBean::new()
        .method_fn("next", move |ex: &mut Exchange| {
            ex.message.body = Value::Int(next.fetch_add(1, Ordering::Relaxed)).into();
            Ok(())
        })
        .method_fn("stamp", move |ex: &mut Exchange| {
            let n = count.fetch_add(1, Ordering::Relaxed);
            ex.message.headers.insert(Arc::clone(&header), n);
            Ok(())
        }))
}

/// Properties of the built-in `template` bean type.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TemplateProperties {
    /// A `simple` expression (`Hello ${body}`).
    template: String,
}

/// `template`: `render` (the default) makes the body the `template` property, a `simple`
/// expression evaluated on the exchange.
fn template(p: TemplateProperties) -> Result<MethodBean, String> {
    let expression: BoxExpression =
        camel_language::simple(&p.template).map_err(|e| format!("property `template`: {e}"))?;
    Ok(
        MethodBean::new().method_fn("render", move |ex: &mut Exchange| {
            let value = expression.evaluate(ex)?;
            ex.message.body = value.into();
            Ok(())
        }),
    )
}

/// Registers the built-in bean types.
pub(crate) fn register_builtin_types(registry: &Registry) {
    registry.add_bean_type("counter", bean_factory(counter));
    registry.add_bean_type("template", bean_factory(template));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn counter_and_template_beans() {
        let registry = Registry::default();
        register_builtin_types(&registry);
        let mut props = Map::new();
        props.insert("start".into(), 5.into());
        let c = build_bean(&registry, "c", "counter", &props).unwrap();
        let next = method_of(c.as_ref(), "c", None).unwrap();
        let out = next.process(Exchange::new("")).await.unwrap();
        assert_eq!(out.message.body.as_text().as_deref(), Some("5"));
        let stamp = method_of(c.as_ref(), "c", Some("stamp")).unwrap();
        let out = stamp.process(Exchange::new("b")).await.unwrap();
        assert_eq!(
            out.header("counter").map(|v| v.to_string()).as_deref(),
            Some("6")
        );

        let mut props = Map::new();
        props.insert("template".into(), "Hi ${body}".into());
        let t = build_bean(&registry, "t", "#class:template", &props).unwrap();
        let out = method_of(t.as_ref(), "t", Some("render"))
            .unwrap()
            .process(Exchange::new("Ada"))
            .await
            .unwrap();
        assert_eq!(out.message.body.as_text().as_deref(), Some("Hi Ada"));
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let registry = Registry::default();
        register_builtin_types(&registry);
        let none = Map::new();
        let e = build_bean(&registry, "g", "com.acme.Greeter", &none)
            .err()
            .unwrap();
        assert!(e.starts_with("Java classes cannot run here"), "{e}");
        let e = build_bean(&registry, "g", "countr", &none).err().unwrap();
        assert!(e.contains("did you mean `counter`"), "{e}");
        let mut bad = Map::new();
        bad.insert("strat".into(), 1.into());
        let e = build_bean(&registry, "g", "counter", &bad).err().unwrap();
        assert!(e.contains("strat"), "{e}");
        let e = build_bean(&registry, "t", "template", &none).err().unwrap();
        assert!(e.contains("template"), "{e}");
        let c = build_bean(&registry, "c", "counter", &none).unwrap();
        let e = method_of(c.as_ref(), "c", Some("nxt")).err().unwrap();
        assert!(e.contains("did you mean `next`"), "{e}");
        assert!(missing_bean("com.acme.X", &[]).starts_with("Java classes"));
        assert!(missing_bean("gretter", &["greeter".into()]).contains("did you mean `greeter`"));
    }
}
