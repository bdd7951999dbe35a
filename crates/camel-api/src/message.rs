use std::sync::Arc;

use crate::{Body, Value};

/// An ordered set of named values, used for headers and exchange properties.
///
/// Backed by a small vector: messages carry a handful of headers, and a linear scan over a
/// few entries beats hashing. Names compare case-sensitively, as in Camel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Headers {
    entries: Vec<(Arc<str>, Value)>,
}

impl Headers {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Room for `additional` more entries without growing (a consumer that knows how many
    /// headers it is about to set).
    pub fn reserve(&mut self, additional: usize) {
        self.entries.reserve(additional);
    }

    /// The value under `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.entries
            .iter()
            .find(|(n, _)| &**n == name)
            .map(|(_, v)| v)
    }

    /// Sets `name` to `value`, replacing any earlier value.
    pub fn insert(&mut self, name: impl Into<Arc<str>>, value: impl Into<Value>) {
        let name = name.into();
        let value = value.into();
        match self.entries.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.entries.push((name, value)),
        }
    }

    /// Sets `name` to `value` like [`Headers::insert`], for a caller that keeps the name
    /// (a `set_header` step): the name is cloned only when it is new to the set.
    pub fn set(&mut self, name: &Arc<str>, value: Value) {
        match self
            .entries
            .iter_mut()
            .find(|(n, _)| Arc::ptr_eq(n, name) || **n == **name)
        {
            Some(slot) => slot.1 = value,
            None => self.entries.push((name.clone(), value)),
        }
    }

    /// Adds `name` without looking for an earlier value: for a caller that builds a fresh
    /// set and knows the name is not in it yet (a consumer mapping a record's fixed
    /// fields). A name added twice this way is held twice, and lookups see the first.
    pub fn append(&mut self, name: &Arc<str>, value: Value) {
        self.entries.push((name.clone(), value));
    }

    /// Removes `name`, returning its value.
    pub fn remove(&mut self, name: &str) -> Option<Value> {
        let at = self.entries.iter().position(|(n, _)| &**n == name)?;
        Some(self.entries.remove(at).1)
    }

    /// Removes every entry whose name matches `pattern` (`*` matches any run of characters).
    pub fn remove_matching(&mut self, pattern: &str) {
        self.entries
            .retain(|(n, _)| !crate::suggest::wildcard_match(pattern, n));
    }

    /// True when `name` is present.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.entries.iter().map(|(n, v)| (&**n, v))
    }
}

impl<K: Into<Arc<str>>, V: Into<Value>> FromIterator<(K, V)> for Headers {
    fn from_iter<T: IntoIterator<Item = (K, V)>>(iter: T) -> Self {
        let mut h = Headers::new();
        for (k, v) in iter {
            h.insert(k, v);
        }
        h
    }
}

/// A message: headers and a body.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Message {
    /// The message headers.
    pub headers: Headers,
    /// The payload.
    pub body: Body,
}

impl Message {
    /// A message with `body` and no headers.
    pub fn new(body: impl Into<Body>) -> Self {
        Message {
            headers: Headers::new(),
            body: body.into(),
        }
    }

    /// Shorthand for `self.headers.get(name)`.
    pub fn header(&self, name: &str) -> Option<&Value> {
        self.headers.get(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_replaces_by_name_and_keeps_order() {
        let mut h: Headers = [("a", 1), ("b", 2)].into_iter().collect();
        let b: Arc<str> = "b".into();
        h.set(&b, Value::from(3));
        let c: Arc<str> = "c".into();
        h.set(&c, Value::from(4));
        h.set(&c, Value::from(5));
        let seen: Vec<(String, String)> = h
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        assert_eq!(
            seen,
            [("a", "1"), ("b", "3"), ("c", "5")].map(|(n, v)| (n.to_string(), v.to_string()))
        );
    }
}
