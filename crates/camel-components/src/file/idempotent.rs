//! `idempotent` for the file consumer: the keys of the files already taken, in memory.
//!
//! As in Camel, a file's key is its absolute path unless `idempotent_key` (a simple
//! expression over the file headers, `${file:name}-${file:modified}`) says otherwise, and
//! the memory holds the [`CAPACITY`] most recently used keys (Camel's default
//! `MemoryIdempotentRepository`). A key is taken before the route runs and given back if
//! the route fails, so a failed file is tried again on a later poll. The memory lives as
//! long as the consumer: a restart forgets it.

use std::collections::{BTreeMap, HashMap};

use camel_api::{BoxExpression, CamelError, ComponentContext, Parameters};

/// Keys the in-memory repository keeps before it forgets the least recently used.
pub const CAPACITY: usize = 1000;

/// How the consumer tells files apart.
#[derive(Clone, Debug)]
pub(super) struct Idempotent {
    /// `None`: the absolute path.
    pub(super) key: Option<BoxExpression>,
}

/// What `idempotent`, `idempotent_key` and `idempotent_eager` ask for. `noop` decides
/// Camel's default: a noop consumer is idempotent unless told not to be.
#[derive(Debug)]
pub(super) struct IdempotentOptions {
    /// The key memory, when one is asked for.
    pub(super) idempotent: Option<Idempotent>,
    /// With `noop`: remember the names taken (the consumer's own unbounded name set).
    pub(super) remember_noop: bool,
}

pub(super) fn take(
    p: &mut Parameters,
    ctx: &dyn ComponentContext,
    noop: bool,
    bad: &dyn Fn(&str) -> CamelError,
) -> Result<IdempotentOptions, CamelError> {
    let idempotent = p.take_bool("idempotent")?;
    let key = p
        .take_str("idempotent_key")
        .map(|text| ctx.expression("simple", &text))
        .transpose()?;
    // Eager or not is the same here: one consumer takes its files one at a time.
    p.take_bool("idempotent_eager")?;
    if p.contains("idempotent_repository") {
        return Err(bad(
            "`idempotent_repository` is a Camel option that camel-rs does not support yet: \
             the file consumer keeps its keys in memory (the last 1000)",
        ));
    }
    match (idempotent, key) {
        (Some(false), Some(_)) => Err(bad("`idempotent_key` needs `idempotent` (it is false)")),
        (Some(false), None) => Ok(IdempotentOptions {
            idempotent: None,
            remember_noop: false,
        }),
        // A key asks for idempotence (noop or not); so does `idempotent=true` without noop.
        (_, Some(key)) => Ok(IdempotentOptions {
            idempotent: Some(Idempotent { key: Some(key) }),
            remember_noop: false,
        }),
        (Some(true), None) if !noop => Ok(IdempotentOptions {
            idempotent: Some(Idempotent { key: None }),
            remember_noop: false,
        }),
        // noop, idempotent by default: every name taken is remembered while it runs.
        _ => Ok(IdempotentOptions {
            idempotent: None,
            remember_noop: noop,
        }),
    }
}

/// The most recently used keys, at most [`CAPACITY`].
#[derive(Debug, Default)]
pub(super) struct KeyMemory {
    /// Key → when it was last used.
    used: HashMap<String, u64>,
    /// When → key, oldest first: what goes when the memory is full.
    order: BTreeMap<u64, String>,
    clock: u64,
}

impl KeyMemory {
    /// Whether `key` is known; a known key counts as used now.
    pub(super) fn contains(&mut self, key: &str) -> bool {
        let Some(when) = self.used.get(key).copied() else {
            return false;
        };
        self.clock += 1;
        self.order.remove(&when);
        self.order.insert(self.clock, key.to_string());
        self.used.insert(key.to_string(), self.clock);
        true
    }

    pub(super) fn insert(&mut self, key: String) {
        if self.contains(&key) {
            return;
        }
        if self.used.len() >= CAPACITY {
            if let Some((_, oldest)) = self.order.pop_first() {
                self.used.remove(&oldest);
            }
        }
        self.clock += 1;
        self.order.insert(self.clock, key.clone());
        self.used.insert(key, self.clock);
    }

    pub(super) fn remove(&mut self, key: &str) {
        if let Some(when) = self.used.remove(key) {
            self.order.remove(&when);
        }
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.used.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forgets_the_least_recently_used_past_the_capacity() {
        let mut memory = KeyMemory::default();
        for n in 0..CAPACITY {
            memory.insert(format!("k{n}"));
        }
        // Using k0 makes k1 the oldest.
        assert!(memory.contains("k0"));
        memory.insert("new".into());
        assert_eq!(memory.len(), CAPACITY);
        assert!(memory.contains("k0") && memory.contains("new"));
        assert!(!memory.contains("k1"));
        memory.remove("new");
        assert!(!memory.contains("new"));
        assert_eq!(memory.len(), CAPACITY - 1);
    }
}
