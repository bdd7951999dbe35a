//! The in-memory claim-check store of a context.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use camel_api::{CamelError, ExchangeId, Message};

/// Claims a store holds at most when no other bound is given: keyed claims and stacked
/// messages together.
pub const DEFAULT_CLAIM_CAPACITY: usize = 10_000;

/// Keyed claims and per-exchange stacks, bounded. A std mutex held for one map
/// operation, never across an `.await`.
#[derive(Debug)]
pub struct ClaimCheckStore {
    capacity: usize,
    inner: Mutex<Claims>,
}

#[derive(Debug, Default)]
struct Claims {
    keyed: HashMap<String, Message>,
    stacks: HashMap<ExchangeId, Vec<Message>>,
    stacked: usize,
}

impl Default for ClaimCheckStore {
    fn default() -> Self {
        ClaimCheckStore::with_capacity(DEFAULT_CLAIM_CAPACITY)
    }
}

impl ClaimCheckStore {
    /// A store holding at most `capacity` claims.
    pub fn with_capacity(capacity: usize) -> Self {
        ClaimCheckStore {
            capacity,
            inner: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Claims> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Claims held (keyed and stacked).
    pub fn len(&self) -> usize {
        let claims = self.lock();
        claims.keyed.len() + claims.stacked
    }

    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn full(&self, claims: &Claims) -> Result<(), CamelError> {
        if claims.keyed.len() + claims.stacked >= self.capacity {
            return Err(CamelError::Overloaded(
                format!(
                    "the claim check store is full ({} claims); get or pop claims before setting more",
                    self.capacity
                )
                .into(),
            ));
        }
        Ok(())
    }

    pub(super) fn set(&self, key: String, message: Message) -> Result<(), CamelError> {
        let mut claims = self.lock();
        if !claims.keyed.contains_key(&key) {
            self.full(&claims)?;
        }
        claims.keyed.insert(key, message);
        Ok(())
    }

    pub(super) fn get(&self, key: &str) -> Option<Message> {
        self.lock().keyed.get(key).cloned()
    }

    pub(super) fn take(&self, key: &str) -> Option<Message> {
        self.lock().keyed.remove(key)
    }

    pub(super) fn push(&self, owner: ExchangeId, message: Message) -> Result<(), CamelError> {
        let mut claims = self.lock();
        self.full(&claims)?;
        claims.stacks.entry(owner).or_default().push(message);
        claims.stacked += 1;
        Ok(())
    }

    pub(super) fn pop(&self, owner: ExchangeId) -> Option<Message> {
        let mut claims = self.lock();
        let stack = claims.stacks.get_mut(&owner)?;
        let message = stack.pop();
        if stack.is_empty() {
            claims.stacks.remove(&owner);
        }
        if message.is_some() {
            claims.stacked -= 1;
        }
        message
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_stacks_are_per_exchange() {
        let store = ClaimCheckStore::with_capacity(2);
        store.set("a".into(), Message::new("1")).unwrap();
        store.set("a".into(), Message::new("2")).unwrap(); // replacing does not grow
        let (x, y) = (ExchangeId::next(), ExchangeId::next());
        store.push(x, Message::new("x")).unwrap();
        assert!(matches!(
            store.push(y, Message::new("y")),
            Err(CamelError::Overloaded(_))
        ));
        assert!(store.pop(y).is_none());
        assert_eq!(store.pop(x).map(|m| m.body), Some("x".into()));
        assert_eq!(store.take("a").map(|m| m.body), Some("2".into()));
        assert!(store.is_empty());
    }
}
