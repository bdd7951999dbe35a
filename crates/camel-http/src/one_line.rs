//! Request data in log lines: a path or header value can carry a percent-encoded newline
//! (`%0d%0a`) that decoding makes real, and a raw newline in a log line lets a client
//! forge the lines after it. Whatever this crate logs that a request can influence goes
//! through [`OneLine`], which writes control characters escaped (`\n`, `\u{1b}`).

use std::fmt::{self, Write as _};

/// Displays `T` with its control characters escaped.
pub(crate) struct OneLine<T>(pub(crate) T);

impl<T: fmt::Display> fmt::Display for OneLine<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Escaper(f).write_fmt(format_args!("{}", self.0))
    }
}

struct Escaper<'a, 'b>(&'a mut fmt::Formatter<'b>);

impl fmt::Write for Escaper<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let mut rest = s;
        while let Some(i) = rest.find(char::is_control) {
            self.0.write_str(&rest[..i])?;
            let c = rest[i..].chars().next().unwrap_or_default();
            write!(self.0, "{}", c.escape_default())?;
            rest = &rest[i + c.len_utf8()..];
        }
        self.0.write_str(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        let shown = OneLine("GET /a\r\nX-Forged: 1\u{1b}[31m ok").to_string();
        assert_eq!(shown, "GET /a\\r\\nX-Forged: 1\\u{1b}[31m ok");
        assert_eq!(OneLine("plain é").to_string(), "plain é");
    }
}
