//! Splits simple-language text into tokens: whitespace, `${...}` functions, quoted
//! literals and bare words.
//!
//! Quotes only open a literal at the start of a word, so an apostrophe inside text
//! (`It's ${body}`) stays text. An unclosed quote is not an error here: whether it is one
//! depends on whether the text turns out to be a condition, which the parser decides.

use super::function::{self, Function};
use crate::problem::Problem;

/// One token with its byte span in the expression text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub(crate) kind: TokenKind,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// What a token is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TokenKind {
    /// A run of whitespace.
    Space,
    /// `${...}`, already resolved.
    Function(Function),
    /// `'...'` or `"..."`; holds the text between the quotes.
    Quoted(Box<str>),
    /// A run of other characters (no whitespace, no `${`).
    Word,
}

/// The tokens of a text, and the first quote that was never closed, if any.
#[derive(Debug)]
pub(crate) struct Lexed {
    pub(crate) tokens: Vec<Token>,
    pub(crate) unclosed_quote: Option<usize>,
}

/// Tokenizes `text`. Fails only on a broken `${...}` function.
pub(crate) fn lex(text: &str) -> Result<Lexed, Problem> {
    let mut tokens = Vec::new();
    let mut unclosed_quote = None;
    let mut at = 0;
    let mut word_start = true;
    while let Some(c) = text[at..].chars().next() {
        let start = at;
        let kind = if c.is_whitespace() {
            at = skip_while(text, at, char::is_whitespace);
            word_start = true;
            TokenKind::Space
        } else if text[at..].starts_with("${") {
            let (function, end) = lex_function(text, at)?;
            at = end;
            word_start = false;
            TokenKind::Function(function)
        } else if word_start && (c == '\'' || c == '"') {
            word_start = false;
            match closing_quote(&text[at + 1..], c) {
                Some(len) => {
                    at += 1 + len + 1;
                    TokenKind::Quoted(text[start + 1..at - 1].into())
                }
                None => {
                    unclosed_quote.get_or_insert(at);
                    at = word_end(text, at + 1);
                    TokenKind::Word
                }
            }
        } else {
            word_start = false;
            at = word_end(text, at);
            TokenKind::Word
        };
        tokens.push(Token {
            kind,
            start,
            end: at,
        });
    }
    Ok(Lexed {
        tokens,
        unclosed_quote,
    })
}

/// The offset of the quote `q` that closes a quoted text starting `text`. A function
/// inside the quotes is skipped whole, so its own quotes (`'${date:now:yyyy-MM-dd'T'HH}'`)
/// do not end the text.
fn closing_quote(text: &str, q: char) -> Option<usize> {
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        if c == q {
            return Some(i);
        }
        if text[i..].starts_with("${") {
            match closing_brace(&text[i + 2..]) {
                Some(len) => {
                    i += 2 + len + 1;
                    continue;
                }
                // An unclosed function: the lexer reports it where it starts.
                None => return text[i..].find(q).map(|n| i + n),
            }
        }
        i += c.len_utf8();
    }
    None
}

fn skip_while(text: &str, from: usize, keep: impl Fn(char) -> bool) -> usize {
    text[from..]
        .char_indices()
        .find(|(_, c)| !keep(*c))
        .map_or(text.len(), |(i, _)| from + i)
}

/// End of a bare word starting at `from`: the next whitespace or `${`.
fn word_end(text: &str, from: usize) -> usize {
    text[from..]
        .char_indices()
        .map(|(i, c)| (from + i, c))
        .find(|&(at, c)| c.is_whitespace() || text[at..].starts_with("${"))
        .map_or(text.len(), |(at, _)| at)
}

/// Reads `${...}` starting at `start`; returns the function and the offset after its `}`.
/// Functions nest (`${concat('a',${body})}`), so the closing brace is the one that
/// balances the opening `${`.
fn lex_function(text: &str, start: usize) -> Result<(Function, usize), Problem> {
    let inner = start + 2;
    let Some(len) = closing_brace(&text[inner..]) else {
        return Err(Problem::new(start, "unterminated `${`: missing `}`"));
    };
    let content = &text[inner..inner + len];
    Ok((function::parse(content, inner)?, inner + len + 1))
}

/// The offset of the `}` that closes a `${` whose content starts `text`.
pub(crate) fn closing_brace(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                depth += 1;
                i += 1;
            }
            b'}' if depth == 0 => return Some(i),
            b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        lex(text)
            .unwrap()
            .tokens
            .into_iter()
            .map(|t| t.kind)
            .collect()
    }

    #[test]
    fn splits_functions_words_quotes_and_spaces() {
        use TokenKind::*;
        assert_eq!(
            kinds("${body} == 'a b'"),
            vec![
                Function(super::Function::Body),
                Space,
                Word,
                Space,
                Quoted("a b".into())
            ]
        );
        assert_eq!(
            kinds("x${body}y"),
            vec![Word, Function(super::Function::Body), Word]
        );
    }

    #[test]
    fn apostrophes_inside_words_are_text() {
        let lexed = lex("It's ${body}").unwrap();
        assert_eq!(lexed.unclosed_quote, None);
        assert_eq!(lexed.tokens[0].kind, TokenKind::Word);
        assert_eq!(lexed.tokens[0].end, 4);
    }

    #[test]
    fn quotes_inside_a_quoted_function_do_not_end_the_text() {
        use TokenKind::*;
        let text = "'${date:now:yyyy-MM-dd'T'HH}' x";
        let lexed = lex(text).unwrap();
        assert_eq!(
            lexed.tokens[0].kind,
            Quoted("${date:now:yyyy-MM-dd'T'HH}".into())
        );
        assert_eq!(lexed.tokens[0].end, 29);
        assert_eq!(lexed.unclosed_quote, None);
    }

    #[test]
    fn records_an_unclosed_quote() {
        let lexed = lex("a == 'b").unwrap();
        assert_eq!(lexed.unclosed_quote, Some(5));
    }

    #[test]
    fn spans_cover_the_text_exactly() {
        let text = "héllo ${header.x}  'q' \"w\"";
        let lexed = lex(text).unwrap();
        let mut at = 0;
        for t in &lexed.tokens {
            assert_eq!(t.start, at);
            at = t.end;
        }
        assert_eq!(at, text.len());
    }

    #[test]
    fn broken_functions_are_errors() {
        assert_eq!(lex("ab ${body").unwrap_err().at, 3);
        assert_eq!(lex("${header.x ${body").unwrap_err().at, 0);
        assert_eq!(lex("x ${nope}").unwrap_err().at, 4);
    }
}
