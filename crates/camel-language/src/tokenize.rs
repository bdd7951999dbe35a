//! The `tokenize` language: cuts text into parts at a token (a literal or a regex), as
//! Camel's `tokenize` does for the `split` EIP.
//!
//! As an expression it yields a JSON array of the parts of the body. The `split` EIP uses
//! the [`Tokenizer`] itself through a [`Scanner`], which takes its input in chunks, so a
//! file of any size is cut with only the current part in memory.
//!
//! Parts between two consecutive tokens are empty strings; text after the last token is
//! the last part, and a token at the very end does not make an empty part after it (a
//! file ending with a newline has as many parts as lines).
//!
//! ```
//! use bytes::Bytes;
//! use camel_language::Tokenizer;
//!
//! let lines = Tokenizer::new(",", false).unwrap().group(2);
//! let parts = lines.split_all(Bytes::from_static(b"a,b,c"));
//! assert_eq!(parts, [Bytes::from_static(b"a,b"), Bytes::from_static(b"c")]);
//! ```

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use camel_api::{
    Body, BoxExpression, CamelError, Exchange, Expression, ExpressionError, Language, Value,
};
use regex::bytes::Regex;

use crate::options::{bool_option, reject_options, Options};
use crate::problem::located;

const LANGUAGE: &str = "tokenize";
const REGEX: (&str, &str) = ("regex", "regex");
const SKIP_FIRST: (&str, &str) = ("skip_first", "skipFirst");
const INCLUDE_TOKENS: (&str, &str) = ("include_tokens", "includeTokens");
const GROUP: (&str, &str) = ("group", "group");
const GROUP_DELIMITER: (&str, &str) = ("group_delimiter", "groupDelimiter");

/// Where and how text is cut: the token, grouping, and which parts are kept.
#[derive(Clone, Debug)]
pub struct Tokenizer {
    matcher: Regex,
    /// Bytes of a literal token: a search can resume this many bytes minus one before the
    /// end of what was already searched. `None` for a regex.
    literal_len: Option<usize>,
    group: usize,
    group_delimiter: Bytes,
    skip_first: bool,
    include_tokens: bool,
}

impl Tokenizer {
    /// Cuts at `token`, a literal text or (with `regex`) a regular expression. An empty
    /// token, or a regex that matches the empty string, is refused: it would cut nowhere.
    pub fn new(token: &str, regex: bool) -> Result<Self, String> {
        if token.is_empty() {
            return Err("the token is empty".into());
        }
        let pattern = if regex {
            token.to_string()
        } else {
            regex::escape(token)
        };
        let matcher = Regex::new(&pattern).map_err(|e| format!("invalid token regex: {e}"))?;
        if matcher.is_match(b"") {
            return Err(format!(
                "the token regex `{token}` matches the empty string"
            ));
        }
        Ok(Tokenizer {
            matcher,
            literal_len: (!regex).then_some(token.len()),
            group: 1,
            group_delimiter: Bytes::copy_from_slice(if regex { b"\n" } else { token.as_bytes() }),
            skip_first: false,
            include_tokens: false,
        })
    }

    /// Cuts at newlines.
    pub fn lines() -> Self {
        Tokenizer::new("\n", false).unwrap_or_else(|_| unreachable!("a newline is a valid token"))
    }

    /// Joins every `n` parts into one (0 and 1 leave parts alone), with the token between
    /// them (a newline for a regex token) unless [`Tokenizer::group_delimiter`] says
    /// otherwise.
    pub fn group(mut self, n: usize) -> Self {
        self.group = n.max(1);
        self
    }

    /// What is put between the parts of a group.
    pub fn group_delimiter(mut self, delimiter: &str) -> Self {
        self.group_delimiter = Bytes::copy_from_slice(delimiter.as_bytes());
        self
    }

    /// Drops the first part (a header line).
    pub fn skip_first(mut self, yes: bool) -> Self {
        self.skip_first = yes;
        self
    }

    /// Keeps the token at the end of each part it ended.
    pub fn include_tokens(mut self, yes: bool) -> Self {
        self.include_tokens = yes;
        self
    }

    /// Every part of `input`, at once.
    pub fn split_all(&self, input: Bytes) -> Vec<Bytes> {
        let mut scanner = Scanner::over(self.clone(), input);
        std::iter::from_fn(|| scanner.next_part()).collect()
    }
}

/// Cuts input that may arrive in chunks: [`Scanner::feed`] more input,
/// [`Scanner::finish`] at its end, and take parts with [`Scanner::next_part`]. Memory
/// held is the unconsumed input: at most one part plus the last chunk fed.
#[derive(Debug)]
pub struct Scanner {
    tokenizer: Tokenizer,
    buf: Bytes,
    pos: usize,
    /// No match starts before this offset of `buf` (only tracked for literal tokens).
    searched: usize,
    eof: bool,
    skipped_first: bool,
    group: Vec<Bytes>,
}

