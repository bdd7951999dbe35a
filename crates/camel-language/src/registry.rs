//! The registry a context uses to find a language by the name a route gives it.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use camel_api::Language;

use crate::{
    ConstantLanguage, ExchangePropertyLanguage, HeaderLanguage, JqLanguage, JsonPathLanguage,
    SimpleLanguage, TokenizeLanguage,
};

/// The languages known to a context, by name.
///
/// [`Default`] registers `simple` (and `csimple`, the same), `jsonpath`, `jq`,
/// `tokenize`, `header`, `exchange_property` (Camel's `exchangeProperty`) and `constant`.
#[derive(Clone)]
pub struct LanguageRegistry {
    languages: HashMap<&'static str, Arc<dyn Language>>,
}

impl fmt::Debug for LanguageRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LanguageRegistry")
            .field("languages", &self.names())
            .finish()
    }
}

impl Default for LanguageRegistry {
    fn default() -> Self {
        let mut registry = LanguageRegistry::empty();
        registry.register(Arc::new(SimpleLanguage));
        registry.register(Arc::new(JsonPathLanguage));
        registry.register(Arc::new(HeaderLanguage));
        registry.register(Arc::new(ExchangePropertyLanguage));
        registry.register(Arc::new(ConstantLanguage));
        registry.register(Arc::new(JqLanguage));
        registry.register(Arc::new(TokenizeLanguage));
        // Camel's compiled simple: the same language here (nothing is compiled to Java).
        registry.register_as("csimple", Arc::new(SimpleLanguage));
        registry
    }
}

impl LanguageRegistry {
    /// A registry with no language at all.
    pub fn empty() -> Self {
        LanguageRegistry {
            languages: HashMap::new(),
        }
    }

    /// The language called `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Language>> {
        self.languages.get(name).cloned()
    }

    /// Registers (or replaces) a language under its [`Language::name`].
    pub fn register(&mut self, language: Arc<dyn Language>) {
        self.languages.insert(language.name(), language);
    }

    /// Registers (or replaces) a language under `name`, which may differ from its
    /// [`Language::name`] (a second name for the same language).
    pub fn register_as(&mut self, name: &'static str, language: Arc<dyn Language>) {
        self.languages.insert(name, language);
    }

    /// Names of the registered languages, sorted.
    pub fn names(&self) -> Vec<&'static str> {
        let mut names: Vec<_> = self.languages.keys().copied().collect();
        names.sort_unstable();
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use camel_api::{Exchange, Value};

    #[test]
    fn default_registers_the_four_languages() {
        let registry = LanguageRegistry::default();
        assert_eq!(
            registry.names(),
            [
                "constant",
                "csimple",
                "exchange_property",
                "header",
                "jq",
                "jsonpath",
                "simple",
                "tokenize"
            ]
        );
        let options = serde_json::Map::new();
        let simple = registry.get("simple").unwrap();
        let ex = Exchange::new("b");
        let value = simple
            .expression("${body}!", &options)
            .unwrap()
            .evaluate(&ex)
            .unwrap();
        assert_eq!(value, Value::from("b!"));
        assert!(registry.get("groovy").is_none());
    }

    #[test]
    fn register_replaces_by_name() {
        let mut registry = LanguageRegistry::empty();
        assert!(registry.names().is_empty());
        registry.register(Arc::new(ConstantLanguage));
        registry.register(Arc::new(ConstantLanguage));
        assert_eq!(registry.names(), ["constant"]);
        assert!(format!("{registry:?}").contains("constant"));
    }
}
