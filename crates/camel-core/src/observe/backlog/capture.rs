//! What a traced step keeps of a message: sizes, bodies cut to their bound, credentials
//! masked.

use super::*;

pub(super) fn micros(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

pub(super) fn step_size(step: &TracedStep) -> usize {
    let headers: usize = step
        .headers
        .iter()
        .flatten()
        .map(|(k, v)| k.len() + v.len() + 16)
        .sum();
    let body = step
        .body
        .as_ref()
        .and_then(|b| b.text.as_ref())
        .map_or(0, String::len);
    ENTRY_OVERHEAD
        + step.id.len()
        + step.kind.len()
        + step.exchange_id.len()
        + step.error.as_ref().map_or(0, String::len)
        + step.uri.as_ref().map_or(0, |u| u.len())
        + headers
        + body
}

/// `step` with `message`'s headers and body, redacted and cut to the limits.
pub(super) fn with_message(
    mut step: TracedStep,
    message: &Message,
    config: &TracerConfig,
) -> TracedStep {
    let mut headers: Vec<(String, String)> = message
        .headers
        .iter()
        .map(|(name, value)| (name.to_string(), shown_header(name, value, config)))
        .collect();
    headers.sort();
    step.headers = Some(headers);
    step.body = Some(traced_body(&message.body, config.body_max_bytes));
    step
}

/// A header's value as the tracer shows it: credentials hidden, cut to the body limit.
fn shown_header(name: &str, value: &Value, config: &TracerConfig) -> String {
    if camel_api::is_secret_header(name) {
        return "***".into();
    }
    let text = match value {
        Value::Null => String::new(),
        Value::Bytes(b) => match std::str::from_utf8(b) {
            Ok(s) => s.to_string(),
            Err(_) => format!("[{} bytes]", b.len()),
        },
        Value::Json(j) => limited_json(j, config.body_max_bytes).0,
        other => other.as_str().map(str::to_string).unwrap_or_default(),
    };
    let (cut, _) = cut_text(&text, config.body_max_bytes);
    camel_api::shown_value(name, cut)
}

/// `text` cut to at most `max` bytes at a character boundary, and whether it was cut.
fn cut_text(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

/// The body as the tracer keeps it: text cut to `max` bytes with credentials masked, a
/// binary body as its size only.
pub(crate) fn traced_body(body: &Body, max: usize) -> TracedBody {
    match body {
        Body::Empty => TracedBody {
            kind: "Empty",
            size: 0,
            text: None,
            truncated: false,
        },
        Body::Text(s) => {
            let (cut, truncated) = cut_text(s, max);
            TracedBody {
                kind: "Text",
                size: s.len(),
                text: Some(mask_text(cut)),
                truncated,
            }
        }
        Body::Bytes(b) => {
            let head = &b[..b.len().min(max)];
            let text = match std::str::from_utf8(head) {
                Ok(s) => Some(s),
                // Cut inside a character: the valid part is the text.
                Err(e) if e.error_len().is_none() => {
                    std::str::from_utf8(&head[..e.valid_up_to()]).ok()
                }
                Err(_) => None,
            };
            TracedBody {
                kind: "Bytes",
                size: b.len(),
                truncated: text.is_some() && b.len() > max,
                text: text.map(mask_text),
            }
        }
        Body::Json(j) => {
            let (text, size) = limited_json(j, max);
            TracedBody {
                kind: "Json",
                size,
                truncated: size > text.len(),
                text: Some(text),
            }
        }
    }
}

/// `json` serialised with credential values masked, cut to `max` bytes; and its whole
/// size.
pub(super) fn limited_json(json: &serde_json::Value, max: usize) -> (String, usize) {
    let mut out = Limited {
        kept: Vec::with_capacity(max.min(4096)),
        max,
        size: 0,
    };
    // Writing to memory cannot fail.
    let _ = serde_json::to_writer(&mut out, &Masked(json));
    let mut kept = out.kept;
    // Never end inside a character.
    let text = match String::from_utf8(std::mem::take(&mut kept)) {
        Ok(s) => s,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).unwrap_or_default()
        }
    };
    (text, out.size)
}

/// A writer that keeps the first `max` bytes and counts them all.
struct Limited {
    kept: Vec<u8>,
    max: usize,
    size: usize,
}

