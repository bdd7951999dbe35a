//! Building Kubernetes resources as ordered YAML values and writing them out.
//!
//! Resources are written with their keys in the order a person writes them (`apiVersion`,
//! `kind`, `metadata`, `spec`), which a JSON map would sort; yaml-rust2's emitter quotes
//! every string that would otherwise read as another type (`"true"`, `"8080"`).

use yaml_rust2::yaml::Hash;
use yaml_rust2::{Yaml, YamlEmitter};

/// A mapping with its keys in the given order.
pub(crate) fn map<const N: usize>(entries: [(&str, Yaml); N]) -> Yaml {
    map_of(entries.into_iter().map(|(k, v)| (k.to_string(), v)))
}

/// A mapping from an iterator of entries, in its order.
pub(crate) fn map_of(entries: impl IntoIterator<Item = (String, Yaml)>) -> Yaml {
    let mut hash = Hash::new();
    for (k, v) in entries {
        hash.insert(Yaml::String(k), v);
    }
    Yaml::Hash(hash)
}

/// A string scalar.
pub(crate) fn s(text: impl Into<String>) -> Yaml {
    Yaml::String(text.into())
}

/// An integer scalar.
pub(crate) fn int(n: i64) -> Yaml {
    Yaml::Integer(n)
}

/// A sequence.
pub(crate) fn list(items: impl IntoIterator<Item = Yaml>) -> Yaml {
    Yaml::Array(items.into_iter().collect())
}

/// The YAML text of `docs`, one document each, `---` between them.
pub(crate) fn documents(docs: &[Yaml]) -> String {
    let mut out = String::new();
    for doc in docs {
        let mut text = String::new();
        // Writing into a String cannot fail but for a value the emitter cannot express,
        // and every value here is a plain map, list, string or integer.
        if YamlEmitter::new(&mut text).dump(doc).is_ok() {
            out.push_str(&text);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_their_order_and_ambiguous_strings_are_quoted() {
        let doc = map([
            ("kind", s("Service")),
            ("apiVersion", s("v1")),
            ("port", int(8080)),
            ("flag", s("true")),
            ("number", s("8080")),
            ("items", list([s("a")])),
        ]);
        let text = documents(&[doc]);
        let kind = text.find("kind").unwrap();
        assert!(kind < text.find("apiVersion").unwrap(), "{text}");
        assert!(text.contains("port: 8080\n"), "{text}");
        assert!(text.contains("flag: \"true\""), "{text}");
        assert!(text.contains("number: \"8080\""), "{text}");
        assert!(text.starts_with("---\n"), "{text}");
    }
}
