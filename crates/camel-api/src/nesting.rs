//! The one limit on how deeply a message body may nest when it is parsed.
//!
//! Parsers that recurse use one stack frame per level, so a small body nested a few
//! thousand levels deep (6 KB of `[`) would overflow the stack and abort the whole process,
//! taking every route and exchange in flight with it. Every place that parses a body into
//! a tree (JSON for `jq`, `jsonpath` and `unmarshal`, XML, …) refuses a body deeper than
//! [`MAX_NESTING_DEPTH`] with an error the route's error handler sees. serde_json applies
//! the same number on its own; the other parsers check it here first.
//!
//! ```
//! use camel_api::nesting::{check_json_nesting, MAX_NESTING_DEPTH};
//!
//! assert!(check_json_nesting(br#"{"a": [1, {"b": "]]]"}]}"#).is_ok());
//! let deep = "[".repeat(MAX_NESTING_DEPTH + 1);
//! let err = check_json_nesting(deep.as_bytes()).unwrap_err();
//! assert_eq!(err.offset, MAX_NESTING_DEPTH);
//! ```

/// How many arrays, objects or elements deep a parsed body may nest (serde_json's own
/// recursion limit, so every format has the same one).
pub const MAX_NESTING_DEPTH: usize = 128;

/// A body nested deeper than [`MAX_NESTING_DEPTH`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the body nests deeper than {MAX_NESTING_DEPTH} levels (at byte {offset})")]
#[non_exhaustive]
pub struct TooDeep {
    /// The byte offset of the bracket that went one level too deep.
    pub offset: usize,
}

impl TooDeep {
    /// The error for the bracket or element at `offset`.
    pub fn at(offset: usize) -> Self {
        TooDeep { offset }
    }
}

/// Checks, without parsing and in one pass, that the JSON text `bytes` nests no deeper
/// than [`MAX_NESTING_DEPTH`]. Brackets inside strings do not count. Text that is not
/// JSON passes (the parser that runs next reports what is wrong with it).
pub fn check_json_nesting(bytes: &[u8]) -> Result<(), TooDeep> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (offset, &b) in bytes.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                if depth == MAX_NESTING_DEPTH {
                    return Err(TooDeep::at(offset));
                }
                depth += 1;
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_itself_passes_one_more_fails() {
        let at_limit = format!(
            "{}{}",
            "[".repeat(MAX_NESTING_DEPTH),
            "]".repeat(MAX_NESTING_DEPTH)
        );
        assert!(check_json_nesting(at_limit.as_bytes()).is_ok());
        let over = format!("{{\"a\":{at_limit}}}");
        assert_eq!(
            check_json_nesting(over.as_bytes()),
            Err(TooDeep::at(5 + MAX_NESTING_DEPTH - 1))
        );
    }

    #[test]
    fn brackets_in_strings_and_escapes_do_not_count() {
        let s = format!("[\"{}\\\"{}\"]", "[".repeat(500), "{".repeat(500));
        assert!(check_json_nesting(s.as_bytes()).is_ok());
    }

    #[test]
    fn siblings_do_not_add_up() {
        let s = format!("[{}]", "[[]],".repeat(10_000));
        assert!(check_json_nesting(s.as_bytes()).is_ok());
    }
}
