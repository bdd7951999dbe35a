//! Camel's variables: named values beside the message, in two scopes.
//!
//! A plain name (`x`) is an exchange variable: it travels with the exchange and is
//! copied into every clone (fan-out, multicast), like a property. `global:x` names a
//! variable shared by every route of the process. Camel's `route:x` scope is refused:
//! exchanges do not carry the id of the route they run in yet.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock, RwLock};

use crate::{Exchange, Headers, Value};

/// A checked variable name and its scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variable {
    /// True for `global:name`.
    pub global: bool,
    /// The name without its scope prefix.
    pub name: Arc<str>,
}

/// Why a variable name cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScopeError {
    /// `route:name`.
    #[error("route-scoped variables (`route:NAME`) are not supported yet: exchanges do not know their route; use `global:NAME` or an exchange variable")]
    Route,
    /// An empty name.
    #[error("the variable name is empty")]
    Empty,
}

impl Variable {
    /// Splits `global:x` / `route:x` / `x` into its scope.
    pub fn parse(name: &str) -> Result<Variable, ScopeError> {
        if name.starts_with("route:") {
            return Err(ScopeError::Route);
        }
        let (global, bare) = match name.strip_prefix("global:") {
            Some(rest) => (true, rest),
            None => (false, name),
        };
        if bare.is_empty() {
            return Err(ScopeError::Empty);
        }
        Ok(Variable {
            global,
            name: bare.into(),
        })
    }

    /// Reads the variable (global values are cloned: they are reference counted).
    pub fn get<'a>(&self, exchange: &'a Exchange) -> Option<Cow<'a, Value>> {
        if self.global {
            global(&self.name).map(Cow::Owned)
        } else {
            exchange.variable(&self.name).map(Cow::Borrowed)
        }
    }

    /// Sets the variable, or removes it with `None`.
    pub fn set(&self, exchange: &mut Exchange, value: Option<Value>) {
        if self.global {
            set_global(&self.name, value);
        } else {
            match value {
                Some(v) => exchange.set_variable(&self.name, v),
                None => exchange.remove_variable(&self.name),
            }
        }
    }
}

fn global_store() -> &'static RwLock<Headers> {
    static STORE: OnceLock<RwLock<Headers>> = OnceLock::new();
    STORE.get_or_init(Default::default)
}

/// Reads a global variable (a clone: values are reference counted).
pub fn global(name: &str) -> Option<Value> {
    // A panic while holding the lock cannot leave a Headers half-written in a way that
    // matters here, so a poisoned lock is still read.
    let store = global_store().read().unwrap_or_else(|e| e.into_inner());
    store.get(name).cloned()
}

/// Sets (or, with `None`, removes) a global variable.
pub fn set_global(name: &str, value: Option<Value>) {
    let mut store = global_store().write().unwrap_or_else(|e| e.into_inner());
    match value {
        Some(v) => store.set(&Arc::from(name), v),
        None => {
            store.remove(name);
        }
    }
}
