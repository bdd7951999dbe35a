//! Camel's `logMask`: values of secret-looking keys are replaced by `xxxxx` in a log line,
//! as Camel's default masking formatter does for `key=value`, `"key": "value"` and
//! `<key>value</key>`.

/// The key words whose values are masked (compared without case), Camel's list.
const KEYWORDS: &[&str] = &["passphrase", "password", "secretkey", "accesskey", "secret"];
/// What stands in place of a masked value.
const MASK: &str = "xxxxx";

/// `line` with the value of every secret-looking key masked.
pub(crate) fn mask(line: &str) -> String {
    let lower = line.to_ascii_lowercase();
    let bytes = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        let Some((keyword, start)) = next_keyword(&lower, at) else {
            break;
        };
        let after = start + keyword.len();
        match value_span(line, start, after) {
            Some((from, to)) => {
                out.push_str(&line[copied..from]);
                out.push_str(MASK);
                copied = to;
                at = to.max(after);
            }
            None => at = after,
        }
    }
    out.push_str(&line[copied..]);
    out
}

/// The first key word at or after `from`, with where it starts (the longest at a place).
fn next_keyword(lower: &str, from: usize) -> Option<(&'static str, usize)> {
    KEYWORDS
        .iter()
        .filter_map(|k| lower[from..].find(k).map(|i| (*k, from + i)))
        .min_by_key(|&(k, i)| (i, usize::MAX - k.len()))
}

/// Where the value of the key ending at `after` is: past `=`, `:` (a quoted key's
/// closing quote first) or the `>` of an XML start tag; `None` when none follows.
fn value_span(line: &str, start: usize, after: usize) -> Option<(usize, usize)> {
    let bytes = line.as_bytes();
    let mut i = after;
    let xml = start > 0 && bytes[start - 1] == b'<' && bytes.get(i) == Some(&b'>');
    if xml {
        let from = i + 1;
        let to = line[from..].find('<').map_or(line.len(), |n| from + n);
        return Some((from, to));
    }
    if matches!(bytes.get(i), Some(b'"' | b'\'')) {
        i += 1;
    }
    while bytes.get(i) == Some(&b' ') {
        i += 1;
    }
    if !matches!(bytes.get(i), Some(b'=' | b':')) {
        return None;
    }
    i += 1;
    while bytes.get(i) == Some(&b' ') {
        i += 1;
    }
    match bytes.get(i) {
        Some(&q @ (b'"' | b'\'')) => {
            let from = i + 1;
            let to = line[from..]
                .find(q as char)
                .map_or(line.len(), |n| from + n);
            Some((from, to))
        }
        Some(_) => {
            let to = line[i..]
                .find(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '&' | ']' | '}' | ')'))
                .map_or(line.len(), |n| i + n);
            (to > i).then_some((i, to))
        }
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::mask;

    #[test]
    fn masks_the_forms_camel_masks() {
        assert_eq!(
            mask("user=bob password=hunter2, x=1"),
            "user=bob password=xxxxx, x=1"
        );
        assert_eq!(
            mask(r#"{"user":"bob","password": "hunter2","n":1}"#),
            r#"{"user":"bob","password": "xxxxx","n":1}"#
        );
        assert_eq!(
            mask("<secretKey>abc</secretKey>"),
            "<secretKey>xxxxx</secretKey>"
        );
        assert_eq!(
            mask("accessKey: AKIA1&region=x"),
            "accessKey: xxxxx&region=x"
        );
    }

    #[test]
    fn leaves_other_text_alone() {
        for text in [
            "no secrets here",
            "the password is long",
            "passwords=",
            "é password",
        ] {
            assert_eq!(mask(text), text);
        }
    }
}
