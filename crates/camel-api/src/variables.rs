//! Camel's variables: named values beside the message, in two scopes.
//!
//! A plain name (`x`) is an exchange variable: it travels with the exchange and is
//! copied into every clone (fan-out, multicast), like a property. `global:x` names a
//! variable shared by every route of the process; `route:ROUTE_ID:x` one kept per route,
//! named with its route's id (exchanges do not carry the route they run in, so the id
//! must be written out: a bare `route:x` is refused).

use std::borrow::Cow;
use std::sync::{Arc, OnceLock, RwLock};

use crate::{Exchange, Headers, Value};

/// Where a variable lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// On the exchange.
    Exchange,
    /// Process-wide (`global:name`).
    Global,
    /// Per route (`route:ROUTE_ID:name`), holding the route id.
    Route(Arc<str>),
}

/// A checked variable name and its scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variable {
    /// Where it lives.
    pub scope: Scope,
    /// The name without its scope prefix.
    pub name: Arc<str>,
}

/// Why a variable name cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScopeError {
    /// `route:name` without a route id.
    #[error("write a route variable as `route:ROUTE_ID:NAME`: exchanges do not know the route they run in, so the route id cannot be left out")]
    Route,
    /// An empty name.
    #[error("the variable name is empty")]
    Empty,
}

impl Variable {
    /// Splits `global:x` / `route:x` / `x` into its scope.
    pub fn parse(name: &str) -> Result<Variable, ScopeError> {
        let (scope, bare) = if let Some(rest) = name.strip_prefix("route:") {
            match rest.split_once(':') {
                Some((id, bare)) if !id.is_empty() => (Scope::Route(id.into()), bare),
                _ => return Err(ScopeError::Route),
            }
        } else if let Some(rest) = name.strip_prefix("global:") {
            (Scope::Global, rest)
        } else {
            (Scope::Exchange, name)
        };
        if bare.is_empty() {
            return Err(ScopeError::Empty);
        }
        Ok(Variable {
            scope,
            name: bare.into(),
        })
    }

    /// Reads the variable (global values are cloned: they are reference counted).
    pub fn get<'a>(&self, exchange: &'a Exchange) -> Option<Cow<'a, Value>> {
        match &self.scope {
            Scope::Exchange => exchange.variable(&self.name).map(Cow::Borrowed),
            Scope::Global => global(&self.name).map(Cow::Owned),
            Scope::Route(id) => route(id, &self.name).map(Cow::Owned),
        }
    }

    /// Sets the variable, or removes it with `None`.
    pub fn set(&self, exchange: &mut Exchange, value: Option<Value>) {
        match &self.scope {
            Scope::Exchange => match value {
                Some(v) => exchange.set_variable(&self.name, v),
                None => exchange.remove_variable(&self.name),
            },
            Scope::Global => set_global(&self.name, value),
            Scope::Route(id) => set_route(id, &self.name, value),
        }
    }
}

/// Global variables by name; route variables under `ROUTE_ID:NAME` (a route id has no
/// `:` once parsed, so the two keys of different routes never meet).
fn store(route: bool) -> &'static RwLock<Headers> {
    static GLOBAL: OnceLock<RwLock<Headers>> = OnceLock::new();
    static ROUTES: OnceLock<RwLock<Headers>> = OnceLock::new();
    if route { &ROUTES } else { &GLOBAL }.get_or_init(Default::default)
}

fn read(route: bool, key: &str) -> Option<Value> {
    // A panic while holding the lock cannot leave a Headers half-written in a way that
    // matters here, so a poisoned lock is still read.
    let store = store(route).read().unwrap_or_else(|e| e.into_inner());
    store.get(key).cloned()
}

fn write(route: bool, key: &str, value: Option<Value>) {
    let mut store = store(route).write().unwrap_or_else(|e| e.into_inner());
    match value {
        Some(v) => store.set(&Arc::from(key), v),
        None => {
            store.remove(key);
        }
    }
}

/// Reads a global variable (a clone: values are reference counted).
pub fn global(name: &str) -> Option<Value> {
    read(false, name)
}

/// Sets (or, with `None`, removes) a global variable.
pub fn set_global(name: &str, value: Option<Value>) {
    write(false, name, value)
}

/// Reads a variable of route `route_id`.
pub fn route(route_id: &str, name: &str) -> Option<Value> {
    read(true, &format!("{route_id}:{name}"))
}

/// Sets (or, with `None`, removes) a variable of route `route_id`.
pub fn set_route(route_id: &str, name: &str, value: Option<Value>) {
    write(true, &format!("{route_id}:{name}"), value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_shares_variables_until_one_side_changes_them() {
        let mut a = Exchange::new("x");
        a.set_variable("k", "v");
        let mut b = a.clone();
        b.set_variable("k", "changed");
        b.remove_variable("missing");
        assert_eq!(a.variable("k"), Some(&Value::from("v")));
        assert_eq!(b.variable("k"), Some(&Value::from("changed")));
        assert_eq!(a.variables().count(), 1);
        assert_eq!(Exchange::new("y").variables().count(), 0);
    }

    #[test]
    fn names_split_into_scopes() -> Result<(), ScopeError> {
        assert_eq!(Variable::parse("x")?.scope, Scope::Exchange);
        assert_eq!(Variable::parse("global:x")?.scope, Scope::Global);
        let r = Variable::parse("route:r1:a:b")?;
        assert_eq!((r.scope, &*r.name), (Scope::Route("r1".into()), "a:b"));
        assert_eq!(Variable::parse("route:x"), Err(ScopeError::Route));
        assert_eq!(Variable::parse(""), Err(ScopeError::Empty));
        Ok(())
    }
}
