//! Patterns of `regex` read from the exchange (`${body} regex ${header.pattern}`).
//!
//! Such a pattern is compiled while the route runs, on the runtime's worker thread, and
//! whoever sent the message chose it. Three bounds keep one such message from stalling
//! the other routes: the pattern's length ([`MAX_PATTERN_LEN`]), the size the compiled
//! program may reach ([`COMPILED_SIZE_LIMIT`], which bounds the time compiling takes as
//! well), and a small cache ([`CACHED_PATTERNS`]) so that a route matching against the
//! same few patterns compiles each once. The `regex` crate matches in linear time, so
//! matching needs no bound of its own.

use std::sync::Mutex;

use regex::{Regex, RegexBuilder};

use super::ast::whole_match_with;

/// The longest pattern taken from an exchange, in bytes.
pub(crate) const MAX_PATTERN_LEN: usize = 1024;
/// The most memory one compiled pattern may take (the `regex` crate's default is 10 MiB).
/// Compiling stops once it is reached, which also bounds the time spent.
pub(crate) const COMPILED_SIZE_LIMIT: usize = 256 << 10;
/// How many compiled patterns are kept, most recently used first.
pub(crate) const CACHED_PATTERNS: usize = 64;

/// Patterns compiled lately, with their outcome: a refused pattern is not compiled again
/// for every message that carries it.
type Compiled = Result<Regex, String>;
static CACHE: Mutex<Vec<(Box<str>, Compiled)>> = Mutex::new(Vec::new());

/// Texts longer than this are matched under [`camel_api::blocking::in_place`]: matching
/// is linear, but a pattern whose lazy DFA keeps missing its cache falls back to a
/// slower engine, seconds on a body of megabytes.
pub(crate) const MATCH_IN_PLACE_LEN: usize = 64 << 10;

/// Whether `regex` matches `text`, off the worker when the text is long.
pub(crate) fn is_match(regex: &Regex, text: &str) -> bool {
    if text.len() > MATCH_IN_PLACE_LEN {
        camel_api::blocking::in_place(|| regex.is_match(text))
    } else {
        regex.is_match(text)
    }
}

/// The whole-text matcher for `pattern`, from the cache or compiled within the bounds.
pub(crate) fn whole_match(pattern: &str) -> Result<Regex, String> {
    if pattern.len() > MAX_PATTERN_LEN {
        return Err(format!(
            "the pattern is {} bytes long, more than the {MAX_PATTERN_LEN} allowed for a \
             pattern read from the exchange",
            pattern.len()
        ));
    }
    {
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(at) = cache.iter().position(|(p, _)| &**p == pattern) {
            let hit = cache.remove(at);
            let outcome = hit.1.clone();
            cache.insert(0, hit);
            return outcome;
        }
    }
    let outcome = camel_api::blocking::in_place(|| compile(pattern));
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    cache.insert(0, (pattern.into(), outcome.clone()));
    cache.truncate(CACHED_PATTERNS);
    outcome
}

fn compile(pattern: &str) -> Compiled {
    whole_match_with(pattern, |text| {
        RegexBuilder::new(text)
            .size_limit(COMPILED_SIZE_LIMIT)
            .dfa_size_limit(COMPILED_SIZE_LIMIT)
            .build()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_whole_text_and_is_cached() {
        let r = whole_match("a+b").unwrap();
        assert!(r.is_match("aab"));
        assert!(!r.is_match("aabc"));
        let again = whole_match("a+b").unwrap();
        assert_eq!(again.as_str(), r.as_str());
    }

    #[test]
    fn long_and_huge_patterns_are_refused() {
        let long = "a".repeat(MAX_PATTERN_LEN + 1);
        assert!(whole_match(&long).unwrap_err().contains("1024"));
        // Small to send, megabytes once compiled: nested counted repetitions.
        let err = whole_match(r"((a{100}){100}){100}").unwrap_err();
        assert!(err.contains("size limit"), "{err}");
        // Asked again, the refusal comes from the cache.
        assert_eq!(whole_match(r"((a{100}){100}){100}").unwrap_err(), err);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn compiles_on_a_multi_threaded_runtime_without_stalling_it() {
        let regex = tokio::spawn(async { whole_match("c[a-z]+t") })
            .await
            .unwrap()
            .unwrap();
        assert!(regex.is_match("cat"));
    }
}
