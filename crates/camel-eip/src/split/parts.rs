//! Where the parts of one exchange come from: a list known in advance, or a scanner that
//! cuts text (in memory, or read from a file in chunks) one part at a time.

use std::sync::Arc;

use bytes::Bytes;
use camel_api::{Body, BoxExpression, CamelError, Exchange, Value};
use camel_language::{Scanner, Tokenizer};
use tokio::io::AsyncReadExt;

/// Bytes read from a file at a time when streaming.
const CHUNK: usize = 64 * 1024;

/// The header naming the file a `file` consumer handed over (lazily, with an empty body).
const FILE_ABSOLUTE_PATH: &str = "CamelFileAbsolutePath";

/// What a split cuts an exchange into.
#[derive(Clone, Debug)]
pub enum SplitExpression {
    /// The body: a JSON array's elements, or the lines of text.
    Body,
    /// The body cut by a tokenizer.
    Tokenize(Tokenizer),
    /// The value of an expression: a JSON array's elements, the lines of text, or one
    /// part for any other value (none for null).
    Expression(BoxExpression),
}

/// How text is cut when no tokenizer says (the body without an expression, the text an
/// expression gives): Camel's split `delimiter`.
#[derive(Clone, Debug, Default)]
pub enum TextDelimiter {
    /// At line ends (camel-rs's default; Camel's is a comma for an expression's text).
    #[default]
    Lines,
    /// At this token.
    Token(Tokenizer),
    /// Not at all: the text is one part (Camel's `delimiter: false` or `single`).
    Whole,
}

impl TextDelimiter {
    fn tokenizer(&self) -> Option<Tokenizer> {
        match self {
            TextDelimiter::Lines => Some(Tokenizer::lines()),
            TextDelimiter::Token(t) => Some(t.clone()),
            TextDelimiter::Whole => None,
        }
    }
}

/// The parts of one exchange, taken in order.
#[derive(Debug)]
pub(crate) enum Parts {
    Listed {
        items: std::vec::IntoIter<Body>,
        size: usize,
    },
    Scanned(Box<Scanned>),
}

#[derive(Debug)]
pub(crate) struct Scanned {
    scanner: Scanner,
    file: Option<tokio::fs::File>,
    chunk: Vec<u8>,
}

impl Parts {
    /// The parts of `ex`; `streaming` keeps text from being cut all at once (and then the
    /// size is unknown until the end).
    pub(crate) async fn open(
        expression: &SplitExpression,
        delimiter: &TextDelimiter,
        ex: &Exchange,
        streaming: bool,
    ) -> Result<Parts, CamelError> {
        let text = |tokenizer: Option<Tokenizer>, bytes: Bytes| {
            let Some(tokenizer) = tokenizer else {
                return listed(vec![part_body(bytes)]);
            };
            if streaming {
                Parts::Scanned(Box::new(Scanned {
                    scanner: Scanner::over(tokenizer, bytes),
                    file: None,
                    chunk: Vec::new(),
                }))
            } else {
                listed(
                    tokenizer
                        .split_all(bytes)
                        .into_iter()
                        .map(part_body)
                        .collect(),
                )
            }
        };
        match expression {
            SplitExpression::Expression(e) => {
                Ok(from_value(e.evaluate(ex)?, delimiter.tokenizer(), text))
            }
            SplitExpression::Body | SplitExpression::Tokenize(_) => {
                let tokenizer = match expression {
                    SplitExpression::Tokenize(t) => Some(t.clone()),
                    _ => delimiter.tokenizer(),
                };
                match &ex.message.body {
                    Body::Empty => match ex.header(FILE_ABSOLUTE_PATH).and_then(|v| v.as_str()) {
                        Some(path) => match tokenizer {
                            Some(tokenizer) => open_file(path, tokenizer, streaming).await,
                            None => {
                                let bytes = tokio::fs::read(path).await?;
                                Ok(listed(vec![part_body(bytes.into())]))
                            }
                        },
                        None => Ok(listed(Vec::new())),
                    },
                    Body::Json(j) if matches!(expression, SplitExpression::Body) => {
                        Ok(from_value(Value::Json(j.clone()), tokenizer, text))
                    }
                    Body::Json(j) => Ok(text(tokenizer, json_text(j))),
                    Body::Text(t) => Ok(text(tokenizer, Bytes::copy_from_slice(t.as_bytes()))),
                    Body::Bytes(b) => Ok(text(tokenizer, b.clone())),
                }
            }
        }
    }