impl Scanner {
    /// A scanner over complete input.
    pub fn over(tokenizer: Tokenizer, input: Bytes) -> Self {
        let mut scanner = Scanner::streaming(tokenizer);
        scanner.buf = input;
        scanner.eof = true;
        scanner
    }

    /// A scanner waiting for input.
    pub fn streaming(tokenizer: Tokenizer) -> Self {
        Scanner {
            tokenizer,
            buf: Bytes::new(),
            pos: 0,
            searched: 0,
            eof: false,
            skipped_first: false,
            group: Vec::new(),
        }
    }

    /// Appends `chunk` to the input (the unconsumed rest is kept, the consumed part freed).
    pub fn feed(&mut self, chunk: &[u8]) {
        let rest = &self.buf[self.pos..];
        let mut joined = BytesMut::with_capacity(rest.len() + chunk.len());
        joined.extend_from_slice(rest);
        joined.extend_from_slice(chunk);
        self.searched -= self.pos.min(self.searched);
        self.buf = joined.freeze();
        self.pos = 0;
    }

    /// Marks the end of the input.
    pub fn finish(&mut self) {
        self.eof = true;
    }

    /// True when the input ended and every part was taken.
    pub fn is_done(&self) -> bool {
        self.eof && self.pos >= self.buf.len() && self.group.is_empty()
    }

    /// The next part; `None` when more input is needed (before [`Scanner::finish`]) or
    /// there is none left (after).
    pub fn next_part(&mut self) -> Option<Bytes> {
        loop {
            let Some(piece) = self.next_piece() else {
                if self.eof && !self.group.is_empty() {
                    return Some(self.take_group());
                }
                return None;
            };
            if self.tokenizer.skip_first && !self.skipped_first {
                self.skipped_first = true;
                continue;
            }
            if self.tokenizer.group <= 1 {
                return Some(piece);
            }
            self.group.push(piece);
            if self.group.len() == self.tokenizer.group {
                return Some(self.take_group());
            }
        }
    }

    fn take_group(&mut self) -> Bytes {
        let parts = std::mem::take(&mut self.group);
        let delimiter = &self.tokenizer.group_delimiter;
        let len = parts.iter().map(Bytes::len).sum::<usize>() + delimiter.len() * parts.len();
        let mut joined = BytesMut::with_capacity(len);
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                joined.extend_from_slice(delimiter);
            }
            joined.extend_from_slice(part);
        }
        joined.freeze()
    }

    /// The next text between tokens, before grouping.
    fn next_piece(&mut self) -> Option<Bytes> {
        if self.pos >= self.buf.len() {
            return None;
        }
        let from = self.searched.max(self.pos);
        match self.tokenizer.matcher.find_at(&self.buf, from) {
            // A regex match touching the end of unfinished input might grow with the next
            // chunk; a literal one cannot.
            Some(m)
                if self.eof || self.tokenizer.literal_len.is_some() || m.end() < self.buf.len() =>
            {
                let end = if self.tokenizer.include_tokens {
                    m.end()
                } else {
                    m.start()
                };
                let piece = self.buf.slice(self.pos..end);
                self.pos = m.end();
                self.searched = self.pos;
                Some(piece)
            }
            _ if self.eof => {
                let piece = self.buf.slice(self.pos..);
                self.pos = self.buf.len();
                Some(piece)
            }
            _ => {
                if let Some(len) = self.tokenizer.literal_len {
                    self.searched = self.buf.len().saturating_sub(len - 1).max(self.pos);
                }
                None
            }
        }
    }
}

/// The `tokenize` language: the expression text is the token; options `regex`, `group`,
/// `group_delimiter`, `skip_first`, `include_tokens` (or their camelCase forms).
#[derive(Debug, Clone, Copy, Default)]
pub struct TokenizeLanguage;

impl Language for TokenizeLanguage {
    fn name(&self) -> &'static str {
        LANGUAGE
    }

    fn expression(&self, text: &str, options: &Options) -> Result<BoxExpression, ExpressionError> {
        Ok(Arc::new(TokenizeExpression(tokenizer(text, options)?)))
    }
}

/// The [`Tokenizer`] a `tokenize` expression with `options` describes (the `split` EIP
/// uses it to cut a stream).
pub fn tokenizer(text: &str, options: &Options) -> Result<Tokenizer, ExpressionError> {
    reject_options(
        LANGUAGE,
        text,
        options,
        &[REGEX, SKIP_FIRST, INCLUDE_TOKENS, GROUP, GROUP_DELIMITER],
    )?;
    let regex = bool_option(LANGUAGE, text, options, REGEX)?;
    let mut t = Tokenizer::new(text, regex).map_err(|m| located(LANGUAGE, text, 0, m))?;
    t = t
        .skip_first(bool_option(LANGUAGE, text, options, SKIP_FIRST)?)
        .include_tokens(bool_option(LANGUAGE, text, options, INCLUDE_TOKENS)?);
    if let Some(group) = options.get(GROUP.0) {
        let n = match group {
            serde_json::Value::Number(n) => n.as_u64(),
            serde_json::Value::String(s) => s.trim().parse().ok(),
            _ => None,
        };
        let n = n.ok_or_else(|| {
            located(
                LANGUAGE,
                text,
                0,
                format!("option `group` must be a whole number, got `{group}`"),
            )
        })?;
        t = t.group(usize::try_from(n).unwrap_or(usize::MAX));
    }
    if let Some(d) = options
        .get(GROUP_DELIMITER.0)
        .or(options.get(GROUP_DELIMITER.1))
    {
        let d = d.as_str().ok_or_else(|| {
            located(
                LANGUAGE,
                text,
                0,
                "option `group_delimiter` must be text".to_string(),
            )
        })?;
        t = t.group_delimiter(d);
    }
    Ok(t)
}

