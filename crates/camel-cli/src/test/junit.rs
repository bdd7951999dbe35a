//! JUnit XML for CI: one `<testsuite>` per test file, one `<testcase>` per case.

use std::fmt::Write;

/// The outcome of one case.
#[derive(Debug)]
pub(crate) struct CaseResult {
    pub(crate) name: String,
    pub(crate) seconds: f64,
    /// `None` when it passed; the failure report otherwise.
    pub(crate) failure: Option<String>,
    /// True when the case could not run at all (the file or its routes have errors).
    pub(crate) error: bool,
}

/// The outcome of one file.
#[derive(Debug)]
pub(crate) struct FileResult {
    pub(crate) file: String,
    pub(crate) cases: Vec<CaseResult>,
}

/// The XML document.
pub(crate) fn render(files: &[FileResult]) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    for f in files {
        let failures = f
            .cases
            .iter()
            .filter(|c| c.failure.is_some() && !c.error)
            .count();
        let errors = f.cases.iter().filter(|c| c.error).count();
        let time: f64 = f.cases.iter().map(|c| c.seconds).sum();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{time:.3}\">",
            escape(&f.file),
            f.cases.len()
        );
        for c in &f.cases {
            let _ = write!(
                out,
                "    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\"",
                escape(&c.name),
                escape(&f.file),
                c.seconds
            );
            match &c.failure {
                None => out.push_str("/>\n"),
                Some(report) => {
                    let tag = if c.error { "error" } else { "failure" };
                    let first = report.lines().next().unwrap_or_default();
                    let _ = writeln!(
                        out,
                        ">\n      <{tag} message=\"{}\">{}</{tag}>\n    </testcase>",
                        escape(first),
                        escape(report)
                    );
                }
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// Escapes text for an attribute or element; characters XML 1.0 cannot hold at all (most
/// control characters) become `\u{…}` so a body with them still gives a valid file.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' | '\t' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_control_characters() {
        assert_eq!(
            escape("a<b & \"c\"\u{1}"),
            "a&lt;b &amp; &quot;c&quot;\\u{1}"
        );
    }
}