impl std::io::Write for Limited {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = self.max.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&buf[..buf.len().min(room)]);
        self.size += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A JSON value serialised with the values of credential keys shown as `***`.
struct Masked<'a>(&'a serde_json::Value);

impl Serialize for Masked<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            serde_json::Value::Object(map) => {
                let mut m = s.serialize_map(Some(map.len()))?;
                for (k, v) in map {
                    if camel_api::is_secret_name(k) && !v.is_null() {
                        m.serialize_entry(k, "***")?;
                    } else {
                        m.serialize_entry(k, &Masked(v))?;
                    }
                }
                m.end()
            }
            serde_json::Value::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for v in items {
                    seq.serialize_element(&Masked(v))?;
                }
                seq.end()
            }
            other => other.serialize(s),
        }
    }
}

/// `text` with the value after each credential's name masked: `password=s3cret`,
/// `"token": "abc"`, `secret_key: x` show `***` for the value (Camel's masking
/// formatter does the same for its log).
pub(crate) fn mask_text(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c != b'=' && c != b':' {
            i += 1;
            continue;
        }
        // The name before the separator, skipping a closing quote and spaces.
        let mut end = i;
        while end > 0 && bytes[end - 1] == b' ' {
            end -= 1;
        }
        if end > 0 && (bytes[end - 1] == b'"' || bytes[end - 1] == b'\'') {
            end -= 1;
        }
        let mut start = end;
        while start > 0 && is_name_byte(bytes[start - 1]) {
            start -= 1;
        }
        i += 1;
        if start == end || !camel_api::is_secret_name(&text[start..end]) {
            continue;
        }
        // The value after it: quoted, or up to a separator.
        let mut from = i;
        while from < bytes.len() && bytes[from] == b' ' {
            from += 1;
        }
        let (value_start, value_end) = match bytes.get(from) {
            Some(q @ (b'"' | b'\'')) => {
                let close = bytes[from + 1..]
                    .iter()
                    .position(|b| b == q)
                    .map_or(bytes.len(), |p| from + 1 + p);
                (from + 1, close)
            }
            _ => {
                let stop = bytes[from..]
                    .iter()
                    .position(|b| {
                        matches!(
                            b,
                            b'&' | b',' | b';' | b' ' | b'\n' | b'\r' | b'\t' | b'}' | b']' | b'<'
                        )
                    })
                    .map_or(bytes.len(), |p| from + p);
                (from, stop)
            }
        };
        if value_end > value_start {
            out.push_str(&text[copied..value_start]);
            out.push_str("***");
            copied = value_end;
        }
        i = value_end.max(i);
    }
    out.push_str(&text[copied..]);
    out
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_bodies_are_masked() {
        assert_eq!(
            mask_text("user=ann&password=s3cret&x=1"),
            "user=ann&password=***&x=1"
        );
        assert_eq!(
            mask_text(r#"{"token": "abc", "name": "n"}"#),
            r#"{"token": "***", "name": "n"}"#
        );
        assert_eq!(mask_text("secret_key: k1 next"), "secret_key: *** next");
        assert_eq!(mask_text("nothing=here"), "nothing=here");
        let json = serde_json::json!({"a": {"apiToken": "t", "list": [{"password": 1}]}, "b": 2});
        let (text, size) = limited_json(&json, 1000);
        assert!(!text.contains("\"t\"") && !text.contains(":1"), "{text}");
        assert_eq!(size, text.len());
    }

    #[test]
    fn bodies_are_cut_and_binary_shows_its_size() {
        let long = Body::Text("é".repeat(100).into());
        let b = traced_body(&long, 11);
        assert_eq!(b.text.as_deref(), Some("ééééé"));
        assert!(b.truncated);
        assert_eq!(b.size, 200);
        let binary = traced_body(&Body::from(vec![0xffu8, 0xfe, 0]), 10);
        assert_eq!((binary.text, binary.size), (None, 3));
        let json = traced_body(
            &Body::Json(Arc::new(serde_json::json!({"k": "v".repeat(50)}))),
            8,
        );
        assert_eq!(json.text.as_deref(), Some("{\"k\":\"vv"));
        assert!(json.truncated && json.size > 50);
    }
}
