//! Beans: Rust objects registered by name whose methods routes call (`- bean: {ref,
//! method}`, `to: bean:name?method=m`), the Rust side of Camel's bean binding (ADR 0076).
//!
//! A bean names its methods and hands out one [`BoxProcessor`] per method when a route is
//! compiled, so calling a method costs what calling a processor costs: the method name is
//! looked up once, not per exchange. A plain [`BoxProcessor`] is a bean with one default
//! method; [`MethodBean`] gathers several named ones.
//!
//! ```
//! use camel_api::{Bean, BoxProcessor, Exchange, MethodBean};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let greeter = MethodBean::new()
//!     .method_fn("hello", |ex: &mut Exchange| {
//!         let name = ex.message.body.as_text().unwrap_or_default();
//!         ex.message.body = format!("Hello {name}").into();
//!         Ok(())
//!     })
//!     .method_fn("bye", |ex: &mut Exchange| {
//!         ex.message.body = "Bye".into();
//!         Ok(())
//!     });
//! assert_eq!(greeter.methods(), ["hello", "bye"]);
//! // Without a method name the default (first) method runs.
//! let hello = greeter.processor(None).unwrap();
//! let out = hello.process(Exchange::new("Ada")).await.unwrap();
//! assert_eq!(out.message.body.as_text().as_deref(), Some("Hello Ada"));
//! assert!(greeter.processor(Some("shout")).is_none());
//! # }
//! ```

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::{BoxProcessor, CamelError, Exchange};

/// An object whose named methods routes call.
pub trait Bean: Send + Sync + 'static {
    /// The names of the methods a route may name, the default method first (empty for a
    /// bean with only a default method).
    fn methods(&self) -> Vec<String>;

    /// A processor that calls `method`, or the default method when `None`; `None` when the
    /// bean has no such method.
    fn processor(&self, method: Option<&str>) -> Option<BoxProcessor>;
}

/// A processor is a bean with one default method: itself.
impl Bean for BoxProcessor {
    fn methods(&self) -> Vec<String> {
        Vec::new()
    }

    fn processor(&self, method: Option<&str>) -> Option<BoxProcessor> {
        method.is_none().then(|| self.clone())
    }
}

/// A bean made of named methods, each a processor.
#[derive(Clone, Default)]
pub struct MethodBean {
    methods: Vec<(String, BoxProcessor)>,
    default: Option<String>,
}

impl fmt::Debug for MethodBean {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MethodBean")
            .field("methods", &self.methods())
            .finish()
    }
}

impl MethodBean {
    /// A bean without methods.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the method `name`. The first method added is the default one
    /// unless [`default_method`](Self::default_method) says otherwise.
    pub fn method(mut self, name: impl Into<String>, processor: BoxProcessor) -> Self {
        let name = name.into();
        let processor = processor.named("bean method");
        match self.methods.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = processor,
            None => self.methods.push((name, processor)),
        }
        self
    }

    /// Adds a method from a closure that changes the exchange in place.
    pub fn method_fn<F>(self, name: impl Into<String>, f: F) -> Self
    where
        F: Fn(&mut Exchange) -> Result<(), CamelError> + Send + Sync + 'static,
    {
        self.method(name, BoxProcessor::sync_in_place(f))
    }

    /// Names the method called when a route names none.
    pub fn default_method(mut self, name: impl Into<String>) -> Self {
        self.default = Some(name.into());
        self
    }
}

impl Bean for MethodBean {
    fn methods(&self) -> Vec<String> {
        let mut names: Vec<String> = self.methods.iter().map(|(n, _)| n.clone()).collect();
        if let Some(default) = &self.default {
            if let Some(i) = names.iter().position(|n| n == default) {
                let first = names.remove(i);
                names.insert(0, first);
            }
        }
        names
    }

    fn processor(&self, method: Option<&str>) -> Option<BoxProcessor> {
        let wanted = method.or(self.default.as_deref());
        match wanted {
            Some(name) => self
                .methods
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, p)| p.clone()),
            None => self.methods.first().map(|(_, p)| p.clone()),
        }
    }
}

/// Wraps a bean as a registry resource (`CamelContext::add_resource`), the form
/// [`bean_of`] reads back.
pub fn bean_resource(bean: Arc<dyn Bean>) -> Arc<dyn Any + Send + Sync> {
    Arc::new(bean)
}

/// The bean a registry resource holds: a bean registered with [`bean_resource`], or a
/// [`BoxProcessor`] registered as it is (a bean with one default method).
pub fn bean_of(resource: Arc<dyn Any + Send + Sync>) -> Option<Arc<dyn Bean>> {
    match resource.downcast::<Arc<dyn Bean>>() {
        Ok(bean) => Some((*bean).clone()),
        Err(other) => other
            .downcast::<BoxProcessor>()
            .ok()
            .map(|p| Arc::new((*p).clone()) as Arc<dyn Bean>),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_processor_is_a_bean_with_a_default_method_only() {
        let p = BoxProcessor::sync(|mut ex: Exchange| {
            ex.message.body = "done".into();
            Ok(ex)
        });
        let bean = bean_of(Arc::new(p)).unwrap();
        assert!(bean.methods().is_empty());
        assert!(bean.processor(Some("x")).is_none());
        let out = bean
            .processor(None)
            .unwrap()
            .process(Exchange::new("a"))
            .await
            .unwrap();
        assert_eq!(out.message.body.as_text().as_deref(), Some("done"));
    }

    #[tokio::test]
    async fn named_methods_and_the_default() {
        let bean = MethodBean::new()
            .method_fn("a", |ex: &mut Exchange| {
                ex.message.body = "A".into();
                Ok(())
            })
            .method_fn("b", |ex: &mut Exchange| {
                ex.message.body = "B".into();
                Ok(())
            })
            .default_method("b");
        assert_eq!(bean.methods(), ["b", "a"]);
        let wrapped = bean_of(bean_resource(Arc::new(bean))).unwrap();
        let run = |m: Option<&str>| wrapped.processor(m).unwrap();
        let out = run(None).process(Exchange::new("")).await.unwrap();
        assert_eq!(out.message.body.as_text().as_deref(), Some("B"));
        let out = run(Some("a")).process(Exchange::new("")).await.unwrap();
        assert_eq!(out.message.body.as_text().as_deref(), Some("A"));
        assert!(bean_of(Arc::new(5_u32)).is_none());
    }
}