#[derive(Debug)]
struct TokenizeExpression(Tokenizer);

impl Expression for TokenizeExpression {
    fn evaluate(&self, exchange: &Exchange) -> Result<Value, CamelError> {
        let input = match &exchange.message.body {
            Body::Empty => Bytes::new(),
            Body::Bytes(b) => b.clone(),
            Body::Text(t) => Bytes::copy_from_slice(t.as_bytes()),
            Body::Json(j) => match &**j {
                serde_json::Value::String(s) => Bytes::copy_from_slice(s.as_bytes()),
                other => Bytes::from(other.to_string()),
            },
        };
        let parts = self
            .0
            .split_all(input)
            .into_iter()
            .map(|p| serde_json::Value::String(String::from_utf8_lossy(&p).into_owned()))
            .collect();
        Ok(Value::Json(Arc::new(serde_json::Value::Array(parts))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn texts(parts: Vec<Bytes>) -> Vec<String> {
        parts
            .iter()
            .map(|p| String::from_utf8(p.to_vec()).unwrap())
            .collect()
    }

    fn all(t: &Tokenizer, input: &str) -> Vec<String> {
        texts(t.split_all(Bytes::copy_from_slice(input.as_bytes())))
    }

    #[test]
    fn literal_regex_group_skip_and_include() {
        let comma = Tokenizer::new(",", false).unwrap();
        assert_eq!(all(&comma, "a,b,,c"), ["a", "b", "", "c"]);
        assert_eq!(all(&comma, "a,b,"), ["a", "b"]);
        assert!(all(&comma, "").is_empty());
        let regex = Tokenizer::new("[;|]+", true).unwrap();
        assert_eq!(all(&regex, "a;b||c"), ["a", "b", "c"]);
        assert_eq!(all(&comma.clone().group(2), "a,b,c"), ["a,b", "c"]);
        assert_eq!(
            all(&comma.clone().group(2).group_delimiter("+"), "a,b,c,d"),
            ["a+b", "c+d"]
        );
        assert_eq!(
            all(&Tokenizer::lines().skip_first(true), "h\n1\n2\n"),
            ["1", "2"]
        );
        assert_eq!(all(&comma.include_tokens(true), "a,b"), ["a,", "b"]);
    }

    #[test]
    fn bad_tokens_are_refused() {
        assert!(Tokenizer::new("", false).is_err());
        assert!(Tokenizer::new("x*", true).is_err());
        assert!(Tokenizer::new("(", true).is_err());
    }

    #[test]
    fn language_options() {
        let mut o = Options::new();
        o.insert("group".into(), 2.into());
        o.insert("skipFirst".into(), true.into());
        let e = TokenizeLanguage.expression(",", &o).unwrap();
        let v = e.evaluate(&Exchange::new("h,a,b,c")).unwrap();
        assert_eq!(v, Value::from(serde_json::json!(["a,b", "c"])));
        o.insert("grup".into(), 2.into());
        let err = TokenizeLanguage.expression(",", &o).unwrap_err();
        assert!(err.to_string().contains("did you mean `group`"), "{err}");
    }

    proptest! {
        /// Feeding the input in chunks of any size gives the same parts as all at once.
        #[test]
        fn chunked_input_cuts_the_same(
            input in "[ab,;\n]{0,200}",
            cuts in proptest::collection::vec(1usize..20, 0..20),
            regex in any::<bool>(),
            group in 1usize..4,
        ) {
            let t = if regex { Tokenizer::new("[,;]+", true) } else { Tokenizer::new(",;", false) }
                .unwrap()
                .group(group);
            let whole = t.split_all(Bytes::copy_from_slice(input.as_bytes()));
            let mut s = Scanner::streaming(t);
            let mut got = Vec::new();
            let mut rest = input.as_bytes();
            for n in cuts {
                let n = n.min(rest.len());
                s.feed(&rest[..n]);
                rest = &rest[n..];
                while let Some(p) = s.next_part() { got.push(p); }
            }
            s.feed(rest);
            s.finish();
            while let Some(p) = s.next_part() { got.push(p); }
            prop_assert!(s.is_done());
            prop_assert_eq!(got, whole);
        }
    }
}
