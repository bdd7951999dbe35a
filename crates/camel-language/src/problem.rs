//! A parse problem located by byte offset, turned into the user-facing
//! [`ExpressionError`] (with a 1-based character column) at the language boundary.
//!
//! Parsers work in byte offsets because that is how Rust slices text; users count
//! characters, so the conversion happens once, here.

use camel_api::ExpressionError;

/// A problem found while parsing, at byte offset `at` of the expression text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    pub(crate) at: usize,
    pub(crate) message: String,
}

impl Problem {
    pub(crate) fn new(at: usize, message: impl Into<String>) -> Self {
        Problem {
            at,
            message: message.into(),
        }
    }

    /// Attaches the language and text, converting the byte offset to a character column.
    pub(crate) fn into_error(self, language: &str, text: &str) -> ExpressionError {
        located(language, text, self.at, self.message)
    }
}

/// An [`ExpressionError`] at byte offset `at` of `text`.
pub(crate) fn located(
    language: &str,
    text: &str,
    at: usize,
    message: impl Into<String>,
) -> ExpressionError {
    ExpressionError {
        language: language.to_owned(),
        expression: text.to_owned(),
        column: column_of(text, at),
        message: message.into(),
    }
}

/// The 1-based character column of byte offset `at` (clamped to the text).
pub(crate) fn column_of(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    let chars = text.char_indices().take_while(|(i, _)| *i < at).count();
    chars + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters_not_bytes() {
        assert_eq!(column_of("abc", 0), 1);
        assert_eq!(column_of("abc", 2), 3);
        assert_eq!(column_of("héllo", 3), 3);
        assert_eq!(column_of("ab", 99), 3);
    }

    #[test]
    fn into_error_keeps_language_and_text() {
        let e = Problem::new(1, "bad").into_error("simple", "xy");
        assert_eq!(e.language, "simple");
        assert_eq!(e.expression, "xy");
        assert_eq!(e.column, 2);
        assert_eq!(e.message, "bad");
    }
}
