//! The names a consumer remembers under `noop`/`idempotent`: bounded, oldest forgotten
//! first.

use std::collections::{HashSet, VecDeque};

/// A set of keys holding at most `capacity`; inserting past it forgets the oldest.
#[derive(Debug)]
pub(crate) struct KeyMemory {
    capacity: usize,
    order: VecDeque<String>,
    keys: HashSet<String>,
}

impl KeyMemory {
    pub(crate) fn new(capacity: usize) -> Self {
        KeyMemory {
            capacity: capacity.max(1),
            order: VecDeque::new(),
            keys: HashSet::new(),
        }
    }

    pub(crate) fn contains(&self, key: &str) -> bool {
        self.keys.contains(key)
    }

    pub(crate) fn insert(&mut self, key: String) {
        if !self.keys.insert(key.clone()) {
            return;
        }
        self.order.push_back(key);
        while self.order.len() > self.capacity {
            if let Some(old) = self.order.pop_front() {
                self.keys.remove(&old);
            }
        }
    }

    pub(crate) fn remove(&mut self, key: &str) {
        if self.keys.remove(key) {
            self.order.retain(|k| k != key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::KeyMemory;

    #[test]
    fn the_oldest_key_is_forgotten_past_the_capacity() {
        let mut m = KeyMemory::new(2);
        m.insert("a".into());
        m.insert("b".into());
        m.insert("a".into());
        m.insert("c".into());
        assert!(!m.contains("a"));
        assert!(m.contains("b") && m.contains("c"));
        m.remove("b");
        assert!(!m.contains("b"));
    }
}
