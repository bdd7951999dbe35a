//! Expression languages: `simple`, `jsonpath`, `header`, `constant`.
//!
//! (Being written: see `LanguageRegistry` and `simple`.)
use std::collections::HashMap;
use std::sync::Arc;

use camel_api::{BoxExpression, BoxPredicate, ExpressionError, Language};

/// The languages known to a context, by name.
#[derive(Debug, Clone)]
pub struct LanguageRegistry {
    languages: HashMap<&'static str, Arc<dyn Language>>,
}

impl Default for LanguageRegistry {
    fn default() -> Self {
        LanguageRegistry { languages: HashMap::new() }
    }
}

impl LanguageRegistry {
    /// The language called `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Language>> {
        self.languages.get(name).cloned()
    }

    /// Registers (or replaces) a language.
    pub fn register(&mut self, language: Arc<dyn Language>) {
        self.languages.insert(language.name(), language);
    }

    /// Names of the registered languages, sorted.
    pub fn names(&self) -> Vec<&'static str> {
        let mut v: Vec<_> = self.languages.keys().copied().collect();
        v.sort_unstable();
        v
    }
}

/// Compiles a `simple` expression.
pub fn simple(text: &str) -> Result<BoxExpression, ExpressionError> {
    Err(ExpressionError {
        language: "simple".into(),
        expression: text.into(),
        column: 1,
        message: "not yet implemented".into(),
    })
}

/// Compiles a `simple` predicate.
pub fn simple_predicate(text: &str) -> Result<BoxPredicate, ExpressionError> {
    Err(ExpressionError {
        language: "simple".into(),
        expression: text.into(),
        column: 1,
        message: "not yet implemented".into(),
    })
}