    /// How many parts there are, when known before they are taken.
    pub(crate) fn size(&self) -> Option<usize> {
        match self {
            Parts::Listed { size, .. } => Some(*size),
            Parts::Scanned(_) => None,
        }
    }

    /// The next part, `None` after the last.
    pub(crate) async fn next(&mut self) -> Result<Option<Body>, CamelError> {
        match self {
            Parts::Listed { items, .. } => Ok(items.next()),
            Parts::Scanned(s) => loop {
                let Scanned {
                    scanner,
                    file,
                    chunk,
                } = &mut **s;
                if let Some(part) = scanner.next_part() {
                    return Ok(Some(part_body(part)));
                }
                let Some(f) = file.as_mut() else {
                    return Ok(None);
                };
                chunk.resize(CHUNK, 0);
                let n = f.read(chunk).await?;
                if n == 0 {
                    scanner.finish();
                    *file = None;
                } else {
                    scanner.feed(&chunk[..n]);
                }
            },
        }
    }
}

/// The parts of a file named by the `file` consumer: read in chunks when streaming,
/// whole otherwise.
async fn open_file(path: &str, tokenizer: Tokenizer, streaming: bool) -> Result<Parts, CamelError> {
    if !streaming {
        let bytes = tokio::fs::read(path).await?;
        let parts = tokenizer.split_all(bytes.into());
        return Ok(listed(parts.into_iter().map(part_body).collect()));
    }
    let file = tokio::fs::File::open(path).await?;
    Ok(Parts::Scanned(Box::new(Scanned {
        scanner: Scanner::streaming(tokenizer),
        file: Some(file),
        chunk: Vec::new(),
    })))
}

fn listed(items: Vec<Body>) -> Parts {
    Parts::Listed {
        size: items.len(),
        items: items.into_iter(),
    }
}

fn from_value(
    value: Value,
    tokenizer: Option<Tokenizer>,
    text: impl Fn(Option<Tokenizer>, Bytes) -> Parts,
) -> Parts {
    match value {
        Value::Null => listed(Vec::new()),
        Value::Json(j) => match &*j {
            serde_json::Value::Array(items) => {
                listed(items.iter().cloned().map(json_body).collect())
            }
            serde_json::Value::String(s) => text(tokenizer, Bytes::from(s.clone())),
            _ => listed(vec![Body::Json(j)]),
        },
        Value::Text(t) => match json_array(&t) {
            Some(items) => listed(items.into_iter().map(json_body).collect()),
            None => text(tokenizer, Bytes::copy_from_slice(t.as_bytes())),
        },
        Value::Bytes(b) => text(tokenizer, b),
        other => listed(vec![Body::from(other)]),
    }
}

/// Text that is a JSON array (what `${body}` gives for a JSON body read as text).
fn json_array(text: &str) -> Option<Vec<serde_json::Value>> {
    if !text.trim_start().starts_with('[') {
        return None;
    }
    match serde_json::from_str(text) {
        Ok(serde_json::Value::Array(items)) => Some(items),
        _ => None,
    }
}

fn json_text(j: &Arc<serde_json::Value>) -> Bytes {
    match &**j {
        serde_json::Value::String(s) => Bytes::from(s.clone()),
        other => Bytes::from(other.to_string()),
    }
}

fn json_body(item: serde_json::Value) -> Body {
    match item {
        serde_json::Value::String(s) => Body::from(s),
        serde_json::Value::Null => Body::Empty,
        other => Body::from(other),
    }
}

/// A part's bytes as text when they are UTF-8 (what a route most often works on).
fn part_body(part: Bytes) -> Body {
    match std::str::from_utf8(&part) {
        Ok(text) => Body::Text(text.into()),
        Err(_) => Body::Bytes(part),
    }
}
